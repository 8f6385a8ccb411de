//! The workspace driver: compiled specs, function index, call-site resolution, the demand
//! set, bottom-up summaries, the parameter-taint fixpoint, the global store, and flow
//! extraction.

use super::interp::{FnCx, Interp};
use super::spec::{AttrPattern, CallPattern, CallShape, Seg, TaintSpec, TaintSpecs, Trust};
use super::syntax::{
    call_parts, collect_declared, is_call_kind, is_definition, java_class_fields, js_imports,
    js_pattern_bindings, parameter_types, python_imports, unwrap, visibility, ClassFields,
    Declared,
};
use super::value::{as_param, Entry, Step, Taint, Trails, ALL_KINDS};
use super::{FlowEnd, PathStep, TaintError, TaintFlow, TaintResult, TaintedVariable};
use crate::analysis::callgraph::{EdgeView, SourceUnit};
use crate::analysis::cfg::build_cfg;
use crate::analysis::pointsto::PointsTo;
use crate::analysis::rules;
use crate::syntax::functions::{Function, FunctionKind};
use crate::syntax::lang::{field, kind};
use crate::syntax::preproc::Macros;
use crate::syntax::walk::{preorder, Visit};
use crate::syntax::{Cancel, Language, ParsedFile};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use tree_sitter::Node;

pub(super) type FnId = usize;

/// Rounds of re-analysis when the global store (module variables, fields) changes.
const MAX_ROUNDS: usize = 4;
/// A function is interpreted at most this many times (recursion, changing summaries).
const MAX_ANALYSES_PER_FUNCTION: u32 = 6;
/// A call resolved by name to more candidates than this is treated as external.
const MAX_FALLBACK_TARGETS: usize = 4;
/// Nodes visited per function when collecting declarations.
const DECL_BUDGET: usize = 500_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Section {
    Source,
    Sink,
    Sanitizer,
    Propagator,
    Lookup,
}

/// Rule indices matched by one call.
#[derive(Debug, Default)]
pub(super) struct Matches {
    pub sources: Vec<usize>,
    pub sinks: Vec<usize>,
    pub sanitizers: Vec<usize>,
    pub propagators: Vec<usize>,
    pub lookups: Vec<usize>,
}

impl Matches {
    pub fn merge(&mut self, other: Matches) {
        for (into, from) in [
            (&mut self.sources, other.sources),
            (&mut self.sinks, other.sinks),
            (&mut self.sanitizers, other.sanitizers),
            (&mut self.propagators, other.propagators),
            (&mut self.lookups, other.lookups),
        ] {
            for r in from {
                if !into.contains(&r) {
                    into.push(r);
                }
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.sources.is_empty()
            && self.sinks.is_empty()
            && self.sanitizers.is_empty()
            && self.propagators.is_empty()
            && self.lookups.is_empty()
    }
}

/// A spec indexed by called name.
pub(super) struct Compiled {
    pub spec: TaintSpec,
    by_name: BTreeMap<String, Vec<(Section, usize, usize)>>,
    wild: Vec<(Section, usize, usize)>,
    attrs: Vec<(usize, usize)>,
    sanitizer_bits: Vec<u64>,
    /// Last segments of attribute source patterns (prefilter for member expressions).
    attr_names: BTreeSet<String>,
    /// Identifiers that are sources by themselves (one-segment attribute patterns: `cin`).
    pub ident_triggers: BTreeSet<String>,
}

fn pattern_key(p: &CallPattern) -> Option<String> {
    let name = match p {
        CallPattern::Bare(n) | CallPattern::AnyReceiver(n) => n.clone(),
        CallPattern::Typed { method, .. } => method.clone(),
        CallPattern::Path(segs) => segs.last()?.name.clone(),
        CallPattern::New(p) => p.last()?.clone(),
    };
    (!name.contains('*')).then_some(name)
}

impl Compiled {
    fn new(spec: TaintSpec, kind_bits: &BTreeMap<String, u64>) -> Compiled {
        let mut by_name: BTreeMap<String, Vec<(Section, usize, usize)>> = BTreeMap::new();
        let mut wild = Vec::new();
        let mut add = |sec: Section, rule: usize, pats: &[CallPattern]| {
            for (pi, p) in pats.iter().enumerate() {
                match pattern_key(p) {
                    Some(k) => by_name.entry(k).or_default().push((sec, rule, pi)),
                    None => wild.push((sec, rule, pi)),
                }
            }
        };
        for (i, r) in spec.sources.iter().enumerate() {
            add(Section::Source, i, &r.calls);
        }
        for (i, r) in spec.sinks.iter().enumerate() {
            add(Section::Sink, i, &r.calls);
        }
        for (i, r) in spec.sanitizers.iter().enumerate() {
            add(Section::Sanitizer, i, &r.calls);
        }
        for (i, r) in spec.propagators.iter().enumerate() {
            add(Section::Propagator, i, &r.calls);
        }
        for (i, r) in spec.lookups.iter().enumerate() {
            add(Section::Lookup, i, &r.calls);
        }
        let attrs = spec
            .sources
            .iter()
            .enumerate()
            .flat_map(|(i, r)| (0..r.attributes.len()).map(move |j| (i, j)))
            .collect();
        let sanitizer_bits = spec
            .sanitizers
            .iter()
            .map(|s| {
                if s.kinds.iter().any(|k| k == "*") {
                    ALL_KINDS
                } else {
                    s.kinds
                        .iter()
                        .map(|k| kind_bits.get(k).copied().unwrap_or(0))
                        .fold(0, |a, b| a | b)
                }
            })
            .collect();
        let mut attr_names = BTreeSet::new();
        let mut ident_triggers = BTreeSet::new();
        for r in &spec.sources {
            for a in &r.attributes {
                if let Some(last) = a.0.last() {
                    attr_names.insert(last.name.clone());
                    if a.0.len() == 1 {
                        ident_triggers.insert(last.name.clone());
                    }
                }
            }
        }
        Compiled {
            spec,
            by_name,
            wild,
            attrs,
            sanitizer_bits,
            attr_names,
            ident_triggers,
        }
    }

    pub fn match_call(&self, name: &str, shape: &CallShape<'_>) -> Matches {
        let mut m = Matches::default();
        let named = self.by_name.get(name).map(Vec::as_slice).unwrap_or(&[]);
        for &(sec, rule, pi) in named.iter().chain(self.wild.iter()) {
            let pat = match sec {
                Section::Source => self.spec.sources.get(rule).and_then(|r| r.calls.get(pi)),
                Section::Sink => self.spec.sinks.get(rule).and_then(|r| r.calls.get(pi)),
                Section::Sanitizer => self.spec.sanitizers.get(rule).and_then(|r| r.calls.get(pi)),
                Section::Propagator => self
                    .spec
                    .propagators
                    .get(rule)
                    .and_then(|r| r.calls.get(pi)),
                Section::Lookup => self.spec.lookups.get(rule).and_then(|r| r.calls.get(pi)),
            };
            if !pat.is_some_and(|p| p.matches(shape)) {
                continue;
            }
            let list = match sec {
                Section::Source => &mut m.sources,
                Section::Sink => &mut m.sinks,
                Section::Sanitizer => &mut m.sanitizers,
                Section::Propagator => &mut m.propagators,
                Section::Lookup => &mut m.lookups,
            };
            if !list.contains(&rule) {
                list.push(rule);
            }
        }
        m
    }

    /// The source rule whose attribute pattern matches a member path.
    pub fn attr_source(&self, path: &[Seg]) -> Option<usize> {
        let last = path.last()?;
        for &(rule, j) in &self.attrs {
            let Some(p): Option<&AttrPattern> = self
                .spec
                .sources
                .get(rule)
                .and_then(|r| r.attributes.get(j))
            else {
                continue;
            };
            if p.0
                .last()
                .is_some_and(|l| l.name == last.name || l.name.ends_with('*'))
                && p.matches(path)
            {
                return Some(rule);
            }
        }
        None
    }
}

/// Every language's compiled specification and the sink-kind bits they share.
pub(super) struct CompiledSpecs {
    kind_bits: BTreeMap<String, u64>,
    by_language: BTreeMap<Language, Compiled>,
}

impl CompiledSpecs {
    fn new(specs: &TaintSpecs) -> CompiledSpecs {
        let mut kind_bits: BTreeMap<String, u64> = BTreeMap::new();
        for spec in specs.by_language.values() {
            for k in spec
                .sinks
                .iter()
                .map(|s| s.kind.clone())
                .chain(spec.sanitizers.iter().flat_map(|s| s.kinds.iter().cloned()))
            {
                if k == "*" {
                    continue;
                }
                let n = kind_bits.len();
                kind_bits.entry(k).or_insert(1u64 << n.min(62));
            }
        }
        let by_language = specs
            .by_language
            .iter()
            .filter(|(_, spec)| spec.rule_count() > 0)
            .map(|(lang, spec)| (*lang, Compiled::new(spec.clone(), &kind_bits)))
            .collect();
        CompiledSpecs {
            kind_bits,
            by_language,
        }
    }
}

/// How many distinct specification sets stay compiled (the editor uses one or two: the
/// built-in set and the workspace's extended one).
const COMPILED_CACHE: usize = 4;

/// The compiled form of `specs`, compiled once per distinct set and shared by every run (the
/// editor analyses a document on every edit; compiling the bundled specifications each time
/// cost more than interpreting the functions that mention a source).
fn compiled_specs(specs: &TaintSpecs) -> Arc<CompiledSpecs> {
    static CACHE: Mutex<Vec<(TaintSpecs, Arc<CompiledSpecs>)>> = Mutex::new(Vec::new());
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(i) = cache.iter().position(|(s, _)| s == specs) {
        let hit = cache.remove(i);
        let compiled = Arc::clone(&hit.1);
        cache.push(hit);
        return compiled;
    }
    let compiled = Arc::new(CompiledSpecs::new(specs));
    if cache.len() >= COMPILED_CACHE {
        cache.remove(0);
    }
    cache.push((specs.clone(), Arc::clone(&compiled)));
    compiled
}

/// What the engine knows about one function (or a module's top-level code).
/// The parameter name a C/C++ function's `...` is given in its summary.
pub(super) const VARARGS: &str = "...";

#[derive(Debug, Clone)]
pub(super) struct FnInfo {
    pub unit: usize,
    /// Index into the unit's functions; `None` for module top-level code.
    pub index: Option<usize>,
    pub name: Option<String>,
    pub simple: String,
    pub class: Option<String>,
    pub params: Vec<String>,
    /// Python methods: the first parameter is the receiver.
    pub self_param: bool,
    pub variadic: bool,
    pub kind: Option<FunctionKind>,
    pub signature: String,
    /// False for declarations without a body (interface/abstract methods): calls to them
    /// are treated as external.
    pub has_body: bool,
    /// Instance methods and constructors: `this`/`self` fields are receiver fields.
    pub has_this: bool,
}

pub(super) struct UnitCx<'t> {
    pub path: String,
    pub file: &'t ParsedFile,
    pub functions: &'t [Function<'t>],
    pub imports: BTreeMap<String, Vec<Seg>>,
    /// Java: class (qualified) -> its fields.
    pub class_fields: BTreeMap<String, ClassFields>,
    /// C/C++: the file's macros and those of the workspace headers it includes.
    pub macros: Macros,
}

