//! Values exchanged with the differential-testing harnesses, and their comparison.
//!
//! Harnesses print one line per input; every value is a tagged JSON array:
//! `["i","-5"]` integer (decimal, any size), `["d","<i64 bits>"]` float (the IEEE-754 bits of
//! the value widened to double, so no printing or parsing can lose precision), `["b",true]`,
//! `["c",97]` character (code unit), `["s","text"]`, `["l",[...]]` list/array/tuple,
//! `["n"]` null/None/void, `["o","repr"]` anything else.
//!
//! Comparison rules (documented contract of `crosscheck equiv`):
//! * within one language, values are compared exactly: same type, same value; floats by bits,
//!   except that every NaN equals every NaN (so `-0.0` differs from `0.0`);
//! * across languages, integers compare by value, but a difference where one side's integer lies
//!   outside the range of the other side's declared return type is not counted (the input is
//!   outside the common domain); booleans equal 0/1 integers; floats are equal within 1 ulp
//!   (both NaN is equal); an integer and a float compare numerically; strings exactly;
//!   characters equal one-character strings;
//! * exceptions and crashes: within one language an exception equals only an exception of the
//!   same class, a crash only a crash by the same signal; across languages every exception or
//!   crash equals every other exception or crash, and never a value;
//! * undefined behaviour (caught by UBSan), timeouts and missing results discard the input.

use super::types::Ty;
use serde_json::Value as Json;

/// One value produced by (or passed to) a function under test.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Int(i128),
    /// An integer beyond `i128` (Python), as decimal text.
    BigInt(String),
    Float(f64),
    Bool(bool),
    Char(u32),
    Str(String),
    List(Vec<Value>),
    /// An input object: built through constructor number `ctor` with `args` (Java).
    Object {
        ctor: usize,
        args: Vec<Value>,
    },
    None,
    Other(String),
}

/// What running the function on one input produced.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Return value and the final state of the mutable (list, buffer) arguments.
    Value {
        ret: Value,
        args: Vec<Value>,
        /// The state after the call (Java, C, C++): `[receiver's fields or null, globals
        /// (the class's non-private static fields; the file's global variables), printed
        /// text]`; `None` when all are empty.
        state: Option<Value>,
    },
    /// An exception, by class name.
    Exception(String),
    /// The process died (signal or exit) while running this input.
    Crash(String),
    /// The sanitizer reported undefined behaviour.
    Undefined,
    Timeout,
    /// No line for this input (the harness stopped early).
    Missing,
}

/// How two outcomes relate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmp {
    Equal,
    Differ,
    /// Not comparable: undefined behaviour, timeout, missing, or outside the common domain.
    Discard,
}

impl Value {
    /// Parses a tagged harness value. Unknown shapes become [`Value::Other`].
    pub fn from_json(j: &Json) -> Value {
        let arr = match j.as_array() {
            Some(a) if !a.is_empty() => a,
            _ => return Value::Other(j.to_string()),
        };
        let tag = arr[0].as_str().unwrap_or("");
        let payload = arr.get(1);
        match tag {
            "i" => {
                let text = payload.and_then(Json::as_str).unwrap_or("").trim();
                match text.parse::<i128>() {
                    Ok(v) => Value::Int(v),
                    Err(_) => Value::BigInt(text.to_string()),
                }
            }
            "d" => {
                let text = payload.and_then(Json::as_str).unwrap_or("");
                match text.trim().parse::<i64>() {
                    Ok(bits) => Value::Float(f64::from_bits(bits as u64)),
                    Err(_) => Value::Other(format!("float {text}")),
                }
            }
            "b" => match payload.and_then(Json::as_bool) {
                Some(b) => Value::Bool(b),
                None => Value::Other(j.to_string()),
            },
            "c" => match payload.and_then(Json::as_u64) {
                Some(c) => Value::Char(c as u32),
                None => Value::Other(j.to_string()),
            },
            "s" => Value::Str(payload.and_then(Json::as_str).unwrap_or("").to_string()),
            "l" => Value::List(
                payload
                    .and_then(Json::as_array)
                    .map(|items| items.iter().map(Value::from_json).collect())
                    .unwrap_or_default(),
            ),
            "n" => Value::None,
            _ => Value::Other(payload.map(|p| p.to_string()).unwrap_or_default()),
        }
    }

