//! AST gap scores: Statement Gap, Keyword Gap and Structure Gap (paper 000, section 3.5.1).
//!
//! The paper describes the three gaps in words; the formulas below are **this project's
//! operationalisation**. Both trees are normalised ASTs ([`NormNode`]): the reference from
//! tree-sitter ([`crate::syntax::normalize`]), the candidate from the LLM's answer
//! ([`crate::crosscheck::llm_ast`]). `B(T)` is [`backbone`]`(T)`. All gaps lie in [0, 1],
//! higher is worse.
//!
//! # Statement Gap: are the core statements there, in roughly the right numbers?
//!
//! For each backbone category `c` (FUNCTION, BRANCH, LOOP, CALL, RETURN, ASSIGN, TRY, EXCEPT)
//! let `r_c` and `m_c` be its node counts in the reference and the candidate, and `w_c` its
//! weight: 0.5 for the non-critical ASSIGN and CALL (the paper's "extra tolerance for
//! non-critical categories"), 1 otherwise. With `D = Σ w_c·|r_c − m_c|` (missing and extra
//! nodes alike) and `N = Σ w_c·r_c`:
//!
//! ```text
//! statement_gap = 1                          if some c in {BRANCH, LOOP, RETURN} has r_c > 0 and m_c = 0
//!               = min(1, D / max(1, N))      otherwise
//! ```
//!
//! The first line is the paper's "no forgiveness for missing branches/loops/returns".
//!
//! *Worked example.* Reference `(FUNCTION f (ASSIGN =) (ASSIGN =) (CALL g) (BRANCH if (CALL h)
//! (RETURN return)))`: FUNCTION 1, ASSIGN 2, CALL 2, BRANCH 1, RETURN 1, so
//! `N = 1 + 0.5·2 + 0.5·2 + 1 + 1 = 5`. Candidate `(FUNCTION f (ASSIGN =) (ASSIGN =) (LOOP for
//! (CALL g)) (BRANCH if (RETURN return)))` misses one CALL (0.5) and adds one LOOP (1):
//! `D = 1.5`, gap `1.5 / 5 = 0.30`, which passes (≤ 0.30). Dropping its RETURN as well gives 1.
//!
//! # Keyword Gap: are the keywords and names there, and only those?
//!
//! `K(T)` is the set of lower-cased words of the labels of all non-LITERAL nodes of `T`, a
//! label being split at every character that is not a letter, digit, `_` or `$`
//! (`self.load` gives `self` and `load`; `+=` gives nothing). Control nodes carry their
//! keyword (`if`, `for`, `return`, `catch`), the others their names.
//!
//! ```text
//! keyword_gap = 1 − |K(R) ∩ K(C)| / |K(R) ∪ K(C)|        (0 when both sets are empty)
//! ```
//!
//! The paper counts missing keyword *families*; a Jaccard distance over keyword and name
//! tokens also sees invented names and is symmetric, so a fabricated call costs as much as a
//! missing one. Literal text is left out because LLMs rewrite quotes and number formats.
//!
//! *Worked example.* `(FUNCTION add (PARAM a) (PARAM b) (RETURN return (IDENT a) (IDENT b)))`
//! gives {add, a, b, return}; a candidate that calls the second parameter `c` gives
//! {add, a, c, return}: intersection 3, union 5, gap `1 − 3/5 = 0.40`, which fails (> 0.35).
//!
//! # Structure Gap: is the control skeleton attached the same way?
//!
//! The ordered tree edit distance of Zhang and Shasha (1989) between `B(R)` and `B(C)` with
//! unit costs (insert 1, delete 1, relabel 0 for equal categories and 1 otherwise; labels are
//! the keyword gap's business):
//!
//! ```text
//! structure_gap = min(1, TED(B(R), B(C)) / max(|B(R)|, |B(C)|))
//! ```
//!
//! Zhang–Shasha rather than a top-down alignment: a node inserted between a parent and its
//! children (a fabricated loop around a branch) costs 1 here, whereas a top-down alignment
//! must delete and re-insert the whole subtree, so one wrong wrapper would look like a wholly
//! wrong function. Sibling order counts ("roughly the same order"). TED can exceed the larger
//! size (a chain against a star), hence the cap.
//!
//! *Worked example.* Reference `(FUNCTION f (BRANCH if (RETURN return)) (RETURN return))`,
//! candidate `(FUNCTION f (BRANCH if (RETURN return) (RETURN return)))` (the final return
//! attached inside the branch): one delete and one insert, TED 2, larger size 4, gap 0.50,
//! which fails (> 0.45). A candidate that only wraps the branch in a fabricated loop,
//! `(FUNCTION f (LOOP for (BRANCH if (RETURN return))) (RETURN return))`, has TED 1 over 5
//! nodes: 0.20.
//!
//! *Bounding the cost.* Zhang–Shasha needs `(Σ over key roots of B(R) of subtree size) ×
//! (same for B(C))` cell updates and two `|B(R)|×|B(C)|` tables. It runs exactly when that is
//! at most [`TED_BUDGET`] and both trees have at most [`TED_MAX_NODES`] nodes. Otherwise both
//! trees are cut to their first `k` nodes in pre-order (a pre-order prefix is a tree with the
//! same root), `k` shrinking by a quarter until the cost fits, and
//! `structure_gap = min(1, max(TED_k / max(k_R, k_C), |n_R − n_C| / max(n_R, n_C)))`; the
//! second term is a true lower bound because TED is at least the size difference.
//! `structure_exact` is then false.
//!
//! # Pass/fail
//!
//! An answer passes iff `statement_gap ≤ t.statement`, `keyword_gap ≤ t.keyword` and
//! `structure_gap ≤ t.structure` (compared with [`within`]). [`Thresholds::default`] is the
//! paper's 0.30 / 0.35 / 0.45; [`Thresholds::for_language`] relaxes C to 0.35 / 0.40 / 0.50 as
//! the paper does "for C programs" (C++ keeps the defaults: the paper evaluated C only).

