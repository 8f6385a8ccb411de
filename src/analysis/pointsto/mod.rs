//! May-point-to analysis for C and C++: Andersen-style (inclusion-based), flow-insensitive,
//! context-insensitive and field-sensitive (by field name), over one file or a set of files.
//!
//! # Model
//!
//! * **Objects** are variables (globals: `function == None`; locals and parameters:
//!   `(function, name)` with the function's qualified name from
//!   [`collect_functions`]), functions (a target
//!   `{"kind": "var", "name": f, "function": null}`) and heap allocation sites
//!   (`{"kind": "heap", "name": "malloc@FILE:LINE:COL", "function": null}`; FILE is the
//!   unit's path as given, LINE and COL are 1-based, COL counts UTF-8 bytes, the position is
//!   the start of the allocating call or `new` expression). Recognised allocators: `malloc`,
//!   `calloc`, `realloc` (which may also return its argument's targets), `reallocarray`,
//!   `strdup`, `strndup`, `aligned_alloc`, `valloc`, `alloca`, and C++ `new` (named `new@…`).
//!   A function defined in the analysed units always wins over these library models.
//! * **Field-sensitive, by name:** a field of a struct object is an object of its own:
//!   `&s.f` is the field object `s.f` (target `{"kind": "field", "name": "s.f", "function":
//!   s's function}`; `s.a.b` for nested structs, `malloc@F:L:C.next` for a heap block's
//!   field), `p->f` is field `f` of every object `p` points to. Which objects have which
//!   fields comes from declared types: a variable or field declared with a struct type by
//!   value has the fields of that struct's layout; a heap block (type unknown) has any field;
//!   a pointer variable, a scalar field or a function reached through a cast has none and
//!   stands for itself (field-insensitive there). Fields nest at most
//!   [`MAX_FIELD_DEPTH`] deep. Members of a union (or of an anonymous
//!   union) overlap and designate the object itself. A struct variable's entry lists what
//!   any of its fields may point to. Struct copies (`s = t`, `s = *p`, `*p = s`, struct
//!   arguments by value, `memcpy`) copy field by field when one side is statically a struct
//!   object (a struct-typed variable or field, `p->inner` of a struct-typed member); copies
//!   between two unknown places (`*p = *q` through `void *`) move the whole-object contents
//!   only. Field objects are created on demand: where a field is accessed, or where it feeds
//!   an accessed field through copies. Arrays are one object: `a[i]` is `*(a + i)`, an array
//!   used as a value decays to `&a`, and struct members declared as arrays (`s.buf`) decay
//!   to the field object. Initializer lists assign fields by position (from the struct's
//!   declared layout, typedefs followed) or by designator (`.f = v`), nested lists into
//!   struct-typed fields; a struct of unknown layout takes every element into the object.
//!   Field names are compared, not offsets: pointer arithmetic from one field to another,
//!   and a struct's address being its first field's, are not modelled.
//! * **Statements** that generate constraints: declarations with initialisers, assignments (`p = &x`, `p = q`, `p = *q`,
//!   `*p = q`, and compound `p += i`), returns, direct calls to defined functions (actuals
//!   flow to formals, the return value to the call's value), indirect calls (`fp(a)`,
//!   `(*fp)(a)`, `s->op(a)`: parameters of every function the callee may point to are bound,
//!   discovered during solving), `memcpy`-like copies (`*d ⊇ *s`). Casts carry their
//!   operand's targets (a cast to a function-pointer type filters them, see below);
//!   `p++`, `p + i`, `p - i` keep p's targets; `&`, `|`, `^` keep their operands' targets
//!   (pointers through integer casts); comparisons, logical operators, `*`, `/`, `%` and
//!   shifts carry none.
//! * **Declared types keep function and data pointers apart** (`types.rs`): a place declared
//!   as a function pointer (a variable, parameter, field or return value; typedefs,
//!   including `#define NAME unsigned int`-style integer macros, followed) takes only
//!   functions and objects of unknown type (heap blocks, externs, types from unparsed
//!   headers); a data pointer takes no functions; `void *` and places of unknown type take
//!   anything. Data pointers are not split by struct type: C converts between struct
//!   pointer types and overlays structs on byte buffers.
//! * **C++ (where simple):** references are pointers that are implicitly dereferenced
//!   (`int &r = x` makes `r` point to `x`; reference parameters are bound to the actual's
//!   address at direct calls); `this` is a parameter of methods (bound at `obj.m()`,
//!   `p->m()`, implicit calls between methods, and `new T(..)` constructors); data members
//!   used without `this->` resolve to `*this`; method calls bind every method with that
//!   name (no class hierarchy); lambdas are functions (their free variables are the
//!   enclosing function's).
//! * Unknown identifiers (externs declared in headers, macros) are treated as globals; calls
//!   to unknown functions have no effect on points-to sets. K&R definitions are supported.
//! * **Output** lists every variable with a non-empty set, including struct and array
//!   variables (their set is what their members/elements may point to) and C++ `this`.
//!   Objects are identified by name: block-scoped shadowing within one function, `static`
//!   functions or globals with the same name in two units, and C++ overloads with the same
//!   qualified name are merged.
//! * **Not modelled:** field offsets (see above), context sensitivity, C++ direct-initialisation
//!   with arguments (`T x(a);` parses as a declaration of a function), virtual dispatch by
//!   class hierarchy (all methods of the called name are bound), functions returning
//!   references, reference parameters reached through function pointers (bound by value),
//!   string literals (no object), and library functions other than the allocators,
//!   `memcpy`/`memmove`/`strcpy`/`strncpy`/`strcat`/`strncat` (contents copied) and
//!   `memset`/`strchr`/`strrchr`/`strstr`/`strpbrk`/`memchr`/`strtok`/`fgets` (return
//!   their first argument).
//!
//! Solving is a worklist over the constraint graph with difference propagation over bit sets
//! (64 objects per word; sparse, dense once large), polling [`Cancel`]. Its work (words
//! moved) is bounded in proportion to the input: [`WORK_PER_BYTE`] per byte of C/C++ source,
//! at least [`MIN_WORK`], at most [`MAX_WORK`] ([`work_budget`]). Small programs converge far
//! below the bound; where sets explode (the SQLite amalgamation: most pointers reach most
//! objects), the solver stops there and the result is marked partial with an error.
//! Hash maps are used for lookups only, never iterated; worklists and outputs are ordered,
//! so output is deterministic. Expression lowering recurses at most
//! [`MAX_DEPTH`] levels; deeper parts are skipped with an error; statement walks are
//! iterative.