pub(super) struct Workspace<'t> {
    pub units: Vec<UnitCx<'t>>,
    pub fns: Vec<FnInfo>,
    specs: Arc<CompiledSpecs>,
    /// (function, end byte of a call) -> its resolved callees.
    callsites: BTreeMap<(FnId, usize), Vec<FnId>>,
    pub points_to: Option<&'t PointsTo>,
    /// Simple names of the classes defined in the workspace.
    pub classes: BTreeSet<String>,
    /// C/C++ variables declared at file scope in some unit: the only names that are globals.
    pub c_globals: BTreeSet<String>,
}

impl<'t> Workspace<'t> {
    pub fn spec(&self, unit: usize) -> Option<&Compiled> {
        let lang = self.units.get(unit)?.file.language;
        self.specs.by_language.get(&lang)
    }

    pub fn imports(&self, unit: usize) -> Option<&BTreeMap<String, Vec<Seg>>> {
        self.units.get(unit).map(|u| &u.imports)
    }

    pub fn rule_kind(&self, unit: usize, source_rule: usize) -> (String, Trust) {
        self.spec(unit)
            .and_then(|s| s.spec.sources.get(source_rule))
            .map_or((String::new(), Trust::Local), |r| (r.kind.clone(), r.trust))
    }

    pub fn sanitizer_bits(&self, unit: usize, rule: usize) -> u64 {
        self.spec(unit)
            .and_then(|s| s.sanitizer_bits.get(rule).copied())
            .unwrap_or(0)
    }

    /// The resolved callees of the call that ends at `end_byte` (calls are keyed by their end:
    /// a call and the call that is its receiver, `new X().m()`, start at the same byte).
    pub fn callees(&self, fid: FnId, end_byte: usize) -> Vec<FnId> {
        self.callsites
            .get(&(fid, end_byte))
            .cloned()
            .unwrap_or_default()
    }

    pub fn fn_info(&self, fid: FnId) -> Option<&FnInfo> {
        self.fns.get(fid)
    }
}

/// A source site: unit, line, text, kind and trust class.
type SourceKey = (usize, usize, String, String, Trust);

/// Interned source and sink sites, kinds, and trails of one run.
pub(super) struct Tables {
    pub trails: Trails,
    sources: Vec<SourceKey>,
    source_index: BTreeMap<SourceKey, u32>,
    sinks: Vec<SinkSite>,
    sink_index: BTreeMap<(usize, usize, String, String), u32>,
    kind_bits: BTreeMap<String, u64>,
    fields: Vec<String>,
    field_index: BTreeMap<String, usize>,
}

#[derive(Debug, Clone)]
struct SinkSite {
    unit: usize,
    line: usize,
    text: String,
    kind: String,
    #[allow(dead_code)]
    spec_rule: String,
}

impl std::fmt::Debug for Tables {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tables")
            .field("trails", &self.trails.node_count())
            .field("sources", &self.sources.len())
            .field("sinks", &self.sinks.len())
            .field("fields", &self.fields.len())
            .finish()
    }
}

impl Tables {
    pub fn source(
        &mut self,
        unit: usize,
        line: usize,
        text: String,
        kind: String,
        trust: Trust,
    ) -> u32 {
        let key = (unit, line, text, kind, trust);
        if let Some(&id) = self.source_index.get(&key) {
            return id;
        }
        let id = u32::try_from(self.sources.len())
            .unwrap_or(u32::MAX)
            .min(super::value::PARAM_BASE - 1);
        self.sources.push(key.clone());
        self.source_index.insert(key, id);
        id
    }

    pub fn sink(
        &mut self,
        unit: usize,
        line: usize,
        text: String,
        kind: String,
        spec_rule: String,
    ) -> u32 {
        let key = (unit, line, text.clone(), kind.clone());
        if let Some(&id) = self.sink_index.get(&key) {
            return id;
        }
        let id = u32::try_from(self.sinks.len()).unwrap_or(u32::MAX);
        self.sinks.push(SinkSite {
            unit,
            line,
            text,
            kind,
            spec_rule,
        });
        self.sink_index.insert(key, id);
        id
    }

    /// The parameter index standing for field `name` of the receiver.
    pub fn field_param(&mut self, name: &str) -> usize {
        let id = match self.field_index.get(name) {
            Some(&i) => i,
            None => {
                let i = self.fields.len();
                self.fields.push(name.to_string());
                self.field_index.insert(name.to_string(), i);
                i
            }
        };
        super::value::FIELD_BASE + id
    }

    /// The field name of a receiver-field parameter index.
    pub fn field_name(&self, index: usize) -> Option<&str> {
        index
            .checked_sub(super::value::FIELD_BASE)
            .and_then(|i| self.fields.get(i))
            .map(String::as_str)
    }

    pub fn kind_bit(&self, kind: &str) -> u64 {
        self.kind_bits.get(kind).copied().unwrap_or(0)
    }
}

/// The result of analysing one function.
#[derive(Debug, Clone, Default, Hash)]
pub(super) struct FnOut {
    pub ret: Taint,
    pub sinks: BTreeMap<u32, Taint>,
    pub param_mut: BTreeMap<usize, Taint>,
    pub global_writes: BTreeMap<String, Taint>,
    /// Fields of the receiver written (`this.f = v`), by field name.
    pub this_writes: BTreeMap<String, Taint>,
    /// Receiver-field parameter indices whose labels appear in this summary.
    pub fields_used: BTreeSet<usize>,
    pub calls: BTreeMap<(FnId, usize), Taint>,
    pub defs: BTreeMap<(String, usize), Taint>,
    /// Callees whose summary was consulted (or would have been, had it existed).
    pub used: BTreeSet<FnId>,
    /// Callees without a summary that received tainted or symbolic data: analyse them.
    pub requested: BTreeSet<FnId>,
    pub used_pending: bool,
    pub partial: bool,
    pub errors: Vec<(usize, String)>,
    /// Keys of the global store ([`Env::store`]) the analysis read.
    pub store_reads: BTreeSet<String>,
}

impl FnOut {
    /// True when the function hands concrete taint (or receiver-field data) to its callers:
    /// through its return value, mutated arguments, receiver fields or globals.
    fn exports_taint(&self) -> bool {
        let concrete = |t: &Taint| t.0.iter().any(|e| e.label < super::value::PARAM_BASE);
        concrete(&self.ret)
            || self.param_mut.values().any(concrete)
            || self.this_writes.values().any(concrete)
            || self.global_writes.values().any(concrete)
    }

    /// Same summary (return, mutations, global writes) as another, trails ignored.
    fn same_summary(&self, other: &FnOut) -> bool {
        self.ret.same_labels(&other.ret)
            && maps_same(&self.param_mut, &other.param_mut)
            && maps_same(&self.global_writes, &other.global_writes)
            && maps_same(&self.this_writes, &other.this_writes)
    }
}

fn maps_same<K: Ord>(a: &BTreeMap<K, Taint>, b: &BTreeMap<K, Taint>) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|((k1, v1), (k2, v2))| k1 == k2 && v1.same_labels(v2))
}

/// Read-only inputs of one function's analysis.
pub(super) struct Env<'e> {
    pub store: &'e BTreeMap<String, Taint>,
    summaries: &'e [Option<Arc<FnOut>>],
}

impl Env<'_> {
    pub fn summary(&self, fid: FnId) -> Option<&FnOut> {
        self.summaries.get(fid).and_then(|s| s.as_deref())
    }
}

