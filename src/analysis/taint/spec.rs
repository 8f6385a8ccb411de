//! Taint specifications as data: sources, sinks, sanitizers and propagators, one TOML file per
//! language (the built-in ones live in `specs/*.toml`), extended by users with their own files.
//!
//! # File format
//!
//! ```toml
//! language = "python"            # optional; python, java, c, cpp, solidity, javascript,
//!                                # typescript
//!
//! [[source]]
//! id = "py-input"                # optional; default "<kind>:<first pattern>"
//! kind = "user_input"            # free text, shown in `taint_flows[].source.kind`
//! trust = "local"                # remote | stored | local (the threat model's class, see
//!                                # [`Trust`]); default from `kind`: web_request, network,
//!                                # transaction, external_input -> remote; database -> stored;
//!                                # anything else -> local
//! calls = ["input", "sys.stdin.readline"]   # the call's value is tainted
//! attributes = ["sys.argv"]      # reading this member expression yields tainted data
//! out_args = [0]                 # C style: the call writes tainted data into these arguments
//! except_in = ["constructor"]   # functions (simple names) where this source does not apply
//! params = { functions = ["main"], index = [1] }   # parameters of named functions...
//! # params = { visibility = ["public", "external"] }  # ...or of functions with a visibility
//! # params = { decorators = ["*.route"] }   # ...or of decorated functions (Flask routes;
//! #                                          # Java: annotated methods, `GetMapping`)
//! # params = { annotations = ["RequestParam"] }  # ...or Java parameters with these annotations
//! # params = { decorators = ["GetMapping"], types = ["String"] }  # ...of these declared types
//! # (`self`/`cls` are never sources; all three lists empty = every function)
//! description = "..."
//!
//! [[sink]]
//! kind = "command"               # decides the rule: `taint-command` (see `analysis::rules`)
//! calls = ["os.system", "subprocess.call"]
//! args = [0]                     # sensitive arguments; default: every argument
//! when_keyword = { shell = "True" }  # only when these keyword arguments are written so
//! unless_keyword = ["root"]      # not when one of these keyword arguments (JavaScript:
//!                                # options-object properties) is given
//! requires = ["arg0_fixed_array"]    # extra conditions (C: destination is a fixed-size array;
//!                                # `arg0_shell`: the first argument names a shell, `sh`, `cmd`)
//!
//! [[sanitizer]]
//! calls = ["shlex.quote"]
//! kinds = ["command"]            # sink kinds it protects against; "*" = all
//!
//! guard = [0]                    # a validator: as a branch condition it sanitises these
//!                                # arguments on the branch where it returned true
//! raises = false                 # true: it raises on bad input, so as a statement it
//!                                # sanitises its `guard` arguments from then on
//!
//! [[propagator]]
//! calls = ["*.append"]
//! from = ["args"]                # "args", "receiver", an index, or "N.." (N and later)
//! to = ["receiver"]              # "return", "receiver", an index, or "N.."
//!
//! [[lookup]]
//! calls = ["*.objects.get"]      # the value is what is stored under the key arguments:
//! keys = ["args"]                # a tainted key does not taint it (receiver and other
//!                                # arguments still do)
//! ```
//!
//! Argument selectors count positional arguments from 0, receivers excluded; `"2.."` means
//! the third argument and every later one.
//!
//! # Call patterns
//!
//! A call's callee is normalised to a path of segments: `response.getWriter().println` is
//! `response`, `getWriter()`, `println` (`->` and `::` count as `.`, arguments are dropped,
//! whitespace ignored). Python imports are applied first (`from os import system` makes
//! `system(..)` the path `os.system`).
//!
//! | pattern | matches |
//! |---|---|
//! | `input` | a bare call `input(..)` (no receiver) |
//! | `os.system`, `getWriter().print` | a callee path ending with these segments (receiver segments compare case-insensitively) |
//! | `*.execute` | method `execute` on any receiver |
//! | `PrintWriter#println` | method `println` on a receiver whose declared type is `PrintWriter` |
//! | `new java.io.File` | a constructor call of class `File` (qualified patterns must match the written suffix) |
//!
//! A trailing `*` in a segment matches any suffix (`os.exec*`). Attribute patterns
//! (`attributes`) use the path form without calls.
//!
//! # Provenance and merging
//!
//! Every rule records where it came from ([`Provenance`]): `builtin` for the bundled files,
//! `user` for configuration files, `llm-suggested` for rules proposed by a model (to be shown
//! at a lower tier). [`TaintSpec::merge`] appends another spec's rules; a rule whose `id`
//! equals an existing rule of the same section replaces it (so users can override a built-in
//! rule by id), and every other rule is added.

