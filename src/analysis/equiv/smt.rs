//! Bounded equivalence checking with an SMT solver (Z3): symbolic evidence between a proof and a
//! trial.
//!
//! Both functions are lowered ([`super::lower`]) into one small imperative language, then
//! executed symbolically side by side on shared symbolic inputs: every loop is unrolled `unroll`
//! times, calls of the file's own functions are inlined up to `depth` levels, lists have at most
//! `max_len` elements. Execution is *predicated*: a statement updates a variable to
//! `ite(active, new, old)`, where `active` says that the path reaches it; `return`, `break`,
//! `continue` and raised exceptions are flags of the state. Nothing forks, so the formula grows
//! with the unrolled program, not with its paths.
//!
//! Semantics are the languages' own: Java and C integers are bit-vectors of their real width
//! (Java wraps; a C signed overflow, a division by zero, `INT_MIN / -1`, a shift out of range or
//! an index out of bounds is undefined behaviour), Python integers are unbounded with floor
//! division and negative indices. Exceptions are outcomes (same class expected within one
//! language); an input that makes either side undefined, or run past a bound, is outside what is
//! claimed.
//!
//! The query is "is there an input, within the bounds, on which the two differ (return value,
//! the final state of mutable lists, exception or not)?":
//! * satisfiable: the model is a candidate counterexample, which the caller executes (a model
//!   alone is never evidence);
//! * unsatisfiable: [`Symbolic::Bounded`]: equivalent for every input whose loops finish within
//!   `unroll` iterations, whose calls nest at most `depth` deep and whose lists have at most
//!   `max_len` elements. Not a proof of equivalence for all inputs, and reported as such.
//!
//! Anything the lowering or this module cannot state exactly gives [`Symbolic::Unknown`] with the
//! reason. The solver has a time limit.

use super::lower::{lower_function, Ex, LFunc, Op, Place, Program, STy, Sem, St};
use super::types::{Charset, Dom, Role, Signature};
use super::value::Value;
use crate::syntax::functions::Function;
use crate::syntax::lang::{field, kind};
use crate::syntax::{Language, ParsedFile};
use std::collections::BTreeMap;
use z3::ast::{Ast, Bool, Int, BV};
use z3::{Params, SatResult, Solver};

/// The bounds of the check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// Iterations of every loop.
    pub unroll: u32,
    /// Elements of a list parameter.
    pub max_len: u32,
    /// Nested calls of the file's own functions (recursion included).
    pub depth: u32,
    /// The solver's time limit, in milliseconds.
    pub timeout_ms: u32,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            unroll: 10,
            max_len: 5,
            depth: 6,
            timeout_ms: 10_000,
        }
    }
}

/// What the solver found.
#[derive(Debug, Clone, PartialEq)]
pub enum Symbolic {
    /// An input on which the two sides differ, one value per logical parameter, and which sides
    /// the solver found never to end on it (their loop state repeats). To be executed.
    Counterexample(Vec<Value>, [bool; 2]),
    /// No input within the bounds makes the two sides differ; `true` when no input reaches the
    /// loop or call bound (then only the list length bounds the claim).
    Bounded(Bounds, bool),
    /// No symbolic verdict, and why.
    Unknown(String),
}

/// One side of the check: a parsed file, the function and its signature.
pub type SideRef<'a, 't> = (&'a ParsedFile, &'a Function<'t>, &'a Signature);

type R<T> = Result<T, String>;

/// Lowers both sides and checks them within `bounds` on the common domain `doms` (one per
/// logical parameter, as [`super::types::common_domain`] gives).
pub fn check(
    a: SideRef<'_, '_>,
    b: SideRef<'_, '_>,
    doms: &[Dom],
    globals: &[(String, Dom)],
    bounds: Bounds,
) -> Symbolic {
    if runs_before_main(a.0) || runs_before_main(b.0) {
        return Symbolic::Unknown(
            "no bounded claim: a file runs code before `main` (a constructor function or a \
             global object's initialisation), which may set the state the function reads"
                .into(),
        );
    }
    // The harness reports every global after the call: a global that differs between the files
    // (even one no function touches) differs there, which the check would not see.
    if a.0.language == b.0.language
        && a.2.globals != b.2.globals
        && !(a.2.globals.is_empty() || b.2.globals.is_empty())
    {
        return Symbolic::Unknown("the two files declare different global variables".into());
    }
    if boxed_parameter(a.0, a.1) || boxed_parameter(b.0, b.1) {
        return Symbolic::Unknown(
            "no bounded claim: a Java parameter of a boxed type (`Integer`, `Long`, ...) may be \
             null, which the check's integers never are"
                .into(),
        );
    }
    if a.0.language == b.0.language && caller_view(a.0, a.1) != caller_view(b.0, b.1) {
        return Symbolic::Unknown(
            "no bounded claim: the parameter lists differ in what callers see besides the types \
             (Python names, `/` and `*`, default values; C++ default arguments)"
                .into(),
        );
    }
    let pa = match lower_function(a.0, a.1, a.2) {
        Ok(p) => p,
        Err(e) => return Symbolic::Unknown(format!("first function not lowered: {e}")),
    };
    let pb = match lower_function(b.0, b.1, b.2) {
        Ok(p) => p,
        Err(e) => return Symbolic::Unknown(format!("second function not lowered: {e}")),
    };
    // An unannotated Python parameter is checked as the type its use suggests (an integer
    // unless it reads as a string, a list or a float); a float or a string passed there may
    // behave otherwise (`(x + y) + z`, `a + b`), so no bounded claim stands on the guess.
    let guessed = |s: &Signature| {
        s.language == crate::syntax::Language::Python && s.params.iter().any(|p| p.inferred)
    };
    match check_programs((&pa, a.2), (&pb, b.2), doms, globals, bounds) {
        Ok(Symbolic::Bounded(..)) if guessed(a.2) || guessed(b.2) => Symbolic::Unknown(
            "no bounded claim: a Python parameter has no type annotation, and the check covered \
             only the type its use suggests (other types, floats or strings, may differ)"
                .into(),
        ),
        Ok(o) => o,
        Err(e) => Symbolic::Unknown(e),
    }
}

/// Whether a C or C++ file runs code of its own before `main`: a function marked as a
/// constructor (`__attribute__((constructor))`, `[[gnu::constructor]]`), or in C++ a
/// namespace-scope variable of a type that is not a built-in one (its constructor runs) or
/// whose initialiser calls a function.
fn runs_before_main(file: &ParsedFile) -> bool {
    if !matches!(file.language, Language::C | Language::Cpp) {
        return false;
    }
    let text = file.text.as_str();
    if text.contains("constructor") && (text.contains("__attribute__") || text.contains("[[")) {
        return true;
    }
    if file.language != Language::Cpp {
        return false;
    }
    let root = file.tree.root_node();
    let mut stack = vec![(root, 0usize)];
    while let Some((n, depth)) = stack.pop() {
        if n.kind() == kind::DECLARATION {
            let mut c = n.walk();
            let declarators: Vec<_> = n
                .children_by_field_name(field::DECLARATOR, &mut c)
                .collect();
            if declarators
                .iter()
                .all(|d| d.kind() == kind::FUNCTION_DECLARATOR)
            {
                continue;
            }
            let builtin = n.child_by_field_name(field::TYPE).is_some_and(|t| {
                matches!(t.kind(), kind::PRIMITIVE_TYPE | kind::SIZED_TYPE_SPECIFIER)
            });
            let calls = declarators.iter().any(|d| {
                d.kind() == kind::INIT_DECLARATOR
                    && d.child_by_field_name(field::VALUE)
                        .is_some_and(|v| contains_call(v, 0))
            });
            if !builtin || calls {
                return true;
            }
            continue;
        }
        // Namespaces and `extern "C"` blocks hold namespace-scope declarations too; function
        // bodies and classes do not.
        if depth < 8 && crate::syntax::lang::holds_file_scope(n.kind()) {
            let mut c = n.walk();
            stack.extend(n.named_children(&mut c).map(|k| (k, depth + 1)));
        }
    }
    false
}

fn contains_call(n: tree_sitter::Node<'_>, depth: usize) -> bool {
    if n.kind() == kind::CALL_EXPRESSION {
        return true;
    }
    let mut c = n.walk();
    depth < 32
        && n.named_children(&mut c)
            .any(|k| contains_call(k, depth + 1))
}

/// Whether a Java function takes a parameter of a boxed primitive type.
fn boxed_parameter(file: &ParsedFile, func: &Function<'_>) -> bool {
    if file.language != Language::Java {
        return false;
    }
    let Some(params) = func.node.child_by_field_name(field::PARAMETERS) else {
        return false;
    };
    let mut c = params.walk();
    let boxed = |p: tree_sitter::Node<'_>| {
        p.child_by_field_name(field::TYPE).is_some_and(|t| {
            let ty = file.node_text(t).trim();
            let ty = ty.strip_prefix("java.lang.").unwrap_or(ty);
            matches!(
                ty,
                "Integer"
                    | "Long"
                    | "Short"
                    | "Byte"
                    | "Character"
                    | "Boolean"
                    | "Double"
                    | "Float"
            )
        })
    };
    let any = params.named_children(&mut c).any(boxed);
    any
}

/// What callers see of a parameter list beyond the types, whitespace aside: in Python each
/// parameter as written (a keyword caller names it, a caller that leaves it out gets its
/// default; `/` and `*` say which calls are allowed), in C++ each default argument.
fn caller_view(file: &ParsedFile, func: &Function<'_>) -> Vec<String> {
    let params = match file.language {
        Language::Python => func.node.child_by_field_name(field::PARAMETERS),
        Language::Cpp => {
            let mut d = func.node.child_by_field_name(field::DECLARATOR);
            let mut found = None;
            for _ in 0..64 {
                let Some(n) = d else { break };
                if n.kind() == kind::FUNCTION_DECLARATOR {
                    found = n.child_by_field_name(field::PARAMETERS);
                    break;
                }
                d = n.child_by_field_name(field::DECLARATOR);
            }
            found
        }
        _ => None,
    };
    let Some(params) = params else {
        return Vec::new();
    };
    let mut c = params.walk();
    params
        .named_children(&mut c)
        .filter(|p| !p.kind().contains(kind::COMMENT))
        .map(|p| {
            let text = match file.language {
                Language::Python => file.node_text(p),
                _ => p
                    .child_by_field_name(field::DEFAULT_VALUE)
                    .map_or("", |d| file.node_text(d)),
            };
            text.split_whitespace().collect::<String>()
        })
        .collect()
}

/// [`check`] on lowered programs. Loops are unrolled `bounds.unroll` times first; while no
/// difference is found and some input still runs past a bound, again with 4 and 12 times as
/// many iterations (and 2 and 4 times as many nested calls), as far as the formula stays small.
pub fn check_programs(
    a: (&Program, &Signature),
    b: (&Program, &Signature),
    doms: &[Dom],
    globals: &[(String, Dom)],
    bounds: Bounds,
) -> R<Symbolic> {
    let mut last: Option<Symbolic> = None;
    // The time limit is shared: half for the first attempt, a quarter for each larger one.
    // Call depth grows more slowly than loops: a function that calls itself twice inlines
    // exponentially many bodies.
    for (factor, depth, share) in [(1, 1, 2), (4, 2, 4), (12, 4, 4)] {
        let b2 = Bounds {
            unroll: bounds.unroll * factor,
            depth: bounds.depth * depth,
            timeout_ms: bounds.timeout_ms / share,
            ..bounds
        };
        match attempt(a, b, doms, globals, b2) {
            // Reported with the whole time limit, which the attempts shared.
            Ok((Symbolic::Bounded(done, complete), past)) => {
                let answer = Symbolic::Bounded(
                    Bounds {
                        timeout_ms: bounds.timeout_ms,
                        ..done
                    },
                    complete,
                );
                if !past {
                    return Ok(answer);
                }
                last = Some(answer);
            }
            // A larger attempt that runs out of time keeps the smaller one's answer.
            Ok((Symbolic::Unknown(_), _)) if last.is_some() => break,
            Ok((outcome, _)) => return Ok(outcome),
            Err(e) if last.is_none() => return Err(e),
            // A larger unrolling that cannot be built keeps the smaller one's answer.
            Err(_) => break,
        }
    }
    last.ok_or_else(|| "no attempt".to_string())
}