use super::within;
use crate::syntax::normalize::{backbone, Category, NormNode};
use crate::syntax::Language;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Zhang–Shasha runs exactly up to this many cell updates.
pub const TED_BUDGET: u64 = 20_000_000;
/// ... and up to this many nodes per backbone tree.
pub const TED_MAX_NODES: usize = 1500;
/// At most this many missing/extra tokens are listed in [`AstScores`].
const MAX_LISTED_TOKENS: usize = 32;

/// Pass thresholds (inclusive upper bounds) for the three gaps.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Thresholds {
    pub statement: f64,
    pub keyword: f64,
    pub structure: f64,
}

impl Default for Thresholds {
    /// The paper's thresholds: 0.30 / 0.35 / 0.45.
    fn default() -> Self {
        Thresholds {
            statement: 0.30,
            keyword: 0.35,
            structure: 0.45,
        }
    }
}

impl Thresholds {
    /// The paper's thresholds for a language: C is relaxed to 0.35 / 0.40 / 0.50.
    pub fn for_language(lang: Language) -> Thresholds {
        match lang {
            Language::C => Thresholds {
                statement: 0.35,
                keyword: 0.40,
                structure: 0.50,
            },
            _ => Thresholds::default(),
        }
    }

    /// True when all three gaps are within their thresholds.
    pub fn passes(&self, statement_gap: f64, keyword_gap: f64, structure_gap: f64) -> bool {
        within(statement_gap, self.statement)
            && within(keyword_gap, self.keyword)
            && within(structure_gap, self.structure)
    }
}

/// The three AST gaps, the verdict, and what made the gaps.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AstScores {
    pub statement_gap: f64,
    pub keyword_gap: f64,
    pub structure_gap: f64,
    pub pass: bool,
    pub thresholds: Thresholds,
    /// False when the structure gap was bounded (trees over the edit-distance budget).
    pub structure_exact: bool,
    /// Backbone categories with fewer nodes in the candidate: how many fewer.
    pub missing_statements: BTreeMap<Category, usize>,
    /// Backbone categories with more nodes in the candidate: how many more.
    pub extra_statements: BTreeMap<Category, usize>,
    /// Reference label words absent from the candidate (sorted, at most 32).
    pub missing_tokens: Vec<String>,
    /// Candidate label words absent from the reference (sorted, at most 32).
    pub extra_tokens: Vec<String>,
}