use crate::syntax::Language;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Where a rule came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Provenance {
    Builtin,
    User,
    LlmSuggested,
}

impl Provenance {
    pub fn name(self) -> &'static str {
        match self {
            Provenance::Builtin => "builtin",
            Provenance::User => "user",
            Provenance::LlmSuggested => "llm-suggested",
        }
    }
}

/// An error in a specification file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError {
    pub message: String,
}

impl std::fmt::Display for SpecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "invalid taint specification: {}", self.message)
    }
}

impl std::error::Error for SpecError {}

fn err(message: impl Into<String>) -> SpecError {
    SpecError {
        message: message.into(),
    }
}

/// Which arguments of a call a rule looks at or writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ArgSel {
    /// Every positional argument.
    All,
    /// The call's receiver (`x` in `x.m()`).
    Receiver,
    /// The call's value.
    Return,
    /// One positional argument (0-based).
    Index(usize),
    /// This positional argument and every later one.
    From(usize),
    /// Every keyword argument (`url=x`).
    Keywords,
}

impl ArgSel {
    fn parse(s: &str) -> Result<ArgSel, SpecError> {
        let t = s.trim();
        Ok(match t {
            "args" | "*" | "all" => ArgSel::All,
            "receiver" | "self" | "this" => ArgSel::Receiver,
            "return" | "result" => ArgSel::Return,
            "keywords" | "kwargs" => ArgSel::Keywords,
            _ => {
                if let Some(n) = t.strip_suffix("..") {
                    ArgSel::From(
                        n.trim()
                            .parse()
                            .map_err(|_| err(format!("bad argument selector `{s}`")))?,
                    )
                } else if let Some(n) = t.strip_prefix("arg") {
                    ArgSel::Index(
                        n.parse()
                            .map_err(|_| err(format!("bad argument selector `{s}`")))?,
                    )
                } else {
                    ArgSel::Index(
                        t.parse()
                            .map_err(|_| err(format!("bad argument selector `{s}`")))?,
                    )
                }
            }
        })
    }

    /// True when positional argument `i` is selected.
    pub fn selects_arg(self, i: usize) -> bool {
        match self {
            ArgSel::All => true,
            ArgSel::Index(n) => n == i,
            ArgSel::From(n) => i >= n,
            ArgSel::Receiver | ArgSel::Return | ArgSel::Keywords => false,
        }
    }
}

/// One segment of a callee or attribute path.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Seg {
    pub name: String,
    /// True for a call segment (`getWriter()`).
    pub call: bool,
}

/// A parsed call pattern (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallPattern {
    /// `input`: a bare call.
    Bare(String),
    /// `os.system`: a path suffix.
    Path(Vec<Seg>),
    /// `*.execute`: a method on any receiver.
    AnyReceiver(String),
    /// `PrintWriter#println`: a method on a receiver of this declared type.
    Typed { ty: String, method: String },
    /// `new java.io.File`: a constructor (the written type path's suffix).
    New(Vec<String>),
}

/// Compares one name against a pattern name with an optional trailing `*`.
fn name_matches(pattern: &str, name: &str, case_insensitive: bool) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => {
            if case_insensitive {
                name.len() >= prefix.len()
                    && name
                        .get(..prefix.len())
                        .is_some_and(|p| p.eq_ignore_ascii_case(prefix))
            } else {
                name.starts_with(prefix)
            }
        }
        None => {
            if case_insensitive {
                pattern.eq_ignore_ascii_case(name)
            } else {
                pattern == name
            }
        }
    }
}

/// Splits a path text into segments: `a.b().c` -> a, b(), c.
fn parse_segs(text: &str) -> Result<Vec<Seg>, SpecError> {
    let mut segs = Vec::new();
    for part in text.split('.') {
        let part = part.trim();
        let (name, call) = match part.strip_suffix("()") {
            Some(n) => (n, true),
            None => (part, false),
        };
        // `-` appears in npm package names (`escape-html`), which JavaScript bindings expand to.
        if name.is_empty()
            || name.starts_with('-')
            || !name
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | '$' | '*' | '-'))
        {
            return Err(err(format!("bad pattern `{text}`")));
        }
        segs.push(Seg {
            name: name.to_string(),
            call,
        });
    }
    Ok(segs)
}