mod bits;
mod eval;
mod graph;
mod lower;
mod model;
mod types;
mod walk;

pub use crate::analysis::callgraph::SourceUnit;
pub use graph::{work_budget, MAX_WORK, MIN_WORK, WORK_PER_BYTE};
pub use lower::{MAX_DEPTH, MAX_FIELD_DEPTH};

use crate::syntax::functions::{collect_functions, Function};
use crate::syntax::{Cancel, ParsedFile};
use graph::{Gen, Graph, Incomplete, NodeKey};
use lower::{Lowerer, ObjKey};
use model::{supported, Model};
use serde::Serialize;
use std::collections::BTreeSet;
use tree_sitter::Node;

/// What a pointer may point to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TargetKind {
    /// A variable or a function.
    Var,
    /// A named field of an object (`s.f`, `s.a.b`, `malloc@F:L:C.next`).
    Field,
    /// A heap allocation site.
    Heap,
}

/// One points-to target. Sorted by kind, then name, then function.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Target {
    pub kind: TargetKind,
    pub name: String,
    /// The function of a local/parameter target; `None` for globals, functions and heap.
    pub function: Option<String>,
}

impl Target {
    pub fn var(function: Option<&str>, name: &str) -> Target {
        Target {
            kind: TargetKind::Var,
            name: name.to_string(),
            function: function.map(str::to_string),
        }
    }

    pub fn heap(name: &str) -> Target {
        Target {
            kind: TargetKind::Heap,
            name: name.to_string(),
            function: None,
        }
    }