/// Scores a candidate (LLM) AST against the reference with the language's thresholds.
pub fn score_ast(reference: &NormNode, candidate: &NormNode, lang: Language) -> AstScores {
    score_ast_with(reference, candidate, &Thresholds::for_language(lang))
}

/// Scores a candidate AST against the reference with explicit thresholds.
pub fn score_ast_with(
    reference: &NormNode,
    candidate: &NormNode,
    thresholds: &Thresholds,
) -> AstScores {
    let ref_backbone = backbone(reference);
    let cand_backbone = backbone(candidate);
    let statement = statement_gap(&ref_backbone, &cand_backbone);
    let keyword = keyword_gap(reference, candidate);
    let (structure, structure_exact) = structure_gap(&ref_backbone, &cand_backbone);

    let r = backbone_counts(&ref_backbone);
    let m = backbone_counts(&cand_backbone);
    let mut missing_statements = BTreeMap::new();
    let mut extra_statements = BTreeMap::new();
    for c in Category::BACKBONE {
        let (rc, mc) = (count(&r, c), count(&m, c));
        if rc > mc {
            missing_statements.insert(c, rc - mc);
        } else if mc > rc {
            extra_statements.insert(c, mc - rc);
        }
    }
    let kr = label_tokens(reference);
    let kc = label_tokens(candidate);
    let missing_tokens = kr
        .difference(&kc)
        .take(MAX_LISTED_TOKENS)
        .cloned()
        .collect();
    let extra_tokens = kc
        .difference(&kr)
        .take(MAX_LISTED_TOKENS)
        .cloned()
        .collect();

    AstScores {
        statement_gap: statement,
        keyword_gap: keyword,
        structure_gap: structure,
        pass: thresholds.passes(statement, keyword, structure),
        thresholds: *thresholds,
        structure_exact,
        missing_statements,
        extra_statements,
        missing_tokens,
        extra_tokens,
    }
}

fn backbone_counts(tree: &NormNode) -> BTreeMap<Category, usize> {
    let mut counts = tree.category_counts();
    counts.retain(|c, _| c.is_backbone());
    counts
}

fn count(counts: &BTreeMap<Category, usize>, c: Category) -> usize {
    counts.get(&c).copied().unwrap_or(0)
}

fn statement_weight(c: Category) -> f64 {
    match c {
        Category::Assign | Category::Call => 0.5,
        _ => 1.0,
    }
}

/// Statement Gap (see the module docs). Only backbone categories are counted, so full trees
/// and their backbones give the same result.
pub fn statement_gap(reference: &NormNode, candidate: &NormNode) -> f64 {
    let r = backbone_counts(reference);
    let m = backbone_counts(candidate);
    let unforgiven = [Category::Branch, Category::Loop, Category::Return]
        .into_iter()
        .any(|c| count(&r, c) > 0 && count(&m, c) == 0);
    if unforgiven {
        return 1.0;
    }
    let mut diff = 0.0;
    let mut total = 0.0;
    for c in Category::BACKBONE {
        let (rc, mc) = (count(&r, c) as f64, count(&m, c) as f64);
        diff += statement_weight(c) * (rc - mc).abs();
        total += statement_weight(c) * rc;
    }
    (diff / total.max(1.0)).min(1.0)
}

/// The lower-cased words of the labels of all non-LITERAL nodes.
pub fn label_tokens(tree: &NormNode) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for n in tree.preorder() {
        if n.category == Category::Literal {
            continue;
        }
        for word in n
            .label
            .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
            .filter(|w| !w.is_empty())
        {
            out.insert(word.to_lowercase());
        }
    }
    out
}

/// Keyword Gap (see the module docs).
pub fn keyword_gap(reference: &NormNode, candidate: &NormNode) -> f64 {
    let a = label_tokens(reference);
    let b = label_tokens(candidate);
    let union = a.union(&b).count();
    if union == 0 {
        return 0.0;
    }
    let inter = a.intersection(&b).count();
    1.0 - inter as f64 / union as f64
}