/// Runs the analysis over each language family ([`Language::family`]) of the units on its
/// own (data never flows between families: no call links them) and merges the results.
pub(super) fn run(
    units: &[SourceUnit<'_>],
    call_graph: Option<EdgeView<'_>>,
    points_to: Option<&PointsTo>,
    specs: &TaintSpecs,
    memo: Option<&mut TaintMemo>,
    cancel: &Cancel,
) -> TaintResult {
    let families = SourceUnit::by_family(units);
    if families.len() <= 1 {
        return run_family(units, call_graph, points_to, specs, memo, cancel);
    }
    let mut result = TaintResult::default();
    for members in families.values() {
        let r = run_family(members, call_graph, points_to, specs, None, cancel);
        result.flows.extend(r.flows);
        result.sanitized_flows.extend(r.sanitized_flows);
        result.tainted_variables.extend(r.tainted_variables);
        result.partial |= r.partial;
        for e in r.errors {
            if !result.errors.contains(&e) {
                result.errors.push(e);
            }
        }
        result.stats.functions += r.stats.functions;
        result.stats.seeds += r.stats.seeds;
        result.stats.function_analyses += r.stats.function_analyses;
        result.stats.rounds = result.stats.rounds.max(r.stats.rounds);
    }
    result.flows.sort_by_key(flow_order);
    result.sanitized_flows.sort_by_key(flow_order);
    result
        .errors
        .sort_by(|a, b| (&a.file, a.line, &a.message).cmp(&(&b.file, b.line, &b.message)));
    result
}

/// The order of flows: by sink, then source.
fn flow_order(f: &TaintFlow) -> (String, usize, String, usize, String, String) {
    (
        f.sink.file.clone(),
        f.sink.line,
        f.source.file.clone(),
        f.source.line,
        f.sink.text.clone(),
        f.source.text.clone(),
    )
}

/// The whole analysis over units of one language family.
fn run_family(
    units: &[SourceUnit<'_>],
    call_graph: Option<EdgeView<'_>>,
    points_to: Option<&PointsTo>,
    specs: &TaintSpecs,
    memo: Option<&mut TaintMemo>,
    cancel: &Cancel,
) -> TaintResult {
    let compiled = compiled_specs(specs);
    let kind_bits = compiled.kind_bits.clone();
    let mut ws = Workspace {
        units: Vec::new(),
        fns: Vec::new(),
        specs: compiled,
        callsites: BTreeMap::new(),
        points_to,
        classes: BTreeSet::new(),
        c_globals: BTreeSet::new(),
    };
    for (ui, u) in units.iter().enumerate() {
        let enabled = ws.specs.by_language.contains_key(&u.file.language);
        let functions: &[Function<'_>] = if enabled { u.file.functions() } else { &[] };
        let imports = match u.file.language {
            Language::Python => python_imports(u.file),
            Language::JavaScript | Language::TypeScript => js_imports(u.file),
            _ => BTreeMap::new(),
        };
        // Scripts run code at the top level: it is analysed as a function of its own.
        let has_module_code = matches!(
            u.file.language,
            Language::Python | Language::JavaScript | Language::TypeScript
        );
        if enabled && has_module_code {
            ws.fns.push(FnInfo {
                unit: ui,
                index: None,
                name: None,
                simple: "<module>".into(),
                class: None,
                params: Vec::new(),
                self_param: false,
                variadic: false,
                kind: None,
                signature: String::new(),
                has_body: true,
                has_this: false,
            });
        }
        for (fi, f) in functions.iter().enumerate() {
            let self_param = u.file.language == Language::Python
                && f.class.is_some()
                && matches!(f.params.first().map(String::as_str), Some("self" | "cls"));
            let has_this = match u.file.language {
                Language::Python => {
                    self_param && f.params.first().map(String::as_str) == Some("self")
                }
                Language::Java => {
                    f.class.is_some()
                        && f.kind != FunctionKind::Lambda
                        && !super::syntax::is_static_decl(u.file, f.node)
                }
                Language::Cpp | Language::JavaScript | Language::TypeScript => {
                    f.class.is_some() && f.kind != FunctionKind::Lambda
                }
                _ => false,
            };
            // C/C++ `...` is an unnamed parameter: it gets a name of its own (`va_start`
            // reads it), so the extra arguments of a call are not bound to the last named one.
            let mut params = f.params.clone();
            let variadic = f.is_variadic();
            if variadic
                && matches!(u.file.language, Language::C | Language::Cpp)
                && f.signature.contains("...")
            {
                params.push(VARARGS.to_string());
            }
            ws.fns.push(FnInfo {
                unit: ui,
                index: Some(fi),
                name: Some(f.name.clone()),
                simple: f.simple_name.clone(),
                class: f.class.clone(),
                params,
                self_param,
                variadic,
                kind: Some(f.kind),
                signature: f.signature.clone(),
                has_body: f.body.is_some(),
                has_this,
            });
        }
        let class_fields = if enabled {
            java_class_fields(u.file)
        } else {
            BTreeMap::new()
        };
        let macros = if enabled {
            Macros::of(u.file)
        } else {
            Macros::default()
        };
        ws.units.push(UnitCx {
            path: u.path.clone(),
            file: u.file,
            functions,
            imports,
            class_fields,
            macros,
        });
    }
    merge_included_macros(&mut ws.units);
    for f in &ws.fns {
        if let Some(c) = &f.class {
            ws.classes.insert(class_simple(c).to_string());
        }
    }
    for u in &ws.units {
        for c in u.class_fields.keys() {
            ws.classes.insert(class_simple(c).to_string());
        }
    }
    let mut c_globals = BTreeSet::new();
    for u in &ws.units {
        if matches!(u.file.language, Language::C | Language::Cpp)
            && ws.specs.by_language.contains_key(&u.file.language)
        {
            super::syntax::c_file_scope_variables(u.file, &mut c_globals);
        }
    }
    ws.c_globals = c_globals;
    let mut tabs = Tables {
        trails: Trails::new(),
        sources: Vec::new(),
        source_index: BTreeMap::new(),
        sinks: Vec::new(),
        sink_index: BTreeMap::new(),
        kind_bits,
        fields: Vec::new(),
        field_index: BTreeMap::new(),
    };
    let mut result = TaintResult::default();
    // A function's scan is reused while the context, its text, column and call edges are
    // those it was made with, and it has no syntax error (error recovery may shape the same
    // text differently).
    // The analyses of the last run are reused in the same way (see `Analysed`), with the
    // tables their results refer to.
    let mut memo = match memo {
        Some(m) => {
            let context = prescan_context(&ws);
            let same_specs = m.specs.as_ref().is_some_and(|c| Arc::ptr_eq(c, &ws.specs));
            let grown = m
                .tables
                .as_ref()
                .is_some_and(|t| t.trails.node_count() > 2 * m.tables_base + 100_000);
            if !same_specs || m.context != context || grown {
                m.entries.clear();
                m.analyses.clear();
                m.tables = None;
                m.specs = Some(Arc::clone(&ws.specs));
                m.context = context;
            }
            if let Some(t) = m.tables.take() {
                tabs = t;
            } else {
                m.analyses.clear();
                m.tables_base = 0;
            }
            Some(m)
        }
        _ => None,
    };
    let prescan = prescan(&mut ws, call_graph, memo.as_deref_mut(), cancel);
    if cancel.is_cancelled() {
        result.partial = true;
        result.errors.push(TaintError {
            file: String::new(),
            line: 0,
            message: "taint analysis was cancelled; results are partial".into(),
        });
        return result;
    }
    let n = ws.fns.len();
    result.stats.functions = n;
    result.stats.seeds = prescan.seeds.len();
    let mut callers: Vec<Vec<FnId>> = vec![Vec::new(); n];
    for (f, cs) in prescan.callees.iter().enumerate() {
        for &g in cs {
            if let Some(list) = callers.get_mut(g) {
                list.push(f);
            }
        }
    }
    // Demand-driven worklist, callees before callers.
    let all: BTreeSet<FnId> = (0..n).collect();
    let order = post_order(&all, &prescan.callees);
    let mut rank = vec![usize::MAX; n];
    for (i, &f) in order.iter().enumerate() {
        if let Some(r) = rank.get_mut(f) {
            *r = i;
        }
    }
    let mut work: BTreeSet<(usize, FnId)> = prescan
        .seeds
        .iter()
        .map(|&f| (rank.get(f).copied().unwrap_or(usize::MAX), f))
        .collect();
    let mut store: BTreeMap<String, Taint> = BTreeMap::new();
    let mut summaries: Vec<Option<Arc<FnOut>>> = vec![None; n];
    // With a memo: each function's key, a hash of each summary, and this run's analyses.
    let keys: Vec<Option<u64>> = match memo {
        Some(_) => (0..n).map(|f| analysis_key(&ws, &prescan, f)).collect(),
        None => Vec::new(),
    };
    let mut summary_hashes: Vec<Option<u64>> = vec![None; n];
    let mut analysed: BTreeMap<FnId, Vec<Arc<Analysed>>> = BTreeMap::new();
    let (mut reused_analyses, mut run_analyses) = (0usize, 0usize);
    let mut param_taint: Vec<BTreeMap<usize, Taint>> = vec![BTreeMap::new(); n];
    // Callers that consulted (or asked for) each function's summary.
    let mut uses: Vec<BTreeSet<FnId>> = vec![BTreeSet::new(); n];
    let mut analyses = vec![0u32; n];
    let mut cancelled = false;
    for round in 0..MAX_ROUNDS {
        result.stats.rounds = round + 1;
        while let Some((_, fid)) = work.pop_first() {
            if cancel.is_cancelled() {
                cancelled = true;
                break;
            }
            let Some(count) = analyses.get_mut(fid) else {
                continue;
            };
            if *count >= MAX_ANALYSES_PER_FUNCTION {
                result.partial = true;
                continue;
            }
            *count += 1;
            result.stats.function_analyses += 1;
            let key = keys.get(fid).copied().flatten();
            // An analysis of the last run with the same key that read what this one would
            // read (the same callee summaries and store entries) has this one's result.
            let prior = key.and_then(|k| {
                memo.as_deref()?
                    .analyses
                    .get(&fid)?
                    .iter()
                    .find(|a| {
                        a.key == k
                            && a.callees
                                .iter()
                                .all(|(g, h)| summary_hashes.get(*g).copied().flatten() == *h)
                            && a.store
                                .iter()
                                .all(|(k, h)| store.get(k).map(taint_hash) == *h)
                    })
                    .cloned()
            });
            let (out, out_hash) = match prior {
                Some(a) => {
                    reused_analyses += 1;
                    let out = (Arc::clone(&a.out), Some(a.hash));
                    analysed.entry(fid).or_default().push(a);
                    out
                }
                None => {
                    let env = Env {
                        store: &store,
                        summaries: &summaries,
                    };
                    let out = Arc::new(analyze_function(
                        &ws, &mut tabs, &env, &prescan, fid, cancel,
                    ));
                    run_analyses += 1;
                    let hash = memo.is_some().then(|| fn_out_hash(&out));
                    if let (Some(k), Some(hash)) = (key, hash) {
                        let a = Analysed {
                            hash,
                            key: k,
                            callees: out
                                .used
                                .iter()
                                .map(|&g| (g, summary_hashes.get(g).copied().flatten()))
                                .collect(),
                            store: out
                                .store_reads
                                .iter()
                                .map(|k| (k.clone(), store.get(k).map(taint_hash)))
                                .collect(),
                            out: Arc::clone(&out),
                        };
                        analysed.entry(fid).or_default().push(Arc::new(a));
                    }
                    (out, hash)
                }
            };
            let schedule = |g: FnId, work: &mut BTreeSet<(usize, FnId)>| {
                work.insert((rank.get(g).copied().unwrap_or(usize::MAX), g));
            };
            for &g in &out.requested {
                if summaries.get(g).is_some_and(Option::is_none) {
                    schedule(g, &mut work);
                }
            }
            for &g in &out.used {
                if let Some(u) = uses.get_mut(g) {
                    u.insert(fid);
                }
            }
            let old = summaries.get(fid).and_then(Option::as_ref);
            let changed = old.is_none_or(|o| !o.same_summary(&out));
            if changed {
                // Callers that used the old summary (or a default in its place) run again;
                // callers of a function whose result carries concrete taint are now relevant.
                let mut affected: BTreeSet<FnId> = uses.get(fid).cloned().unwrap_or_default();
                if out.exports_taint() {
                    affected.extend(callers.get(fid).into_iter().flatten().copied());
                }
                affected.remove(&fid);
                for c in affected {
                    schedule(c, &mut work);
                }
                if out.used.contains(&fid) && old.is_some() {
                    // Recursion: run again with its own new summary.
                    schedule(fid, &mut work);
                }
            }
            if let Some(slot) = summary_hashes.get_mut(fid) {
                *slot = out_hash;
            }
            if let Some(slot) = summaries.get_mut(fid) {
                *slot = Some(out);
            }
        }
        if cancelled {
            break;
        }
        param_taint = param_fixpoint(&summaries, &mut tabs.trails, n);
        let new_store = global_store(&summaries, &param_taint, &mut tabs.trails);
        if maps_same(&new_store, &store) || round + 1 == MAX_ROUNDS {
            store = new_store;
            break;
        }
        // Functions reading a newly tainted global (field, module variable) run again.
        let fresh: BTreeSet<String> = new_store
            .iter()
            .filter(|(k, v)| store.get(*k).is_none_or(|old| !old.same_labels(v)))
            .map(|(k, _)| k.clone())
            .collect();
        for f in mentions(&ws, &fresh) {
            work.insert((rank.get(f).copied().unwrap_or(usize::MAX), f));
        }
        store = new_store;
    }
    let _ = &store;
    extract_flows(&ws, &mut tabs, &summaries, &param_taint, &mut result);
    extract_tainted_variables(&ws, &summaries, &param_taint, &mut result);
    if let Some(m) = memo {
        m.analyses_reused = reused_analyses;
        m.analyses_run = run_analyses;
        // A cancelled run keeps the last complete run's analyses; the tables only grow, so
        // they still hold everything those refer to.
        if !cancelled && !cancel.is_cancelled() {
            m.analyses = analysed;
            if m.tables_base == 0 {
                m.tables_base = tabs.trails.node_count();
            }
        }
        m.tables = Some(tabs);
    }
    for (fid, s) in summaries.iter().enumerate() {
        let Some(s) = s else { continue };
        if s.partial {
            result.partial = true;
        }
        let file = ws
            .fns
            .get(fid)
            .and_then(|f| ws.units.get(f.unit))
            .map(|u| u.path.clone())
            .unwrap_or_default();
        for (line, message) in &s.errors {
            let e = TaintError {
                file: file.clone(),
                line: *line,
                message: message.clone(),
            };
            if !result.errors.contains(&e) {
                result.errors.push(e);
            }
        }
    }
    if cancelled {
        result.partial = true;
        result.errors.push(TaintError {
            file: String::new(),
            line: 0,
            message: "taint analysis was cancelled; results are partial".into(),
        });
    }
    result
        .errors
        .sort_by(|a, b| (&a.file, a.line, &a.message).cmp(&(&b.file, b.line, &b.message)));
    result
}

/// Per-function facts found before interpretation.
struct Prescan {
    /// Functions that contain a source trigger or have source parameters.
    seeds: BTreeSet<FnId>,
    /// Resolved callees per function.
    callees: Vec<BTreeSet<FnId>>,
    /// Source labels of parameters, per function: (param index, source kind).
    param_sources: BTreeMap<FnId, Vec<(usize, String, Trust)>>,
    /// What each function's own text declares and calls; `None` for units without a
    /// specification.
    declared: Vec<Option<Arc<FnScan>>>,
}

/// What the prescan finds in one function's own text, given the workspace's function table
/// and the function's unit (see [`TaintMemo`]).
#[derive(Debug)]
struct FnScan {
    /// The function mentions a source (parameter sources are found apart).
    syntax_seed: bool,
    /// Declarations (locals, declared types, fixed arrays), and whether all were collected.
    decl: Declared,
    complete: bool,
    /// Resolved call sites: offset of the call's end from the function's first byte, callees.
    sites: Vec<(usize, Vec<FnId>)>,
}

/// Prescan results kept between runs over one file, so that an edit rescans only the
/// functions whose text changed (the editor analyses a document on every edit). Valid while
/// the specifications and the file's context (function table, imports, class fields, macros)
/// are those it was filled with; the result of a run is the same with or without it.
#[derive(Debug, Default)]
pub struct TaintMemo {
    specs: Option<Arc<CompiledSpecs>>,
    /// A hash of `prescan_context`.
    context: u64,
    /// Function -> a hash of its first column, text and call edges when scanned, and the scan.
    entries: BTreeMap<FnId, (u64, Arc<FnScan>)>,
    /// Functions (module-level code aside) reused and scanned by the last run.
    pub reused: usize,
    pub scanned: usize,
    /// The interpretations of the last complete run, per function (a function may be
    /// interpreted more than once in a run), and the tables their results refer to.
    analyses: BTreeMap<FnId, Vec<Arc<Analysed>>>,
    tables: Option<Tables>,
    /// Trail nodes in the tables after the first run that filled them: the tables (and the
    /// analyses) are dropped once they have grown well past that.
    tables_base: usize,
    /// Interpretations the last run reused and ran.
    pub analyses_reused: usize,
    pub analyses_run: usize,
}

/// One interpretation of a function and everything it read besides its own text and the
/// run's context: a run that would interpret the function with the same key while the
/// callee summaries and store entries it read are the same has this result (the analysis
/// is deterministic, and the tables it interns into are kept with it).
#[derive(Debug)]
struct Analysed {
    key: u64,
    /// Callees whose summary it consulted, with a hash of that summary (`None`: none yet).
    callees: Vec<(FnId, Option<u64>)>,
    /// Store keys it read, with a hash of the entry (`None`: absent).
    store: Vec<(String, Option<u64>)>,
    /// Shared with the run's summaries.
    out: Arc<FnOut>,
    /// [`fn_out_hash`] of `out`.
    hash: u64,
}

impl TaintMemo {
    /// Drops the kept interpretations and their tables (most of the memo's memory), keeping
    /// the per-function scans: the next run interprets every function again.
    pub fn trim(&mut self) {
        self.analyses.clear();
        self.tables = None;
        self.tables_base = 0;
    }
}

/// The hasher of the memo's keys and reads: SipHash with keys drawn once per process, so no
/// text can be written in advance to collide with another (a collision would reuse a wrong
/// interpretation); 64 bits, so an accidental collision is out of reach.
fn memo_hasher() -> std::collections::hash_map::DefaultHasher {
    use std::hash::BuildHasher;
    static STATE: std::sync::OnceLock<std::collections::hash_map::RandomState> =
        std::sync::OnceLock::new();
    STATE
        .get_or_init(std::collections::hash_map::RandomState::new)
        .build_hasher()
}

fn taint_hash(t: &Taint) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = memo_hasher();
    t.hash(&mut h);
    h.finish()
}

fn fn_out_hash(out: &FnOut) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = memo_hasher();
    out.hash(&mut h);
    h.finish()
}

/// What one function's interpretation depends on besides callee summaries, the store and
/// the run's context ([`prescan_context`]): its text and position (the lines of the sources,
/// sinks and steps it records are absolute), its declarations, parameter sources and
/// resolved call sites, and, in C and C++, the aliases among its locals; for a function with
/// a syntax error, the shape of its tree too (error recovery may shape the same text
/// differently).
fn analysis_key(ws: &Workspace<'_>, pre: &Prescan, fid: FnId) -> Option<u64> {
    use std::hash::{Hash, Hasher};
    let info = ws.fns.get(fid)?;
    let unit = ws.units.get(info.unit)?;
    let node = match info.index {
        Some(i) => unit.functions.get(i)?.node,
        None => unit.file.root(),
    };
    let mut h = memo_hasher();
    (info.unit, unit.file.node_text(node)).hash(&mut h);
    if node.has_error() {
        unit.file.hash_shape(node, &mut h);
    }
    let start = node.start_position();
    (start.row, start.column).hash(&mut h);
    // (Its declarations come from its text and the context.)
    if let Some(list) = pre.param_sources.get(&fid) {
        for (i, kind, trust) in list {
            (i, kind, format!("{trust:?}")).hash(&mut h);
        }
    }
    for (k, v) in ws.callsites.range((fid, 0)..(fid.saturating_add(1), 0)) {
        (k, v).hash(&mut h);
    }
    if let (Some(pt), Some(name), Language::C | Language::Cpp) =
        (ws.points_to, info.name.as_deref(), unit.file.language)
    {
        pt.hash_local_aliases(name, &mut h);
    }
    Some(h.finish())
}

impl std::fmt::Debug for CompiledSpecs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompiledSpecs")
            .field("languages", &self.by_language.keys().collect::<Vec<_>>())
            .finish()
    }
}