    fn from_obj(obj: &ObjKey) -> Target {
        match obj {
            ObjKey::Var(v) => Target::var(v.function.as_deref(), &v.name),
            ObjKey::Func(f) => Target::var(None, f),
            ObjKey::Heap(h) => Target::heap(h),
            ObjKey::Hub(n) => Target::var(None, &format!("<copy {n}>")),
            ObjKey::Field(base, f) => {
                let b = Target::from_obj(base);
                Target {
                    kind: TargetKind::Field,
                    name: format!("{}.{f}", b.name),
                    function: b.function,
                }
            }
        }
    }
}

/// A heap target's name taken apart (`alloc@FILE:LINE:COL`, plus `.f.g` for a field of the
/// block; FILE may itself contain `:` and `.`, so the name is read from the end).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeapSite<'a> {
    /// The allocation site, `alloc@FILE:LINE:COL`.
    pub site: &'a str,
    /// 1-based line of the allocating call.
    pub line: usize,
    /// The field path (`next.data`) of a field target.
    pub fields: Option<&'a str>,
}

impl HeapSite<'_> {
    /// Parses a heap or heap-field target name; `None` for any other name.
    pub fn parse(name: &str) -> Option<HeapSite<'_>> {
        if !name.contains('@') {
            return None;
        }
        let (prefix, last) = name.rsplit_once(':')?;
        let (col, fields) = match last.split_once('.') {
            Some((c, f)) => (c, Some(f)),
            None => (last, None),
        };
        col.parse::<usize>().ok()?;
        let (_, line) = prefix.rsplit_once(':')?;
        Some(HeapSite {
            site: name.get(..prefix.len() + 1 + col.len())?,
            line: line.parse().ok()?,
            fields,
        })
    }
}

/// The targets of one pointer variable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PointsToEntry {
    /// Qualified name of the variable's function; `None` for globals.
    pub function: Option<String>,
    pub var: String,
    /// Non-empty, sorted.
    pub targets: Vec<Target>,
}

/// A problem met while analysing (unsupported language, depth limit, cancellation, bound).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PointsToError {
    /// The unit's path ("" for problems of the whole analysis).
    pub file: String,
    /// 1-based line, 0 when not tied to a line.
    pub line: usize,
    pub message: String,
}

/// A variable named by its function (qualified name; `None` for a global) and name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VarRef<'a> {
    pub function: Option<&'a str>,
    pub name: &'a str,
}

impl<'a> VarRef<'a> {
    pub fn global(name: &'a str) -> Self {
        VarRef {
            function: None,
            name,
        }
    }

    pub fn local(function: &'a str, name: &'a str) -> Self {
        VarRef {
            function: Some(function),
            name,
        }
    }
}

#[derive(Debug, Clone, Default)]
struct State {
    model: Model,
    graph: Graph,
}

/// The analysis result. Serialises as `{"points_to": [...]}` (plus `partial` and `errors`
/// when set).
#[derive(Debug, Clone, Default)]
pub struct PointsTo {
    /// Every variable with a non-empty points-to set, sorted by (function, var); globals
    /// (function `None`) first. Kept compact: each distinct target once, sets as indices
    /// ([`PointsTo::entries`] spells them out).
    sets: TargetSets,
    /// True when the result may be missing targets (cancelled, work bound, depth limit).
    pub partial: bool,
    pub errors: Vec<PointsToError>,
    /// The solver's model and graph, which [`PointsTo::eval_expr`] and
    /// [`PointsTo::entries_for_file`] read; `None` after [`PointsTo::without_solver_state`].
    state: Option<State>,
}

/// Points-to sets with every distinct target stored once: a set is a sorted list of indices
/// into `table` (which is in target order), 4 bytes a pair instead of a copy of the target's
/// names. On redis's 300k lines of C the 810k (variable, target) pairs took 119 MiB as copies.
#[derive(Debug, Clone, Default)]
struct TargetSets {
    table: Vec<Target>,
    /// (function, variable, indices into `table`, sorted).
    sets: Vec<(Option<String>, String, Vec<u32>)>,
}