    /// [`Value::to_json`], a C/C++ struct (an object of a type with field names) as an object
    /// of its fields (`{"x": 1, "y": 2}`), in lists too.
    pub fn to_json_typed(&self, ty: &super::types::Ty) -> Json {
        use super::types::Ty;
        match (self, ty) {
            (Value::Object { args, .. }, Ty::Object(o)) if !o.fields.is_empty() => {
                let tys = o.ctors.first().cloned().unwrap_or_default();
                let mut m = serde_json::Map::new();
                for (j, name) in o.fields.iter().enumerate() {
                    let v = args.get(j).cloned().unwrap_or(Value::None);
                    let t = tys.get(j).map(|(t, _)| t.clone()).unwrap_or(Ty::Unknown);
                    m.insert(name.clone(), v.to_json_typed(&t));
                }
                Json::Object(m)
            }
            (Value::List(items), Ty::List(e)) => {
                Json::Array(items.iter().map(|v| v.to_json_typed(e)).collect())
            }
            _ => self.to_json(),
        }
    }

    /// A readable JSON rendering for reports (`counterexample`).
    pub fn to_json(&self) -> Json {
        match self {
            Value::Int(v) => {
                if let Ok(small) = i64::try_from(*v) {
                    Json::from(small)
                } else {
                    Json::String(v.to_string())
                }
            }
            Value::BigInt(s) => Json::String(s.clone()),
            Value::Float(f) => {
                if f.is_finite() {
                    if *f == 0.0 && f.is_sign_negative() {
                        Json::String("-0.0".into())
                    } else {
                        serde_json::Number::from_f64(*f)
                            .map(Json::Number)
                            .unwrap_or(Json::Null)
                    }
                } else if f.is_nan() {
                    Json::String("NaN".into())
                } else if *f > 0.0 {
                    Json::String("Infinity".into())
                } else {
                    Json::String("-Infinity".into())
                }
            }
            Value::Bool(b) => Json::Bool(*b),
            Value::Char(c) => {
                Json::String(char::from_u32(*c).map(String::from).unwrap_or_default())
            }
            Value::Str(s) => Json::String(s.clone()),
            Value::List(items) => Json::Array(items.iter().map(Value::to_json).collect()),
            Value::Object { ctor, args } => serde_json::json!({
                "constructor": ctor + 1,
                "arguments": args.iter().map(Value::to_json).collect::<Vec<_>>(),
            }),
            Value::None => Json::Null,
            Value::Other(s) => Json::String(s.clone()),
        }
    }
}

impl Outcome {
    /// Parses one harness result line (already stripped of its marker) into (index, outcome).
    pub fn from_line(line: &str) -> Option<(usize, Outcome)> {
        let j: Json = serde_json::from_str(line.trim()).ok()?;
        let idx = usize::try_from(j.get("i")?.as_u64()?).ok()?;
        let outcome = if j.get("ub").is_some() {
            Outcome::Undefined
        } else if j.get("t").is_some() {
            Outcome::Timeout
        } else if let Some(e) = j.get("e") {
            Outcome::Exception(e.as_str().unwrap_or("?").to_string())
        } else if let Some(x) = j.get("x") {
            Outcome::Crash(x.as_str().unwrap_or("?").to_string())
        } else if let Some(r) = j.get("r") {
            let args = j
                .get("a")
                .and_then(Json::as_array)
                .map(|a| a.iter().map(Value::from_json).collect())
                .unwrap_or_default();
            Outcome::Value {
                ret: Value::from_json(r),
                args,
                // The state after the call (receiver, globals, printed text); nothing to
                // report when all three are empty.
                state: j
                    .get("o")
                    .map(Value::from_json)
                    .filter(|s| *s != empty_state()),
            }
        } else {
            return None;
        };
        Some((idx, outcome))
    }

    /// Sets the text printed by the call (read beside the harness's result line, C/C++).
    pub fn with_printed(self, text: &str) -> Outcome {
        match self {
            Outcome::Value { ret, args, state } => {
                let mut st = state.unwrap_or_else(empty_state);
                if let Value::List(parts) = &mut st {
                    if parts.len() == 3 {
                        parts[2] = Value::Str(text.to_string());
                    }
                }
                Outcome::Value {
                    ret,
                    args,
                    state: Some(st).filter(|s| *s != empty_state()),
                }
            }
            other => other,
        }
    }

    /// A readable JSON rendering for reports.
    pub fn to_json(&self) -> Json {
        match self {
            Outcome::Value { ret, args, state } => {
                if args.is_empty() && state.is_none() {
                    ret.to_json()
                } else {
                    let mut j = serde_json::json!({"return": ret.to_json()});
                    if !args.is_empty() {
                        j["arguments_after"] =
                            Json::Array(args.iter().map(Value::to_json).collect());
                    }
                    if let Some(s) = state {
                        j["state_after"] = match s {
                            Value::List(parts) if parts.len() == 3 => serde_json::json!({
                                "receiver": parts[0].to_json(),
                                "globals": parts[1].to_json(),
                                "printed": parts[2].to_json(),
                            }),
                            other => other.to_json(),
                        };
                    }
                    j
                }
            }
            Outcome::Exception(e) => serde_json::json!({ "exception": e }),
            Outcome::Crash(e) => serde_json::json!({ "crash": e }),
            Outcome::Undefined => serde_json::json!({ "undefined_behaviour": true }),
            Outcome::Timeout => serde_json::json!({ "timeout": true }),
            Outcome::Missing => Json::Null,
        }
    }
}