impl CallPattern {
    pub fn parse(text: &str) -> Result<CallPattern, SpecError> {
        let t: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
        let t = t.replace("::", ".").replace("->", ".");
        if let Some(rest) = t.strip_prefix("new ") {
            let segs = parse_segs(rest.trim())?;
            return Ok(CallPattern::New(segs.into_iter().map(|s| s.name).collect()));
        }
        if t.contains(' ') {
            return Err(err(format!("bad pattern `{text}`")));
        }
        if let Some((ty, method)) = t.split_once('#') {
            parse_segs(ty)?;
            parse_segs(method)?;
            return Ok(CallPattern::Typed {
                ty: ty.to_string(),
                method: method.to_string(),
            });
        }
        if let Some(method) = t.strip_prefix("*.") {
            parse_segs(method)?;
            return Ok(CallPattern::AnyReceiver(method.to_string()));
        }
        let segs = parse_segs(&t)?;
        if segs.len() == 1 && !segs[0].call {
            return Ok(CallPattern::Bare(segs[0].name.clone()));
        }
        Ok(CallPattern::Path(segs))
    }

    /// Does a call match? `path` is the callee path (its last segment is the called name),
    /// `receiver_type` the declared type of the receiver when known, `is_new` for constructor
    /// calls (then `path` is the written type).
    pub fn matches(&self, call: &CallShape<'_>) -> bool {
        match self {
            CallPattern::New(p) => call.is_new && suffix_match_names(p, call.path),
            _ if call.is_new => false,
            CallPattern::Bare(name) => {
                call.path.len() == 1 && name_matches(name, &call.path[0].name, false)
            }
            CallPattern::AnyReceiver(m) => {
                call.path.len() >= 2
                    && call
                        .path
                        .last()
                        .is_some_and(|s| name_matches(m, &s.name, false))
            }
            CallPattern::Typed { ty, method } => {
                call.path.len() >= 2
                    && call
                        .path
                        .last()
                        .is_some_and(|s| name_matches(method, &s.name, false))
                    && call
                        .receiver_type
                        .is_some_and(|t| name_matches(ty, t, false))
            }
            CallPattern::Path(p) => suffix_match(p, call.path),
        }
    }
}

/// What the engine knows about one call when matching patterns.
#[derive(Debug, Clone, Copy)]
pub struct CallShape<'a> {
    pub path: &'a [Seg],
    pub receiver_type: Option<&'a str>,
    pub is_new: bool,
}

fn suffix_match(pattern: &[Seg], path: &[Seg]) -> bool {
    if pattern.is_empty() || pattern.len() > path.len() {
        return false;
    }
    let off = path.len() - pattern.len();
    pattern.iter().enumerate().all(|(i, p)| {
        let s = &path[off + i];
        let last = i + 1 == pattern.len();
        name_matches(&p.name, &s.name, !last) && (last || p.call == s.call)
    })
}

fn suffix_match_names(pattern: &[String], path: &[Seg]) -> bool {
    if pattern.is_empty() || pattern.len() > path.len() {
        return false;
    }
    let off = path.len() - pattern.len();
    pattern
        .iter()
        .enumerate()
        .all(|(i, p)| name_matches(p, &path[off + i].name, false))
}

/// An attribute (member read) pattern: `sys.argv`, `msg.sender`, `request.args`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttrPattern(pub Vec<Seg>);

impl AttrPattern {
    pub fn parse(text: &str) -> Result<AttrPattern, SpecError> {
        let t: String = text.split_whitespace().collect();
        let t = t.replace("::", ".").replace("->", ".");
        Ok(AttrPattern(parse_segs(&t)?))
    }

    /// A path matches when it ends with the pattern; a one-segment pattern (`argv`) only
    /// matches a one-segment path; `*.data` matches any member `data` of something.
    pub fn matches(&self, path: &[Seg]) -> bool {
        if self.0.len() == 2 && self.0[0].name == "*" {
            return path.len() >= 2
                && path
                    .last()
                    .is_some_and(|l| !l.call && name_matches(&self.0[1].name, &l.name, false));
        }
        if self.0.len() == 1 {
            return path.len() == 1 && name_matches(&self.0[0].name, &path[0].name, false);
        }
        suffix_match(&self.0, path)
    }
}

/// Parameters that are sources.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ParamSource {
    /// Functions by simple name (`main`); empty = any function (subject to `visibility`).
    pub functions: Vec<String>,
    /// Parameter positions; empty = all.
    pub index: Vec<usize>,
    /// Solidity visibilities (`public`, `external`); empty = any.
    pub visibility: Vec<String>,
    /// Decorators (call patterns, `*.route`; Java: the method's annotations, `GetMapping`);
    /// empty = any.
    pub decorators: Vec<CallPattern>,
    /// Java: parameters carrying one of these annotations (`RequestParam`); empty = any.
    pub annotations: Vec<String>,
    /// Parameters declared with one of these types (`String`); empty = any.
    pub types: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SourceRule {
    pub id: String,
    pub kind: String,
    pub calls: Vec<CallPattern>,
    pub attributes: Vec<AttrPattern>,
    /// Arguments the call writes tainted data into (then the call's value is not tainted
    /// unless `calls` patterns are also listed without `out_args`).
    pub out_args: Vec<ArgSel>,
    pub params: Option<ParamSource>,
    /// Simple names of functions in which this source does not apply (Solidity
    /// `constructor`: `msg.sender` there is the deployer).
    pub except_in: Vec<String>,
    /// Who controls the data: the threat model's class of this source.
    pub trust: Trust,
    pub description: String,
    pub provenance: Provenance,
}