impl TargetSets {
    /// Feeds `state` the targets local to `function` of each of its variables: all that the
    /// taint analysis reads of a function's points-to sets.
    fn hash_local_aliases<H: std::hash::Hasher>(&self, function: &str, state: &mut H) {
        use std::hash::Hash;
        let start = self
            .sets
            .partition_point(|(f, _, _)| f.as_deref() < Some(function));
        for (f, var, targets) in self.sets.get(start..).unwrap_or_default() {
            if f.as_deref() != Some(function) {
                break;
            }
            let local: Vec<&Target> = targets
                .iter()
                .filter_map(|&i| self.table.get(i as usize))
                .filter(|t| t.function.as_deref() == Some(function))
                .collect();
            if !local.is_empty() {
                (var, local).hash(state);
            }
        }
    }

    fn find(&self, var: VarRef<'_>) -> Option<&[u32]> {
        self.sets
            .binary_search_by(|(f, v, _)| (f.as_deref(), v.as_str()).cmp(&(var.function, var.name)))
            .ok()
            .map(|i| self.sets[i].2.as_slice())
    }
}

/// A variable's targets in target order, borrowed from the shared table
/// ([`PointsTo::targets`]); compares equal to a slice of the same targets.
#[derive(Clone)]
pub struct Targets<'a> {
    table: &'a [Target],
    ix: std::slice::Iter<'a, u32>,
}

impl<'a> Iterator for Targets<'a> {
    type Item = &'a Target;

    fn next(&mut self) -> Option<&'a Target> {
        self.ix.next().and_then(|&i| self.table.get(i as usize))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.ix.size_hint()
    }
}

impl ExactSizeIterator for Targets<'_> {}

impl<'a> Targets<'a> {
    pub fn is_empty(&self) -> bool {
        self.ix.len() == 0
    }

    /// Whether `t` is one of the targets (binary search: the table is in target order).
    pub fn contains(&self, t: &Target) -> bool {
        self.ix
            .as_slice()
            .binary_search_by(|&i| self.table[i as usize].cmp(t))
            .is_ok()
    }

    pub fn first(&self) -> Option<&'a Target> {
        self.clone().next()
    }
}

impl std::fmt::Debug for Targets<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.clone()).finish()
    }
}

impl PartialEq<&[Target]> for Targets<'_> {
    fn eq(&self, other: &&[Target]) -> bool {
        self.len() == other.len() && self.clone().zip(other.iter()).all(|(a, b)| a == b)
    }
}

impl Serialize for PointsTo {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let fields = 1 + usize::from(self.partial) + usize::from(!self.errors.is_empty());
        let mut st = serializer.serialize_struct("PointsTo", fields)?;
        st.serialize_field("points_to", &self.entries())?;
        if self.partial {
            st.serialize_field("partial", &self.partial)?;
        }
        if !self.errors.is_empty() {
            st.serialize_field("errors", &self.errors)?;
        }
        st.end()
    }
}

/// Analyses one file.
pub fn analyze_file(path: &str, file: &ParsedFile, cancel: &Cancel) -> PointsTo {
    analyze_points_to(
        &[SourceUnit {
            path: path.to_string(),
            file,
        }],
        cancel,
    )
}