/// The state a harness reports when the call has no receiver, there are no globals, and
/// nothing was printed: `[null, [], ""]`.
fn empty_state() -> Value {
    Value::List(vec![
        Value::None,
        Value::List(Vec::new()),
        Value::Str(String::new()),
    ])
}

/// The declared result types of both sides (for the cross-language integer-range rule).
#[derive(Debug, Clone, Copy)]
pub struct Sides<'a> {
    pub cross_language: bool,
    pub ret_a: &'a Ty,
    pub ret_b: &'a Ty,
}

/// Compares the outcomes of A and B on one input (see the module docs for the rules).
pub fn compare(a: &Outcome, b: &Outcome, sides: Sides<'_>) -> Cmp {
    use Outcome::*;
    match (a, b) {
        (Undefined | Timeout | Missing, _) | (_, Undefined | Timeout | Missing) => Cmp::Discard,
        (Exception(x), Exception(y)) | (Crash(x), Crash(y)) => {
            if sides.cross_language || x == y {
                Cmp::Equal
            } else {
                Cmp::Differ
            }
        }
        (Exception(_), Crash(_)) | (Crash(_), Exception(_)) => {
            if sides.cross_language {
                Cmp::Equal
            } else {
                Cmp::Differ
            }
        }
        (Value { .. }, Exception(_) | Crash(_)) | (Exception(_) | Crash(_), Value { .. }) => {
            Cmp::Differ
        }
        (
            Value {
                ret: ra,
                args: aa,
                state: sa,
            },
            Value {
                ret: rb,
                args: ab,
                state: sb,
            },
        ) => {
            let mut result = value_cmp(ra, rb, sides.ret_a, sides.ret_b, sides.cross_language);
            // The state after the call (receiver, static fields, printed text), within one
            // language (across languages objects are not laid out alike).
            if (sa.is_some() || sb.is_some()) && !sides.cross_language {
                let empty = empty_state();
                let x = sa.as_ref().unwrap_or(&empty);
                let y = sb.as_ref().unwrap_or(&empty);
                match value_cmp(x, y, &Ty::Unknown, &Ty::Unknown, false) {
                    Cmp::Differ => return Cmp::Differ,
                    Cmp::Discard => result = Cmp::Discard,
                    Cmp::Equal => {}
                }
            }
            // Argument states (lists after the call) are compared only when both sides report
            // the same number of them (the same mutable parameters).
            if aa.len() == ab.len() {
                for (x, y) in aa.iter().zip(ab) {
                    match value_cmp(x, y, &Ty::Unknown, &Ty::Unknown, sides.cross_language) {
                        Cmp::Differ => return Cmp::Differ,
                        Cmp::Discard => result = Cmp::Discard,
                        Cmp::Equal => {}
                    }
                }
            }
            result
        }
    }
}

fn elem_ty(t: &Ty) -> &Ty {
    match t {
        Ty::List(e) => e,
        _ => &Ty::Unknown,
    }
}

/// Compares two values; `ta`/`tb` are the declared types of the positions (or `Unknown`).
pub fn value_cmp(a: &Value, b: &Value, ta: &Ty, tb: &Ty, cross: bool) -> Cmp {
    use Value::*;
    match (a, b) {
        (Int(x), Int(y)) => {
            if x == y {
                Cmp::Equal
            } else if cross && (!tb.int_contains(*x) || !ta.int_contains(*y)) {
                Cmp::Discard
            } else {
                Cmp::Differ
            }
        }
        (BigInt(x), BigInt(y)) => eq(x == y),
        (BigInt(_), Int(_)) | (Int(_), BigInt(_)) => {
            if cross {
                Cmp::Discard
            } else {
                Cmp::Differ
            }
        }
        (Float(x), Float(y)) => {
            if cross {
                eq(within_one_ulp(*x, *y))
            } else {
                eq((x.is_nan() && y.is_nan()) || x.to_bits() == y.to_bits())
            }
        }
        (Int(i), Float(f)) | (Float(f), Int(i)) if cross => eq(within_one_ulp(*i as f64, *f)),
        (Bool(x), Bool(y)) => eq(x == y),
        (Bool(x), Int(i)) | (Int(i), Bool(x)) if cross => eq(i128::from(*x) == *i),
        (Char(x), Char(y)) => eq(x == y),
        (Char(c), Str(s)) | (Str(s), Char(c)) if cross => {
            let mut chars = s.chars();
            eq(chars.next().map(u32::from) == Some(*c) && chars.next().is_none())
        }
        (Char(c), Int(i)) | (Int(i), Char(c)) if cross => eq(i128::from(*c) == *i),
        (Str(x), Str(y)) => eq(x == y),
        (List(x), List(y)) => {
            if x.len() != y.len() {
                return Cmp::Differ;
            }
            let mut result = Cmp::Equal;
            for (p, q) in x.iter().zip(y) {
                match value_cmp(p, q, elem_ty(ta), elem_ty(tb), cross) {
                    Cmp::Differ => return Cmp::Differ,
                    Cmp::Discard => result = Cmp::Discard,
                    Cmp::Equal => {}
                }
            }
            result
        }
        (None, None) => Cmp::Equal,
        (Other(x), Other(y)) => {
            if cross {
                Cmp::Discard
            } else {
                eq(x == y)
            }
        }
        (Other(_), _) | (_, Other(_)) if cross => Cmp::Discard,
        _ => Cmp::Differ,
    }
}