/// Structure Gap over two backbone trees (see the module docs), and whether it is exact.
pub fn structure_gap(reference: &NormNode, candidate: &NormNode) -> (f64, bool) {
    let n_r = reference.size();
    let n_c = candidate.size();
    let largest = n_r.max(n_c).max(1);
    let a = PostOrder::new(reference, TED_MAX_NODES);
    let b = PostOrder::new(candidate, TED_MAX_NODES);
    if a.len() == n_r && b.len() == n_c && a.cost(&b) <= TED_BUDGET {
        let ted = zhang_shasha(&a, &b);
        return ((ted as f64 / largest as f64).min(1.0), true);
    }
    // Bounded: compare pre-order prefixes, keep the size difference as a lower bound.
    let mut k = TED_MAX_NODES.min(largest);
    let (a, b) = loop {
        let a = PostOrder::new(reference, k);
        let b = PostOrder::new(candidate, k);
        if a.cost(&b) <= TED_BUDGET || k <= 1 {
            break (a, b);
        }
        k = (k * 3 / 4).max(1);
    };
    let ted = zhang_shasha(&a, &b);
    let prefix = ted as f64 / a.len().max(b.len()).max(1) as f64;
    let size = n_r.abs_diff(n_c) as f64 / largest as f64;
    (prefix.max(size).min(1.0), false)
}

/// Ordered tree edit distance with unit costs (relabel cost 0 for equal categories), exact;
/// `None` when the pair is over [`TED_MAX_NODES`] or [`TED_BUDGET`].
pub fn tree_edit_distance(a: &NormNode, b: &NormNode) -> Option<usize> {
    let (n_a, n_b) = (a.size(), b.size());
    if n_a > TED_MAX_NODES || n_b > TED_MAX_NODES {
        return None;
    }
    let a = PostOrder::new(a, TED_MAX_NODES);
    let b = PostOrder::new(b, TED_MAX_NODES);
    (a.cost(&b) <= TED_BUDGET).then(|| zhang_shasha(&a, &b) as usize)
}

/// A tree (or its first `limit` nodes in pre-order) in post-order with leftmost-leaf indices.
struct PostOrder {
    labels: Vec<Category>,
    /// Post-order index of the leftmost leaf of each node's subtree.
    leftmost: Vec<usize>,
    /// Nodes with no later node sharing their leftmost leaf, ascending.
    keyroots: Vec<usize>,
}

impl PostOrder {
    fn new(root: &NormNode, limit: usize) -> PostOrder {
        let mut labels = Vec::new();
        let mut leftmost = Vec::new();
        // (node, next child, leftmost leaf of the subtree once known)
        let mut stack: Vec<(&NormNode, usize, Option<usize>)> = vec![(root, 0, None)];
        let mut visited = 1usize;
        while let Some(top) = stack.last_mut() {
            if top.1 < top.0.children.len() && visited < limit {
                let child = &top.0.children[top.1];
                top.1 += 1;
                visited += 1;
                stack.push((child, 0, None));
                continue;
            }
            let Some((node, _, first)) = stack.pop() else {
                break;
            };
            let idx = labels.len();
            let lml = first.unwrap_or(idx);
            labels.push(node.category);
            leftmost.push(lml);
            if let Some(parent) = stack.last_mut() {
                if parent.2.is_none() {
                    parent.2 = Some(lml);
                }
            }
        }
        let mut seen = vec![false; labels.len()];
        let mut keyroots = Vec::new();
        for i in (0..labels.len()).rev() {
            if !seen[leftmost[i]] {
                seen[leftmost[i]] = true;
                keyroots.push(i);
            }
        }
        keyroots.reverse();
        PostOrder {
            labels,
            leftmost,
            keyroots,
        }
    }

    fn len(&self) -> usize {
        self.labels.len()
    }

    fn keyroot_work(&self) -> u64 {
        self.keyroots
            .iter()
            .map(|&k| (k - self.leftmost[k] + 1) as u64)
            .sum()
    }

    /// Cell updates Zhang–Shasha needs for this pair.
    fn cost(&self, other: &PostOrder) -> u64 {
        self.keyroot_work().saturating_mul(other.keyroot_work())
    }
}