/// One check within `bounds`: the outcome, and whether some input runs past the loop or call
/// bound (so that larger bounds could say more).
fn attempt(
    a: (&Program, &Signature),
    b: (&Program, &Signature),
    doms: &[Dom],
    globals: &[(String, Dom)],
    bounds: Bounds,
) -> R<(Symbolic, bool)> {
    if a.1.params.len() != doms.len() || b.1.params.len() != doms.len() {
        return Err("parameter counts differ".into());
    }
    let cross = a.0.sem != b.0.sem;
    let mut masters = doms
        .iter()
        .enumerate()
        .map(|(i, d)| Master::new(i, d, [elem_of(a, i), elem_of(b, i)], bounds))
        .collect::<R<Vec<_>>>()?;
    // Globals set before the call follow the parameters (see `exec::equiv::differential`); one
    // that neither side models is never read by the lowered code, so any value serves.
    for (k, (name, d)) in globals.iter().enumerate() {
        let ty = |p: &Program| {
            p.globals
                .iter()
                .find(|g| g.name == *name)
                .map(|g| g.ty.clone())
        };
        let tys = [ty(a.0), ty(b.0)];
        let m = if tys.iter().all(Option::is_none) {
            Master {
                kind: MKind::Absent(super::inputs::default_value(d)),
                constraint: tt(),
                chars: false,
            }
        } else {
            Master::new(doms.len() + k, d, tys, bounds)?
        };
        masters.push(m);
    }
    let names: Vec<&str> = globals.iter().map(|(n, _)| n.as_str()).collect();
    let ra = Machine::new(a.0, bounds).run(a.1, &masters, &names)?;
    let rb = Machine::new(b.0, bounds).run(b.1, &masters, &names)?;

    let solver = Solver::new();
    let mut params = Params::new();
    params.set_u32("timeout", bounds.timeout_ms);
    solver.set_params(&params);
    for m in &masters {
        solver.assert(&m.constraint);
    }
    let defined = Bool::or(&[&ra.ub, &rb.ub]).not();
    let reached = Bool::or(&[&ra.unwound, &rb.unwound]);
    solver.assert(&defined);
    solver.push();
    solver.assert(reached.not());
    let unknown = |solver: &Solver| {
        Symbolic::Unknown(format!(
            "solver: {}",
            solver.get_reason_unknown().unwrap_or_default()
        ))
    };
    // The bounds must leave some input that both sides run to its end: otherwise "no difference"
    // would be empty.
    match solver.check() {
        SatResult::Sat => {}
        SatResult::Unsat => {
            return Ok((
                Symbolic::Unknown(format!(
                    "no input finishes within the bounds (loops unrolled {} times, calls {} deep, lists up to {} elements) without undefined behaviour",
                    bounds.unroll, bounds.depth, bounds.max_len
                )),
                true,
            ))
        }
        SatResult::Unknown => return Ok((unknown(&solver), false)),
    }
    solver.assert(&differ(&ra, &rb, cross)?);
    match solver.check() {
        SatResult::Unsat => {}
        SatResult::Unknown => return Ok((unknown(&solver), false)),
        SatResult::Sat => {
            let model = solver.get_model().ok_or("the solver gave no model")?;
            let inputs = masters
                .iter()
                .map(|m| m.value(&model))
                .collect::<R<Vec<_>>>()?;
            let diverges = [&ra, &rb].map(|r| {
                model
                    .eval(&r.diverges, true)
                    .and_then(|b| b.as_bool())
                    .unwrap_or(false)
            });
            return Ok((Symbolic::Counterexample(inputs, diverges), false));
        }
    }
    solver.pop(1);
    solver.assert(&reached);
    let past = solver.check() != SatResult::Unsat;
    Ok((Symbolic::Bounded(bounds, !past), past))
}

/// The lowered type each side gives logical parameter `i` (a list's element type for lists).
fn elem_of(side: (&Program, &Signature), i: usize) -> Option<STy> {
    let k = side.1.raw.iter().position(|r| r.role == Role::Value(i))?;
    let (_, ty) = side.0.entry.params.get(k)?;
    Some(match ty {
        STy::Array(e) => (**e).clone(),
        t => t.clone(),
    })
}

// ------------------------------------------------------------------------------------------
// Symbolic values

/// A symbolic value.
#[derive(Clone, Debug)]
enum V {
    /// A machine integer and whether it is signed.
    B(BV, bool),
    /// An unbounded integer (Python).
    I(Int),
    T(Bool),
    A(Arr),
}

#[derive(Clone, Debug)]
struct Arr {
    elems: Vec<V>,
    /// The length, between 0 and `elems.len()`.
    len: Int,
}

fn tt() -> Bool {
    Bool::from_bool(true)
}

fn ff() -> Bool {
    Bool::from_bool(false)
}

fn and2(a: &Bool, b: &Bool) -> Bool {
    Bool::and(&[a, b])
}

fn or2(a: &Bool, b: &Bool) -> Bool {
    Bool::or(&[a, b])
}

fn bv_lit(v: i128, bits: u32) -> BV {
    // Two's complement of `v` in `bits` bits.
    let m = if bits >= 128 {
        v as u128
    } else {
        (v as u128) & ((1u128 << bits) - 1)
    };
    if bits <= 64 {
        BV::from_u64(m as u64, bits)
    } else {
        BV::from_str(bits, &m.to_string()).unwrap_or_else(|| BV::from_u64(0, bits))
    }
}

fn ite(c: &Bool, a: &V, b: &V) -> R<V> {
    Ok(match (a, b) {
        (V::B(x, s), V::B(y, t)) if x.get_size() == y.get_size() && s == t => V::B(c.ite(x, y), *s),
        (V::I(x), V::I(y)) => V::I(c.ite(x, y)),
        (V::T(x), V::T(y)) => V::T(c.ite(x, y)),
        (V::A(x), V::A(y)) if x.elems.len() == y.elems.len() => V::A(Arr {
            elems: x
                .elems
                .iter()
                .zip(&y.elems)
                .map(|(p, q)| ite(c, p, q))
                .collect::<R<Vec<_>>>()?,
            len: c.ite(&x.len, &y.len),
        }),
        _ => return Err("a variable holds values of different types on different paths".into()),
    })
}

/// A value of the same kind as `v`, unconstrained (an indeterminate or not-yet-assigned value).
fn undef_like(v: &V) -> V {
    match v {
        V::B(x, s) => V::B(BV::fresh_const("undef", x.get_size()), *s),
        V::I(_) => V::I(Int::fresh_const("undef")),
        V::T(_) => V::T(Bool::fresh_const("undef")),
        V::A(a) => V::A(Arr {
            elems: a.elems.iter().map(undef_like).collect(),
            len: a.len.clone(),
        }),
    }
}

fn undef_of(ty: &STy, sem: Sem) -> R<V> {
    Ok(match ty {
        STy::Int { .. } if sem == Sem::Python => V::I(Int::fresh_const("undef")),
        STy::Int { bits, signed } => V::B(BV::fresh_const("undef", *bits), *signed),
        STy::Math => V::I(Int::fresh_const("undef")),
        STy::Bool => V::T(Bool::fresh_const("undef")),
        STy::Array(_) | STy::Opaque => return Err("a value of an opaque type".into()),
    })
}

fn truth(v: &V) -> R<Bool> {
    Ok(match v {
        V::T(b) => b.clone(),
        V::B(x, _) => x.eq(bv_lit(0, x.get_size())).not(),
        V::I(x) => x.eq(Int::from_i64(0)).not(),
        V::A(a) => a.len.eq(Int::from_i64(0)).not(),
    })
}

/// `v` as a mathematical integer.
fn to_int(v: &V) -> R<Int> {
    Ok(match v {
        V::B(x, s) => Int::from_bv(x, *s),
        V::I(x) => x.clone(),
        V::T(b) => b.ite(&Int::from_i64(1), &Int::from_i64(0)),
        V::A(_) => return Err("a list used as a number".into()),
    })
}

/// Conversion of `v` to `ty` (assignment, argument passing, casts): truncation and extension of
/// machine integers, `!= 0` for booleans.
fn convert(v: &V, ty: &STy, sem: Sem) -> R<V> {
    Ok(match (v, ty) {
        (V::A(_), STy::Array(_)) => v.clone(),
        (_, STy::Opaque) => return Err("a value of an opaque type".into()),
        (_, STy::Array(_)) | (V::A(_), _) => return Err("a list converted to a scalar".into()),
        (_, STy::Bool) => V::T(truth(v)?),
        (V::B(..) | V::I(_) | V::T(_), STy::Math) => V::I(to_int(v)?),
        (_, STy::Int { .. }) if sem == Sem::Python => V::I(to_int(v)?),
        (V::B(x, s), STy::Int { bits, signed }) => V::B(resize(x, *s, *bits), *signed),
        (V::I(x), STy::Int { bits, signed }) => V::B(BV::from_int(x, *bits), *signed),
        (V::T(b), STy::Int { bits, signed }) => {
            V::B(b.ite(&bv_lit(1, *bits), &bv_lit(0, *bits)), *signed)
        }
    })
}

fn resize(x: &BV, signed: bool, bits: u32) -> BV {
    let w = x.get_size();
    match w.cmp(&bits) {
        std::cmp::Ordering::Equal => x.clone(),
        std::cmp::Ordering::Greater => x.extract(bits - 1, 0),
        std::cmp::Ordering::Less if signed => x.sign_ext(bits - w),
        std::cmp::Ordering::Less => x.zero_ext(bits - w),
    }
}

/// Whether two values are equal, as the comparison of outputs sees them.
fn same(a: &V, b: &V, cross: bool) -> R<Bool> {
    Ok(match (a, b) {
        (V::B(x, s), V::B(y, t)) if x.get_size() == y.get_size() && s == t => x.eq(y),
        (V::T(x), V::T(y)) => x.iff(y),
        (V::T(_), V::B(..) | V::I(_)) | (V::B(..) | V::I(_), V::T(_)) if !cross => ff(),
        (V::A(x), V::A(y)) => {
            let mut all = vec![x.len.eq(&y.len)];
            for (j, (p, q)) in x.elems.iter().zip(&y.elems).enumerate() {
                let inside = x.len.gt(Int::from_i64(j as i64));
                all.push(inside.implies(&same(p, q, cross)?));
            }
            Bool::and(&all)
        }
        (V::A(_), _) | (_, V::A(_)) => return Err("a list compared with a scalar".into()),
        _ => to_int(a)?.eq(to_int(b)?),
    })
}

// ------------------------------------------------------------------------------------------
// Inputs

/// The shared symbolic value of one logical parameter.
struct Master {
    kind: MKind,
    constraint: Bool,
    /// Characters (Java `char`, as unsigned 16-bit integers): model values are `Value::Char`.
    chars: bool,
}

enum MKind {
    /// A parameter the lowered functions cannot read (an opaque type): a plain value of its
    /// domain is passed when the counterexample runs.
    Absent(Value),
    /// A list whose elements cannot be read but whose length can (C's `argv` after `argc`):
    /// that many plain elements.
    AbsentList {
        elem: Value,
        len: Int,
    },
    Scalar(V),
    List {
        elems: Vec<V>,
        len: Int,
    },
}

impl Master {
    fn new(i: usize, dom: &Dom, tys: [Option<STy>; 2], bounds: Bounds) -> R<Master> {
        let mut m = Master::build(i, dom, tys, bounds)?;
        m.chars = match dom {
            Dom::Char { .. } => true,
            Dom::List(e) => matches!(**e, Dom::Char { .. }),
            _ => false,
        };
        Ok(m)
    }