fn eq(b: bool) -> Cmp {
    if b {
        Cmp::Equal
    } else {
        Cmp::Differ
    }
}

/// Maps a double onto a monotone integer line (so adjacent floats differ by one).
fn ordered(x: f64) -> i128 {
    let bits = x.to_bits() as i64;
    if bits < 0 {
        i128::from(i64::MIN) - i128::from(bits)
    } else {
        i128::from(bits)
    }
}

/// True when both are NaN, or the two doubles are at most one unit in the last place apart
/// (`0.0` and `-0.0` are adjacent at distance 0).
pub fn within_one_ulp(x: f64, y: f64) -> bool {
    if x.is_nan() || y.is_nan() {
        return x.is_nan() && y.is_nan();
    }
    (ordered(x) - ordered(y)).abs() <= 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(r: Value) -> Outcome {
        Outcome::Value {
            ret: r,
            args: vec![],
            state: None,
        }
    }
    const SAME: Sides<'static> = Sides {
        cross_language: false,
        ret_a: &Ty::Unknown,
        ret_b: &Ty::Unknown,
    };

    #[test]
    fn same_language_floats_compare_by_bits_so_negative_zero_differs() {
        assert_eq!(
            compare(&v(Value::Float(0.0)), &v(Value::Float(-0.0)), SAME),
            Cmp::Differ
        );
        assert_eq!(
            compare(
                &v(Value::Float(f64::NAN)),
                &v(Value::Float(-f64::NAN)),
                SAME
            ),
            Cmp::Equal
        );
    }

    #[test]
    fn cross_language_floats_allow_one_ulp() {
        let x = 0.1f64;
        let y = f64::from_bits(x.to_bits() + 1);
        let z = f64::from_bits(x.to_bits() + 2);
        assert!(within_one_ulp(x, y));
        assert!(!within_one_ulp(x, z));
        assert!(within_one_ulp(0.0, -0.0));
    }

    #[test]
    fn cross_language_integer_outside_the_other_return_type_is_discarded() {
        let int32 = Ty::Int {
            bits: 32,
            signed: true,
        };
        let big = Ty::BigInt;
        let sides = Sides {
            cross_language: true,
            ret_a: &big,
            ret_b: &int32,
        };
        // Python computes 2^31, Java wraps to -2^31: outside the common range.
        assert_eq!(
            compare(&v(Value::Int(1 << 31)), &v(Value::Int(-(1 << 31))), sides),
            Cmp::Discard
        );
        assert_eq!(
            compare(&v(Value::Int(3)), &v(Value::Int(4)), sides),
            Cmp::Differ
        );
    }

    #[test]
    fn exceptions_equal_only_each_other_and_by_class_within_a_language() {
        let cross = Sides {
            cross_language: true,
            ..SAME
        };
        let zde = Outcome::Exception("ZeroDivisionError".into());
        let ae = Outcome::Exception("java.lang.ArithmeticException".into());
        assert_eq!(compare(&zde, &ae, cross), Cmp::Equal);
        assert_eq!(compare(&zde, &ae, SAME), Cmp::Differ);
        assert_eq!(compare(&zde, &v(Value::Int(0)), cross), Cmp::Differ);
        assert_eq!(
            compare(&Outcome::Undefined, &v(Value::Int(0)), SAME),
            Cmp::Discard
        );
    }

    #[test]
    fn harness_lines_parse() {
        let (i, o) =
            Outcome::from_line(r#"{"i":3,"r":["l",[["i","1"],["d","0"]]],"a":[]}"#).unwrap();
        assert_eq!(i, 3);
        assert_eq!(o, v(Value::List(vec![Value::Int(1), Value::Float(0.0)])));
        assert_eq!(
            Outcome::from_line(r#"{"i":0,"ub":true}"#).unwrap().1,
            Outcome::Undefined
        );
    }
}