/// Analyses a set of files together: globals (by name) and functions (by qualified name) are
/// shared across units, so calls and pointers flow between files. Units in languages other
/// than C and C++ are skipped with an error.
pub fn analyze_points_to(units: &[SourceUnit<'_>], cancel: &Cancel) -> PointsTo {
    let mut errors = Vec::new();
    let pairs: Vec<(String, &ParsedFile)> =
        units.iter().map(|u| (u.path.clone(), u.file)).collect();
    let functions: Vec<Vec<Function<'_>>> = units
        .iter()
        .map(|u| {
            if supported(u.file.language) {
                collect_functions(u.file)
            } else {
                errors.push(PointsToError {
                    file: u.path.clone(),
                    line: 0,
                    message: format!(
                        "points-to analysis supports C and C++ only; {} file not analysed",
                        u.file.language
                    ),
                });
                Vec::new()
            }
        })
        .collect();
    let model = Model::build(&pairs, &functions, cancel);
    let mut cancelled = model.cancelled;
    let mut graph = {
        let mut gen = Gen::new(&model);
        let mut walker = walk::Walker {
            gen: &mut gen,
            cancel,
            errors: &mut errors,
            steps: 0,
            cancelled,
        };
        for (ui, unit) in units.iter().enumerate() {
            if walker.cancelled || !supported(unit.file.language) {
                continue;
            }
            walker.globals(ui, &unit.path, unit.file);
            for func in functions.get(ui).into_iter().flatten() {
                if walker.cancelled {
                    break;
                }
                walker.function(ui, &unit.path, unit.file, func);
            }
        }
        cancelled = walker.cancelled;
        gen.graph
    };
    let mut partial = errors.iter().any(|e| e.message.contains("nested deeper"));
    let bytes = units
        .iter()
        .filter(|u| supported(u.file.language))
        .map(|u| u.file.text.len())
        .sum();
    let budget = work_budget(bytes);
    match graph.solve(&model, cancel, budget) {
        Some(Incomplete::Cancelled) => cancelled = true,
        Some(Incomplete::WorkLimit) => {
            partial = true;
            errors.push(PointsToError {
                file: String::new(),
                line: 0,
                message: format!(
                    "points-to solving stopped after {budget} propagation steps (the bound for {bytes} bytes of source); sets may be incomplete"
                ),
            });
        }
        None => {}
    }
    if cancelled {
        partial = true;
        errors.push(PointsToError {
            file: String::new(),
            line: 0,
            message: "points-to analysis was cancelled; results are partial".to_string(),
        });
    }
    let sets = target_sets(&graph);
    PointsTo {
        sets,
        partial,
        errors,
        state: Some(State { model, graph }),
    }
}

fn target_sets(graph: &Graph) -> TargetSets {
    let fields = graph.field_targets();
    // Every object's target, ranked once in target order (equal targets share a rank), so an
    // entry sorts and de-duplicates integers rather than comparing names.
    let mut ranked: Vec<(Target, u32)> = graph
        .objs
        .iter()
        .enumerate()
        .map(|(o, key)| (Target::from_obj(key), o as u32))
        .collect();
    ranked.sort();
    let mut rank = vec![0u32; ranked.len()];
    let mut by_rank: Vec<Target> = Vec::new();
    for (target, o) in ranked {
        if by_rank.last() != Some(&target) {
            by_rank.push(target);
        }
        if let Some(slot) = rank.get_mut(o as usize) {
            *slot = by_rank.len().saturating_sub(1) as u32;
        }
    }
    let mut out = Vec::new();
    let mut ranks: Vec<u32> = Vec::new();
    for (key, &node) in &graph.keys {
        let NodeKey::Var(var) = key else { continue };
        if var.name.is_empty() {
            continue;
        }
        // A struct variable's set is what its fields (at any depth, copied in or not) may
        // point to.
        ranks.clear();
        let own = graph.pts_of(node).into_iter().flat_map(|p| p.iter());
        let in_fields = graph
            .owner_of(node)
            .and_then(|o| fields.get(o as usize))
            .into_iter()
            .flat_map(|f| f.iter());
        ranks.extend(
            own.chain(in_fields)
                .filter_map(|o| rank.get(o as usize).copied()),
        );
        if ranks.is_empty() {
            continue;
        }
        ranks.sort_unstable();
        ranks.dedup();
        out.push((
            var.function.as_deref().map(str::to_string),
            var.name.to_string(),
            ranks.clone(),
        ));
    }
    // `keys` is ordered by node key, not by (function, name): sort for the lookups.
    out.sort_unstable_by(|a, b| {
        (a.0.as_deref(), a.1.as_str()).cmp(&(b.0.as_deref(), b.1.as_str()))
    });
    TargetSets {
        table: by_rank,
        sets: out,
    }
}

/// True when two target sets share a target.
pub fn sets_may_alias(a: &BTreeSet<Target>, b: &BTreeSet<Target>) -> bool {
    a.intersection(b).next().is_some()
}

impl PointsTo {
    /// One entry per variable with a non-empty points-to set, sorted by (function, var);
    /// globals (function `None`) first.
    pub fn entries(&self) -> Vec<PointsToEntry> {
        self.sets.sets.iter().map(|set| self.entry(set)).collect()
    }

    fn entry(&self, (function, var, ix): &(Option<String>, String, Vec<u32>)) -> PointsToEntry {
        PointsToEntry {
            function: function.clone(),
            var: var.clone(),
            targets: ix
                .iter()
                .map(|&i| self.sets.table[i as usize].clone())
                .collect(),
        }
    }

    /// How many variables have a non-empty set.
    pub fn len(&self) -> usize {
        self.sets.sets.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sets.sets.is_empty()
    }

    /// Feeds `state` what the variables of `function` may point to among its own locals and
    /// parameters (the same for two results that agree on those sets).
    pub fn hash_local_aliases<H: std::hash::Hasher>(&self, function: &str, state: &mut H) {
        self.sets.hash_local_aliases(function, state)
    }

    /// The targets of a variable, sorted (none when it points to nothing known).
    pub fn targets(&self, var: VarRef<'_>) -> Targets<'_> {
        Targets {
            table: &self.sets.table,
            ix: self.sets.find(var).unwrap_or(&[]).iter(),
        }
    }

    /// May `a` and `b` point to the same object (non-empty intersection)?
    pub fn may_alias(&self, a: VarRef<'_>, b: VarRef<'_>) -> bool {
        let (Some(ta), Some(tb)) = (self.sets.find(a), self.sets.find(b)) else {
            return false;
        };
        ta.iter().any(|t| tb.binary_search(t).is_ok())
    }

    /// The same sets without the solver's model and graph, which take most of the memory of a
    /// large analysis and which only [`PointsTo::eval_expr`] and
    /// [`PointsTo::entries_for_file`] read (they answer nothing afterwards). The workspace
    /// taint analysis, which asks only for [`PointsTo::targets`], keeps this.
    pub fn without_solver_state(mut self) -> PointsTo {
        self.state = None;
        self
    }

    /// The entries for variables of one unit: locals of functions defined there and globals
    /// declared there (globals declared nowhere, such as externs from unparsed headers, are
    /// listed with every unit).
    pub fn entries_for_file(&self, path: &str) -> Vec<PointsToEntry> {
        let Some(state) = &self.state else {
            return Vec::new();
        };
        let model = &state.model;
        let Some(unit) = model.units.iter().position(|u| u.path == path) else {
            return Vec::new();
        };
        // Only this unit's sets are spelled out (the CLI asks once per file).
        self.sets
            .sets
            .iter()
            .filter(|(function, var, _)| match function {
                Some(f) => model.function_units.get(f) == Some(&unit),
                None => model
                    .global_units
                    .get(var)
                    .is_none_or(|units| units.contains(&unit)),
            })
            .map(|set| self.entry(set))
            .collect()
    }

    /// What an expression of a unit may point to, evaluated against the solved sets, with
    /// names resolved in `function` (qualified name; `None` for global scope) and then among
    /// globals. E.g. `s->next`, `&a[1]`, `*pp`, `fp`.
    pub fn eval_expr(
        &self,
        path: &str,
        file: &ParsedFile,
        function: Option<&str>,
        expr: Node<'_>,
    ) -> BTreeSet<Target> {
        let Some(state) = &self.state else {
            return BTreeSet::new();
        };
        let model = &state.model;
        let unit = model
            .units
            .iter()
            .position(|u| u.path == path)
            .unwrap_or(usize::MAX);
        let mut lw = Lowerer::new(model, unit, file, function);
        let v = lw.val(expr, 0);
        let ev = eval::Eval {
            graph: &state.graph,
            model,
        };
        ev.val(&v).iter().map(Target::from_obj).collect()
    }
}