    fn build(i: usize, dom: &Dom, tys: [Option<STy>; 2], bounds: Bounds) -> R<Master> {
        if tys.iter().any(|t| t == &Some(STy::Opaque)) {
            if let Dom::List(e) = dom {
                let len = Int::new_const(format!("len{i}"));
                let constraint = and2(
                    &len.ge(Int::from_i64(0)),
                    &len.le(Int::from_i64(OPAQUE_LIST_MAX)),
                );
                return Ok(Master {
                    kind: MKind::AbsentList {
                        elem: super::inputs::default_value(e),
                        len,
                    },
                    constraint,
                    chars: false,
                });
            }
            return Ok(Master {
                kind: MKind::Absent(super::inputs::default_value(dom)),
                constraint: tt(),
                chars: false,
            });
        }
        match dom {
            Dom::List(inner) => {
                let len = Int::new_const(format!("len{i}"));
                let mut constraint = vec![
                    len.ge(Int::from_i64(0)),
                    len.le(Int::from_i64(i64::from(bounds.max_len))),
                ];
                let mut elems = Vec::new();
                for j in 0..bounds.max_len {
                    let (v, c) = scalar(&format!("p{i}_{j}"), inner, &tys)?;
                    elems.push(v);
                    constraint.push(c);
                }
                Ok(Master {
                    kind: MKind::List { elems, len },
                    constraint: Bool::and(&constraint),
                    chars: false,
                })
            }
            d => {
                let (v, c) = scalar(&format!("p{i}"), d, &tys)?;
                Ok(Master {
                    kind: MKind::Scalar(v),
                    constraint: c,
                    chars: false,
                })
            }
        }
    }

    /// The value this parameter has in `model`.
    fn value(&self, model: &z3::Model) -> R<Value> {
        let scalar = |v: &V| -> R<Value> {
            Ok(match v {
                V::T(b) => Value::Bool(
                    model
                        .eval(b, true)
                        .and_then(|x| x.as_bool())
                        .ok_or("no model value")?,
                ),
                V::B(x, s) => {
                    let e = model.eval(x, true).ok_or("no model value")?;
                    let u = e.as_u64().ok_or("no model value")?;
                    let w = x.get_size();
                    let v = if *s && w < 128 && u >> (w - 1) & 1 == 1 {
                        i128::from(u) - (1i128 << w)
                    } else {
                        i128::from(u)
                    };
                    Value::Int(v)
                }
                V::I(x) => Value::Int(
                    model
                        .eval(x, true)
                        .and_then(|x| x.as_i128())
                        .ok_or("no model value")?,
                ),
                V::A(_) => return Err("nested list".into()),
            })
        };
        let scalar = |v: &V| -> R<Value> {
            Ok(match scalar(v)? {
                Value::Int(c) if self.chars => {
                    Value::Char(u32::try_from(c).map_err(|_| "a character out of range")?)
                }
                other => other,
            })
        };
        match &self.kind {
            MKind::Absent(v) => Ok(v.clone()),
            MKind::AbsentList { elem, len } => {
                let n = model
                    .eval(len, true)
                    .and_then(|x| x.as_i64())
                    .ok_or("no model value")?;
                Ok(Value::List(vec![elem.clone(); n.max(0) as usize]))
            }
            MKind::Scalar(v) => scalar(v),
            MKind::List { elems, len } => {
                let n = model
                    .eval(len, true)
                    .and_then(|x| x.as_i64())
                    .ok_or("no model value")?;
                Ok(Value::List(
                    elems
                        .iter()
                        .take(n.max(0) as usize)
                        .map(scalar)
                        .collect::<R<Vec<_>>>()?,
                ))
            }
        }
    }

    /// This parameter as side `ty` sees it.
    fn as_side(&self, ty: &STy, sem: Sem) -> R<V> {
        match (&self.kind, ty) {
            (MKind::Scalar(v), t) if !matches!(t, STy::Array(_)) => convert(v, t, sem),
            (MKind::List { elems, len }, STy::Array(e)) => Ok(V::A(Arr {
                elems: elems
                    .iter()
                    .map(|v| convert(v, e, sem))
                    .collect::<R<Vec<_>>>()?,
                len: len.clone(),
            })),
            _ => Err("a parameter is a list on one side only".into()),
        }
    }

    fn len(&self) -> R<&Int> {
        match &self.kind {
            MKind::List { len, .. } | MKind::AbsentList { len, .. } => Ok(len),
            MKind::Scalar(_) | MKind::Absent(_) => {
                Err("a length of something other than a list".into())
            }
        }
    }
}

/// A scalar input in `dom`: a bit-vector when both sides read it as a machine integer of one
/// width, otherwise an unbounded integer.
fn scalar(name: &str, dom: &Dom, tys: &[Option<STy>; 2]) -> R<(V, Bool)> {
    match dom {
        Dom::Bool => Ok((V::T(Bool::new_const(name)), tt())),
        Dom::Int { lo, hi } => {
            let widths: Vec<Option<u32>> = tys
                .iter()
                .map(|t| match t {
                    Some(STy::Int { bits, .. }) => Some(*bits),
                    _ => None,
                })
                .collect();
            if let [Some(w), Some(w2)] = widths.as_slice() {
                if w == w2 && *w <= 64 {
                    let x = BV::new_const(name, *w);
                    let signed = *lo < 0;
                    let (l, h) = (bv_lit(*lo, *w), bv_lit(*hi, *w));
                    let c = if signed {
                        and2(&x.bvsge(&l), &x.bvsle(&h))
                    } else {
                        and2(&x.bvuge(&l), &x.bvule(&h))
                    };
                    return Ok((V::B(x, signed), c));
                }
            }
            let x = Int::new_const(name);
            let c = and2(&x.ge(Int::from_i128(*lo)), &x.le(Int::from_i128(*hi)));
            Ok((V::I(x), c))
        }
        // Java `char` on both sides: an unsigned 16-bit integer.
        Dom::Char { charset }
            if tys.iter().all(|t| {
                *t == Some(STy::Int {
                    bits: 16,
                    signed: false,
                })
            }) =>
        {
            let x = BV::new_const(name, 16);
            let hi = if *charset == Charset::Ascii {
                0x7f
            } else {
                0xffff
            };
            Ok((V::B(x.clone(), false), x.bvule(bv_lit(hi, 16))))
        }
        Dom::Object(_) => Err("objects are not handled symbolically".into()),
        d => Err(format!("inputs of kind {d:?} are not handled symbolically")),
    }
}

// ------------------------------------------------------------------------------------------
// Execution

/// What one side's run gives.
struct Run {
    raised: Bool,
    exc: Int,
    ub: Bool,
    unwound: Bool,
    diverges: Bool,
    ret: Option<V>,
    ret_none: Bool,
    /// Final values of the list parameters, by logical index.
    lists: BTreeMap<usize, V>,
    /// Final values of the modelled globals, by name.
    globals: BTreeMap<String, V>,
    python: bool,
}

struct Var {
    v: V,
    def: Bool,
}

struct Frame {
    env: BTreeMap<String, Var>,
    done: Bool,
    brk: Bool,
    cont: Bool,
    ret: Option<V>,
    ret_none: Bool,
    ret_ty: Option<STy>,
}

impl Frame {
    fn new(ret_ty: Option<STy>) -> Frame {
        Frame {
            env: BTreeMap::new(),
            done: ff(),
            brk: ff(),
            cont: ff(),
            ret: None,
            ret_none: ff(),
            ret_ty,
        }
    }
}

struct Machine<'p> {
    prog: &'p Program,
    sem: Sem,
    bounds: Bounds,
    raised: Bool,
    exc: Int,
    ub: Bool,
    unwound: Bool,
    /// A loop on this path provably never ends.
    diverges: Bool,
    depth: u32,
    steps: u64,
    /// Simplifications left (see [`SIMPLIFY_BUDGET`]).
    simplify_left: u32,
    /// The modelled C globals ([`Program::globals`]), shared by every call.
    globals: BTreeMap<String, Var>,
}

/// Simplifications of path conditions per run. Each costs time in the size of the term, and
/// terms grow with the unrolled program, so unbounded simplifying is quadratic (a recursive
/// sort took minutes). Past the budget a condition counts as constant only when it is built
/// as one: fewer paths are pruned, which costs formula size, never soundness.
const SIMPLIFY_BUDGET: u32 = 2_000;

/// Exception codes (one language's classes; across languages any exception equals any other).
const ZERO_DIVISION: i64 = 1;
const INDEX: i64 = 2;
const UNBOUND: i64 = 3;
const VALUE: i64 = 4;

/// The code of an exception class raised by name (`St::Raise`): the implicit exceptions' own
/// codes for their classes (`raise ZeroDivisionError` is what `1 // 0` raises), else a code
/// from the name (one name, one code; the harness compares exceptions by class name).
fn exception_code(sem: Sem, class: &str) -> i64 {
    match (sem, class) {
        (Sem::Python, "ZeroDivisionError") | (Sem::Java, "ArithmeticException") => ZERO_DIVISION,
        (Sem::Python, "IndexError") | (Sem::Java, "ArrayIndexOutOfBoundsException") => INDEX,
        (Sem::Python, "UnboundLocalError") => UNBOUND,
        (Sem::Python, "ValueError") => VALUE,
        _ => {
            // FNV-1a, kept apart from the implicit codes.
            let h = class.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
            });
            16 + (h % (1 << 40)) as i64
        }
    }
}

/// Elements of a list that only its length is read of (`argv`), at most.
const OPAQUE_LIST_MAX: i64 = 64;

/// Statements executed at most, over the whole unrolled program (a bound on the formula's size).
const MAX_STEPS: u64 = 20_000;

