//! Call graphs over one file or a workspace of files.
//!
//! [`build_call_graph`] returns every call edge whose caller is a function found by
//! [`collect_functions`](crate::syntax::functions::collect_functions); callees are either a
//! defined function (with `file` and `signature`) or an *external* callee (`file: None`)
//! named by the call text (`cur.execute`, `printf`, `Foo` for an undefined class).
//!
//! # Attribution
//!
//! A call belongs to the innermost function whose definition contains it: calls inside a
//! nested function or lambda belong to that nested function. The whole definition counts,
//! so C++ constructor initializers (`: Base(x)`) and Solidity modifier invocations in a
//! header belong to the function. Calls at module or class top level have no caller and
//! produce no edge, but top-level statements still provide facts (imports, `x = Cls()`,
//! type aliases). `line` is the 1-based line where the call expression starts (for C++
//! declarations `Foo x(1);`, the declarator). Edges are sorted and deduplicated.
//!
//! # Resolution, most specific first
//!
//! * Immediately invoked lambdas (`(lambda: ..)()`, `[&]{..}()`) and names bound only to a
//!   lambda (`f = lambda x: ..`, `auto f = [](..){..}`) call that lambda.
//! * `self.m()` / `this.m()` / `this->m()` / `cls.m()` / Solidity `this.m()`: method `m` of
//!   the enclosing class, else of its bases found in the workspace, in lookup order: C3
//!   linearisation for Python and Solidity (Solidity merges bases right to left), depth
//!   first and left to right for Java, C++ and JS. Out-of-class C++ bodies (`void A::f()`)
//!   and lambdas/nested functions inside methods use the class of their method.
//! * `super().m()` / `super.m()` (Python, Java, JS, Solidity): `m` of the bases only.
//!   `Base::m()` / `Cls::m()` (C++), `Cls.m()` (all): that class's method (bases searched).
//! * `obj.m()` / `obj->m()`: the receiver's class from local facts, searched in the calling
//!   function, then enclosing functions, then class fields, then module-level variables:
//!   Python `obj = Cls(..)`, `obj: Cls`, parameter annotations, `self.f = Cls(..)` in any
//!   method; Java/C++/Solidity/TS declared types of locals, parameters and fields (`Cls x`,
//!   `Cls *p`, `std::unique_ptr<Cls>`, `this.field`), `var`/`auto`/`const` initialised with
//!   `new Cls(..)`/`Cls(..)`, casts, and calls whose unique target declares a class return
//!   type, Java enum constants. A declared type is narrowed to the class of the variable's
//!   only assigned value when that is a subclass (`Shape s = new Square()` -> `Square`).
//!   A variable assigned values of different classes, or bound by a loop, `with .. as`,
//!   destructuring or `except .. as`, is unknown (never guessed). Unknown receivers give
//!   an external callee named by the call text (nested argument lists shown as `(…)`).
//! * Bare `f()`: a nested function of the enclosing function chain (a local variable or
//!   parameter of that name shadows outer functions, except in Java), then — Java, C++ and
//!   Solidity only (implicit `this`; JS and Python have none) — a method of the enclosing
//!   class and its bases (Java/C++: then outer classes), then per language:
//!   * Python/JS/TS: a top-level function of the same file (the last definition wins), a
//!     class (constructor), a module-level `alias = f` or `g = lambda ..`, then imports:
//!     `from m import f [as g]` / `import { f as g } from "./m"` resolved against the unit
//!     paths (relative imports against the importing file; dotted modules by path suffix),
//!     then `from m import *`. `import m` + `m.f()` and `import * as m` + `m.f()` too, and
//!     top-level CommonJS `const m = require("./m")` / `const { f } = require("./m")`.
//!   * Java: static imports (`import static p.C.f`, `import static p.C.*`). Classes are
//!     found by (qualified) name: nested classes of the enclosing chain, then same file, same
//!     package or explicit import, then anywhere in the workspace.
//!   * C: the same file, then the unique non-`static` definition in another file (if
//!     several, the one whose file name matches an `#include`d header, else external).
//!   * C++: the enclosing namespaces innermost first (for out-of-class bodies `ns::A::f`,
//!     the namespaces of the qualified name), `using ns::f`, `using namespace ns`, then the
//!     global namespace; `static` and anonymous-namespace functions only from their own file.
//!   * Solidity: free functions of the same file, then of other files.
//! * Constructors: `new Foo(..)` (Java/C++/JS/Solidity), C++ `Foo x(args);`, `Foo x{..};`,
//!   `Foo(args)`, `Foo x;` (only when a constructor callable without arguments is defined),
//!   constructor initializers `: Base(x), member(y)`, Java `super(..)`/`this(..)`, JS
//!   `super(..)`, Python `Foo(..)` -> `Foo.Foo` / `Foo::Foo` / `Foo.__init__` /
//!   `Foo.constructor`. Python `__init__` and JS `constructor` are inherited from bases;
//!   Java/C++ constructors are not. A class without a defined constructor gives an external
//!   callee named `Foo`. C++ destructors are never call targets.
//! * Solidity: modifier invocations in a header (`onlyOwner`) call the modifier; in a
//!   constructor header `B(x)` calls `B`'s constructor, and `contract A is B(x)` is a call
//!   from `A.constructor` (when A defines one); `using L for T` makes `x.f()` call `L.f`;
//!   `IToken(addr).f()` calls the interface's declared `f`.
//! * Overloads (Java, C++, Solidity): candidates are filtered by argument count (C++ also
//!   accepts fewer arguments than parameters when no candidate fits, as default arguments
//!   may be on a declaration), then by literal and declared argument types against parameter
//!   types (`int`/`float`/`bool`/`string`/`char`/class name categories, widening allowed).
//!   If several candidates remain, an edge goes to each. Python/JS redefinitions: the last.
//! * Calls through function pointers, callbacks, parameters and other values are external:
//!   nothing is fabricated, and several same-named candidates are never guessed between.
//!   Python `super()` used as a receiver and Solidity type conversions (`IToken(addr)`)
//!   are not calls. Python default argument values belong to the defining scope.
//!
//! # Workspace
//!
//! Units are the files as given; `file` in the output is the unit's path string. Python
//! modules are matched by path suffix (`pkg/mod.py` is `pkg.mod`, `__init__.py` is its
//! package); JS/TS and Solidity import paths are resolved relative to the importing file
//! (extension and `/index` optional). Java classes are global by (nested) name, preferring
//! the same package. C and C++ units form one link space. A `.h` file parsed as C is
//! re-parsed as C++ when the workspace contains C++ sources.
//!
//! # Limits
//!
//! Indexing is one iterative walk per file; receiver typing recurses at most 24 levels and
//! spends at most 4000 inference steps per call site, beyond which the receiver is treated
//! as unknown and the result is flagged [`CallGraph::partial`]. The walk and resolution
//! poll the [`Cancel`] flag and return the edges found so far.

