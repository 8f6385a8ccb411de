//! One allocation-free pre-order walk over a subtree, for the analyses that visit every node
//! of a function or file. It replaces the explicit stacks of child vectors (`children()`
//! collected per node), which spent more time allocating than visiting.

use tree_sitter::Node;

/// What the walk does after visiting a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Visit {
    /// Visit the node's children next.
    Descend,
    /// Skip the node's children.
    Skip,
    /// End the walk.
    Stop,
}

/// Visits `root` and its descendants in document (pre-)order, never above `root`; `named`
/// limits the visits to named nodes (anonymous tokens are leaves, so nothing below them is
/// missed). The order is that of an explicit stack onto which each node's children are
/// pushed in reverse.
pub fn preorder<'t>(root: Node<'t>, named: bool, mut visit: impl FnMut(Node<'t>) -> Visit) {
    let mut cursor = root.walk();
    'walk: loop {
        let node = cursor.node();
        let step = if named && !node.is_named() {
            Visit::Skip
        } else {
            visit(node)
        };
        match step {
            Visit::Stop => return,
            Visit::Descend if cursor.goto_first_child() => continue,
            Visit::Descend | Visit::Skip => {}
        }
        loop {
            if cursor.goto_next_sibling() {
                continue 'walk;
            }
            if !cursor.goto_parent() {
                break 'walk;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::{Language, ParsedFile};

    /// The reference: an explicit stack of each node's children pushed in reverse.
    fn by_stack<'t>(root: Node<'t>, named: bool) -> Vec<Node<'t>> {
        let mut out = Vec::new();
        let mut stack = vec![root];
        while let Some(n) = stack.pop() {
            out.push(n);
            let mut c = n.walk();
            let kids: Vec<Node<'t>> = if named {
                n.named_children(&mut c).collect()
            } else {
                n.children(&mut c).collect()
            };
            stack.extend(kids.into_iter().rev());
        }
        out
    }

    #[test]
    fn preorder_visits_what_a_child_stack_visits_in_the_same_order() {
        let cases = [
            (Language::Python, "def f(a):\n    if a:\n        return [x for x in a]\n    return g(a, b=1)\nx = 1\n"),
            (Language::Java, "class A { int f(int x) { return x > 0 ? x : -x; } }"),
            (Language::C, "int main(int c, char **v) { for (;;) { if (c) break; } return 0; }"),
        ];
        for (lang, text) in cases {
            let file = ParsedFile::parse(lang, text);
            for named in [false, true] {
                let mut seen = Vec::new();
                preorder(file.root(), named, |n| {
                    seen.push(n);
                    Visit::Descend
                });
                assert_eq!(seen, by_stack(file.root(), named), "{lang:?} named={named}");
            }
            // A subtree walk stays inside the subtree.
            let first = file.root().named_child(0).expect("a first definition");
            let mut inside = 0;
            preorder(first, false, |n| {
                assert!(n.start_byte() >= first.start_byte() && n.end_byte() <= first.end_byte());
                inside += 1;
                Visit::Descend
            });
            assert_eq!(inside, by_stack(first, false).len());
        }
    }

    #[test]
    fn skip_leaves_out_the_children_and_stop_ends_the_walk() {
        let file = ParsedFile::parse(
            Language::Python,
            "def f():\n    return 1\ndef g():\n    return 2\n",
        );
        let root = file.root();
        let mut visited = Vec::new();
        preorder(root, true, |n| {
            visited.push(n);
            if n.parent() == Some(root) {
                Visit::Skip
            } else {
                Visit::Descend
            }
        });
        let mut c = root.walk();
        let top: Vec<Node<'_>> = root.named_children(&mut c).collect();
        assert_eq!(top.len(), 2);
        assert_eq!(visited, [vec![root], top].concat());
        let mut count = 0;
        preorder(file.root(), false, |_| {
            count += 1;
            if count == 3 {
                Visit::Stop
            } else {
                Visit::Descend
            }
        });
        assert_eq!(count, 3);
    }
}