impl<'p> Machine<'p> {
    fn new(prog: &'p Program, bounds: Bounds) -> Machine<'p> {
        Machine {
            prog,
            sem: prog.sem,
            bounds,
            raised: ff(),
            exc: Int::from_i64(0),
            ub: ff(),
            unwound: ff(),
            diverges: ff(),
            depth: 0,
            steps: 0,
            simplify_left: SIMPLIFY_BUDGET,
            globals: BTreeMap::new(),
        }
    }

    /// `Some(b)` when `x` is (or, within the budget, simplifies to) a constant.
    fn konst(&mut self, x: &Bool) -> Option<bool> {
        if let Some(b) = x.as_bool() {
            return Some(b);
        }
        if self.simplify_left == 0 {
            return None;
        }
        self.simplify_left -= 1;
        x.simplify().as_bool()
    }

    /// `x` simplified, within the budget.
    fn simp(&mut self, x: Bool) -> Bool {
        if self.simplify_left == 0 {
            return x;
        }
        self.simplify_left -= 1;
        x.simplify()
    }

    /// The modelled globals' values when the call starts: those in `inputs` (names of the
    /// masters after the parameters) from their masters (an array's elements past the input's
    /// length keep their initial values, as the harness sets them), the others their initial
    /// values.
    fn init_globals(&mut self, nparams: usize, masters: &[Master], inputs: &[&str]) -> R<()> {
        let sem = self.sem;
        let lit = |x: i128, ty: &STy| convert(&V::I(Int::from_i128(x)), ty, sem);
        for g in &self.prog.globals {
            let master = inputs
                .iter()
                .position(|n| *n == g.name)
                .and_then(|k| masters.get(nparams + k));
            let v = match (g.size, master) {
                (None, None) => lit(*g.init.first().ok_or("a global without a value")?, &g.ty)?,
                (None, Some(m)) => m.as_side(&g.ty, sem)?,
                (Some(n), m) => {
                    let (given, len) = match m.map(|m| &m.kind) {
                        None => (&[][..], Int::from_i64(0)),
                        Some(MKind::List { elems, len }) => (elems.as_slice(), len.clone()),
                        Some(_) => {
                            return Err(format!("global array `{}` set from a scalar", g.name))
                        }
                    };
                    let mut elems = Vec::with_capacity(n);
                    for j in 0..n {
                        let init = lit(*g.init.get(j).ok_or("a global without a value")?, &g.ty)?;
                        elems.push(match given.get(j) {
                            Some(e) => ite(
                                &len.gt(Int::from_i64(j as i64)),
                                &convert(e, &g.ty, sem)?,
                                &init,
                            )?,
                            None => init,
                        });
                    }
                    V::A(Arr {
                        elems,
                        len: Int::from_i64(n as i64),
                    })
                }
            };
            self.globals.insert(g.name.clone(), Var { v, def: tt() });
        }
        Ok(())
    }

    fn run(mut self, sig: &Signature, masters: &[Master], global_inputs: &[&str]) -> R<Run> {
        self.init_globals(sig.params.len(), masters, global_inputs)?;
        let entry = &self.prog.entry;
        check_shadowing(entry, self.sem)?;
        let mut f = Frame::new(entry.ret.clone());
        let mut list_names = BTreeMap::new();
        for (k, (name, ty)) in entry.params.iter().enumerate() {
            let raw = sig.raw.get(k).ok_or("signature and lowering disagree")?;
            let absent = match raw.role {
                Role::Value(i) => {
                    matches!(masters[i].kind, MKind::Absent(_) | MKind::AbsentList { .. })
                }
                Role::LenOf(i) => matches!(masters[i].kind, MKind::Absent(_)),
                // Refused by the lowering; never reached.
                Role::Pointee(_) | Role::Chain { .. } => {
                    return Err("pointer parameters are not lowered".into())
                }
            };
            if *ty == STy::Opaque || absent {
                continue;
            }
            let v = match raw.role {
                Role::Value(i) => {
                    if matches!(ty, STy::Array(_)) && sig.params[i].mutable {
                        list_names.insert(i, name.clone());
                    }
                    masters[i].as_side(ty, self.sem)?
                }
                Role::LenOf(i) => convert(&V::I(masters[i].len()?.clone()), ty, self.sem)?,
                Role::Pointee(_) | Role::Chain { .. } => {
                    return Err("pointer parameters are not lowered".into())
                }
            };
            f.env.insert(name.clone(), Var { v, def: tt() });
        }
        let body = entry.body.clone();
        self.block(&mut f, &body, &tt())?;
        self.finish(&mut f, entry, &tt())?;
        let lists = list_names
            .into_iter()
            .map(|(i, n)| (i, f.env[&n].v.clone()))
            .collect();
        Ok(Run {
            raised: self.raised,
            exc: self.exc,
            ub: self.ub,
            unwound: self.unwound,
            diverges: self.diverges,
            ret: f.ret,
            ret_none: f.ret_none,
            lists,
            globals: self.globals.into_iter().map(|(k, v)| (k, v.v)).collect(),
            python: self.sem == Sem::Python,
        })
    }

    /// The end of a function's body: falling off the end returns `None` in Python and is
    /// undefined for a C function that should return a value.
    fn finish(&mut self, f: &mut Frame, func: &LFunc, g: &Bool) -> R<()> {
        let falls = Bool::and(&[g, &f.done.not(), &self.raised.not()]);
        match self.sem {
            Sem::Python => f.ret_none = or2(&f.ret_none, &falls),
            Sem::C if func.ret.is_some() && func.name != "main" => {
                self.ub = or2(&self.ub, &falls);
            }
            _ => {}
        }
        Ok(())
    }

    fn active(&self, f: &Frame, g: &Bool) -> Bool {
        Bool::and(&[
            g,
            &f.done.not(),
            &f.brk.not(),
            &f.cont.not(),
            &self.raised.not(),
        ])
    }

    fn raise(&mut self, g: &Bool, cond: &Bool, code: i64) {
        match self.sem {
            Sem::C => self.undefined(g, cond),
            _ => {
                let c = Bool::and(&[g, cond, &self.raised.not()]);
                self.exc = c.ite(&Int::from_i64(code), &self.exc);
                self.raised = or2(&self.raised, &c);
            }
        }
    }

    fn undefined(&mut self, g: &Bool, cond: &Bool) {
        let c = Bool::and(&[g, cond, &self.raised.not()]);
        self.ub = or2(&self.ub, &c);
    }

    fn block(&mut self, f: &mut Frame, sts: &[St], g: &Bool) -> R<()> {
        for st in sts {
            let act = self.active(f, g);
            if self.konst(&act) == Some(false) {
                return Ok(());
            }
            self.steps += 1;
            if self.steps > MAX_STEPS {
                return Err("the unrolled program is too large".into());
            }
            self.stmt(f, st, &act)?;
        }
        Ok(())
    }

    fn stmt(&mut self, f: &mut Frame, st: &St, act: &Bool) -> R<()> {
        match st {
            St::Decl(name, ty, init) => {
                let (v, def) = match (init, ty) {
                    (Some(e), Some(t)) => (convert(&self.eval(f, e, act)?, t, self.sem)?, tt()),
                    (Some(e), None) => (self.eval(f, e, act)?, tt()),
                    (None, Some(t)) => (undef_of(t, self.sem)?, ff()),
                    (None, None) => return Err("a declaration without type or value".into()),
                };
                self.bind(f, name, v, def, act)?;
            }
            St::Assign(Place::Var(name), e) if !f.env.contains_key(name) && self.sem == Sem::C => {
                let v = self.eval(f, e, act)?;
                let Some(old) = self.globals.get(name) else {
                    return Err(format!("assignment of `{name}`, which is not declared"));
                };
                let v = convert(&v, &static_ty(&old.v), self.sem)?;
                if matches!(v, V::A(_)) {
                    return Err("assignment of a list".into());
                }
                let v = ite(act, &v, &old.v)?;
                if let Some(var) = self.globals.get_mut(name) {
                    var.v = v;
                }
            }
            St::Assign(Place::Var(name), e) => {
                let v = self.eval(f, e, act)?;
                let v = match (f.env.get(name), self.sem) {
                    (Some(old), Sem::Java | Sem::C) => convert(&v, &static_ty(&old.v), self.sem)?,
                    _ => v,
                };
                if matches!(v, V::A(_)) {
                    return Err("assignment of a list".into());
                }
                self.bind(f, name, v, tt(), act)?;
            }
            St::Assign(Place::Index(name, idx), e) => {
                let (i, v) = if self.sem == Sem::Python {
                    let v = self.eval(f, e, act)?;
                    (self.eval(f, idx, act)?, v)
                } else {
                    let i = self.eval(f, idx, act)?;
                    (i, self.eval(f, e, act)?)
                };
                let global = !f.env.contains_key(name);
                let holder = if global { &self.globals } else { &f.env };
                let arr = match holder.get(name).map(|x| &x.v) {
                    Some(V::A(a)) => a.clone(),
                    _ => return Err(format!("`{name}` is not a list")),
                };
                let (inb, hits) = self.locate(&arr, &i)?;
                self.raise(act, &inb.not(), INDEX);
                let w = Bool::and(&[act, &inb, &self.raised.not()]);
                let mut out = arr.clone();
                for (j, hit) in hits.iter().enumerate() {
                    let val = convert(&v, &static_ty(&arr.elems[j]), self.sem)?;
                    out.elems[j] = ite(&and2(&w, hit), &val, &arr.elems[j])?;
                }
                let holder = if global {
                    &mut self.globals
                } else {
                    &mut f.env
                };
                if let Some(var) = holder.get_mut(name) {
                    var.v = V::A(out);
                }
            }
            St::If(c, then, els) => {
                let c = truth(&self.eval(f, c, act)?)?;
                let g1 = and2(act, &c);
                let g2 = and2(act, &c.not());
                self.block(f, then, &g1)?;
                self.block(f, els, &g2)?;
            }
            St::Loop {
                cond,
                body,
                update,
                test_first,
            } => self.looped(f, cond, body, update, *test_first, act)?,
            St::Return(e) => {
                match e {
                    Some(e) => {
                        let v = self.eval(f, e, act)?;
                        let v = match &f.ret_ty {
                            Some(t) => convert(&v, t, self.sem)?,
                            None => v,
                        };
                        f.ret = Some(match &f.ret {
                            None => ite(act, &v, &undef_like(&v))?,
                            Some(old) => ite(act, &v, old)?,
                        });
                        f.ret_none = and2(&f.ret_none, &act.not());
                    }
                    None => f.ret_none = or2(&f.ret_none, act),
                }
                f.done = or2(&f.done, act);
            }
            St::Raise(class) => self.raise(act, &tt(), exception_code(self.sem, class)),
            St::Break => f.brk = or2(&f.brk, act),
            St::Continue => f.cont = or2(&f.cont, act),
            St::Call(e) => {
                self.eval(f, e, act)?;
            }
        }
        Ok(())
    }

    fn bind(&mut self, f: &mut Frame, name: &str, v: V, def: Bool, act: &Bool) -> R<()> {
        let var = match f.env.remove(name) {
            Some(old) => Var {
                v: ite(act, &v, &old.v)?,
                def: act.ite(&def, &old.def),
            },
            None => Var {
                v: ite(act, &v, &undef_like(&v))?,
                def: and2(act, &def),
            },
        };
        f.env.insert(name.to_string(), var);
        Ok(())
    }

    /// Every variable a loop iteration may change: the frame's, then the globals (named apart).
    fn state(&self, f: &Frame) -> Vec<(String, V, Bool)> {
        let frame = f.env.iter().map(|(n, v)| (n.clone(), v));
        let globals = self.globals.iter().map(|(n, v)| (format!("::{n}"), v));
        frame
            .chain(globals)
            .map(|(n, v)| (n, v.v.clone(), v.def.clone()))
            .collect()
    }

    fn looped(
        &mut self,
        f: &mut Frame,
        cond: &Ex,
        body: &[St],
        update: &[St],
        test_first: bool,
        act: &Bool,
    ) -> R<()> {
        let (old_brk, old_cont) = (f.brk.clone(), f.cont.clone());
        f.brk = ff();
        f.cont = ff();
        let mut lg = act.clone();
        let mut last_start: Option<Vec<(String, V, Bool)>> = None;
        for it in 0..self.bounds.unroll {
            if it + 1 == self.bounds.unroll {
                last_start = Some(self.state(f));
            }
            if test_first || it > 0 {
                let c = truth(&self.eval(f, cond, &lg)?)?;
                lg = self.simp(Bool::and(&[&lg, &c, &self.raised.not()]));
            }
            if self.konst(&lg) == Some(false) {
                break;
            }
            self.block(f, body, &lg)?;
            f.cont = ff();
            lg = self.simp(self.active(f, &lg));
            self.block(f, update, &lg)?;
            lg = self.simp(self.active(f, &lg));
        }
        if self.konst(&lg) != Some(false) {
            // Still looping after `unroll` iterations: outside the bound.
            let c = truth(&self.eval(f, cond, &lg)?)?;
            let more = if test_first || self.bounds.unroll > 0 {
                and2(&lg, &c)
            } else {
                lg.clone()
            };
            let more = and2(&more, &self.raised.not());
            // The last iteration left every variable as it found it: the body is a function of
            // the variables alone, so the loop never ends (a run that differs from any result).
            let now = self.state(f);
            let repeats = match &last_start {
                Some(start)
                    if start.len() == now.len()
                        && start.iter().zip(&now).all(|(x, y)| x.0 == y.0) =>
                {
                    let mut all = Vec::new();
                    for ((_, v, def), (_, v2, def2)) in start.iter().zip(&now) {
                        all.push(same(v, v2, false).unwrap_or_else(|_| ff()));
                        all.push(def.iff(def2));
                    }
                    Bool::and(&all)
                }
                _ => ff(),
            };
            self.diverges = or2(&self.diverges, &and2(&more, &repeats));
            self.unwound = or2(&self.unwound, &and2(&more, &repeats.not()));
        }
        f.brk = old_brk;
        f.cont = old_cont;
        Ok(())
    }

    /// Whether index `i` is inside `arr`, and for each element whether `i` names it.
    fn locate(&self, arr: &Arr, i: &V) -> R<(Bool, Vec<Bool>)> {
        let mut hits = Vec::new();
        let mut inb = Vec::new();
        for j in 0..arr.elems.len() {
            let j64 = j as i64;
            let inside = arr.len.gt(Int::from_i64(j64));
            let hit = match i {
                V::B(x, _) => x.eq(bv_lit(i128::from(j64), x.get_size())),
                V::I(x) if self.sem == Sem::Python => {
                    // `a[j]` or `a[j - len]`.
                    or2(
                        &x.eq(Int::from_i64(j64)),
                        &(x + &arr.len).eq(Int::from_i64(j64)),
                    )
                }
                V::I(x) => x.eq(Int::from_i64(j64)),
                V::T(b) if self.sem == Sem::Python => b
                    .ite(&Int::from_i64(1), &Int::from_i64(0))
                    .eq(Int::from_i64(j64)),
                _ => return Err("an index that is not an integer".into()),
            };
            let h = and2(&hit, &inside);
            inb.push(h.clone());
            hits.push(h);
        }
        Ok((Bool::or(&inb), hits))
    }

    fn read_var(&mut self, f: &Frame, name: &str, g: &Bool) -> R<V> {
        if let Some(var) = f.env.get(name).or_else(|| self.globals.get(name)) {
            let v = var.v.clone();
            let undefined = var.def.not();
            match self.sem {
                Sem::Python => self.raise(g, &undefined, UNBOUND),
                Sem::C => self.undefined(g, &undefined),
                Sem::Java => {}
            }
            return Ok(v);
        }
        if let Some(c) = self.prog.constants.get(name) {
            return Ok(self.lit(*c));
        }
        Err(format!("unknown name `{name}`"))
    }

    fn lit(&self, v: i128) -> V {
        match self.sem {
            Sem::Python => V::I(Int::from_i128(v)),
            _ => V::B(bv_lit(v, 32), true),
        }
    }

    fn eval(&mut self, f: &mut Frame, e: &Ex, g: &Bool) -> R<V> {
        Ok(match e {
            Ex::Lit(v) => self.lit(*v),
            Ex::BoolLit(b) => V::T(Bool::from_bool(*b)),
            Ex::Var(n) => self.read_var(f, n, g)?,
            Ex::Bin(op, a, b) => {
                let x = self.eval(f, a, g)?;
                let y = self.eval(f, b, g)?;
                self.binary(*op, &x, &y, g)?
            }
            Ex::Not(a) => V::T(truth(&self.eval(f, a, g)?)?.not()),
            Ex::Neg(a) => {
                let x = self.eval(f, a, g)?;
                match x {
                    V::I(i) => V::I(i.unary_minus()),
                    V::T(_) if self.sem == Sem::Python => V::I(to_int(&x)?.unary_minus()),
                    V::B(..) | V::T(_) => {
                        let (x, s) = self.promote1(&x)?;
                        if self.sem == Sem::C && s {
                            let min = bv_lit(-(1i128 << (x.get_size() - 1)), x.get_size());
                            self.undefined(g, &x.eq(&min));
                        }
                        V::B(x.bvneg(), s)
                    }
                    V::A(_) => return Err("a list negated".into()),
                }
            }
            Ex::BitNot(a) => {
                let x = self.eval(f, a, g)?;
                match x {
                    V::I(_) | V::T(_) if self.sem == Sem::Python => {
                        V::I(to_int(&x)?.unary_minus() - Int::from_i64(1))
                    }
                    _ => {
                        let (x, s) = self.promote1(&x)?;
                        V::B(x.bvnot(), s)
                    }
                }
            }
            Ex::And(a, b) | Ex::Or(a, b) => {
                let is_and = matches!(e, Ex::And(..));
                let x = self.eval(f, a, g)?;
                let tx = truth(&x)?;
                let g2 = and2(g, &if is_and { tx.clone() } else { tx.not() });
                let y = self.eval(f, b, &g2)?;
                if self.sem != Sem::Python {
                    let ty = truth(&y)?;
                    V::T(if is_and {
                        and2(&tx, &ty)
                    } else {
                        or2(&tx, &ty)
                    })
                } else {
                    // Python yields an operand.
                    if is_and {
                        ite(&tx, &y, &x)?
                    } else {
                        ite(&tx, &x, &y)?
                    }
                }
            }
            Ex::Cond(c, a, b) => {
                let c = truth(&self.eval(f, c, g)?)?;
                let x = self.eval(f, a, &and2(g, &c))?;
                let y = self.eval(f, b, &and2(g, &c.not()))?;
                let (x, y) = self.unify(&x, &y)?;
                ite(&c, &x, &y)?
            }
            Ex::Index(a, i) => {
                let arr = match self.eval(f, a, g)? {
                    V::A(arr) => arr,
                    _ => return Err("indexing something other than a list".into()),
                };
                let i = self.eval(f, i, g)?;
                let (inb, hits) = self.locate(&arr, &i)?;
                self.raise(g, &inb.not(), INDEX);
                let mut out = match arr.elems.first() {
                    Some(first) => undef_like(first),
                    None => return Err("an empty list bound".into()),
                };
                for (j, hit) in hits.iter().enumerate().rev() {
                    out = ite(hit, &arr.elems[j], &out)?;
                }
                out
            }
            Ex::Len(a) => {
                let arr = match self.eval(f, a, g)? {
                    V::A(arr) => arr,
                    _ => return Err("the length of something other than a list".into()),
                };
                match self.sem {
                    Sem::Python => V::I(arr.len),
                    _ => V::B(BV::from_int(&arr.len, 32), true),
                }
            }
            Ex::Cast(ty, a) => {
                let x = self.eval(f, a, g)?;
                convert(&x, ty, self.sem)?
            }
            Ex::Call(name, args) => self.call(f, name, args, g)?,
            Ex::NewArray(ty, items) => {
                let mut elems = Vec::with_capacity(items.len());
                for it in items {
                    elems.push(match it {
                        Some(e) => {
                            let v = self.eval(f, e, g)?;
                            convert(&v, ty, self.sem)?
                        }
                        // Indeterminate: any value (a read that matters gives a candidate the
                        // execution then rejects, never a bounded verdict it does not deserve).
                        None => undef_of(ty, self.sem)?,
                    });
                }
                V::A(Arr {
                    len: Int::from_i64(elems.len() as i64),
                    elems,
                })
            }
        })
    }

    /// Two operands brought to one type for `?:` (the usual conversions for machine integers).
    fn unify(&self, x: &V, y: &V) -> R<(V, V)> {
        match (x, y) {
            (V::B(..) | V::T(_), V::B(..)) | (V::B(..), V::T(_)) if self.sem != Sem::Python => {
                let (a, b, s) = self.promote2(x, y)?;
                Ok((V::B(a, s), V::B(b, s)))
            }
            (V::I(_), V::T(_)) | (V::T(_), V::I(_)) if self.sem == Sem::Python => {
                Err("a conditional expression of mixed types".into())
            }
            _ => Ok((x.clone(), y.clone())),
        }
    }

    /// Integer promotion of one operand (Java and C): at least `int`.
    fn promote1(&self, x: &V) -> R<(BV, bool)> {
        let (bv, s) = match x {
            V::B(b, s) => (b.clone(), *s),
            V::T(b) => (b.ite(&bv_lit(1, 32), &bv_lit(0, 32)), true),
            V::I(i) => (BV::from_int(i, 64), true),
            V::A(_) => return Err("a list in arithmetic".into()),
        };
        let w = bv.get_size();
        if w < 32 {
            Ok((resize(&bv, s, 32), true))
        } else {
            Ok((bv, s || self.sem == Sem::Java))
        }
    }

    /// The usual arithmetic conversions (Java's binary numeric promotion).
    fn promote2(&self, x: &V, y: &V) -> R<(BV, BV, bool)> {
        let (a, sa) = self.promote1(x)?;
        let (b, sb) = self.promote1(y)?;
        let (wa, wb) = (a.get_size(), b.get_size());
        let w = wa.max(wb);
        let s = if self.sem == Sem::Java {
            true
        } else if wa == wb {
            sa && sb
        } else if wa > wb {
            sa
        } else {
            sb
        };
        Ok((resize(&a, sa, w), resize(&b, sb, w), s))
    }

    fn binary(&mut self, op: Op, x: &V, y: &V, g: &Bool) -> R<V> {
        if self.sem == Sem::Python {
            return self.py_binary(op, x, y, g);
        }
        if let (V::T(a), V::T(b)) = (x, y) {
            // Non-short-circuit boolean operators and comparisons of booleans.
            match op {
                Op::BitAnd => return Ok(V::T(and2(a, b))),
                Op::BitOr => return Ok(V::T(or2(a, b))),
                Op::BitXor | Op::Ne => return Ok(V::T(a.xor(b))),
                Op::Eq => return Ok(V::T(a.iff(b))),
                _ => {}
            }
        }
        if matches!(op, Op::Shl | Op::Shr | Op::UShr) {
            return self.shift(op, x, y, g);
        }
        let (a, b, s) = self.promote2(x, y)?;
        let w = a.get_size();
        let c = self.sem == Sem::C;
        let zero = bv_lit(0, w);
        Ok(match op {
            Op::Add => {
                if c && s {
                    let ok = and2(&a.bvadd_no_overflow(&b, true), &a.bvadd_no_underflow(&b));
                    self.undefined(g, &ok.not());
                }
                V::B(a.bvadd(&b), s)
            }
            Op::Sub => {
                if c && s {
                    let ok = and2(&a.bvsub_no_overflow(&b), &a.bvsub_no_underflow(&b, true));
                    self.undefined(g, &ok.not());
                }
                V::B(a.bvsub(&b), s)
            }
            Op::Mul => {
                if c && s {
                    let ok = and2(&a.bvmul_no_overflow(&b, true), &a.bvmul_no_underflow(&b));
                    self.undefined(g, &ok.not());
                }
                V::B(a.bvmul(&b), s)
            }
            Op::Div | Op::Rem => {
                self.raise(g, &b.eq(&zero), ZERO_DIVISION);
                if c && s {
                    self.undefined(g, &a.bvsdiv_no_overflow(&b).not());
                }
                let r = match (op, s) {
                    (Op::Div, true) => a.bvsdiv(&b),
                    (Op::Div, false) => a.bvudiv(&b),
                    (_, true) => a.bvsrem(&b),
                    (_, false) => a.bvurem(&b),
                };
                V::B(r, s)
            }
            Op::BitAnd => V::B(a.bvand(&b), s),
            Op::BitOr => V::B(a.bvor(&b), s),
            Op::BitXor => V::B(a.bvxor(&b), s),
            Op::Lt => V::T(if s { a.bvslt(&b) } else { a.bvult(&b) }),
            Op::Le => V::T(if s { a.bvsle(&b) } else { a.bvule(&b) }),
            Op::Gt => V::T(if s { a.bvsgt(&b) } else { a.bvugt(&b) }),
            Op::Ge => V::T(if s { a.bvsge(&b) } else { a.bvuge(&b) }),
            Op::Eq => V::T(a.eq(&b)),
            Op::Ne => V::T(a.eq(&b).not()),
            Op::Shl | Op::Shr | Op::UShr => unreachable!("shifts are handled above"),
        })
    }

    fn shift(&mut self, op: Op, x: &V, y: &V, g: &Bool) -> R<V> {
        let (a, s) = self.promote1(x)?;
        let (n, ns) = self.promote1(y)?;
        let w = a.get_size();
        let count = if self.sem == Sem::Java {
            resize(&n, false, w).bvand(bv_lit(i128::from(w - 1), w))
        } else {
            let nw = n.get_size();
            let neg = if ns { n.bvslt(bv_lit(0, nw)) } else { ff() };
            let big = if nw > 16 || w < (1u32 << nw) {
                n.bvuge(bv_lit(i128::from(w), nw))
            } else {
                ff()
            };
            self.undefined(g, &or2(&neg, &big));
            resize(&n, false, w)
        };
        Ok(match op {
            Op::Shl => {
                let r = a.bvshl(&count);
                if self.sem == Sem::C && s {
                    let zero = bv_lit(0, w);
                    let bad = Bool::or(&[
                        &a.bvslt(&zero),
                        &r.bvashr(&count).eq(&a).not(),
                        &r.bvslt(&zero),
                    ]);
                    self.undefined(g, &bad);
                }
                V::B(r, s)
            }
            Op::Shr if s => V::B(a.bvashr(&count), s),
            _ => V::B(a.bvlshr(&count), s),
        })
    }

    fn py_binary(&mut self, op: Op, x: &V, y: &V, g: &Bool) -> R<V> {
        if let (V::T(a), V::T(b)) = (x, y) {
            match op {
                Op::BitAnd => return Ok(V::T(and2(a, b))),
                Op::BitOr => return Ok(V::T(or2(a, b))),
                Op::BitXor => return Ok(V::T(a.xor(b))),
                _ => {}
            }
        }
        let a = to_int(x)?;
        let b = to_int(y)?;
        let zero = Int::from_i64(0);
        Ok(match op {
            Op::Add => V::I(&a + &b),
            Op::Sub => V::I(&a - &b),
            Op::Mul => V::I(&a * &b),
            Op::Div | Op::Rem if b.simplify().as_i64().is_some_and(|k| k > 0) => {
                // A positive divisor: Euclidean division and modulo are Python's.
                V::I(if op == Op::Div {
                    a.div(&b)
                } else {
                    a.modulo(&b)
                })
            }
            Op::Div | Op::Rem => {
                self.raise(g, &b.eq(&zero), ZERO_DIVISION);
                // Z3's integer division is Euclidean; Python's floors.
                let q = b
                    .gt(&zero)
                    .ite(&a.div(&b), &a.unary_minus().div(b.unary_minus()));
                if op == Op::Div {
                    V::I(q)
                } else {
                    V::I(&a - &(&b * &q))
                }
            }
            Op::Shl | Op::Shr => {
                let Some(k) = b.simplify().as_i64() else {
                    return Err("a shift by a count that is not a constant".into());
                };
                if k < 0 {
                    self.raise(g, &tt(), VALUE);
                    return Ok(V::I(a));
                }
                if k > 128 {
                    return Err("a shift by more than 128".into());
                }
                let p = Int::from_i128(1i128 << k.min(126));
                if op == Op::Shl {
                    V::I(&a * &p)
                } else {
                    V::I(a.div(&p))
                }
            }
            Op::UShr | Op::BitAnd | Op::BitOr | Op::BitXor => {
                return Err("bitwise operators on Python integers".into())
            }
            Op::Lt => V::T(a.lt(&b)),
            Op::Le => V::T(a.le(&b)),
            Op::Gt => V::T(a.gt(&b)),
            Op::Ge => V::T(a.ge(&b)),
            Op::Eq => V::T(a.eq(&b)),
            Op::Ne => V::T(a.eq(&b).not()),
        })
    }

    fn call(&mut self, f: &mut Frame, name: &str, args: &[Ex], g: &Bool) -> R<V> {
        let mut vals = Vec::new();
        for a in args {
            vals.push(self.eval(f, a, g)?);
        }
        match name {
            "%abs" => {
                let [x] = vals.as_slice() else {
                    return Err("abs arity".into());
                };
                return match x {
                    V::I(i) => Ok(V::I(i.lt(Int::from_i64(0)).ite(&i.unary_minus(), i))),
                    V::T(_) if self.sem == Sem::Python => Ok(V::I(to_int(x)?)),
                    _ => {
                        let (b, s) = self.promote1(x)?;
                        let w = b.get_size();
                        if !s {
                            return Ok(V::B(b, s));
                        }
                        if self.sem == Sem::C {
                            self.undefined(g, &b.eq(bv_lit(-(1i128 << (w - 1)), w)));
                        }
                        Ok(V::B(b.bvslt(bv_lit(0, w)).ite(&b.bvneg(), &b), s))
                    }
                };
            }
            "%min" | "%max" => {
                if vals.len() < 2 {
                    return Err("min/max of fewer than two values".into());
                }
                let mut acc = vals[0].clone();
                for v in &vals[1..] {
                    let (x, y) = if self.sem == Sem::Python {
                        if matches!(acc, V::T(_)) || matches!(v, V::T(_)) {
                            return Err("min/max of booleans".into());
                        }
                        (acc.clone(), v.clone())
                    } else {
                        let (x, y, s) = self.promote2(&acc, v)?;
                        (V::B(x, s), V::B(y, s))
                    };
                    // Python's min keeps the first of equal values; for integers that is the
                    // same value.
                    let less = match self.binary(Op::Lt, &y, &x, g)? {
                        V::T(b) => b,
                        _ => return Err("comparison".into()),
                    };
                    acc = if name == "%min" {
                        ite(&less, &y, &x)?
                    } else {
                        let greater = match self.binary(Op::Gt, &y, &x, g)? {
                            V::T(b) => b,
                            _ => return Err("comparison".into()),
                        };
                        ite(&greater, &y, &x)?
                    };
                }
                return Ok(acc);
            }
            "%int" => {
                let [x] = vals.as_slice() else {
                    return Err("int() arity".into());
                };
                return Ok(V::I(to_int(x)?));
            }
            _ => {}
        }
        let func = if name == self.prog.entry.name {
            &self.prog.entry
        } else {
            self.prog
                .functions
                .get(name)
                .ok_or_else(|| format!("call of `{name}`, which is not lowered"))?
        };
        if func.params.len() != vals.len() {
            return Err(format!("call of `{name}` with another number of arguments"));
        }
        check_shadowing(func, self.sem)?;
        let mut callee = Frame::new(func.ret.clone());
        let mut write_back = Vec::new();
        for ((pname, pty), (v, a)) in func.params.iter().zip(vals.iter().zip(args)) {
            let v = if self.sem == Sem::Python && !matches!(pty, STy::Array(_)) {
                v.clone()
            } else {
                convert(v, pty, self.sem)?
            };
            if matches!(v, V::A(_)) {
                match a {
                    // The same list passed twice would be two copies here, one object there.
                    Ex::Var(caller) if write_back.iter().any(|(c, _)| c == caller) => {
                        return Err("one list passed as two arguments".into())
                    }
                    // The callee could reach it both ways.
                    Ex::Var(caller) if !f.env.contains_key(caller) => {
                        return Err("a global array passed as an argument".into())
                    }
                    Ex::Var(caller) => write_back.push((caller.clone(), pname.clone())),
                    _ => return Err("a list argument that is not a variable".into()),
                }
            }
            callee.env.insert(pname.clone(), Var { v, def: tt() });
        }
        if self.depth >= self.bounds.depth {
            self.unwound = or2(&self.unwound, &and2(g, &self.raised.not()));
            return match &func.ret {
                Some(t) => undef_of(t, self.sem),
                None if self.sem == Sem::Python => Ok(V::I(Int::fresh_const("undef"))),
                None => Ok(V::T(ff())),
            };
        }
        self.depth += 1;
        let body = func.body.clone();
        let res = self.block(&mut callee, &body, g);
        self.depth -= 1;
        res?;
        self.finish(&mut callee, func, g)?;
        for (caller, param) in write_back {
            let v = callee.env[&param].v.clone();
            if let Some(var) = f.env.get_mut(&caller) {
                var.v = v;
            }
        }
        if self.sem == Sem::Python
            && !always_returns(&func.body)
            && self.konst(&callee.ret_none) != Some(false)
        {
            if callee.ret.is_some() {
                return Err(format!(
                    "`{name}` returns None on some paths and a value on others"
                ));
            }
            // Only used as a statement, or compared with None, which is not lowered.
            return Ok(V::T(ff()));
        }
        Ok(match callee.ret {
            Some(v) => v,
            None => V::T(ff()),
        })
    }
}

/// Whether every path through `sts` ends in a `return` (so a Python function never falls off
/// its end and returns `None`).
fn always_returns(sts: &[St]) -> bool {
    sts.iter().any(|st| match st {
        St::Return(Some(_)) | St::Raise(_) => true,
        St::If(_, a, b) => always_returns(a) && always_returns(b),
        _ => false,
    })
}

/// The static type of a value, for conversions on assignment.
fn static_ty(v: &V) -> STy {
    match v {
        V::B(x, s) => STy::Int {
            bits: x.get_size(),
            signed: *s,
        },
        V::I(_) => STy::Math,
        V::T(_) => STy::Bool,
        V::A(a) => STy::Array(Box::new(
            a.elems.first().map(static_ty).unwrap_or(STy::Math),
        )),
    }
}

/// Block scopes are flattened by the lowering, so a C declaration that shadows a variable of an
/// enclosing scope (or a parameter) would overwrite it: such functions are refused.
fn check_shadowing(func: &LFunc, sem: Sem) -> R<()> {
    if sem != Sem::C {
        return Ok(());
    }
    fn walk(sts: &[St], outer: &mut Vec<String>, depth: usize) -> R<()> {
        let mark = outer.len();
        for st in sts {
            match st {
                St::Decl(n, ..) => {
                    if outer[..mark].contains(n) && depth > 0 {
                        return Err(format!("`{n}` is declared again in an inner scope"));
                    }
                    outer.push(n.clone());
                }
                St::If(_, a, b) => {
                    walk(a, outer, depth + 1)?;
                    walk(b, outer, depth + 1)?;
                }
                St::Loop { body, update, .. } => {
                    walk(body, outer, depth + 1)?;
                    walk(update, outer, depth + 1)?;
                }
                _ => {}
            }
        }
        outer.truncate(mark);
        Ok(())
    }
    let mut names: Vec<String> = func.params.iter().map(|(n, _)| n.clone()).collect();
    for st in &func.body {
        if let St::Decl(n, ..) = st {
            if names.contains(n) {
                return Err(format!("`{n}` is declared again in the function"));
            }
        }
    }
    walk(&func.body, &mut names, 1)
}

/// The condition under which the two runs differ.
fn differ(a: &Run, b: &Run, cross: bool) -> R<Bool> {
    let exc_differs = if cross {
        ff()
    } else {
        Bool::and(&[&a.raised, &b.raised, &a.exc.eq(&b.exc).not()])
    };
    let mut out_same = Vec::new();
    match (&a.ret, &b.ret) {
        (Some(x), Some(y)) => {
            let values = same(x, y, cross)?;
            if a.python || b.python {
                let nones = a.ret_none.iff(&b.ret_none);
                out_same.push(and2(&nones, &or2(&a.ret_none, &values)));
            } else {
                out_same.push(values);
            }
        }
        (None, None) => out_same.push(a.ret_none.iff(&b.ret_none)),
        (Some(_), None) | (None, Some(_)) if a.python || b.python => {
            // One side only ever returns None (or nothing is returned on either side's paths
            // but one): the same exactly when both return None.
            let (none_side, other) = if a.ret.is_none() { (a, b) } else { (b, a) };
            out_same.push(and2(&none_side.ret_none, &other.ret_none));
        }
        _ => return Err("one function returns a value and the other does not".into()),
    }
    for (i, x) in &a.lists {
        if let Some(y) = b.lists.get(i) {
            out_same.push(same(x, y, cross)?);
        }
    }
    // The harness reports the globals after the call.
    if !cross && a.globals.keys().ne(b.globals.keys()) {
        return Err("the two sides model different global variables".into());
    }
    for (name, x) in &a.globals {
        if let Some(y) = b.globals.get(name) {
            out_same.push(same(x, y, cross)?);
        }
    }
    let both_normal = and2(&a.raised.not(), &b.raised.not());
    let both_end = and2(&a.diverges.not(), &b.diverges.not());
    Ok(Bool::or(&[
        &a.diverges.xor(&b.diverges),
        &and2(
            &both_end,
            &Bool::or(&[
                &a.raised.xor(&b.raised),
                &exc_differs,
                &and2(&both_normal, &Bool::and(&out_same).not()),
            ]),
        ),
    ]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::equiv::types::{common_domain, select_function, signature};
    use crate::syntax::Language;

    fn run(lang: Language, a: &str, b: &str, name: &str) -> Symbolic {
        let fa = ParsedFile::parse(lang, a.to_string());
        let fb = ParsedFile::parse(lang, b.to_string());
        let ga = select_function(&fa, Some(name)).unwrap();
        let gb = select_function(&fb, Some(name)).unwrap();
        let sa = signature(&fa, &ga).unwrap();
        let sb = signature(&fb, &gb).unwrap();
        let doms = common_domain(&sa, &sb).unwrap();
        // A generous time limit: the tests share a loaded machine, and a timeout is no verdict.
        let bounds = Bounds {
            timeout_ms: 30_000,
            ..Bounds::default()
        };
        let globals = crate::analysis::equiv::types::global_inputs(&sa, &sb);
        check((&fa, &ga, &sa), (&fb, &gb, &sb), &doms, &globals, bounds)
    }

    /// Why the check gave no verdict (a test failure if it gave one).
    fn refused(o: Symbolic) -> String {
        match o {
            Symbolic::Unknown(why) => why,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    fn bounded(o: Symbolic) -> bool {
        match o {
            Symbolic::Bounded(..) => true,
            other => panic!("expected a bounded verdict, got {other:?}"),
        }
    }

    fn cex(o: Symbolic) -> Vec<Value> {
        match o {
            Symbolic::Counterexample(v, _) => v,
            other => panic!("expected a counterexample, got {other:?}"),
        }
    }

    #[test]
    fn java_overflow_is_a_difference() {
        let a = "class A { static int f(int x) { return (x + 1) * 5; } }";
        let b = "class A { static int f(int x) { return x * 5 + 5; } }";
        assert!(bounded(run(Language::Java, a, b, "f")));
        let b =
            "class A { static int f(int x) { if (x > 2147483600) return 0; return x * 5 + 5; } }";
        let v = cex(run(Language::Java, a, b, "f"));
        let Value::Int(x) = v[0] else { panic!() };
        assert!(x > 2147483600);
    }

    #[test]
    fn increments_inside_expressions_run_before_their_statement() {
        // Java reads left to right: the `b` right of `++b` is the incremented one.
        let a = "class T { static int f(int a, int b, int c) { if (a + ++b < c || b > a) return 1; return b; } }";
        let b = "class T { static int f(int a, int b, int c) { b = b + 1; if (a + b < c || b > a) return 1; return b; } }";
        assert!(bounded(run(Language::Java, a, b, "f")));
        // The postfix form yields the old value; the loop condition updates on every test.
        let a = "class T { static int f(int[] d, int i) { if (i < 0) return 0; while (i < d.length && d[i] > 0) { i++; } return i; } }";
        let b = "class T { static int f(int[] d, int i) { if (i < 0) return 0; i--; while (++i < d.length && d[i] > 0) { } return i; } }";
        assert!(bounded(run(Language::Java, a, b, "f")));
        // The mutant's `a + ++b < c` differs from `a + b < c` where `c == a + b + 1`.
        let a =
            "class T { static int f(int a, int b, int c) { if (a + b < c) return 1; return 0; } }";
        let b = "class T { static int f(int a, int b, int c) { if (a + ++b < c) return 1; return 0; } }";
        let v = cex(run(Language::Java, a, b, "f"));
        let [Value::Int(x), Value::Int(y), Value::Int(z)] = v[..] else {
            panic!()
        };
        assert_eq!(
            i128::from(x as i32) + i128::from(y as i32) + 1,
            i128::from(z as i32)
        );
    }

    #[test]
    fn increments_that_cannot_be_hoisted_are_refused() {
        let refused = |lang, a: &str, b: &str, why: &str| match run(lang, a, b, "f") {
            Symbolic::Unknown(e) => e.contains(why),
            _ => false,
        };
        // Read before the update (left to right), inside `&&`'s right operand, and in C
        // without a sequence point between the update and the read.
        let plain = "class T { static int f(int b) { return b + b; } }";
        let before = "is read in the statement that updates it";
        assert!(refused(
            Language::Java,
            "class T { static int f(int b) { return b + ++b; } }",
            plain,
            before
        ));
        // A branch of `?:` (a Java `&&`/`||` whose right operand updates is lowered to
        // statements: see `java_updates_in_a_right_operand_run_only_when_it_is_evaluated`).
        assert!(refused(
            Language::Java,
            "class T { static int f(int b) { return b > 0 ? ++b : 0; } }",
            plain,
            "evaluated only sometimes"
        ));
        assert!(refused(
            Language::Java,
            "class T { static int f(int b) { return b + (b > 0 && ++b > 1 ? 1 : 0); } }",
            plain,
            before
        ));
        assert!(refused(
            Language::C,
            "int f(int b) { return ++b + b; }",
            "int f(int b) { return b + b; }",
            before
        ));
        // C: a read in the right operand of `||` comes after the update (a sequence point).
        let a = "int f(int a, int b) { return (++b > a) || (b == 0); }";
        let b = "int f(int a, int b) { return (b + 1 > a) || (b + 1 == 0); }";
        assert!(bounded(run(Language::C, a, b, "f")));
    }

    #[test]
    fn widening_before_the_multiplication_matters() {
        let a = "class A { static long f(int x) { return x * 3L; } }";
        let b = "class A { static long f(int x) { return x * 3; } }";
        let v = cex(run(Language::Java, a, b, "f"));
        let Value::Int(x) = v[0] else { panic!() };
        assert!(i128::from(x as i32) * 3 != i128::from((x as i32).wrapping_mul(3)));
    }

    #[test]
    fn a_rare_branch_is_found() {
        let a = "def f(x, y):\n    if x * 7 == y + 123456789:\n        return 1\n    return 0\n";
        let b = "def f(x, y):\n    return 0\n";
        let v = cex(run(Language::Python, a, b, "f"));
        let (Value::Int(x), Value::Int(y)) = (&v[0], &v[1]) else {
            panic!()
        };
        assert_eq!(x * 7, y + 123456789);
    }

    #[test]
    fn python_floor_division_and_modulo() {
        let a = "def f(a: int, b: int):\n    return a // b * b + a % b\n";
        let b = "def f(a: int, b: int):\n    if b == 0:\n        return a // b\n    return a\n";
        assert!(bounded(run(Language::Python, a, b, "f")));
        // C truncates: -7 / 2 * 2 + -7 % 2 is still -7, but `/` alone differs from `>> 1`.
        let a = "int f(int a) { return a / 2; }";
        let b = "int f(int a) { return a >> 1; }";
        let v = cex(run(Language::C, a, b, "f"));
        let Value::Int(x) = v[0] else { panic!() };
        assert!(x < 0 && x % 2 != 0);
    }

    #[test]
    fn loops_and_lists_within_the_bound() {
        let a =
            "def f(xs: list[int]):\n    s = 0\n    for x in xs:\n        s += x\n    return s\n";
        let b = "def f(xs: list[int]):\n    s = 0\n    i = len(xs) - 1\n    while i >= 0:\n        s = s + xs[i]\n        i -= 1\n    return s\n";
        assert!(bounded(run(Language::Python, a, b, "f")));
        let b = "def f(xs: list[int]):\n    s = 0\n    for i in range(1, len(xs)):\n        s += xs[i]\n    return s\n";
        let v = cex(run(Language::Python, a, b, "f"));
        let Value::List(xs) = &v[0] else { panic!() };
        assert!(matches!(xs.first(), Some(Value::Int(x)) if *x != 0));
    }

    #[test]
    fn c_undefined_behaviour_is_not_a_difference() {
        // Both overflow for the same inputs, where C says nothing.
        let a = "int f(int x) { return x + 1 > x; }";
        let b = "int f(int x) { return 1; }";
        assert!(bounded(run(Language::C, a, b, "f")));
        let a = "unsigned f(unsigned x) { return x + 1 > x; }";
        let b = "unsigned f(unsigned x) { return 1; }";
        let v = cex(run(Language::C, a, b, "f"));
        assert_eq!(v[0], Value::Int(4294967295));
    }

    #[test]
    fn c_globals_are_inputs_and_results() {
        // Read as inputs: the difference needs a global value no random draw hits.
        let a = "int g;\nint h;\nvoid set(void) { g = 1; h = 2; }\nint f(int x) { if (g == 70001 && x > 0) return 1; return 0; }";
        let b = "int g;\nint h;\nvoid set(void) { g = 1; h = 2; }\nint f(int x) { return 0; }";
        let v = cex(run(Language::C, a, b, "f"));
        assert_eq!(v.get(1), Some(&Value::Int(70001)), "{v:?}");
        // Written: the final value is a result, though neither side returns anything.
        let a = "int g;\nvoid f(int x) { if ((x ^ 0x5a5a5a) == 0x1234567) g = 5; }";
        let b = "int g;\nvoid f(int x) { if (x == 3) g = g; }";
        let v = cex(run(Language::C, a, b, "f"));
        assert_eq!(v[0], Value::Int(0x1234567 ^ 0x5a5a5a), "{v:?}");
        // An array's elements past the input's length keep their initial values.
        let a = "int t[4] = {400, 500, 640, 740};\nvoid init(void) { t[0] = 400; }\nint f(int i) { if (i < 0 || i > 3) return 0; return t[i]; }";
        let b = "int t[4] = {400, 500, 640, 740};\nvoid init(void) { t[0] = 400; }\nint f(int i) { if (i < 0 || i > 3) return 0; return t[i] + (t[i] == 12345); }";
        let v = cex(run(Language::C, a, b, "f"));
        assert!(
            matches!(&v[1], Value::List(xs) if xs.contains(&Value::Int(12345))),
            "{v:?}"
        );
        // The same writes on both sides: bounded, with loops over the global.
        let a = "int n;\nint f(int x) { int i; for (i = 0; i < x && i < 3; i++) n++; return n; }";
        let b = "int n;\nint f(int x) { int i = 0; while (i < 3 && i < x) { n = n + 1; i++; } return n; }";
        assert!(bounded(run(Language::C, a, b, "f")));
        // A write to a global the check does not model refuses the check.
        let a = "double d;\nint f(int x) { d = x; return x; }";
        let b = "double d;\nint f(int x) { return x; }";
        assert!(matches!(run(Language::C, a, b, "f"), Symbolic::Unknown(_)));
    }

    #[test]
    fn c_syntax_errors_outside_the_compared_code_are_no_obstacle() {
        // An old `main()` without a type is a syntax error to the grammar.
        let a = "#include <stdio.h>\nmain()\n{\n  printf(\"%d\", leap(2000));\n}\nint leap(int y) { return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0); }\n";
        let b = "#include <stdio.h>\nmain()\n{\n  printf(\"%d\", leap(2000));\n}\nint leap(int y) { if (y % 400 == 0) return 1; if (y % 100 == 0) return 0; return y % 4 == 0; }\n";
        assert!(ParsedFile::parse(Language::C, a.to_string()).has_errors());
        assert!(bounded(run(Language::C, a, b, "leap")));
        let b = "#include <stdio.h>\nmain()\n{\n  printf(\"%d\", leap(2000));\n}\nint leap(int y) { if (y % 400 == 0) return 1; return y % 4 == 0; }\n";
        let v = cex(run(Language::C, a, b, "leap"));
        assert!(
            matches!(v[0], Value::Int(y) if y % 100 == 0 && y % 400 != 0),
            "{v:?}"
        );
        // An error inside the compared function refuses the check.
        let a = "int f(int x) { int y = x +; return x * 2; }";
        assert!(ParsedFile::parse(Language::C, a.to_string()).has_errors());
        let b = "int f(int x) { return x * 2; }";
        assert!(matches!(run(Language::C, a, b, "f"), Symbolic::Unknown(_)));
    }

    #[test]
    fn c_local_arrays_of_a_constant_size() {
        let a = "#define N 4\nint lim(int k) { int t[N]; t[0] = 400; t[1] = 500; t[2] = 640; t[3] = 740; return t[k]; }\nint f(int k, int s) { if (s >= lim(k)) return 1; return 0; }";
        let b = "#define N 4\nint lim(int k) { int t[N]; t[0] = 400; t[1] = 500; t[2] = 640; t[3] = 740; return t[k]; }\nint f(int k, int s) { if (s > lim(k)) return 1; return 0; }";
        let v = cex(run(Language::C, a, b, "f"));
        let limits = [400, 500, 640, 740];
        let (Value::Int(k), Value::Int(s)) = (&v[0], &v[1]) else {
            panic!("{v:?}")
        };
        assert_eq!(limits.get(*k as usize), Some(&(*s as i32)), "{v:?}");
        // tree-sitter-c reads `-1000` as one literal.
        let a = "int f(int x) { if (x < -1000) return -1; return 0; }";
        let b = "int f(int x) { if (x <= -1001) return -1; return 0; }";
        assert!(bounded(run(Language::C, a, b, "f")));
        let a =
            "int f(int k) { int t[] = {1, 2, 3}; if (k < 0 || k > 2) return 0; return t[k] * 2; }";
        let b = "int f(int k) { int t[3] = {1, 2}; t[2] = 3; if (k < 0 || k > 2) return 0; return t[k] + t[k]; }";
        assert!(bounded(run(Language::C, a, b, "f")));
    }

    #[test]
    fn exceptions_are_outcomes() {
        let a = "class A { static int f(int a, int b) { return a / b; } }";
        let b = "class A { static int f(int a, int b) { if (b == 0) return 0; return a / b; } }";
        let v = cex(run(Language::Java, a, b, "f"));
        assert_eq!(v[1], Value::Int(0));
        let b = "class A { static int f(int a, int b) { int q = a / b; return q; } }";
        assert!(bounded(run(Language::Java, a, b, "f")));
    }

    #[test]
    fn raised_classes_are_outcomes() {
        // Another class behind a magic value: found, not sampled.
        let a =
            "def f(x: int):\n    if x == 123457:\n        raise ValueError('bad')\n    return x\n";
        let b =
            "def f(x: int):\n    if x == 123457:\n        raise KeyError('bad')\n    return x\n";
        assert_eq!(cex(run(Language::Python, a, b, "f"))[0], Value::Int(123457));
        let b = "def f(x: int):\n    if x != 123457:\n        return x\n    raise ValueError\n";
        assert!(bounded(run(Language::Python, a, b, "f")));
        // A failed assert raises AssertionError; a raise of the implicit class is that class.
        let b = "def f(x: int):\n    assert x != 123457, 'no'\n    return x\n";
        assert_eq!(cex(run(Language::Python, a, b, "f"))[0], Value::Int(123457));
        let a = "def f(x: int):\n    return 10 // x\n";
        let b =
            "def f(x: int):\n    if x == 0:\n        raise ZeroDivisionError()\n    return 10 // x\n";
        assert!(bounded(run(Language::Python, a, b, "f")));
        let a = "class A { static int f(int x) { if (x == 4242) throw new IllegalArgumentException(\"x\"); return x; } }";
        let b = "class A { static int f(int x) { if (x == 4242) throw new java.lang.IllegalStateException(); return x; } }";
        assert_eq!(cex(run(Language::Java, a, b, "f"))[0], Value::Int(4242));
        let b = "class A { static int f(int x) { if (x != 4242) return x; throw new java.lang.IllegalArgumentException(); } }";
        assert!(bounded(run(Language::Java, a, b, "f")));
        // What a function returns is raised as whatever class it is: not lowered.
        let b = "def f(x: int):\n    if x == 3:\n        raise make_error('e')\n    return x\n";
        let o = run(Language::Python, "def f(x: int):\n    return x\n", b, "f");
        assert!(
            matches!(&o, Symbolic::Unknown(why) if why.contains("named class")),
            "{o:?}"
        );
        // Computed arguments and re-raises are not lowered.
        let b = "def f(x: int):\n    if x == 3:\n        raise ValueError(1 // (x - 3))\n    return x\n";
        let o = run(Language::Python, "def f(x: int):\n    return x\n", b, "f");
        assert!(
            matches!(&o, Symbolic::Unknown(why) if why.contains("literal")),
            "{o:?}"
        );
    }

    #[test]
    fn java_chars_are_unsigned_sixteen_bit_integers() {
        let a = "class A { static int f(char c) { if (c - 7 == 65528) return (char) (c + 9); return 0; } }";
        let b = "class A { static int f(char c) { if (c - 7 == 65528) return c + 9; return 0; } }";
        assert_eq!(cex(run(Language::Java, a, b, "f"))[0], Value::Char(65535));
        let b = "class A { static int f(char c) { if (c == 65535) return 8; return 0; } }";
        assert!(bounded(run(Language::Java, a, b, "f")));
    }

    #[test]
    fn java_updates_in_a_right_operand_run_only_when_it_is_evaluated() {
        // Triangle's mutant: `--a` runs only when `a + b < c` is false.
        let a = "class A { static int f(int a, int b, int c) { if (a + b < c || a + c < b) return 1; return a; } }";
        let b = "class A { static int f(int a, int b, int c) { if (a + b < c || --a + c < b) return 1; return a; } }";
        let v = cex(run(Language::Java, a, b, "f"));
        let (x, y, z) = match v.as_slice() {
            [Value::Int(x), Value::Int(y), Value::Int(z)] => (*x, *y, *z),
            _ => panic!("{v:?}"),
        };
        assert!(
            x + y >= z,
            "the update runs only when the left operand is false: {v:?}"
        );
        // Both forms of the same update, and `&&`: equal for every input.
        let c = "class A { static int f(int a, int b, int c) { if (a + b < c || a-- + c - 1 < b) return 1; return a; } }";
        assert!(bounded(run(Language::Java, b, c, "f")));
        let d = "class A { static int f(int a, int b, int c) { if (!(a + b >= c && --a + c >= b)) return 1; return a; } }";
        assert!(bounded(run(Language::Java, b, d, "f")));
        // A read of the variable before the operator would see the update: refused.
        let e = "class A { static int f(int a, int b, int c) { return a + ((b < c || --a > 0) ? 1 : 0); } }";
        assert!(matches!(
            run(Language::Java, e, e, "f"),
            Symbolic::Unknown(_)
        ));
    }

    #[test]
    fn an_unannotated_python_parameter_gives_no_bounded_claim() {
        // Equal on integers, not on floats or strings: the check sees only integers.
        let a = "def f(x, y, z):\n    return (x + y) + z\n";
        let b = "def f(x, y, z):\n    return x + (y + z)\n";
        let why = refused(run(Language::Python, a, b, "f"));
        assert!(why.contains("annotation"), "{why}");
        let a = "def f(x: int, y: int, z: int):\n    return (x + y) + z\n";
        let b = "def f(x: int, y: int, z: int):\n    return x + (y + z)\n";
        assert!(bounded(run(Language::Python, a, b, "f")));
    }

    #[test]
    fn what_callers_see_besides_types_and_code_before_main_void_a_bounded_claim() {
        // A default value, a keyword caller's names, `/`: each is seen by some call.
        for (a, b) in [
            (
                "def f(x: int, a: int = 1):\n    return x - a\n",
                "def f(x: int, a: int = 2):\n    return x - a\n",
            ),
            (
                "def f(*, a: int, b: int):\n    return a - b\n",
                "def f(*, b: int, a: int):\n    return b - a\n",
            ),
            (
                "def f(a: int, /):\n    return a\n",
                "def f(a: int):\n    return a\n",
            ),
        ] {
            let why = refused(run(Language::Python, a, b, "f"));
            assert!(why.contains("parameter lists differ"), "{why}");
        }
        let a = "int f(int x, int y = 1) { return x - y; }";
        let b = "int f(int x, int y = 2) { return x - y; }";
        let why = refused(run(Language::Cpp, a, b, "f"));
        assert!(why.contains("parameter lists differ"), "{why}");
        // Whitespace is no difference.
        let a = "def f(x: int, a: int = 1):\n    return x - a\n";
        let b = "def f(x: int, a: int=1):\n    return x - a\n";
        assert!(bounded(run(Language::Python, a, b, "f")));
        // A constructor function or a global object's constructor sets `g` before `main`.
        let b = "int g = 1;\nint f(int x) { return g + x; }\n";
        for a in [
            "int g = 1;\n__attribute__((constructor)) static void init(void) { g = 5; }\nint f(int x) { return g + x; }\n",
            "int g = 1;\n[[gnu::constructor]] static void init(void) { g = 5; }\nint f(int x) { return g + x; }\n",
        ] {
            let why = refused(run(Language::Cpp, a, b, "f"));
            assert!(why.contains("before `main`"), "{why}");
        }
        let a = "int g = 1;\nstruct S { S() { g = 5; } } s;\nint f(int x) { return g + x; }\n";
        let why = refused(run(Language::Cpp, a, b, "f"));
        assert!(why.contains("before `main`"), "{why}");
        let a = "int g = 1;\nint h() { g = 5; return 0; }\nint k = h();\nint f(int x) { return g + x; }\n";
        let why = refused(run(Language::Cpp, a, b, "f"));
        assert!(why.contains("before `main`"), "{why}");
        // A boxed Java parameter may be null: `a + 0` throws where `a` does not.
        let a = "class A { static Integer f(Integer a) { return a + 0; } }";
        let b = "class A { static Integer f(Integer a) { return a; } }";
        let why = refused(run(Language::Java, a, b, "f"));
        assert!(why.contains("boxed"), "{why}");
        // A `thread_local` local keeps its value between calls, like a `static` one.
        let a = "int f(int x) { thread_local int c = 0; c += 1; return c + x; }";
        let b = "int f(int x) { int c = 0; c += 1; return c + x; }";
        let why = refused(run(Language::Cpp, a, b, "f"));
        assert!(why.contains("thread-local"), "{why}");
    }

    #[test]
    fn mutated_lists_are_compared() {
        let a = "def f(xs: list[int]):\n    for i in range(len(xs)):\n        xs[i] = xs[i] * 2\n";
        let b =
            "def f(xs: list[int]):\n    for i in range(len(xs)):\n        xs[i] = xs[i] + xs[i]\n";
        assert!(bounded(run(Language::Python, a, b, "f")));
        let b = "def f(xs: list[int]):\n    for i in range(len(xs) - 1):\n        xs[i] = xs[i] + xs[i]\n";
        let v = cex(run(Language::Python, a, b, "f"));
        assert!(matches!(&v[0], Value::List(xs) if !xs.is_empty()));
    }

    #[test]
    fn helpers_are_inlined_and_recursion_is_bounded() {
        let a = "def g(x):\n    return x * x\n\ndef f(x: int):\n    return g(x) + 1\n";
        let b = "def f(x: int):\n    return x * x + 1\n";
        assert!(bounded(run(Language::Python, a, b, "f")));
        let a = "int fact(int n) { if (n <= 1) return 1; return n * fact(n - 1); }";
        let b = "int fact(int n) { int r = 1; for (int i = 2; i <= n; i++) r = r * i; return r; }";
        assert!(bounded(run(Language::C, a, b, "fact")));
        // Small inputs, which return before the deepest call, are inputs too.
        let a = "int f(int n) { if (n <= 0) return 0; return 1 + f(n - 1); }";
        let b = "int f(int n) { return n <= 0 ? 0 : (n == 3 ? 4 : n); }";
        assert_eq!(cex(run(Language::C, a, b, "f")), vec![Value::Int(3)]);
    }

    #[test]
    fn a_loop_that_never_ends_is_a_difference() {
        // REVE's triangular sum with the increment left out: for n >= 1 the first never ends.
        let a = "class A { static int tr(int n) { int r = 0; int i = 0; while (i < n) { r = r + i; } return r; } }";
        let b = "class A { static int tr(int n) { int r = 0; int i = 0; while (i < n) { r = r + i; i = i + 1; } return r; } }";
        match run(Language::Java, a, b, "tr") {
            Symbolic::Counterexample(v, diverges) => {
                assert!(matches!(v[0], Value::Int(n) if n >= 1), "{v:?}");
                assert_eq!(diverges, [true, false]);
            }
            other => panic!("expected a counterexample, got {other:?}"),
        }
        // A loop that ends late is not one that never ends.
        assert!(bounded(run(Language::Java, b, b, "tr")));
    }

    #[test]
    fn one_list_passed_twice_is_refused() {
        // Here `a` and `b` are one object: writing `a[0]` changes `b[0]`.
        let a = "def g(a, b):\n    a[0] = 1\n    return b[0]\n\ndef f(xs: list[int]):\n    if len(xs) == 0:\n        return 0\n    return g(xs, xs)\n";
        let b = "def f(xs: list[int]):\n    if len(xs) == 0:\n        return 0\n    return 1\n";
        let why = refused(run(Language::Python, a, b, "f"));
        assert!(why.contains("two arguments"), "{why}");
    }

    #[test]
    fn docstrings_are_no_statements() {
        // `calendar.leapdays` from CPython, against a loop that counts leap years.
        let a = "def leapdays(y1, y2):\n    \"\"\"Return number of leap years in range [y1, y2).\n       Assume y1 <= y2.\"\"\"\n    y1 -= 1\n    y2 -= 1\n    return (y2//4 - y1//4) - (y2//100 - y1//100) + (y2//400 - y1//400)\n";
        let b = "def isleap(year):\n    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)\n\ndef leapdays(y1, y2):\n    n = 0\n    for y in range(y1, y2):\n        if isleap(y):\n            n += 1\n    return n\n";
        // They differ where the docstring's assumption fails: y1 > y2.
        let v = cex(run(Language::Python, a, b, "leapdays"));
        let (Value::Int(y1), Value::Int(y2)) = (&v[0], &v[1]) else {
            panic!("{v:?}")
        };
        assert!(y1 > y2, "{v:?}");
    }

    #[test]
    fn what_is_not_lowered_is_unknown() {
        let a = "def f(s):\n    return s.upper()\n";
        let b = "def f(s):\n    return s.lower()\n";
        assert!(matches!(
            run(Language::Python, a, b, "f"),
            Symbolic::Unknown(_)
        ));
    }
}