mod index;
mod resolve;
mod util;

use crate::syntax::{Cancel, Language, ParsedFile};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// A function as a call-graph endpoint. `file` is `None` for external (unresolved) callees.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct FunctionRef {
    pub file: Option<String>,
    /// Qualified name (see `syntax::functions`), or the callee expression's name when external.
    pub name: String,
    /// Signature, to tell overloads apart; `None` for external callees.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

impl FunctionRef {
    /// True for callees that are not defined in the analysed files.
    pub fn is_external(&self) -> bool {
        self.file.is_none()
    }
}

/// A call from `caller` to `callee`. The endpoints are shared: every edge of a function
/// points to its one `FunctionRef` (compared, ordered and serialised as the value), so an
/// edge costs three words rather than copies of both endpoints' path, name and signature
/// (figures in ARCHITECTURE.md, "workspace").
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct CallEdge {
    pub caller: Arc<FunctionRef>,
    pub callee: Arc<FunctionRef>,
    /// 1-based line of the call site.
    pub line: usize,
}

/// One input file of a call graph: its display path and parse.
pub struct SourceUnit<'a> {
    pub path: String,
    pub file: &'a ParsedFile,
}

impl<'a> SourceUnit<'a> {
    /// The units grouped by language family ([`Language::family`]), in order.
    pub fn by_family(units: &[SourceUnit<'a>]) -> BTreeMap<Language, Vec<SourceUnit<'a>>> {
        let mut families: BTreeMap<Language, Vec<SourceUnit<'a>>> = BTreeMap::new();
        for u in units {
            families
                .entry(u.file.language.family())
                .or_default()
                .push(SourceUnit {
                    path: u.path.clone(),
                    file: u.file,
                });
        }
        families
    }
}

/// A call graph with its completeness flag.
#[derive(Debug, Clone, Default)]
pub struct CallGraph {
    /// Edges sorted and deduplicated on (caller, callee, line).
    pub edges: Vec<CallEdge>,
    /// True when cancelled, or when a depth/step limit turned a receiver into "unknown".
    pub partial: bool,
    /// Human-readable notes on why the result is partial.
    pub notes: Vec<String>,
}

impl CallGraph {
    /// Defined callees of each function (externals excluded), for quick lookup.
    pub fn callees(&self) -> BTreeMap<&FunctionRef, BTreeSet<&FunctionRef>> {
        let mut out: BTreeMap<&FunctionRef, BTreeSet<&FunctionRef>> = BTreeMap::new();
        for e in &self.edges {
            let set = out.entry(&e.caller).or_default();
            if !e.callee.is_external() {
                set.insert(&e.callee);
            }
        }
        out
    }

    /// Callers of each defined function.
    pub fn callers(&self) -> BTreeMap<&FunctionRef, BTreeSet<&FunctionRef>> {
        let mut out: BTreeMap<&FunctionRef, BTreeSet<&FunctionRef>> = BTreeMap::new();
        for e in self.edges.iter().filter(|e| !e.callee.is_external()) {
            out.entry(&e.callee).or_default().insert(&e.caller);
        }
        out
    }
}

/// Builds the call graph over all functions of the given files; edges sorted, deduplicated.
pub fn build_call_graph(units: &[SourceUnit<'_>], cancel: &Cancel) -> Vec<CallEdge> {
    analyze_call_graph(units, cancel).edges
}

/// Like [`build_call_graph`], also reporting whether the result is partial. Each language
/// family ([`Language::family`]) is resolved on its own: a call in C++ never reaches a
/// Python class of the same name.
pub fn analyze_call_graph(units: &[SourceUnit<'_>], cancel: &Cancel) -> CallGraph {
    let families = SourceUnit::by_family(units);
    if families.len() <= 1 {
        return family_call_graph(units, cancel);
    }
    let mut edges = BTreeSet::new();
    let mut notes = Vec::new();
    for members in families.values() {
        let g = family_call_graph(members, cancel);
        edges.extend(g.edges);
        for n in g.notes {
            if !notes.contains(&n) {
                notes.push(n);
            }
        }
    }
    CallGraph {
        edges: edges.into_iter().collect(),
        partial: !notes.is_empty(),
        notes,
    }
}

/// Call edges read in place from one or more chunks (a workspace keeps one chunk per file,
/// so an update shares the unchanged files' edges instead of copying them).
#[derive(Debug, Clone, Copy)]
pub struct EdgeView<'a> {
    single: &'a [CallEdge],
    chunks: &'a [Arc<Vec<CallEdge>>],
}

impl<'a> EdgeView<'a> {
    /// The edges of chunks, in chunk order.
    pub fn chunks(chunks: &'a [Arc<Vec<CallEdge>>]) -> Self {
        EdgeView {
            single: &[],
            chunks,
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = &'a CallEdge> + 'a {
        let single = self.single;
        let chunks = self.chunks;
        single.iter().chain(chunks.iter().flat_map(|c| c.iter()))
    }

    pub fn len(&self) -> usize {
        self.single.len() + self.chunks.iter().map(|c| c.len()).sum::<usize>()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<'a> From<&'a [CallEdge]> for EdgeView<'a> {
    fn from(single: &'a [CallEdge]) -> Self {
        EdgeView {
            single,
            chunks: &[],
        }
    }
}

/// What one family's call graph keeps for its next update ([`update_call_graph`]): per unit,
/// its path, the hash of what other units' call resolution can read from it
/// ([`index::Index::interface_hashes`]), and the edges whose caller it defines.
#[derive(Debug, Clone, Default)]
pub struct GraphMemo {
    paths: Vec<String>,
    /// Exact and line-free interface hashes (`Index::interface_hashes`).
    interfaces: Vec<(u64, u64)>,
    /// Per unit: another unit has an edge to one of its functions whose name holds a line
    /// number (`<lambda@12>`); such a unit is reused only while its exact hash is unchanged.
    line_named_target: Vec<bool>,
    per_unit: Vec<Arc<Vec<CallEdge>>>,
    degraded: Vec<bool>,
    /// False when cancelled (the edges are partial and never reused).
    complete: bool,
    /// Why the graph is partial, if it is.
    pub notes: Vec<String>,
    /// Units whose call sites this run resolved (the others' edges were reused).
    pub resolved_units: usize,
}

impl GraphMemo {
    /// The edges, one chunk per unit (each sorted; chunks in unit order).
    pub fn chunks(&self) -> &[Arc<Vec<CallEdge>>] {
        &self.per_unit
    }

    pub fn edges(&self) -> EdgeView<'_> {
        EdgeView::chunks(&self.per_unit)
    }
}

/// The call graph of one language family's units, reusing `prev`, the memo of the previous
/// graph over the same unit paths in the same order, where that is exact. `same[i]` says unit
/// `i` is the very parse `prev` saw. When every other unit's interface hash (what call
/// resolution in *other* units can read from it: its functions, classes, fields, imports,
/// module variables, and the local facts that field types are inferred from) is unchanged,
/// only the changed units' call sites are resolved; the other units' edges are those of
/// `prev`. Otherwise every site is resolved. The result equals a fresh computation's (the
/// `callgraph_incremental` tests check it on random edits). The edges are the memo's chunks.
pub fn update_call_graph(
    units: &[SourceUnit<'_>],
    prev: Option<(&GraphMemo, &[bool])>,
    cancel: &Cancel,
) -> GraphMemo {
    family_graph(units, prev, true, cancel)
}

/// [`update_call_graph`]; without `keep`, the result is never the base of an update (no
/// interface hashes are computed: one-off graphs skip that cost).
fn family_graph(
    units: &[SourceUnit<'_>],
    prev: Option<(&GraphMemo, &[bool])>,
    keep: bool,
    cancel: &Cancel,
) -> GraphMemo {
    // `.h` files are detected as C; next to C++ sources they are C++ headers.
    let has_cpp = units.iter().any(|u| u.file.language == Language::Cpp);
    let reparsed: Vec<Option<ParsedFile>> = units
        .iter()
        .map(|u| {
            let is_header = u.path.to_ascii_lowercase().ends_with(".h");
            (has_cpp && is_header && u.file.language == Language::C)
                .then(|| ParsedFile::parse_with_cancel(Language::Cpp, u.file.text.clone(), cancel))
        })
        .collect();
    let units: Vec<SourceUnit<'_>> = units
        .iter()
        .zip(&reparsed)
        .map(|(u, r)| SourceUnit {
            path: u.path.clone(),
            file: r.as_ref().unwrap_or(u.file),
        })
        .collect();
    let ix = index::Index::build(&units, cancel);
    let Some(resolver) = resolve::Resolver::new(&ix) else {
        return GraphMemo {
            complete: !cancel.is_cancelled(),
            ..GraphMemo::default()
        };
    };
    let base_degraded = resolver.degraded.get();
    let interfaces = if keep {
        ix.interface_hashes()
    } else {
        Vec::new()
    };
    let n = ix.units.len();
    // Which units' sites to resolve.
    let reuse: Option<&GraphMemo> = prev.and_then(|(memo, same)| {
        let fits = memo.complete
            && memo.paths.len() == n
            && same.len() == n
            && memo.per_unit.len() == n
            && memo.interfaces.len() == n
            && memo.degraded.len() == n
            && memo.line_named_target.len() == n
            && ix.units.iter().zip(&memo.paths).all(|(u, p)| u.path == *p)
            && (0..n).all(|i| {
                let (Some(old), Some(new)) = (memo.interfaces.get(i), interfaces.get(i)) else {
                    return false;
                };
                same.get(i) == Some(&true)
                    || old == new
                    || (old.1 == new.1 && memo.line_named_target.get(i) == Some(&false))
            });
        fits.then_some(memo)
    });
    let resolve_unit: Vec<bool> = (0..n)
        .map(|i| reuse.is_none() || prev.and_then(|(_, same)| same.get(i)) != Some(&true))
        .collect();
    // One shared endpoint per function, and per external name, made on first use.
    let mut fun_refs: Vec<Option<Arc<FunctionRef>>> = vec![None; ix.funs.len()];
    let mut fun_ref = |id: usize| -> Option<Arc<FunctionRef>> {
        let slot = fun_refs.get_mut(id)?;
        if slot.is_none() {
            let f = ix.funs.get(id)?;
            *slot = Some(Arc::new(FunctionRef {
                file: Some(ix.units.get(f.unit)?.path.clone()),
                name: f.f.name.clone(),
                signature: Some(f.f.signature.clone()),
            }));
        }
        slot.clone()
    };
    let mut external_refs: std::collections::HashMap<String, Arc<FunctionRef>> =
        std::collections::HashMap::new();
    let mut fresh: Vec<BTreeSet<CallEdge>> = vec![BTreeSet::new(); n];
    let mut degraded = vec![false; n];
    let mut cancelled = ix.cancelled;
    for (i, site) in ix.sites.iter().enumerate() {
        if i.is_multiple_of(256) && cancel.is_cancelled() {
            cancelled = true;
            break;
        }
        let Some(unit) = ix.funs.get(site.fun).map(|f| f.unit) else {
            continue;
        };
        if resolve_unit.get(unit) != Some(&true) {
            continue;
        }
        let Some(caller) = fun_ref(site.fun) else {
            continue;
        };
        resolver.degraded.set(false);
        let targets = resolver.resolve_site(site);
        if resolver.degraded.get() {
            if let Some(d) = degraded.get_mut(unit) {
                *d = true;
            }
        }
        for (target, line) in targets {
            let callee = match target {
                resolve::Target::Fun(f) => match fun_ref(f) {
                    Some(r) => r,
                    None => continue,
                },
                resolve::Target::External(name) => {
                    if name.is_empty() {
                        continue;
                    }
                    Arc::clone(external_refs.entry(name).or_insert_with_key(|name| {
                        Arc::new(FunctionRef {
                            file: None,
                            name: name.clone(),
                            signature: None,
                        })
                    }))
                }
            };
            if let Some(set) = fresh.get_mut(unit) {
                set.insert(CallEdge {
                    caller: Arc::clone(&caller),
                    callee,
                    line,
                });
            }
        }
    }
    let mut per_unit = Vec::with_capacity(n);
    for (i, set) in fresh.into_iter().enumerate() {
        match reuse {
            Some(memo) if resolve_unit.get(i) != Some(&true) => {
                if let (Some(c), Some(d)) = (memo.per_unit.get(i), memo.degraded.get(i)) {
                    per_unit.push(Arc::clone(c));
                    if let Some(slot) = degraded.get_mut(i) {
                        *slot = *d;
                    }
                }
            }
            _ => per_unit.push(Arc::new(set.into_iter().collect::<Vec<_>>())),
        }
    }
    let mut notes = Vec::new();
    if cancelled {
        notes.push("call graph cancelled; edges are partial".to_string());
    }
    if base_degraded || degraded.iter().any(|d| *d) {
        notes.push(
            "receiver typing hit its depth or step limit; some callees left external".to_string(),
        );
    }
    // Units another unit's edges name a line-numbered function of.
    let unit_of: std::collections::HashMap<&str, usize> = ix
        .units
        .iter()
        .enumerate()
        .map(|(i, u)| (u.path.as_str(), i))
        .collect();
    let mut line_named_target = vec![false; if keep { n } else { 0 }];
    for e in per_unit.iter().filter(|_| keep).flat_map(|c| c.iter()) {
        if let Some(file) = e.callee.file.as_deref() {
            if e.callee.file != e.caller.file && e.callee.name.contains('@') {
                if let Some(slot) = unit_of
                    .get(file)
                    .and_then(|&i| line_named_target.get_mut(i))
                {
                    *slot = true;
                }
            }
        }
    }
    GraphMemo {
        paths: ix.units.iter().map(|u| u.path.clone()).collect(),
        interfaces,
        line_named_target,
        per_unit,
        degraded,
        complete: !cancelled,
        notes,
        resolved_units: resolve_unit.iter().filter(|r| **r).count(),
    }
}

/// The call graph of units of one language family.
fn family_call_graph(units: &[SourceUnit<'_>], cancel: &Cancel) -> CallGraph {
    let memo = family_graph(units, None, false, cancel);
    let mut edges: Vec<CallEdge> = memo
        .per_unit
        .into_iter()
        .flat_map(|c| Arc::try_unwrap(c).unwrap_or_else(|shared| shared.as_ref().clone()))
        .collect();
    edges.sort();
    edges.dedup();
    CallGraph {
        edges,
        partial: !memo.notes.is_empty(),
        notes: memo.notes,
    }
}

#[cfg(test)]
mod tests;