fn zhang_shasha(a: &PostOrder, b: &PostOrder) -> u32 {
    let (n1, n2) = (a.len(), b.len());
    if n1 == 0 || n2 == 0 {
        return (n1 + n2) as u32;
    }
    let mut td = vec![0u32; n1 * n2];
    let stride = n2 + 1;
    let mut fd = vec![0u32; (n1 + 1) * stride];
    for &i in &a.keyroots {
        for &j in &b.keyroots {
            let (li, lj) = (a.leftmost[i], b.leftmost[j]);
            let rows = i - li + 2;
            let cols = j - lj + 2;
            fd[0] = 0;
            for x in 1..rows {
                fd[x * stride] = fd[(x - 1) * stride] + 1;
            }
            for y in 1..cols {
                fd[y] = fd[y - 1] + 1;
            }
            for x in 1..rows {
                let i1 = li + x - 1;
                for y in 1..cols {
                    let j1 = lj + y - 1;
                    let delete = fd[(x - 1) * stride + y] + 1;
                    let insert = fd[x * stride + y - 1] + 1;
                    let value = if a.leftmost[i1] == li && b.leftmost[j1] == lj {
                        let relabel = u32::from(a.labels[i1] != b.labels[j1]);
                        let v = delete
                            .min(insert)
                            .min(fd[(x - 1) * stride + y - 1] + relabel);
                        td[i1 * n2 + j1] = v;
                        v
                    } else {
                        let p = a.leftmost[i1] - li;
                        let q = b.leftmost[j1] - lj;
                        delete
                            .min(insert)
                            .min(fd[p * stride + q] + td[i1 * n2 + j1])
                    };
                    fd[x * stride + y] = value;
                }
            }
        }
    }
    td[(n1 - 1) * n2 + (n2 - 1)]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(text: &str) -> NormNode {
        NormNode::parse_compact(text).expect("valid compact tree")
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn identical_trees_score_zero_and_pass() {
        let tree = t("(FUNCTION f (PARAM a) (BRANCH if (IDENT a) (RETURN return (CALL g (IDENT a)))) (LOOP for (ASSIGN = (IDENT x) (LITERAL 1))))");
        for lang in Language::ALL {
            let s = score_ast(&tree, &tree.clone(), lang);
            assert_eq!(
                (s.statement_gap, s.keyword_gap, s.structure_gap),
                (0.0, 0.0, 0.0)
            );
            assert!(s.pass && s.structure_exact);
            assert!(s.missing_statements.is_empty() && s.extra_statements.is_empty());
            assert!(s.missing_tokens.is_empty() && s.extra_tokens.is_empty());
        }
    }

    #[test]
    fn statement_gap_worked_example() {
        let reference =
            t("(FUNCTION f (ASSIGN =) (ASSIGN =) (CALL g) (BRANCH if (CALL h) (RETURN return)))");
        let candidate = t(
            "(FUNCTION f (ASSIGN =) (ASSIGN =) (LOOP for (CALL g)) (BRANCH if (RETURN return)))",
        );
        let gap = statement_gap(&reference, &candidate);
        assert!(close(gap, 0.30), "{gap}");
        assert!(within(gap, Thresholds::default().statement));
        let s = score_ast_with(&reference, &candidate, &Thresholds::default());
        assert_eq!(s.missing_statements, BTreeMap::from([(Category::Call, 1)]));
        assert_eq!(s.extra_statements, BTreeMap::from([(Category::Loop, 1)]));
        let no_return = t("(FUNCTION f (ASSIGN =) (ASSIGN =) (LOOP for (CALL g)) (BRANCH if))");
        assert_eq!(statement_gap(&reference, &no_return), 1.0);
    }

    #[test]
    fn statement_gap_is_capped_and_defined_for_empty_references() {
        let reference = t("(FUNCTION f)");
        let bloated = t("(FUNCTION f (CALL a) (CALL b) (TRY try (EXCEPT except)))");
        assert_eq!(statement_gap(&reference, &bloated), 1.0);
        assert_eq!(statement_gap(&t("(BLOCK)"), &t("(BLOCK)")), 0.0);
        // Extra non-critical nodes cost half: one extra CALL over N = 1 + 0.5 = 1.5.
        let one_call = t("(FUNCTION f (CALL a))");
        let two_calls = t("(FUNCTION f (CALL a) (CALL a))");
        assert!(close(statement_gap(&one_call, &two_calls), 0.5 / 1.5));
    }

    #[test]
    fn keyword_gap_worked_example() {
        let reference = t("(FUNCTION add (PARAM a) (PARAM b) (RETURN return (IDENT a) (IDENT b)))");
        let candidate = t("(FUNCTION add (PARAM a) (PARAM c) (RETURN return (IDENT a) (IDENT c)))");
        let gap = keyword_gap(&reference, &candidate);
        assert!(close(gap, 0.40), "{gap}");
        let s = score_ast_with(&reference, &candidate, &Thresholds::default());
        assert!(!s.pass);
        assert_eq!(s.missing_tokens, ["b"]);
        assert_eq!(s.extra_tokens, ["c"]);
    }

    #[test]
    fn keyword_tokens_split_qualified_names_and_ignore_literals_and_case() {
        let tree = t("(FUNCTION Load (CALL self.load_all (LITERAL \"\\\"secret\\\"\")) (ASSIGN += (IDENT $x)))");
        let tokens: Vec<String> = label_tokens(&tree).into_iter().collect();
        assert_eq!(tokens, ["$x", "load", "load_all", "self"]);
        assert_eq!(keyword_gap(&t("(BLOCK)"), &t("(BLOCK (LITERAL 1))")), 0.0);
    }

    #[test]
    fn structure_gap_worked_example() {
        let reference = t("(FUNCTION f (BRANCH if (RETURN return)) (RETURN return))");
        let misattached = t("(FUNCTION f (BRANCH if (RETURN return) (RETURN return)))");
        assert_eq!(tree_edit_distance(&reference, &misattached), Some(2));
        assert_eq!(structure_gap(&reference, &misattached), (0.5, true));
        let wrapped = t("(FUNCTION f (LOOP for (BRANCH if (RETURN return))) (RETURN return))");
        assert_eq!(tree_edit_distance(&reference, &wrapped), Some(1));
        let (gap, exact) = structure_gap(&reference, &wrapped);
        assert!(close(gap, 0.2) && exact);
    }

    #[test]
    fn tree_edit_distance_matches_known_values() {
        // The classic Zhang–Shasha example: f(d(a, c(b)), e) vs f(c(d(a, b)), e) is 2, here
        // with categories standing in for the letters.
        let a = t("(FUNCTION (BRANCH (ASSIGN) (LOOP (CALL))) (RETURN))");
        let b = t("(FUNCTION (LOOP (BRANCH (ASSIGN) (CALL))) (RETURN))");
        assert_eq!(tree_edit_distance(&a, &b), Some(2));
        assert_eq!(tree_edit_distance(&b, &a), Some(2));
        assert_eq!(tree_edit_distance(&a, &a), Some(0));
        // Relabel only.
        assert_eq!(
            tree_edit_distance(&t("(FUNCTION (CALL))"), &t("(FUNCTION (LOOP))")),
            Some(1)
        );
        // Sibling order matters.
        assert_eq!(
            tree_edit_distance(
                &t("(FUNCTION (CALL) (LOOP))"),
                &t("(FUNCTION (LOOP) (CALL))")
            ),
            Some(2)
        );
        // A chain against a star: TED exceeds the size, the gap is capped at 1.
        let chain = t("(FUNCTION (CALL (CALL (CALL (CALL)))))");
        let star = t("(FUNCTION (CALL) (CALL) (CALL) (CALL))");
        assert_eq!(tree_edit_distance(&chain, &star), Some(6));
        assert_eq!(structure_gap(&chain, &star), (1.0, true));
    }

    #[test]
    fn fabricated_nodes_fail() {
        // The reference: a guard and a call. The answer invents a retry loop, a try/except
        // and two calls that do not exist.
        let reference = t("(FUNCTION save (PARAM data) (BRANCH if (IDENT data) (RETURN return)) (CALL write (IDENT data)))");
        let fabricated = t("(FUNCTION save (PARAM data) (BRANCH if (IDENT data) (RETURN return)) (LOOP for (IDENT retry) (TRY try (CALL write (IDENT data)) (EXCEPT except (CALL log (IDENT error)) (CALL sleep (LITERAL 1))))))");
        let s = score_ast(&reference, &fabricated, Language::Python);
        assert!(!s.pass, "{s:?}");
        assert!(s.statement_gap > 0.30, "{s:?}");
        assert_eq!(
            s.extra_statements,
            BTreeMap::from([
                (Category::Loop, 1),
                (Category::Call, 2),
                (Category::Try, 1),
                (Category::Except, 1)
            ])
        );
        assert_eq!(
            s.extra_tokens,
            ["error", "except", "for", "log", "retry", "sleep", "try"]
        );
    }

    #[test]
    fn thresholds_are_per_language_and_inclusive() {
        assert_eq!(
            Thresholds::default(),
            Thresholds {
                statement: 0.30,
                keyword: 0.35,
                structure: 0.45
            }
        );
        assert_eq!(
            Thresholds::for_language(Language::Python),
            Thresholds::default()
        );
        assert_eq!(
            Thresholds::for_language(Language::Cpp),
            Thresholds::default()
        );
        assert_eq!(
            Thresholds::for_language(Language::C),
            Thresholds {
                statement: 0.35,
                keyword: 0.40,
                structure: 0.50
            }
        );
        let t = Thresholds::default();
        assert!(t.passes(0.30, 0.35, 0.45));
        assert!(t.passes(1.5 / 5.0, 0.35, 0.45));
        assert!(!t.passes(0.3001, 0.0, 0.0));
        assert!(!t.passes(0.0, 0.36, 0.0));
        assert!(!t.passes(0.0, 0.0, 0.46));
        // The keyword example (0.40) fails by default and passes under the C thresholds.
        let reference = NormNode::parse_compact(
            "(FUNCTION add (PARAM a) (PARAM b) (RETURN return (IDENT a) (IDENT b)))",
        )
        .unwrap();
        let candidate = NormNode::parse_compact(
            "(FUNCTION add (PARAM a) (PARAM c) (RETURN return (IDENT a) (IDENT c)))",
        )
        .unwrap();
        assert!(!score_ast(&reference, &candidate, Language::Java).pass);
        assert!(score_ast(&reference, &candidate, Language::C).pass);
    }

    #[test]
    fn large_trees_are_bounded_and_flagged() {
        // 3000 sequential calls against 2000: over the node limit, so bounded.
        let big = NormNode::with_children(
            Category::Function,
            "f",
            (0..3000)
                .map(|_| NormNode::leaf(Category::Call, "g"))
                .collect(),
        );
        let smaller = NormNode::with_children(
            Category::Function,
            "f",
            (0..2000)
                .map(|_| NormNode::leaf(Category::Call, "g"))
                .collect(),
        );
        let (gap, exact) = structure_gap(&big, &smaller);
        assert!(!exact);
        // The prefixes agree; the size difference gives the lower bound 1000 / 3001.
        assert!(close(gap, 1000.0 / 3001.0), "{gap}");
        // Two complete binary trees of 1023 nodes: under the node limit, but Zhang–Shasha
        // would need about (1023 · log2(1023) / 2)² cell updates, over the budget.
        let a = complete_binary(10, Category::Call);
        let b = complete_binary(10, Category::Assign);
        assert_eq!(a.size(), 1023);
        assert_eq!(tree_edit_distance(&a, &b), None);
        let (gap, exact) = structure_gap(&a, &b);
        assert!(!exact);
        assert!((0.0..=1.0).contains(&gap));
        let s = score_ast(&a, &a.clone(), Language::Python);
        assert!(!s.structure_exact);
        assert_eq!(s.structure_gap, 0.0);
    }

    /// A complete binary tree of the given number of levels, built bottom-up.
    fn complete_binary(levels: u32, category: Category) -> NormNode {
        let mut level: Vec<NormNode> = (0..1usize << (levels - 1))
            .map(|_| NormNode::leaf(category, ""))
            .collect();
        while level.len() > 1 {
            let mut next = Vec::new();
            let mut it = level.into_iter();
            while let (Some(l), Some(r)) = (it.next(), it.next()) {
                next.push(NormNode::with_children(category, "", vec![l, r]));
            }
            level = next;
        }
        level.pop().unwrap_or_else(|| NormNode::leaf(category, ""))
    }

    #[test]
    fn empty_and_degenerate_trees_do_not_panic() {
        let lone = t("(BLOCK)");
        let s = score_ast(&lone, &lone, Language::C);
        assert!(s.pass);
        let s = score_ast(&t("(FUNCTION f (RETURN return))"), &lone, Language::C);
        assert_eq!(s.statement_gap, 1.0);
        assert!(!s.pass);
        let s = score_ast(&lone, &t("(FUNCTION f (RETURN return))"), Language::C);
        assert!(!s.pass);
    }
}