fn prescan(
    ws: &mut Workspace<'_>,
    call_graph: Option<EdgeView<'_>>,
    mut memo: Option<&mut TaintMemo>,
    cancel: &Cancel,
) -> Prescan {
    let n = ws.fns.len();
    let mut seeds = BTreeSet::new();
    let mut callees: Vec<BTreeSet<FnId>> = vec![BTreeSet::new(); n];
    let mut param_sources: BTreeMap<FnId, Vec<(usize, String, Trust)>> = BTreeMap::new();
    // FunctionRef -> FnId.
    let mut by_ref: BTreeMap<(&str, &str, &str), FnId> = BTreeMap::new();
    let mut by_simple: BTreeMap<String, Vec<FnId>> = BTreeMap::new();
    for (fid, f) in ws.fns.iter().enumerate() {
        if let (Some(name), Some(unit)) = (f.name.as_deref(), ws.units.get(f.unit)) {
            by_ref
                .entry((unit.path.as_str(), name, f.signature.as_str()))
                .or_insert(fid);
            by_simple.entry(f.simple.clone()).or_default().push(fid);
            // Secondary keys: by unit and by class (simple name), for cheap lookups.
            by_simple
                .entry(format!("u{}:{}", f.unit, f.simple))
                .or_default()
                .push(fid);
            if let Some(c) = &f.class {
                by_simple
                    .entry(format!("c{}:{}", class_simple(c), f.simple))
                    .or_default()
                    .push(fid);
            }
            if f.kind == Some(FunctionKind::Constructor) {
                if let Some(c) = &f.class {
                    by_simple
                        .entry(format!("new:{}", class_simple(c)))
                        .or_default()
                        .push(fid);
                }
            }
        }
    }
    // Call-graph edges by (caller, line).
    let mut edges: BTreeMap<(FnId, usize), Vec<(String, FnId)>> = BTreeMap::new();
    let mut has_edges: BTreeSet<FnId> = BTreeSet::new();
    if let Some(cg) = call_graph {
        for e in cg.iter() {
            let Some(cfile) = e.caller.file.as_deref() else {
                continue;
            };
            let Some(&caller) = by_ref.get(&(
                cfile,
                e.caller.name.as_str(),
                e.caller.signature.as_deref().unwrap_or(""),
            )) else {
                continue;
            };
            has_edges.insert(caller);
            let Some(file) = e.callee.file.as_deref() else {
                continue;
            };
            let Some(&callee) = by_ref.get(&(
                file,
                e.callee.name.as_str(),
                e.callee.signature.as_deref().unwrap_or(""),
            )) else {
                continue;
            };
            let simple = ws
                .fns
                .get(callee)
                .map(|f| f.simple.clone())
                .unwrap_or_default();
            edges
                .entry((caller, e.line))
                .or_default()
                .push((simple, callee));
        }
    }
    let mut sites: BTreeMap<(FnId, usize), Vec<FnId>> = BTreeMap::new();
    let mut declared: Vec<Option<Arc<FnScan>>> = vec![None; n];
    let mut kept: BTreeMap<FnId, (u64, Arc<FnScan>)> = BTreeMap::new();
    let (mut reused, mut scanned) = (0, 0);
    // Python names imported from a source (`from sys import argv`) are triggers in their unit.
    let import_triggers: Vec<BTreeSet<String>> = ws
        .units
        .iter()
        .map(|u| {
            let Some(spec) = ws.specs.by_language.get(&u.file.language) else {
                return BTreeSet::new();
            };
            u.imports
                .iter()
                .filter(|(_, path)| {
                    spec.attr_source(path).is_some()
                        || path.last().is_some_and(|last| {
                            !spec
                                .match_call(
                                    &last.name,
                                    &CallShape {
                                        path,
                                        receiver_type: None,
                                        is_new: false,
                                    },
                                )
                                .sources
                                .is_empty()
                        })
                })
                .map(|(k, _)| k.clone())
                .collect()
        })
        .collect();
    for fid in 0..n {
        if cancel.is_cancelled() {
            break;
        }
        let Some(info) = ws.fns.get(fid) else {
            continue;
        };
        let Some(unit) = ws.units.get(info.unit) else {
            continue;
        };
        let Some(spec) = ws.specs.by_language.get(&unit.file.language) else {
            continue;
        };
        let file = unit.file;
        let func = info.index.and_then(|i| unit.functions.get(i));
        let root = match func {
            Some(f) => f.node,
            None => file.root(),
        };
        let body = match func {
            Some(f) => f.body.unwrap_or(f.node),
            None => file.root(),
        };
        // Parameter sources.
        if let Some(func) = info.index.and_then(|i| unit.functions.get(i)) {
            let vis = visibility(file, func.node);
            let decorators = decorator_paths(file, func.node);
            let param_facts = parameter_annotations(file, func.node, func.params.len());
            for rule in &spec.spec.sources {
                let Some(ps) = &rule.params else { continue };
                let fn_ok = ps.functions.is_empty() || ps.functions.contains(&func.simple_name);
                let vis_ok = ps.visibility.is_empty()
                    || vis.as_ref().is_some_and(|v| ps.visibility.contains(v));
                let dec_ok = ps.decorators.is_empty()
                    || decorators.iter().any(|d| {
                        ps.decorators.iter().any(|p| {
                            p.matches(&CallShape {
                                path: d,
                                receiver_type: None,
                                is_new: false,
                            })
                        })
                    });
                if !(fn_ok && vis_ok && dec_ok) || func.kind == FunctionKind::Lambda {
                    continue;
                }
                if !ps.visibility.is_empty() && func.kind == FunctionKind::Modifier {
                    continue;
                }
                for (i, p) in func.params.iter().enumerate() {
                    if p.is_empty()
                        || matches!(p.as_str(), "self" | "cls" | "this")
                        || !(ps.index.is_empty() || ps.index.contains(&i))
                    {
                        continue;
                    }
                    if !ps.annotations.is_empty() || !ps.types.is_empty() {
                        let Some((annots, ty)) = param_facts.get(i) else {
                            continue;
                        };
                        let annot_ok = ps.annotations.is_empty()
                            || annots.iter().any(|a| ps.annotations.contains(a));
                        // A `types` row is about parameters the framework binds by their type
                        // alone: an annotated one is bound as its annotation says.
                        let type_ok = ps.types.is_empty()
                            || (annots.is_empty() && ps.types.iter().any(|t| t == ty));
                        if !(annot_ok && type_ok) {
                            continue;
                        }
                    }
                    param_sources
                        .entry(fid)
                        .or_default()
                        .push((i, rule.kind.clone(), rule.trust));
                    seeds.insert(fid);
                }
            }
        }
        // The function's own text and call edges decide its scan (the module's code is
        // scanned each time).
        let base = root.start_byte();
        let key = match func {
            Some(f) if memo.is_some() && !f.node.has_error() => Some(scan_key(
                file.node_text(f.node),
                root,
                fid,
                &edges,
                &has_edges,
            )),
            _ => None,
        };
        let prior = key.and_then(|k| {
            let m = memo.as_deref_mut()?;
            m.entries.get(&fid).filter(|(old, _)| *old == k).cloned()
        });
        let scan = match prior {
            Some((_, scan)) => {
                reused += 1;
                scan
            }
            None => {
                let Some(scan) = scan_function(
                    ws,
                    fid,
                    root,
                    body,
                    &import_triggers[info.unit],
                    &Resolver {
                        by_simple: &by_simple,
                        edges: &edges,
                        has_edges: &has_edges,
                        have_graph: call_graph.is_some(),
                    },
                    cancel,
                ) else {
                    break;
                };
                // Module-level code is scanned every time and not counted.
                scanned += usize::from(func.is_some());
                Arc::new(scan)
            }
        };
        // A route handler that destructures its request reads sources through its parameter.
        let request_pattern = matches!(file.language, Language::JavaScript | Language::TypeScript)
            && func.is_some_and(|f| super::interp::js_request_pattern(file, f.node).is_some());
        if scan.syntax_seed || request_pattern {
            seeds.insert(fid);
        }
        for (offset, resolved) in &scan.sites {
            if let Some(c) = callees.get_mut(fid) {
                c.extend(resolved.iter().copied());
            }
            sites.insert((fid, base + offset), resolved.clone());
        }
        if let (Some(k), true) = (key, memo.is_some()) {
            kept.insert(fid, (k, Arc::clone(&scan)));
        }
        if let Some(slot) = declared.get_mut(fid) {
            *slot = Some(scan);
        }
    }
    ws.callsites = sites;
    if let Some(m) = memo {
        if !cancel.is_cancelled() {
            m.entries = kept;
        }
        m.reused = reused;
        m.scanned = scanned;
    }
    Prescan {
        seeds,
        callees,
        param_sources,
        declared,
    }
}