/// The threat model's classes of input. `remote`: anyone who can reach the program (HTTP
/// request parts, sockets, message queues, uploads, transactions); `stored`: data the program
/// wrote or another user supplied earlier (database rows, caches: second-order input); `local`:
/// whoever runs the program (environment, `argv`, stdin, files, configuration, system
/// properties).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Trust {
    Remote,
    Stored,
    Local,
}

impl Trust {
    pub const ALL: [Trust; 3] = [Trust::Remote, Trust::Stored, Trust::Local];

    pub fn name(self) -> &'static str {
        match self {
            Trust::Remote => "remote",
            Trust::Stored => "stored",
            Trust::Local => "local",
        }
    }

    pub fn parse(text: &str) -> Option<Trust> {
        Trust::ALL
            .into_iter()
            .find(|t| t.name().eq_ignore_ascii_case(text.trim()))
    }

    /// The class of a source row that does not name one, from its kind: request, network,
    /// transaction and external input are remote; database and cache rows stored; everything
    /// else (environment, command line, console, files, configuration) local.
    pub fn of_kind(kind: &str) -> Trust {
        match kind {
            "web_request" | "network" | "transaction" | "external_input" | "message_queue"
            | "upload" => Trust::Remote,
            "database" | "stored" | "cache" => Trust::Stored,
            _ => Trust::Local,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct SinkRule {
    pub id: String,
    pub kind: String,
    pub calls: Vec<CallPattern>,
    /// Sensitive arguments; empty = every positional argument.
    pub args: Vec<ArgSel>,
    /// Keyword arguments that must be written with these texts (`shell = "True"`).
    pub when_keyword: BTreeMap<String, String>,
    /// Keyword arguments (JavaScript: options-object properties) whose presence makes the
    /// call safe (`res.sendFile(p, { root })` confines `p` to `root`).
    pub unless_keyword: Vec<String>,
    /// Extra conditions: `arg0_fixed_array` (C: the first argument is an array variable
    /// declared with a constant size).
    pub requires: Vec<String>,
    pub description: String,
    pub provenance: Provenance,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SanitizerRule {
    pub id: String,
    pub calls: Vec<CallPattern>,
    /// Sink kinds it protects against; `*` = all.
    pub kinds: Vec<String>,
    /// A validator: when the call is a branch condition, these arguments (plain variables)
    /// are sanitised on the branch where it returned true (`if not is_safe(x): return`
    /// sanitises `x` after the `if`). Empty: the call only sanitises its own value.
    pub guards: Vec<ArgSel>,
    /// The validator raises on bad input: called as a statement, it sanitises its `guards`
    /// arguments from then on.
    pub raises: bool,
    pub provenance: Provenance,
}

/// A lookup: the call's value is what a collection, registry or database holds *under* its
/// key arguments, so a tainted key does not taint the value (the receiver's and the other
/// arguments' taint still flow). Without a rule an unknown call's value carries the taint of
/// its receiver and of every argument.
#[derive(Debug, Clone, PartialEq)]
pub struct LookupRule {
    pub id: String,
    pub calls: Vec<CallPattern>,
    /// The key arguments (`"args"`: every argument and keyword argument).
    pub keys: Vec<ArgSel>,
    pub provenance: Provenance,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PropagatorRule {
    pub id: String,
    pub calls: Vec<CallPattern>,
    pub from: Vec<ArgSel>,
    pub to: Vec<ArgSel>,
    pub provenance: Provenance,
}

/// The taint specification of one language.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TaintSpec {
    pub language: Option<Language>,
    pub sources: Vec<SourceRule>,
    pub sinks: Vec<SinkRule>,
    pub sanitizers: Vec<SanitizerRule>,
    pub propagators: Vec<PropagatorRule>,
    pub lookups: Vec<LookupRule>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSpec {
    language: Option<String>,
    #[serde(default)]
    source: Vec<RawSource>,
    #[serde(default)]
    sink: Vec<RawSink>,
    #[serde(default)]
    sanitizer: Vec<RawSanitizer>,
    #[serde(default)]
    propagator: Vec<RawPropagator>,
    #[serde(default)]
    lookup: Vec<RawLookup>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLookup {
    id: Option<String>,
    calls: Vec<String>,
    keys: Vec<RawArg>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawArg {
    Index(usize),
    Text(String),
}

impl RawArg {
    fn parse(&self) -> Result<ArgSel, SpecError> {
        match self {
            RawArg::Index(i) => Ok(ArgSel::Index(*i)),
            RawArg::Text(t) => ArgSel::parse(t),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawParams {
    #[serde(default)]
    functions: Vec<String>,
    #[serde(default)]
    index: Vec<usize>,
    #[serde(default)]
    visibility: Vec<String>,
    #[serde(default)]
    decorators: Vec<String>,
    #[serde(default)]
    annotations: Vec<String>,
    #[serde(default)]
    types: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSource {
    id: Option<String>,
    kind: String,
    #[serde(default)]
    calls: Vec<String>,
    #[serde(default)]
    attributes: Vec<String>,
    #[serde(default)]
    out_args: Vec<RawArg>,
    params: Option<RawParams>,
    #[serde(default)]
    except_in: Vec<String>,
    #[serde(default)]
    description: String,
    /// `remote`, `stored` or `local`; derived from `kind` when absent.
    trust: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSink {
    id: Option<String>,
    kind: String,
    #[serde(default)]
    calls: Vec<String>,
    #[serde(default)]
    args: Vec<RawArg>,
    #[serde(default)]
    when_keyword: BTreeMap<String, String>,
    #[serde(default)]
    unless_keyword: Vec<String>,
    #[serde(default)]
    requires: Vec<String>,
    #[serde(default)]
    description: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSanitizer {
    id: Option<String>,
    calls: Vec<String>,
    #[serde(default)]
    kinds: Vec<String>,
    #[serde(default)]
    guard: Vec<RawArg>,
    #[serde(default)]
    raises: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPropagator {
    id: Option<String>,
    calls: Vec<String>,
    from: Vec<RawArg>,
    to: Vec<RawArg>,
}

/// Conditions a sink may require (`requires = [...]`).
pub const KNOWN_REQUIREMENTS: &[&str] = &["arg0_fixed_array", "arg0_shell"];

fn patterns(list: &[String]) -> Result<Vec<CallPattern>, SpecError> {
    list.iter().map(|p| CallPattern::parse(p)).collect()
}

fn args(list: &[RawArg]) -> Result<Vec<ArgSel>, SpecError> {
    list.iter().map(RawArg::parse).collect()
}

fn default_id(section: &str, kind: &str, first: Option<&String>) -> String {
    format!(
        "{section}:{kind}:{}",
        first.map(String::as_str).unwrap_or("")
    )
}

impl TaintSpec {
    /// Parses a specification file (see the module docs); every rule gets `provenance`.
    pub fn from_toml(text: &str, provenance: Provenance) -> Result<TaintSpec, SpecError> {
        let raw: RawSpec = toml::from_str(text).map_err(|e| err(e.to_string()))?;
        let language = match raw.language.as_deref() {
            None => None,
            Some(name) => Some(
                Language::from_name(name)
                    .ok_or_else(|| err(format!("unknown language `{name}`")))?,
            ),
        };
        let mut spec = TaintSpec {
            language,
            ..TaintSpec::default()
        };
        for s in raw.source {
            let rule = SourceRule {
                id: s.id.clone().unwrap_or_else(|| {
                    default_id("source", &s.kind, s.calls.first().or(s.attributes.first()))
                }),
                calls: patterns(&s.calls)?,
                attributes: s
                    .attributes
                    .iter()
                    .map(|a| AttrPattern::parse(a))
                    .collect::<Result<_, _>>()?,
                out_args: args(&s.out_args)?,
                params: match s.params {
                    Some(p) => Some(ParamSource {
                        functions: p.functions,
                        index: p.index,
                        visibility: p.visibility,
                        decorators: patterns(&p.decorators)?,
                        annotations: p.annotations,
                        types: p.types,
                    }),
                    None => None,
                },
                except_in: s.except_in,
                trust: match s.trust.as_deref() {
                    Some(t) => Trust::parse(t).ok_or_else(|| {
                        err(format!(
                            "unknown trust class `{t}` (expected remote, stored or local)"
                        ))
                    })?,
                    None => Trust::of_kind(&s.kind),
                },
                kind: s.kind,
                description: s.description,
                provenance,
            };
            if rule.calls.is_empty() && rule.attributes.is_empty() && rule.params.is_none() {
                return Err(err(format!(
                    "source `{}` has no calls, attributes or params",
                    rule.id
                )));
            }
            spec.sources.push(rule);
        }
        for s in raw.sink {
            for r in &s.requires {
                if !KNOWN_REQUIREMENTS.contains(&r.as_str()) {
                    return Err(err(format!("unknown sink requirement `{r}`")));
                }
            }
            if s.calls.is_empty() {
                return Err(err(format!("sink of kind `{}` has no calls", s.kind)));
            }
            spec.sinks.push(SinkRule {
                id: s
                    .id
                    .clone()
                    .unwrap_or_else(|| default_id("sink", &s.kind, s.calls.first())),
                calls: patterns(&s.calls)?,
                args: args(&s.args)?,
                when_keyword: s.when_keyword,
                unless_keyword: s.unless_keyword,
                requires: s.requires,
                kind: s.kind,
                description: s.description,
                provenance,
            });
        }
        for s in raw.sanitizer {
            let kinds = if s.kinds.is_empty() {
                vec!["*".to_string()]
            } else {
                s.kinds
            };
            spec.sanitizers.push(SanitizerRule {
                id: s
                    .id
                    .clone()
                    .unwrap_or_else(|| default_id("sanitizer", &kinds.join(","), s.calls.first())),
                calls: patterns(&s.calls)?,
                kinds,
                guards: args(&s.guard)?,
                raises: s.raises,
                provenance,
            });
        }
        for l in raw.lookup {
            spec.lookups.push(LookupRule {
                id: l
                    .id
                    .clone()
                    .unwrap_or_else(|| default_id("lookup", "", l.calls.first())),
                calls: patterns(&l.calls)?,
                keys: args(&l.keys)?,
                provenance,
            });
        }
        for p in raw.propagator {
            spec.propagators.push(PropagatorRule {
                id: p
                    .id
                    .clone()
                    .unwrap_or_else(|| default_id("propagator", "", p.calls.first())),
                calls: patterns(&p.calls)?,
                from: args(&p.from)?,
                to: args(&p.to)?,
                provenance,
            });
        }
        Ok(spec)
    }

    /// The bundled specification of a language (empty for languages without one).
    pub fn builtin(language: Language) -> TaintSpec {
        let text = match language {
            Language::Python => include_str!("specs/python.toml"),
            Language::Java => include_str!("specs/java.toml"),
            Language::C => include_str!("specs/c.toml"),
            Language::Cpp => include_str!("specs/cpp.toml"),
            Language::Solidity => include_str!("specs/solidity.toml"),
            Language::JavaScript | Language::TypeScript => include_str!("specs/javascript.toml"),
        };
        // The bundled files are checked by tests; a broken one degrades to an empty spec.
        let parse = |text: &str| {
            TaintSpec::from_toml(text, Provenance::Builtin).unwrap_or_else(|_| TaintSpec {
                language: Some(language),
                ..TaintSpec::default()
            })
        };
        if language == Language::TypeScript {
            // TypeScript shares JavaScript's libraries and their specification.
            let mut spec = parse(text);
            spec.language = Some(Language::TypeScript);
            return spec;
        }
        if language == Language::Cpp {
            // C++ is C plus its own rows (see the header of specs/cpp.toml).
            let mut spec = parse(include_str!("specs/c.toml"));
            spec.language = Some(Language::Cpp);
            spec.merge(parse(text));
            return spec;
        }
        parse(text)
    }

    /// Adds `other`'s rules; a rule with the id of an existing rule of the same section
    /// replaces it.
    pub fn merge(&mut self, other: TaintSpec) {
        fn merge_list<T>(into: &mut Vec<T>, from: Vec<T>, id: impl Fn(&T) -> &str) {
            for r in from {
                match into.iter().position(|x| id(x) == id(&r)) {
                    Some(i) => into[i] = r,
                    None => into.push(r),
                }
            }
        }
        if self.language.is_none() {
            self.language = other.language;
        }
        merge_list(&mut self.sources, other.sources, |r| &r.id);
        merge_list(&mut self.sinks, other.sinks, |r| &r.id);
        merge_list(&mut self.sanitizers, other.sanitizers, |r| &r.id);
        merge_list(&mut self.propagators, other.propagators, |r| &r.id);
        merge_list(&mut self.lookups, other.lookups, |r| &r.id);
    }

    /// Every rule count, for summaries.
    pub fn rule_count(&self) -> usize {
        self.sources.len()
            + self.sinks.len()
            + self.sanitizers.len()
            + self.propagators.len()
            + self.lookups.len()
    }

    /// Identifiers that may start a source match (the last segment of call patterns and of
    /// attribute patterns); used to find the functions worth analysing.
    pub fn source_triggers(&self) -> Vec<String> {
        let mut out = Vec::new();
        for s in &self.sources {
            for c in &s.calls {
                out.push(pattern_last_name(c));
            }
            for a in &s.attributes {
                if let Some(last) = a.0.last() {
                    out.push(last.name.clone());
                }
            }
        }
        out.sort();
        out.dedup();
        out
    }
}

fn pattern_last_name(p: &CallPattern) -> String {
    match p {
        CallPattern::Bare(n) | CallPattern::AnyReceiver(n) => n.clone(),
        CallPattern::Typed { method, .. } => method.clone(),
        CallPattern::Path(segs) => segs.last().map(|s| s.name.clone()).unwrap_or_default(),
        CallPattern::New(p) => p.last().cloned().unwrap_or_default(),
    }
}

/// The specifications of every language, as used by one analysis run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TaintSpecs {
    pub by_language: BTreeMap<Language, TaintSpec>,
}

impl TaintSpecs {
    /// The bundled specifications of every language.
    pub fn builtin() -> TaintSpecs {
        Self::builtin_shared().clone()
    }

    /// The bundled specifications, parsed once per process.
    pub fn builtin_shared() -> &'static TaintSpecs {
        static BUILTIN: std::sync::OnceLock<TaintSpecs> = std::sync::OnceLock::new();
        BUILTIN.get_or_init(|| TaintSpecs {
            by_language: Language::ALL
                .iter()
                .map(|&l| (l, TaintSpec::builtin(l)))
                .collect(),
        })
    }

    /// Merges a spec into the language it names (or into every language when it names none).
    pub fn merge(&mut self, spec: TaintSpec) {
        match spec.language {
            // TypeScript runs on JavaScript's libraries: a JavaScript spec covers both.
            Some(Language::JavaScript) => {
                self.by_language
                    .entry(Language::TypeScript)
                    .or_default()
                    .merge(spec.clone());
                self.by_language
                    .entry(Language::JavaScript)
                    .or_default()
                    .merge(spec);
            }
            Some(l) => self.by_language.entry(l).or_default().merge(spec),
            None => {
                for l in Language::ALL {
                    self.by_language.entry(l).or_default().merge(spec.clone());
                }
            }
        }
    }

    pub fn get(&self, language: Language) -> Option<&TaintSpec> {
        self.by_language.get(&language)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segs(s: &str) -> Vec<Seg> {
        parse_segs(s).unwrap()
    }

    fn call(path: &[Seg]) -> CallShape<'_> {
        CallShape {
            path,
            receiver_type: None,
            is_new: false,
        }
    }

    #[test]
    fn every_builtin_spec_parses() {
        for (file, text) in [
            ("python", include_str!("specs/python.toml")),
            ("java", include_str!("specs/java.toml")),
            ("c", include_str!("specs/c.toml")),
            ("cpp", include_str!("specs/cpp.toml")),
            ("solidity", include_str!("specs/solidity.toml")),
            ("javascript", include_str!("specs/javascript.toml")),
        ] {
            let spec = TaintSpec::from_toml(text, Provenance::Builtin)
                .unwrap_or_else(|e| panic!("{file}: {e}"));
            assert_eq!(spec.language.map(|l| l.name()), Some(file));
            assert!(!spec.sources.is_empty() && !spec.sinks.is_empty(), "{file}");
            let mut ids: Vec<&str> = spec.sinks.iter().map(|s| s.id.as_str()).collect();
            ids.sort();
            let n = ids.len();
            ids.dedup();
            assert_eq!(ids.len(), n, "{file}: duplicate sink ids");
            // Every bundled source row states its trust class (no silent default).
            let raw: toml::Value = toml::from_str(text).unwrap();
            for row in raw
                .get("source")
                .and_then(|v| v.as_array())
                .into_iter()
                .flatten()
            {
                let t = row.get("trust").and_then(|v| v.as_str());
                assert!(
                    t.is_some_and(|t| Trust::parse(t).is_some()),
                    "{file}: source {:?} has no valid trust class",
                    row.get("id")
                );
            }
        }
    }

    #[test]
    fn trust_classes_parse_and_default_from_the_kind() {
        let spec = TaintSpec::from_toml(
            "[[source]]\nkind = \"web_request\"\ncalls = [\"a\"]\n[[source]]\nkind = \"environment\"\ncalls = [\"b\"]\n[[source]]\nkind = \"environment\"\ntrust = \"Remote\"\ncalls = [\"c\"]\n[[source]]\nkind = \"database\"\ncalls = [\"d\"]\n",
            Provenance::User,
        )
        .unwrap();
        let got: Vec<Trust> = spec.sources.iter().map(|s| s.trust).collect();
        assert_eq!(
            got,
            [Trust::Remote, Trust::Local, Trust::Remote, Trust::Stored]
        );
        let bad = TaintSpec::from_toml(
            "[[source]]\nkind = \"x\"\ntrust = \"public\"\ncalls = [\"a\"]\n",
            Provenance::User,
        );
        assert!(bad
            .unwrap_err()
            .to_string()
            .contains("unknown trust class `public`"));
    }

    #[test]
    fn bare_patterns_match_only_receiverless_calls() {
        let p = CallPattern::parse("input").unwrap();
        assert!(p.matches(&call(&segs("input"))));
        assert!(!p.matches(&call(&segs("x.input"))));
    }

    #[test]
    fn path_patterns_match_suffixes_with_case_insensitive_receivers() {
        let p = CallPattern::parse("JdbcTemplate.update").unwrap();
        assert!(p.matches(&call(&segs("helpers.DatabaseHelper.JDBCtemplate.update"))));
        assert!(p.matches(&call(&segs("jdbcTemplate.update"))));
        assert!(!p.matches(&call(&segs("jdbcTemplate.Update"))));
        let q = CallPattern::parse("getWriter().println").unwrap();
        assert!(q.matches(&call(&segs("response.getWriter().println"))));
        assert!(!q.matches(&call(&segs("response.getWriter.println"))));
        let g = CallPattern::parse("os.exec*").unwrap();
        assert!(g.matches(&call(&segs("os.execvp"))));
    }

    #[test]
    fn typed_and_constructor_patterns() {
        let p = CallPattern::parse("PrintWriter#println").unwrap();
        let path = segs("out.println");
        assert!(p.matches(&CallShape {
            path: &path,
            receiver_type: Some("PrintWriter"),
            is_new: false
        }));
        assert!(!p.matches(&call(&path)));
        let n = CallPattern::parse("new java.io.File").unwrap();
        let t = segs("File");
        assert!(!n.matches(&CallShape {
            path: &t,
            receiver_type: None,
            is_new: true
        }));
        let n2 = CallPattern::parse("new File").unwrap();
        assert!(n2.matches(&CallShape {
            path: &segs("java.io.File"),
            receiver_type: None,
            is_new: true
        }));
    }

    #[test]
    fn argument_selectors() {
        assert_eq!(ArgSel::parse("2..").unwrap(), ArgSel::From(2));
        assert_eq!(ArgSel::parse("receiver").unwrap(), ArgSel::Receiver);
        assert_eq!(ArgSel::parse("arg1").unwrap(), ArgSel::Index(1));
        assert!(ArgSel::parse("x").is_err());
        assert!(ArgSel::From(2).selects_arg(5) && !ArgSel::From(2).selects_arg(1));
    }

    #[test]
    fn user_rules_override_builtin_rules_by_id_and_keep_provenance() {
        let mut spec = TaintSpec::builtin(Language::Python);
        let n = spec.sinks.len();
        let user = TaintSpec::from_toml(
            "language = \"python\"\n[[sink]]\nid = \"py-os-system\"\nkind = \"command\"\ncalls = [\"os.system\", \"my.run\"]\n[[sink]]\nkind = \"custom\"\ncalls = [\"danger\"]\n",
            Provenance::User,
        )
        .unwrap();
        spec.merge(user);
        assert_eq!(spec.sinks.len(), n + 1);
        let replaced = spec.sinks.iter().find(|s| s.id == "py-os-system").unwrap();
        assert_eq!(replaced.provenance, Provenance::User);
        assert_eq!(replaced.calls.len(), 2);
        assert!(spec
            .sinks
            .iter()
            .any(|s| s.kind == "custom" && s.provenance == Provenance::User));
    }

    #[test]
    fn malformed_specs_are_rejected_with_a_message() {
        for bad in [
            "[[sink]]\nkind = \"x\"\n",
            "[[sink]]\nkind = \"x\"\ncalls = [\"a b c\"]\n",
            "[[source]]\nkind = \"x\"\n",
            "language = \"cobol\"\n",
            "[[sink]]\nkind = \"x\"\ncalls = [\"f\"]\nrequires = [\"moon_phase\"]\n",
            "[[sink]]\nkind = \"x\"\ncalls = [\"f\"]\nargs = [\"sideways\"]\n",
            "[[bogus]]\n",
        ] {
            assert!(
                TaintSpec::from_toml(bad, Provenance::User).is_err(),
                "accepted: {bad}"
            );
        }
    }
}