/// A hash of everything outside a function's own text and call edges that its scan depends
/// on: the function table (whose indices the resolved call sites hold), and each unit's
/// imports, class fields, macros and classes.
fn prescan_context(ws: &Workspace<'_>) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    format!("{:?}\n{:?}\n{:?}\n", ws.fns, ws.classes, ws.c_globals).hash(&mut h);
    for u in &ws.units {
        format!(
            "{}\n{:?}\n{:?}\n{:?}\n{:?}\n",
            u.path, u.file.language, u.imports, u.class_fields, u.macros
        )
        .hash(&mut h);
    }
    h.finish()
}

/// What a function's scan depends on besides the context: its text, first column, and its
/// call edges with lines relative to its first line.
fn scan_key(
    text: &str,
    root: Node<'_>,
    fid: FnId,
    edges: &BTreeMap<(FnId, usize), Vec<(String, FnId)>>,
    has_edges: &BTreeSet<FnId>,
) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (text, root.start_position().column, has_edges.contains(&fid)).hash(&mut h);
    let first = root.start_position().row + 1;
    for ((_, line), targets) in edges.range((fid, 0)..(fid.saturating_add(1), 0)) {
        (line.wrapping_sub(first), targets).hash(&mut h);
    }
    h.finish()
}

/// How the prescan resolves calls (built once per run).
struct Resolver<'a> {
    by_simple: &'a BTreeMap<String, Vec<FnId>>,
    edges: &'a BTreeMap<(FnId, usize), Vec<(String, FnId)>>,
    has_edges: &'a BTreeSet<FnId>,
    have_graph: bool,
}

/// Scans one function's own text (nested definitions skipped): its declarations, whether it
/// mentions a source, and its resolved call sites. `None` when cancelled.
fn scan_function(
    ws: &Workspace<'_>,
    fid: FnId,
    root: Node<'_>,
    body: Node<'_>,
    unit_triggers: &BTreeSet<String>,
    resolver: &Resolver<'_>,
    cancel: &Cancel,
) -> Option<FnScan> {
    let info = ws.fns.get(fid)?;
    let unit = ws.units.get(info.unit)?;
    let spec = ws.specs.by_language.get(&unit.file.language)?;
    let file = unit.file;
    let func = info.index.and_then(|i| unit.functions.get(i));
    let (mut decl, complete) = collect_declared(file, body, unit.file.language, DECL_BUDGET);
    if let Some(f) = func {
        for (k, v) in parameter_types(file, f.node) {
            decl.types.entry(k).or_insert(v);
        }
    }
    if let Some(fields) = info.class.as_ref().and_then(|c| unit.class_fields.get(c)) {
        for (k, v) in &fields.types {
            decl.types.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
    let base = root.start_byte();
    let mut seed = false;
    let mut sites: Vec<(usize, Vec<FnId>)> = Vec::new();
    let mut cancelled = false;
    let mut guard = 0usize;
    preorder(root, false, |node| {
        guard += 1;
        if guard.is_multiple_of(4096) && cancel.is_cancelled() {
            cancelled = true;
            return Visit::Stop;
        }
        let kind = node.kind();
        if node != root && is_definition(kind) {
            return Visit::Skip;
        }
        if node.child_count() == 0 {
            if kind == kind::IDENTIFIER && !seed {
                let text = file.node_text(node);
                if spec.ident_triggers.contains(text) || unit_triggers.contains(text) {
                    seed = true;
                }
            }
            return Visit::Skip;
        }
        if !seed
            && matches!(
                kind,
                kind::ATTRIBUTE
                    | kind::FIELD_ACCESS
                    | kind::MEMBER_EXPRESSION
                    | kind::FIELD_EXPRESSION
                    | kind::QUALIFIED_IDENTIFIER
            )
        {
            let last = node
                .child_by_field_name(field::ATTRIBUTE)
                .or_else(|| node.child_by_field_name(field::FIELD))
                .or_else(|| node.child_by_field_name(field::PROPERTY))
                .or_else(|| node.child_by_field_name(field::NAME))
                .map(|n| file.node_text(n))
                .unwrap_or("");
            if spec.attr_names.contains(last) {
                let path = super::syntax::path_of(file, node);
                let excluded = |rule: usize| {
                    spec.spec
                        .sources
                        .get(rule)
                        .is_some_and(|r| r.except_in.contains(&info.simple))
                };
                let hit = [Some(path.clone()), canonical_path(unit, &path)]
                    .into_iter()
                    .flatten()
                    .filter_map(|p| spec.attr_source(&p))
                    .any(|r| !excluded(r));
                if hit {
                    seed = true;
                }
            }
        }
        if is_call_kind(kind) {
            if let Some(parts) = call_parts(file, node) {
                if !seed && is_source_call(spec, unit, node, &parts, &info.simple, &decl.types) {
                    seed = true;
                }
                let line = file.line_of(node.start_byte());
                let resolved = resolve(
                    ws,
                    resolver.by_simple,
                    resolver.edges,
                    resolver.has_edges,
                    resolver.have_graph,
                    fid,
                    line,
                    &parts,
                    &decl.types,
                );
                if !resolved.is_empty() {
                    sites.push((node.end_byte() - base, resolved));
                }
            }
        }
        Visit::Descend
    });
    if cancelled {
        return None;
    }
    Some(FnScan {
        syntax_seed: seed,
        decl,
        complete,
        sites,
    })
}

/// Adds to each C/C++ unit the macros of the workspace headers it includes (`#include
/// "x.h"` matched by path suffix), two levels deep.
fn merge_included_macros(units: &mut [UnitCx<'_>]) {
    // Headers by file name, so each include looks at the few units of that name.
    let paths: Vec<String> = units.iter().map(|u| u.path.replace('\\', "/")).collect();
    let mut by_name: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (j, p) in paths.iter().enumerate() {
        if !units[j].macros.is_empty() {
            by_name
                .entry(p.rsplit('/').next().unwrap_or(p))
                .or_default()
                .push(j);
        }
    }
    for _ in 0..2 {
        let own: Vec<Macros> = units.iter().map(|u| u.macros.clone()).collect();
        for (i, unit) in units.iter_mut().enumerate() {
            let includes = unit.macros.includes().to_vec();
            for inc in &includes {
                let inc = inc.trim_start_matches("./");
                let name = inc.rsplit('/').next().unwrap_or(inc);
                for &j in by_name.get(name).map(Vec::as_slice).unwrap_or(&[]) {
                    let p = &paths[j];
                    if j != i && (p == inc || p.ends_with(&format!("/{inc}"))) {
                        unit.macros.merge(&own[j]);
                    }
                }
            }
        }
    }
}

/// The names a call may stand for: its own, and for C/C++ what a macro of that name may
/// expand to (`EXECL(..)` with `#define EXECL execl`).
pub(super) fn call_names(unit: &UnitCx<'_>, parts: &super::syntax::CallParts<'_>) -> Vec<String> {
    let mut names = vec![parts.name.clone()];
    if parts.receiver.is_none() && !parts.is_new && !unit.macros.is_empty() {
        names.extend(unit.macros.call_aliases(&parts.name));
    }
    names
}

/// The path as imported (Python aliases) or without `std::` (C++), if different.
fn canonical_path(unit: &UnitCx<'_>, path: &[Seg]) -> Option<Vec<Seg>> {
    let first = path.first()?;
    match unit.file.language {
        Language::Cpp => (first.name == "std" && path.len() > 1).then(|| path[1..].to_vec()),
        Language::Python if !first.call => {
            let exp = unit.imports.get(&first.name)?;
            let mut out = exp.clone();
            out.extend(path.iter().skip(1).cloned());
            Some(out)
        }
        _ => None,
    }
}

/// True when a call matches a source rule that applies in the function named `simple`.
fn is_source_call(
    spec: &Compiled,
    unit: &UnitCx<'_>,
    node: Node<'_>,
    parts: &super::syntax::CallParts<'_>,
    simple: &str,
    types: &BTreeMap<String, String>,
) -> bool {
    let path = super::syntax::callee_path(unit.file, node, parts);
    let canon = canonical_path(unit, &path);
    let rtype = parts.receiver.and_then(|r| {
        let r = unwrap(r);
        match r.kind() {
            kind::IDENTIFIER => types.get(unit.file.node_text(r)).cloned(),
            kind::OBJECT_CREATION_EXPRESSION | kind::NEW_EXPRESSION | kind::CAST_EXPRESSION => r
                .child_by_field_name(field::TYPE)
                .map(|t| super::syntax::simple_type(unit.file, t)),
            _ => None,
        }
    });
    let aliases = call_names(unit, parts).into_iter().skip(1).map(|a| {
        let p = vec![Seg {
            name: a.clone(),
            call: false,
        }];
        (a, p)
    });
    let written = [Some(path), canon]
        .into_iter()
        .flatten()
        .map(|p| (parts.name.clone(), p));
    written.chain(aliases).any(|(name, p)| {
        spec.match_call(
            &name,
            &CallShape {
                path: &p,
                receiver_type: rtype.as_deref(),
                is_new: parts.is_new,
            },
        )
        .sources
        .iter()
        .any(|&r| {
            spec.spec
                .sources
                .get(r)
                .is_some_and(|x| !x.except_in.iter().any(|e| e == simple))
        })
    })
}

/// Java: each parameter's annotations (simple names) and declared type, in parameter order;
/// empty when the parameter list does not line up with the function's `params`.
fn parameter_annotations(
    file: &ParsedFile,
    func: Node<'_>,
    count: usize,
) -> Vec<(Vec<String>, String)> {
    if file.language != Language::Java {
        return Vec::new();
    }
    let Some(params) = func.child_by_field_name(field::PARAMETERS) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut c = params.walk();
    for p in params.named_children(&mut c) {
        if p.kind().contains(kind::COMMENT) {
            continue;
        }
        let ty = p
            .child_by_field_name(field::TYPE)
            .map(|t| file.node_text(t).split_whitespace().collect::<String>())
            .unwrap_or_default();
        out.push((java_annotations(file, p), ty));
    }
    if out.len() == count {
        out
    } else {
        Vec::new()
    }
}

/// The simple names of a Java declaration's annotations (`@RequestParam("q")` -> `RequestParam`).
fn java_annotations(file: &ParsedFile, decl: Node<'_>) -> Vec<String> {
    let mut out = Vec::new();
    let mut c = decl.walk();
    for m in decl
        .named_children(&mut c)
        .filter(|m| m.kind() == kind::MODIFIERS)
    {
        let mut mc = m.walk();
        for a in m.named_children(&mut mc) {
            if matches!(a.kind(), kind::MARKER_ANNOTATION | kind::ANNOTATION) {
                if let Some(n) = a.child_by_field_name(field::NAME) {
                    let name = file.node_text(n);
                    out.push(name.rsplit('.').next().unwrap_or(name).to_string());
                }
            }
        }
    }
    out
}

/// The callee paths of a Python function's decorators (`@app.route("/")` -> `app.route`), or
/// a Java method's annotations (`@GetMapping("/x")` -> `GetMapping`).
fn decorator_paths(file: &ParsedFile, func: Node<'_>) -> Vec<Vec<Seg>> {
    if file.language == Language::Java {
        return java_annotations(file, func)
            .into_iter()
            .map(|name| vec![Seg { name, call: false }])
            .collect();
    }
    let Some(parent) = func
        .parent()
        .filter(|p| p.kind() == kind::DECORATED_DEFINITION)
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut c = parent.walk();
    for d in parent.named_children(&mut c) {
        if d.kind() != kind::DECORATOR {
            continue;
        }
        let Some(expr) = d.named_child(0) else {
            continue;
        };
        let target = if expr.kind() == kind::CALL {
            expr.child_by_field_name(field::FUNCTION).unwrap_or(expr)
        } else {
            expr
        };
        let mut path = super::syntax::path_of(file, target);
        if let Some(last) = path.last_mut() {
            last.call = false;
        }
        out.push(path);
    }
    out
}

/// Resolves one call: call-graph edges first, then names (module-level code, or when no
/// call graph is available).
#[allow(clippy::too_many_arguments)]
fn resolve(
    ws: &Workspace<'_>,
    by_simple: &BTreeMap<String, Vec<FnId>>,
    edges: &BTreeMap<(FnId, usize), Vec<(String, FnId)>>,
    has_edges: &BTreeSet<FnId>,
    have_graph: bool,
    fid: FnId,
    line: usize,
    parts: &super::syntax::CallParts<'_>,
    types: &BTreeMap<String, String>,
) -> Vec<FnId> {
    let Some(caller) = ws.fns.get(fid) else {
        return Vec::new();
    };
    let with_body = |v: Vec<FnId>| -> Vec<FnId> {
        v.into_iter()
            .filter(|g| ws.fns.get(*g).is_some_and(|f| f.has_body))
            .collect()
    };
    let name = parts.name.as_str();
    if have_graph && caller.index.is_some() {
        let mut out: Vec<FnId> = edges
            .get(&(fid, line))
            .map(|v| {
                v.iter()
                    .filter(|(simple, g)| {
                        simple == name
                            || ((parts.is_new || ws.fns.get(*g).is_some_and(|f| f.self_param))
                                && matches!(simple.as_str(), "__init__" | "constructor"))
                            || simple.rsplit("::").next() == Some(name)
                    })
                    .map(|(_, g)| *g)
                    .collect()
            })
            .unwrap_or_default();
        if out.is_empty() && types.contains_key(name) && parts.receiver.is_none() {
            // C/C++ call through a local function pointer: the call graph names the
            // functions it is given, not the pointer; a function called inside the arguments
            // is the callee of that nested call instead.
            if let (Some(unit), Some(v)) = (ws.units.get(caller.unit), edges.get(&(fid, line))) {
                let nested: Vec<&str> =
                    parts.args.iter().map(|a| unit.file.node_text(*a)).collect();
                out = v
                    .iter()
                    .filter(|(simple, _)| {
                        let call = format!("{simple}(");
                        !nested.iter().any(|t| t.contains(&call))
                    })
                    .map(|(_, g)| *g)
                    .collect();
            }
        }
        out.sort_unstable();
        out.dedup();
        if !out.is_empty() || has_edges.contains(&fid) {
            return with_body(out);
        }
    }
    with_body(fallback_resolve(ws, by_simple, caller, parts, types))
}

fn class_simple(class: &str) -> &str {
    class.rsplit(['.', ':']).next().unwrap_or(class)
}

fn fallback_resolve(
    ws: &Workspace<'_>,
    by_simple: &BTreeMap<String, Vec<FnId>>,
    caller: &FnInfo,
    parts: &super::syntax::CallParts<'_>,
    types: &BTreeMap<String, String>,
) -> Vec<FnId> {
    let unit = caller.unit;
    let lang = ws.units.get(unit).map(|u| u.file.language);
    let name = parts.name.as_str();
    let arity = parts.args.len() + parts.kwargs.len();
    let fns = |ids: &[FnId]| -> Vec<FnId> { ids.to_vec() };
    let constructor_of = |class: &str| -> Vec<FnId> {
        by_simple
            .get(&format!("new:{class}"))
            .cloned()
            .unwrap_or_default()
    };
    let receiver_text = parts.receiver.map(|r| {
        ws.units
            .get(unit)
            .map(|u| u.file.node_text(unwrap(r)))
            .unwrap_or("")
    });
    let mut cands: Vec<FnId> = if parts.is_new {
        constructor_of(name)
    } else {
        let all = fns(by_simple.get(name).map(Vec::as_slice).unwrap_or(&[]));
        let in_unit = fns(by_simple
            .get(&format!("u{unit}:{name}"))
            .map(Vec::as_slice)
            .unwrap_or(&[]));
        match receiver_text {
            None | Some("self" | "this" | "cls") => {
                let same_class: Vec<FnId> = in_unit
                    .iter()
                    .copied()
                    .filter(|&g| {
                        ws.fns.get(g).is_some_and(|f| {
                            f.unit == unit && f.class.is_some() && f.class == caller.class
                        })
                    })
                    .collect();
                if !same_class.is_empty() {
                    same_class
                } else if receiver_text.is_some() {
                    Vec::new()
                } else {
                    let same_unit: Vec<FnId> = in_unit
                        .iter()
                        .copied()
                        .filter(|&g| {
                            ws.fns
                                .get(g)
                                .is_some_and(|f| f.unit == unit && f.class.is_none())
                        })
                        .collect();
                    if !same_unit.is_empty() {
                        same_unit
                    } else if lang == Some(Language::Python) {
                        let ctor = constructor_of(name);
                        if !ctor.is_empty() {
                            ctor
                        } else {
                            imported_function(ws, by_simple, unit, name)
                        }
                    } else {
                        let free: Vec<FnId> = all
                            .iter()
                            .copied()
                            .filter(|&g| ws.fns.get(g).is_some_and(|f| f.class.is_none()))
                            .collect();
                        if free.len() == 1 {
                            free
                        } else {
                            Vec::new()
                        }
                    }
                }
            }
            Some(_) => {
                // A receiver of a known declared type: that class's method.
                let ty = parts.receiver.and_then(|r| {
                    let r = unwrap(r);
                    let u = ws.units.get(unit)?;
                    match r.kind() {
                        kind::OBJECT_CREATION_EXPRESSION | kind::NEW_EXPRESSION => r
                            .child_by_field_name(field::TYPE)
                            .or_else(|| r.child_by_field_name(field::CONSTRUCTOR))
                            .map(|t| super::syntax::simple_type(u.file, t)),
                        kind::IDENTIFIER => types.get(u.file.node_text(r)).cloned(),
                        _ => None,
                    }
                });
                match ty {
                    Some(t) => by_simple
                        .get(&format!("c{t}:{name}"))
                        .cloned()
                        .unwrap_or_default(),
                    None => {
                        // Python `module.f()` for an imported module.
                        if lang == Some(Language::Python) {
                            let module = receiver_text.unwrap_or("");
                            module_function(ws, by_simple, unit, module, name)
                        } else {
                            Vec::new()
                        }
                    }
                }
            }
        }
    };
    if cands.len() > 1 {
        let local: Vec<FnId> = cands
            .iter()
            .copied()
            .filter(|&g| ws.fns.get(g).is_some_and(|f| f.unit == unit))
            .collect();
        if !local.is_empty() {
            cands = local;
        }
    }
    if cands.len() > 1 {
        let exact: Vec<FnId> = cands
            .iter()
            .copied()
            .filter(|&g| {
                ws.fns.get(g).is_some_and(|f| {
                    f.variadic || f.params.len().saturating_sub(usize::from(f.self_param)) == arity
                })
            })
            .collect();
        if !exact.is_empty() {
            cands = exact;
        }
    }
    cands.sort_unstable();
    cands.dedup();
    if cands.len() > MAX_FALLBACK_TARGETS {
        // Too ambiguous to pick by name: treated as an external call.
        cands.clear();
    }
    cands
}

/// Python `from m import f` / `import m` + `m.f()`: top-level function `f` of the unit whose
/// path matches the module.
fn imported_function(
    ws: &Workspace<'_>,
    by_simple: &BTreeMap<String, Vec<FnId>>,
    unit: usize,
    name: &str,
) -> Vec<FnId> {
    let Some(segs) = ws.units.get(unit).and_then(|u| u.imports.get(name)) else {
        return Vec::new();
    };
    let module: Vec<&str> = segs
        .iter()
        .take(segs.len().saturating_sub(1))
        .map(|s| s.name.as_str())
        .collect();
    let original = segs.last().map(|s| s.name.as_str()).unwrap_or(name);
    functions_in_module(ws, by_simple, &module, original)
}

fn module_function(
    ws: &Workspace<'_>,
    by_simple: &BTreeMap<String, Vec<FnId>>,
    unit: usize,
    receiver: &str,
    name: &str,
) -> Vec<FnId> {
    let path: Vec<String> = match ws.units.get(unit).and_then(|u| u.imports.get(receiver)) {
        Some(segs) => segs.iter().map(|s| s.name.clone()).collect(),
        None => receiver.split('.').map(str::to_string).collect(),
    };
    let module: Vec<&str> = path.iter().map(String::as_str).collect();
    functions_in_module(ws, by_simple, &module, name)
}

fn functions_in_module(
    ws: &Workspace<'_>,
    by_simple: &BTreeMap<String, Vec<FnId>>,
    module: &[&str],
    name: &str,
) -> Vec<FnId> {
    if module.is_empty() {
        return Vec::new();
    }
    let suffix = format!("{}.py", module.join("/"));
    let init = format!("{}/__init__.py", module.join("/"));
    by_simple
        .get(name)
        .map(Vec::as_slice)
        .unwrap_or(&[])
        .iter()
        .copied()
        .filter(|&g| {
            ws.fns.get(g).is_some_and(|f| {
                f.class.is_none()
                    && ws.units.get(f.unit).is_some_and(|u| {
                        let p = u.path.replace('\\', "/");
                        p == suffix
                            || p.ends_with(&format!("/{suffix}"))
                            || p == init
                            || p.ends_with(&format!("/{init}"))
                    })
            })
        })
        .collect()
}

/// Callees before callers (iterative DFS post-order over the set).
fn post_order(set: &BTreeSet<FnId>, callees: &[BTreeSet<FnId>]) -> Vec<FnId> {
    let mut seen: BTreeSet<FnId> = BTreeSet::new();
    let mut out = Vec::with_capacity(set.len());
    for &start in set {
        if !seen.insert(start) {
            continue;
        }
        let mut stack: Vec<(FnId, Vec<FnId>)> = vec![(
            start,
            callees
                .get(start)
                .map(|c| c.iter().rev().copied().collect())
                .unwrap_or_default(),
        )];
        while let Some((f, mut rest)) = stack.pop() {
            match rest.pop() {
                Some(g) => {
                    stack.push((f, rest));
                    if set.contains(&g) && seen.insert(g) {
                        let next = callees
                            .get(g)
                            .map(|c| c.iter().rev().copied().collect())
                            .unwrap_or_default();
                        stack.push((g, next));
                    }
                }
                None => out.push(f),
            }
        }
    }
    out
}

/// Functions that may read one of the given store keys: functions of the key's unit
/// (Python module variables: `UNIT:name`), of its class (fields: `Class.name`), or any C/C++
/// function (`c:name`), whose text mentions the name. One pass over identifier tokens.
fn mentions(ws: &Workspace<'_>, keys: &BTreeSet<String>) -> Vec<FnId> {
    enum Scope<'k> {
        Unit(usize),
        Class(&'k str),
        Linked,
    }
    let scoped: Vec<(Scope<'_>, &str)> = keys
        .iter()
        .map(|k| {
            if let Some(name) = k.strip_prefix("c:") {
                return (Scope::Linked, name);
            }
            if let Some((unit, name)) = k.split_once(':') {
                if let Ok(u) = unit.parse::<usize>() {
                    let name = name.strip_prefix("self.").unwrap_or(name);
                    return (Scope::Unit(u), name);
                }
            }
            match k.rsplit_once('.') {
                Some((class, name)) => (Scope::Class(class), name),
                None => (Scope::Linked, k.as_str()),
            }
        })
        .collect();
    let mut out = Vec::new();
    for (fid, f) in ws.fns.iter().enumerate() {
        let Some(unit) = ws.units.get(f.unit) else {
            continue;
        };
        let names: BTreeSet<&str> = scoped
            .iter()
            .filter(|(scope, _)| match scope {
                Scope::Unit(u) => *u == f.unit,
                Scope::Class(c) => f.class.as_deref() == Some(*c),
                Scope::Linked => matches!(unit.file.language, Language::C | Language::Cpp),
            })
            .map(|(_, n)| *n)
            .collect();
        if names.is_empty() {
            continue;
        }
        let text = match f.index.and_then(|i| unit.functions.get(i)) {
            Some(func) => unit.file.node_text(func.node),
            None => unit.file.text.as_str(),
        };
        let hit = text
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .any(|w| !w.is_empty() && names.contains(w));
        if hit {
            out.push(fid);
        }
    }
    out
}

/// Interprets one function (or module) and returns its facts.
fn analyze_function(
    ws: &Workspace<'_>,
    tabs: &mut Tables,
    env: &Env<'_>,
    pre: &Prescan,
    fid: FnId,
    cancel: &Cancel,
) -> FnOut {
    let mut out = FnOut::default();
    let Some(info) = ws.fns.get(fid) else {
        return out;
    };
    let Some(unit) = ws.units.get(info.unit) else {
        return out;
    };
    let file = unit.file;
    let lang = file.language;
    let func = info.index.and_then(|i| unit.functions.get(i));
    let body = match func {
        Some(f) => f.body.unwrap_or(f.node),
        None => file.root(),
    };
    let (mut declared, complete) = match pre.declared.get(fid) {
        Some(Some(d)) => (d.decl.clone(), d.complete),
        _ => collect_declared(file, body, lang, DECL_BUDGET),
    };
    if !complete {
        out.partial = true;
        out.errors.push((
            0,
            "function too large: declarations collected partially".into(),
        ));
    }
    let types = std::mem::take(&mut declared.types);
    // The names a route handler destructures its request into are its locals.
    let request_pattern = match lang {
        Language::JavaScript | Language::TypeScript => {
            func.and_then(|f| super::interp::js_request_pattern(file, f.node))
        }
        _ => None,
    };
    if let Some(pattern) = request_pattern {
        for (bound, _) in js_pattern_bindings(file, pattern) {
            declared.locals.insert(file.node_text(bound).to_string());
        }
    }
    let cx = FnCx {
        fid,
        unit: info.unit,
        file,
        lang,
        locals: declared.locals,
        types,
        fixed_arrays: declared.fixed_arrays,
        params: info.params.clone(),
        class: info.class.clone(),
        is_module: func.is_none(),
        qualified_name: info.name.clone(),
        has_this: info.has_this,
        instance_fields: info
            .class
            .as_ref()
            .and_then(|c| unit.class_fields.get(c))
            .map(|f| {
                f.types
                    .keys()
                    .filter(|k| !f.statics.contains(*k))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default(),
    };
    let param_lines: Vec<usize> = match func {
        Some(f) => param_lines(file, f),
        None => Vec::new(),
    };
    let mut param_labels = Vec::new();
    if let Some(list) = pre.param_sources.get(&fid) {
        for (i, kind, trust) in list {
            let line = param_lines.get(*i).copied().unwrap_or(info_line(func));
            let text = info.params.get(*i).cloned().unwrap_or_default();
            let label = tabs.source(info.unit, line, text, kind.clone(), *trust);
            param_labels.push((*i, label));
        }
    }
    let mut interp = Interp::new(ws, tabs, env, &cx, &mut out, cancel);
    match func {
        Some(f) => {
            interp.enter(&param_lines, &param_labels);
            if let Some(pattern) = request_pattern {
                interp.enter_request_pattern(pattern);
            }
            let cfg = build_cfg(file, f, cancel);
            interp.run_cfg(&cfg);
        }
        None => interp.run_module(file.root()),
    }
    out.fields_used = fields_used(&out);
    out
}

/// Receiver-field parameter indices appearing in a function's facts.
fn fields_used(out: &FnOut) -> BTreeSet<usize> {
    let mut used = BTreeSet::new();
    let mut scan = |t: &Taint| {
        for e in &t.0 {
            if let Some(i) = as_param(e.label) {
                if i >= super::value::FIELD_BASE {
                    used.insert(i);
                }
            }
        }
    };
    scan(&out.ret);
    out.sinks.values().for_each(&mut scan);
    out.param_mut.values().for_each(&mut scan);
    out.global_writes.values().for_each(&mut scan);
    out.this_writes.values().for_each(&mut scan);
    out.calls.values().for_each(&mut scan);
    used
}

fn info_line(func: Option<&Function<'_>>) -> usize {
    func.map(|f| f.start_line).unwrap_or(1)
}

/// The line where each parameter is written.
fn param_lines(file: &ParsedFile, f: &Function<'_>) -> Vec<usize> {
    let mut lines = Vec::with_capacity(f.params.len());
    let text_start = f.node.start_byte();
    let text = file.node_text(f.node);
    let mut from = 0usize;
    for p in &f.params {
        let pos = if p.is_empty() {
            None
        } else {
            text.get(from..)
                .and_then(|t| t.find(p.as_str()))
                .map(|i| i + from)
        };
        match pos {
            Some(i) => {
                lines.push(file.line_of(text_start + i));
                from = i + p.len();
            }
            None => lines.push(f.start_line),
        }
    }
    lines
}

/// Concrete taint reaching each parameter of each function, through every call chain.
fn param_fixpoint(
    summaries: &[Option<Arc<FnOut>>],
    trails: &mut Trails,
    n: usize,
) -> Vec<BTreeMap<usize, Taint>> {
    let mut pt: Vec<BTreeMap<usize, Taint>> = vec![BTreeMap::new(); n];
    let mut work: BTreeSet<FnId> = (0..n)
        .filter(|f| summaries.get(*f).is_some_and(Option::is_some))
        .collect();
    let mut steps = 0usize;
    while let Some(f) = work.pop_first() {
        steps += 1;
        if steps > 200_000 {
            break;
        }
        let Some(Some(out)) = summaries.get(f) else {
            continue;
        };
        let calls: Vec<((FnId, usize), Taint)> =
            out.calls.iter().map(|(k, v)| (*k, v.clone())).collect();
        for ((g, j), t) in calls {
            let resolved = resolve_params(&t, pt.get(f), trails);
            if resolved.is_empty() {
                continue;
            }
            let Some(slot) = pt.get_mut(g) else { continue };
            let entry = slot.entry(j).or_default();
            let before = entry.clone();
            entry.join(&resolved, trails);
            if !entry.same_labels(&before) {
                work.insert(g);
            }
        }
    }
    pt
}

/// The concrete labels of a symbolic taint, given the concrete taint of the parameters.
fn resolve_params(
    t: &Taint,
    params: Option<&BTreeMap<usize, Taint>>,
    trails: &mut Trails,
) -> Taint {
    let mut out = t.concrete();
    for e in &t.0 {
        let Some(i) = as_param(e.label) else { continue };
        let Some(actual) = params.and_then(|p| p.get(&i)) else {
            continue;
        };
        let mut entries = Vec::with_capacity(actual.0.len());
        for a in &actual.0 {
            let trail = trails.concat(a.trail, e.trail);
            entries.push(Entry {
                label: a.label,
                mask: a.mask | e.mask,
                trail,
            });
        }
        out.join(&Taint(entries), trails);
    }
    out
}

fn global_store(
    summaries: &[Option<Arc<FnOut>>],
    pt: &[BTreeMap<usize, Taint>],
    trails: &mut Trails,
) -> BTreeMap<String, Taint> {
    let mut store: BTreeMap<String, Taint> = BTreeMap::new();
    for (f, s) in summaries.iter().enumerate() {
        let Some(s) = s else { continue };
        for (k, t) in &s.global_writes {
            let r = resolve_params(t, pt.get(f), trails);
            if !r.is_empty() {
                store.entry(k.clone()).or_default().join(&r, trails);
            }
        }
    }
    store
}

fn extract_flows(
    ws: &Workspace<'_>,
    tabs: &mut Tables,
    summaries: &[Option<Arc<FnOut>>],
    pt: &[BTreeMap<usize, Taint>],
    result: &mut TaintResult,
) {
    // (source, sink) -> (sanitized, trail)
    let mut flows: BTreeMap<(u32, u32), (bool, u32)> = BTreeMap::new();
    for (f, s) in summaries.iter().enumerate() {
        let Some(s) = s else { continue };
        for (&site, t) in &s.sinks {
            let resolved = resolve_params(t, pt.get(f), &mut tabs.trails);
            let Some(sink) = tabs.sinks.get(site as usize) else {
                continue;
            };
            let bit = tabs.kind_bit(&sink.kind);
            for e in &resolved.0 {
                let sanitized = bit != 0 && e.mask & bit != 0 || e.mask == ALL_KINDS;
                let entry = flows.entry((e.label, site)).or_insert((sanitized, e.trail));
                if entry.0 && !sanitized {
                    *entry = (false, e.trail);
                } else if entry.0 == sanitized {
                    entry.1 = tabs.trails.better(entry.1, e.trail);
                }
            }
        }
    }
    let path_of_unit = |u: usize| ws.units.get(u).map(|x| x.path.clone()).unwrap_or_default();
    for ((src, site), (sanitized, trail)) in flows {
        let (Some(source), Some(sink)) = (
            tabs.sources.get(src as usize),
            tabs.sinks.get(site as usize),
        ) else {
            continue;
        };
        let (su, sl, stext, skind, trust) = source.clone();
        let mut steps: Vec<Step> = tabs.trails.steps(trail);
        steps.retain(|s| {
            !((s.unit as usize == su && s.line as usize == sl)
                || (s.unit as usize == sink.unit && s.line as usize == sink.line))
        });
        steps.dedup();
        let flow = TaintFlow {
            source: FlowEnd {
                file: path_of_unit(su),
                line: sl,
                text: stext,
                kind: skind,
            },
            sink: FlowEnd {
                file: path_of_unit(sink.unit),
                line: sink.line,
                text: sink.text.clone(),
                kind: sink.kind.clone(),
            },
            path: steps
                .iter()
                .map(|s| PathStep {
                    file: path_of_unit(s.unit as usize),
                    line: s.line as usize,
                })
                .collect(),
            sanitized,
            rule: rules::taint_rule_id(&sink.kind).to_string(),
            trust,
        };
        if sanitized {
            result.sanitized_flows.push(flow);
        } else {
            result.flows.push(flow);
        }
    }
    result.flows.sort_by_key(flow_order);
    result.sanitized_flows.sort_by_key(flow_order);
    drop_nested_sources(&mut result.flows);
    drop_nested_sources(&mut result.sanitized_flows);
}

/// Drops a flow whose source is part of an enclosing source expression of another flow to
/// the same sink (`request.args` inside `request.args.get(...)`, both sources): one flow, the
/// outer one, is reported. `flows` is sorted by sink, then source line, so candidates are
/// neighbours.
fn drop_nested_sources(flows: &mut Vec<TaintFlow>) {
    let encloses = |outer: &FlowEnd, inner: &FlowEnd| {
        outer.file == inner.file
            && outer.line == inner.line
            && outer.kind == inner.kind
            && outer
                .text
                .strip_prefix(inner.text.as_str())
                .is_some_and(|rest| rest.starts_with(['.', '(', '[']))
    };
    let same = |a: &TaintFlow, b: &TaintFlow| {
        a.sink == b.sink && a.source.file == b.source.file && a.source.line == b.source.line
    };
    let keep: Vec<bool> = flows
        .chunk_by(|a, b| same(a, b))
        .flat_map(|group| {
            group
                .iter()
                .map(move |f| !group.iter().any(|o| encloses(&o.source, &f.source)))
        })
        .collect();
    let kept = std::mem::take(flows)
        .into_iter()
        .zip(keep)
        .filter_map(|(f, k)| k.then_some(f));
    flows.extend(kept);
}

fn extract_tainted_variables(
    ws: &Workspace<'_>,
    summaries: &[Option<Arc<FnOut>>],
    pt: &[BTreeMap<usize, Taint>],
    result: &mut TaintResult,
) {
    let mut per_file: BTreeMap<String, BTreeSet<(Option<String>, String, usize)>> = BTreeMap::new();
    for (f, s) in summaries.iter().enumerate() {
        let Some(s) = s else { continue };
        let Some(info) = ws.fns.get(f) else { continue };
        let Some(unit) = ws.units.get(info.unit) else {
            continue;
        };
        let params = pt.get(f);
        let tainted = |t: &Taint| {
            t.0.iter().any(|e| {
                if e.mask == ALL_KINDS {
                    return false;
                }
                match as_param(e.label) {
                    None => true,
                    Some(i) => params
                        .and_then(|p| p.get(&i))
                        .is_some_and(|a| a.0.iter().any(|x| x.mask | e.mask != ALL_KINDS)),
                }
            })
        };
        let set = per_file.entry(unit.path.clone()).or_default();
        for ((var, line), t) in &s.defs {
            if tainted(t) {
                set.insert((info.name.clone(), var.clone(), *line));
            }
        }
        // Parameters receiving tainted arguments.
        if let (Some(params), Some(func)) = (params, info.index.and_then(|i| unit.functions.get(i)))
        {
            let lines = param_lines(unit.file, func);
            for (i, t) in params {
                if t.is_live() {
                    if let (Some(p), Some(line)) = (info.params.get(*i), lines.get(*i)) {
                        if !p.is_empty() {
                            set.insert((info.name.clone(), p.clone(), *line));
                        }
                    }
                }
            }
        }
    }
    for (file, set) in per_file {
        let mut vars: Vec<TaintedVariable> = set
            .into_iter()
            .map(|(function, var, line)| TaintedVariable {
                function,
                var,
                line,
            })
            .collect();
        vars.sort_by(|a, b| (a.line, &a.function, &a.var).cmp(&(b.line, &b.function, &b.var)));
        if !vars.is_empty() {
            result.tainted_variables.insert(file, vars);
        }
    }
}
