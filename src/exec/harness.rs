//! Harness programs for differential testing: one per side, calling the function under test on
//! every input (embedded as literals) and printing one result line per input, prefixed by
//! [`MARK`] so output printed by the function itself is ignored. A harness takes the index of the
//! first input to run as its only argument, so a run that died can be resumed after the input
//! that killed it. The last line is `{"done":true}`.
//!
//! Per-input time limit ([`INPUT_SECONDS`], or the second argument in seconds): Python raises from an interval timer; Java's watchdog thread prints a
//! timeout line and halts the JVM with exit status [`RESUME_EXIT`] (the runner resumes at the
//! next input); C and C++ run each input in a forked child with `alarm`, and report UBSan's exit
//! status [`UB_EXIT`] as undefined behaviour.

use crate::analysis::equiv::types::{clean_type, ObjectTy, Role, Signature, Ty};
use crate::analysis::equiv::value::Value;
use std::fmt::Write as _;

/// Prefix of every harness result line.
pub const MARK: &str = "\u{1e}CCEQ";
/// Exit status of a JVM halted by the per-input watchdog.
pub const RESUME_EXIT: i32 = 3;
/// UBSan's exit status (set through `UBSAN_OPTIONS`).
pub const UB_EXIT: i32 = 86;
/// Per-input time limit in seconds.
pub const INPUT_SECONDS: u32 = 1;

fn elem(t: &Ty) -> &Ty {
    match t {
        Ty::List(e) => e,
        other => other,
    }
}

/// A declared Java parameter type as `Class.getSimpleName` spells its erasure: no package,
/// annotations, modifiers or type arguments, varargs as an array (`final java.util.List<T>`
/// -> `List`, `int...` -> `int[]`). A type variable (one capital letter, maybe a digit) is
/// `*` followed by its array dimensions.
pub fn java_simple_type(decl: &str) -> String {
    let mut t = String::new();
    let mut depth = 0;
    for c in decl.chars() {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            _ if depth == 0 => t.push(c),
            _ => {}
        }
    }
    let t = t.replace("...", "[]");
    let words: Vec<&str> = t
        .split_whitespace()
        .filter(|w| !w.starts_with('@') && *w != "final")
        .collect();
    let t: String = words.concat();
    let base_end = t.find('[').unwrap_or(t.len());
    let (base, dims) = t.split_at(base_end);
    let base = base.rsplit('.').next().unwrap_or(base);
    let mut chars = base.chars();
    let type_var = matches!(chars.next(), Some(c) if c.is_ascii_uppercase())
        && base.len() <= 2
        && chars.all(|c| c.is_ascii_digit());
    if type_var {
        format!("*{dims}")
    } else {
        format!("{base}{dims}")
    }
}

// ---------------------------------------------------------------- Python

fn py_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            ' '..='~' => out.push(c),
            c if (c as u32) < 0x100 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if (c as u32) < 0x10000 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => {
                let _ = write!(out, "\\U{:08x}", c as u32);
            }
        }
    }
    out.push('"');
    out
}

fn py_lit(v: &Value, ty: &Ty) -> String {
    match v {
        Value::Int(i) => {
            if *ty == Ty::Bool {
                (if *i != 0 { "True" } else { "False" }).into()
            } else if matches!(ty, Ty::Float { .. }) {
                format!("float({i})")
            } else {
                i.to_string()
            }
        }
        Value::BigInt(s) => s.clone(),
        Value::Float(f) => format!("_d({})", f.to_bits() as i64),
        Value::Bool(b) => {
            if ty.is_integer() {
                (if *b { "1" } else { "0" }).into()
            } else {
                (if *b { "True" } else { "False" }).into()
            }
        }
        Value::Char(c) => py_str(&char::from_u32(*c).map(String::from).unwrap_or_default()),
        Value::Str(s) => py_str(s),
        Value::List(items) => {
            let parts: Vec<String> = items.iter().map(|x| py_lit(x, elem(ty))).collect();
            format!("[{}]", parts.join(", "))
        }
        Value::None | Value::Other(_) | Value::Object { .. } => "None".into(),
    }
}

/// The Python harness; the user's file is `user.py` in the same directory.
pub fn python(sig: &Signature, inputs: &[Vec<Value>]) -> String {
    let mut s = String::new();
    s.push_str(PY_PRELUDE);
    s.push_str("INPUTS = [\n");
    for inp in inputs {
        let args: Vec<String> = inp
            .iter()
            .zip(&sig.params)
            .map(|(v, p)| py_lit(v, &p.ty))
            .collect();
        let _ = writeln!(s, "    [{}],", args.join(", "));
    }
    s.push_str("]\n");
    let mutable: Vec<String> = sig
        .params
        .iter()
        .enumerate()
        .filter(|(_, p)| p.mutable)
        .map(|(i, _)| i.to_string())
        .collect();
    let _ = writeln!(s, "MUTABLE = [{}]", mutable.join(", "));
    let _ = writeln!(s, "NAME = {}", py_str(&sig.name));
    let class = sig
        .class
        .as_deref()
        .map(|c| c.rsplit('.').next().unwrap_or(c))
        .map(py_str)
        .unwrap_or_else(|| "None".into());
    let _ = writeln!(s, "CLASS = {class}");
    let _ = writeln!(
        s,
        "RECEIVER = {}",
        if sig.has_receiver { "True" } else { "False" }
    );
    let _ = writeln!(s, "LIMIT = {INPUT_SECONDS}");
    let _ = writeln!(s, "MARK = {}", py_str(MARK));
    s.push_str(PY_MAIN);
    s
}

const PY_PRELUDE: &str = r#"import sys, io, json, struct, copy, signal
sys.setrecursionlimit(5000)
def _d(bits):
    return struct.unpack('<d', struct.pack('<q', bits))[0]
"#;

const PY_MAIN: &str = r#"
class _Timeout(BaseException):
    pass
def _alarm(signum, frame):
    raise _Timeout()
def unpaired(s):
    # JSON readers refuse an unpaired surrogate, and join two surrogate code points (two
    # characters in Python) into one: each is written as U+FFFD, "x" and its hex value.
    if not any(0xD800 <= ord(c) <= 0xDFFF for c in s):
        return s
    return "".join("\ufffdx%04x" % ord(c) if 0xD800 <= ord(c) <= 0xDFFF else c for c in s)
def enc(v, depth=0):
    if depth > 50:
        return ["o", "deep"]
    if v is None:
        return ["n"]
    if isinstance(v, bool):
        return ["b", v]
    if isinstance(v, int):
        return ["i", str(v)]
    if isinstance(v, float):
        return ["d", str(struct.unpack('<q', struct.pack('<d', v))[0])]
    if isinstance(v, str):
        return ["s", unpaired(v)]
    if isinstance(v, (list, tuple)):
        return ["l", [enc(x, depth + 1) for x in v]]
    if type(v) is dict:
        return ["l", [["l", [enc(k, depth + 1), enc(x, depth + 1)]] for k, x in v.items()]]
    r = repr(v)
    if " at 0x" in r:
        # The default repr: a memory address, different in every run.
        return ["o", type(v).__name__]
    return ["o", type(v).__name__ + ":" + r[:200]]
def main():
    out = sys.stdout
    ns = {"__name__": "crosscheck_user", "__builtins__": __builtins__}
    try:
        with open("user.py", encoding="utf-8") as f:
            src = f.read()
        exec(compile(src, "user.py", "exec"), ns)
        if CLASS is not None:
            cls = ns[CLASS]
            fn = getattr(cls() if RECEIVER else cls, NAME)
        else:
            fn = ns[NAME]
    except BaseException as e:
        out.write(MARK + json.dumps({"load_error": type(e).__name__ + ": " + str(e)[:300]}) + "\n")
        out.flush()
        return
    signal.signal(signal.SIGALRM, _alarm)
    start = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    limit = float(sys.argv[2]) if len(sys.argv) > 2 else LIMIT
    for i in range(start, len(INPUTS)):
        args = copy.deepcopy(INPUTS[i])
        printed = io.StringIO()
        try:
            signal.setitimer(signal.ITIMER_REAL, limit)
            sys.stdout = printed
            try:
                r = fn(*args)
            finally:
                sys.stdout = out
                signal.setitimer(signal.ITIMER_REAL, 0)
            # What the call printed is part of its effect.
            line = {"i": i, "r": enc(r), "a": [enc(args[j]) for j in MUTABLE],
                    "o": ["l", [["n"], ["l", []], ["s", unpaired(printed.getvalue()[:65536])]]]}
        except _Timeout:
            line = {"i": i, "t": True}
        except BaseException as e:
            line = {"i": i, "e": type(e).__name__}
        try:
            text = json.dumps(line)
        except BaseException as e:
            text = json.dumps({"i": i, "r": ["o", "unencodable"], "a": []})
        out.write("\n" + MARK + text + "\n")
        out.flush()
    out.write("\n" + MARK + json.dumps({"done": True}) + "\n")
    out.flush()
main()
"#;

// ---------------------------------------------------------------- Java

fn java_str(s: &str) -> String {
    let mut out = String::from("\"");
    for unit in s.encode_utf16() {
        match unit {
            0x5c => out.push_str("\\\\"),
            0x22 => out.push_str("\\\""),
            0x20..=0x7e => out.push(char::from(unit as u8)),
            u => {
                let _ = write!(out, "\\u{u:04x}");
            }
        }
    }
    out.push('"');
    out
}

fn java_prim(v: &Value, ty: &Ty) -> String {
    match (v, ty) {
        (Value::Int(i), Ty::Int { bits: 64, .. }) => format!("{i}L"),
        (Value::Int(i), Ty::Int { bits: 16, .. }) => format!("(short)({i})"),
        (Value::Int(i), Ty::Int { bits: 8, .. }) => format!("(byte)({i})"),
        (Value::Int(i), Ty::Float { bits }) => {
            if *bits == 32 {
                format!("(float)({i})")
            } else {
                format!("(double)({i}L)")
            }
        }
        (Value::Int(i), Ty::Bool) => (*i != 0).to_string(),
        (Value::Int(i), Ty::Char) => format!("(char)({i})"),
        // An element of unknown type (`Object[]`): an `int` literal where one fits, else a
        // `long`, else a `BigInteger` (a bare literal past `long` does not compile).
        (Value::Int(i), _) => {
            if i32::try_from(*i).is_ok() {
                format!("({i})")
            } else if i64::try_from(*i).is_ok() {
                format!("({i}L)")
            } else {
                format!("new java.math.BigInteger(\"{i}\")")
            }
        }
        (Value::Float(f), Ty::Float { bits: 32 }) => {
            format!("(float)Double.longBitsToDouble({}L)", f.to_bits() as i64)
        }
        (Value::Float(f), _) => format!("Double.longBitsToDouble({}L)", f.to_bits() as i64),
        (Value::Bool(b), Ty::Int { .. }) => u8::from(*b).to_string(),
        (Value::Bool(b), _) => b.to_string(),
        (Value::Char(c), Ty::Str) => {
            java_str(&char::from_u32(*c).map(String::from).unwrap_or_default())
        }
        (Value::Char(c), _) => format!("(char){c}"),
        (Value::Str(s), _) => java_str(s),
        _ => "null".into(),
    }
}

fn java_boxed(v: &Value, ty: &Ty, decl: &str) -> String {
    let d = clean_type(decl);
    match ty {
        Ty::Int { bits: 32, .. } => format!("Integer.valueOf({})", java_prim(v, ty)),
        Ty::Int { bits: 64, .. } => format!("Long.valueOf({})", java_prim(v, ty)),
        Ty::Int { bits: 16, .. } => format!("Short.valueOf({})", java_prim(v, ty)),
        Ty::Int { .. } => format!("Byte.valueOf({})", java_prim(v, ty)),
        Ty::Float { bits: 32 } => format!("Float.valueOf({})", java_prim(v, ty)),
        Ty::Float { .. } => format!("Double.valueOf({})", java_prim(v, ty)),
        Ty::Bool => format!("Boolean.valueOf({})", java_prim(v, ty)),
        Ty::Char => format!("Character.valueOf({})", java_prim(v, ty)),
        Ty::Str => java_prim(v, ty),
        // An `Object` parameter: an `Integer` (or `Long`, `BigInteger`), as in an `Object[]`.
        Ty::Unknown => java_prim(v, ty),
        Ty::Object(o) => match v {
            Value::Object { ctor, args } => match o.ctors.get(*ctor) {
                Some(params) => {
                    let parts: Vec<String> = args
                        .iter()
                        .zip(params)
                        .map(|(a, (t, d))| java_boxed(a, t, d))
                        .collect();
                    format!("new {}({})", o.class, parts.join(", "))
                }
                None => "null".into(),
            },
            _ => "null".into(),
        },
        // A null array or list (an input the differential test adds for Java parameters).
        Ty::List(_) if matches!(v, Value::None) => "null".into(),
        Ty::List(e) => {
            let items: Vec<Value> = match v {
                Value::List(items) => items.clone(),
                _ => Vec::new(),
            };
            if let Some(inner) = d.strip_suffix("[]") {
                let parts: Vec<String> = items.iter().map(|x| java_prim(x, e)).collect();
                format!("new {inner}[]{{{}}}", parts.join(", "))
            } else {
                let inner = d
                    .split_once('<')
                    .map(|(_, r)| r.trim_end_matches('>'))
                    .unwrap_or("Object");
                let parts: Vec<String> = items.iter().map(|x| java_boxed(x, e, inner)).collect();
                format!(
                    "new java.util.ArrayList<{inner}>(java.util.Arrays.<{inner}>asList(new {inner}[]{{{}}}))",
                    parts.join(", ")
                )
            }
        }
        _ => "null".into(),
    }
}

/// The Java harness (`CcHarness.java`), calling `class_name.name` through reflection (private,
/// static and instance methods alike). An instance method's receiver is built per input: from
/// the no-argument constructor, or, when the class has none, as the first input
/// ([`Signature::receiver`]); its fields after the call are reported (`"o"`). A constructor
/// ([`Signature::constructs`]) is called and the new object is the result.
pub fn java(sig: &Signature, class_name: &str, inputs: &[Vec<Value>]) -> String {
    let mut s = String::new();
    s.push_str("public class CcHarness {\n");
    let _ = writeln!(s, "  static final String MARK = {};", java_str(MARK));
    let _ = writeln!(s, "  static final int N = {};", inputs.len());
    let skip = usize::from(sig.receiver);
    let _ = writeln!(s, "  static final int K = {};", sig.params.len() - skip);
    let _ = writeln!(s, "  static final boolean RECEIVER = {};", sig.receiver);
    let _ = writeln!(s, "  static final boolean CONSTRUCTS = {};", sig.constructs);
    // Indices into the call's arguments (the receiver is not one of them).
    let mutable: Vec<String> = sig
        .params
        .iter()
        .enumerate()
        .skip(skip)
        .filter(|(_, p)| p.mutable)
        .map(|(i, _)| (i - skip).to_string())
        .collect();
    let _ = writeln!(
        s,
        "  static final int[] MUTABLE = {{{}}};",
        mutable.join(", ")
    );
    let _ = writeln!(s, "  static final String CLASS = {};", java_str(class_name));
    let _ = writeln!(s, "  static final String NAME = {};", java_str(&sig.name));
    // The declared parameter types, to tell overloads with as many parameters apart.
    let ptypes: Vec<String> = sig
        .raw
        .iter()
        .map(|r| java_str(&java_simple_type(&r.decl)))
        .collect();
    let _ = writeln!(
        s,
        "  static final String[] PTYPES = {{{}}};",
        ptypes.join(", ")
    );
    let _ = writeln!(
        s,
        "  static final long LIMIT_MS = {};",
        u64::from(INPUT_SECONDS) * 1000
    );
    // Inputs in chunks of methods (a method's bytecode is limited to 64 KB).
    let chunk = 50;
    for (c, block) in inputs.chunks(chunk).enumerate() {
        let _ = writeln!(s, "  static Object[] input{c}(int i) {{\n    switch (i) {{");
        for (j, inp) in block.iter().enumerate() {
            let mut args: Vec<String> = Vec::new();
            if sig.receiver {
                if let Some((v, p)) = inp.first().zip(sig.params.first()) {
                    args.push(java_boxed(v, &p.ty, ""));
                }
            }
            args.extend(
                inp.iter()
                    .skip(skip)
                    .zip(sig.params.iter().skip(skip))
                    .zip(&sig.raw)
                    .map(|((v, p), r)| java_boxed(v, &p.ty, &r.decl)),
            );
            let _ = writeln!(
                s,
                "      case {}: return new Object[]{{{}}};",
                c * chunk + j,
                args.join(", ")
            );
        }
        s.push_str("      default: return null;\n    }\n  }\n");
    }
    s.push_str("  static Object[] input(int i) {\n    switch (i / 50) {\n");
    for c in 0..inputs.len().div_ceil(chunk) {
        let _ = writeln!(s, "      case {c}: return input{c}(i);");
    }
    s.push_str("      default: return null;\n    }\n  }\n");
    s.push_str(JAVA_MAIN);
    s.push_str("}\n");
    s
}

const JAVA_MAIN: &str = r#"
  static volatile int current = -1;
  static volatile long limitMs = LIMIT_MS;
  static volatile long startedAt = 0;
  static final Object LOCK = new Object();
  static void esc(StringBuilder b, String s) {
    b.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      // An unpaired surrogate (JSON readers refuse it) is written as U+FFFD, "x" and its hex
      // value, as the Python harness writes one.
      boolean paired = Character.isHighSurrogate(c) ? i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))
          : Character.isLowSurrogate(c) && i > 0 && Character.isHighSurrogate(s.charAt(i - 1));
      if (c == '"' || c == '\\') { b.append('\\').append(c); }
      else if (Character.isSurrogate(c) && !paired) { b.append(String.format("\\ufffdx%04x", (int) c)); }
      else if (c < 0x20 || c > 0x7e) { b.append(String.format("\\u%04x", (int) c)); }
      else { b.append(c); }
    }
    b.append('"');
  }
  static void enc(StringBuilder b, Object o, int depth) {
    if (depth > 50 || b.length() > (1 << 20)) { b.append("[\"o\",\"deep\"]"); return; }
    if (o == null) { b.append("[\"n\"]"); }
    else if (o instanceof Integer || o instanceof Long || o instanceof Short || o instanceof Byte
        || o instanceof java.math.BigInteger) { b.append("[\"i\",\"").append(o.toString()).append("\"]"); }
    else if (o instanceof Double) { b.append("[\"d\",\"").append(Double.doubleToRawLongBits((Double) o)).append("\"]"); }
    else if (o instanceof Float) { b.append("[\"d\",\"").append(Double.doubleToRawLongBits((double) (Float) o)).append("\"]"); }
    else if (o instanceof Boolean) { b.append("[\"b\",").append(o.toString()).append("]"); }
    else if (o instanceof Character) { b.append("[\"c\",").append((int) (Character) o).append("]"); }
    else if (o instanceof String) { b.append("[\"s\","); esc(b, (String) o); b.append("]"); }
    else if (o.getClass().isArray()) {
      b.append("[\"l\",[");
      int n = java.lang.reflect.Array.getLength(o);
      for (int i = 0; i < n; i++) { if (i > 0) b.append(','); enc(b, java.lang.reflect.Array.get(o, i), depth + 1); }
      b.append("]]");
    } else if (o instanceof Iterable) {
      b.append("[\"l\",[");
      boolean first = true;
      for (Object x : (Iterable<?>) o) { if (!first) b.append(','); first = false; enc(b, x, depth + 1); }
      b.append("]]");
    } else if (o instanceof Enum) { b.append("[\"s\","); esc(b, ((Enum<?>) o).name()); b.append("]"); }
    else if (o instanceof java.util.Map) {
      // The platform class, then the entries as [key, value] pairs in iteration order, each
      // encoded like any value: the map's toString() would print its values' identity
      // hashes, different in every run.
      String k = o.getClass().getName();
      b.append("[\"l\",[[\"s\","); esc(b, k.startsWith("java.") ? k : "Map"); b.append("]");
      boolean first = false;
      for (java.util.Map.Entry<?, ?> e : ((java.util.Map<?, ?>) o).entrySet()) {
        if (!first) b.append(',');
        first = false;
        b.append("[\"l\",[");
        enc(b, e.getKey(), depth + 1);
        b.append(',');
        enc(b, e.getValue(), depth + 1);
        b.append("]]");
      }
      b.append("]]");
    }
    else if (!o.getClass().getName().startsWith("java.")) {
      // An object of the user's classes: its instance fields in declaration order, the
      // superclasses' after its own (class names differ between the two versions).
      if (depth > 8) { b.append("[\"o\",\"deep\"]"); return; }
      b.append("[\"l\",[");
      boolean first = true;
      for (Class<?> k = o.getClass(); k != null && k != Object.class; k = k.getSuperclass()) {
        for (java.lang.reflect.Field f : k.getDeclaredFields()) {
          if (java.lang.reflect.Modifier.isStatic(f.getModifiers()) || f.isSynthetic()) continue;
          Object v;
          try { f.setAccessible(true); v = f.get(o); } catch (Throwable t) { continue; }
          if (!first) b.append(',');
          first = false;
          enc(b, v, depth + 1);
        }
      }
      b.append("]]");
    } else if (String.valueOf(o).equals(o.getClass().getName() + "@" + Integer.toHexString(System.identityHashCode(o)))) {
      // Object.toString: an identity hash, different in every run.
      b.append("[\"o\","); esc(b, o.getClass().getName()); b.append("]");
    } else { b.append("[\"o\","); String t = String.valueOf(o); esc(b, o.getClass().getName() + ":" + (t.length() > 200 ? t.substring(0, 200) : t)); b.append("]"); }
  }
  static final java.io.PrintStream OUT = System.out;
  static void emit(String s) {
    synchronized (LOCK) { OUT.print("\n" + MARK + s + "\n"); OUT.flush(); }
  }
  // The class's non-private static fields: their values after class initialisation, restored
  // before each input (inputs are independent, whatever ran before them), and reported after
  // each call.
  static java.lang.reflect.Field[] statics = new java.lang.reflect.Field[0];
  static Object[] initial = new Object[0];
  static Object copy(Object v) {
    if (v == null || !v.getClass().isArray()) return v;
    int n = java.lang.reflect.Array.getLength(v);
    Object c = java.lang.reflect.Array.newInstance(v.getClass().getComponentType(), n);
    for (int i = 0; i < n; i++) java.lang.reflect.Array.set(c, i, copy(java.lang.reflect.Array.get(v, i)));
    return c;
  }
  static void snapshot(Class<?> c) {
    java.util.List<java.lang.reflect.Field> fs = new java.util.ArrayList<>();
    for (java.lang.reflect.Field f : c.getDeclaredFields()) {
      // Private static fields (caches, counters) are the class's own business.
      int mod = f.getModifiers();
      if (!java.lang.reflect.Modifier.isStatic(mod) || java.lang.reflect.Modifier.isPrivate(mod) || f.isSynthetic()) continue;
      try { f.setAccessible(true); fs.add(f); } catch (Throwable t) { }
    }
    statics = fs.toArray(new java.lang.reflect.Field[0]);
    initial = new Object[statics.length];
    for (int k = 0; k < statics.length; k++) {
      try { initial[k] = copy(statics[k].get(null)); } catch (Throwable t) { }
    }
  }
  static void restore() {
    for (int k = 0; k < statics.length; k++) {
      java.lang.reflect.Field f = statics[k];
      try {
        if (!java.lang.reflect.Modifier.isFinal(f.getModifiers())) { f.set(null, copy(initial[k])); }
        else {
          Object now = f.get(null);
          if (now != null && now.getClass().isArray()) {
            Object was = copy(initial[k]);
            System.arraycopy(was, 0, now, 0, java.lang.reflect.Array.getLength(was));
          }
        }
      } catch (Throwable t) { }
    }
  }
  static void encStatics(StringBuilder b) {
    b.append("[\"l\",[");
    for (int k = 0; k < statics.length; k++) {
      if (k > 0) b.append(',');
      Object v;
      try { v = statics[k].get(null); } catch (Throwable t) { v = null; }
      enc(b, v, 1);
    }
    b.append("]]");
  }
  // `*` (a type variable) matches any type with the same array dimensions.
  static boolean sameTypes(Class<?>[] ps) {
    if (ps.length != PTYPES.length) { return false; }
    for (int i = 0; i < ps.length; i++) {
      String want = PTYPES[i];
      String got = ps[i].getSimpleName();
      if (want.startsWith("*")) {
        String dims = want.substring(1);
        if (!got.endsWith(dims) || (dims.isEmpty() && got.endsWith("]"))) { return false; }
      } else if (!want.equals(got)) { return false; }
    }
    return true;
  }
  public static void main(String[] argv) throws Exception {
    int start = argv.length > 0 ? Integer.parseInt(argv[0]) : 0;
    if (argv.length > 1) { limitMs = Long.parseLong(argv[1]) * 1000; }
    java.lang.reflect.Method m = null;
    java.lang.reflect.Constructor<?> make = null;
    try {
      Class<?> c = Class.forName(CLASS);
      if (CONSTRUCTS) {
        int n = 0; java.lang.reflect.Constructor<?> typed = null;
        for (java.lang.reflect.Constructor<?> x : c.getDeclaredConstructors()) {
          if (x.getParameterCount() == K) { make = x; n++; if (sameTypes(x.getParameterTypes())) { typed = x; } }
        }
        if (typed != null) { make = typed; }
        else if (n > 1) { emit("{\"load_error\":\"overloaded constructors: none has the declared parameter types\"}"); System.exit(0); }
        if (make == null) { emit("{\"load_error\":\"no constructor\"}"); System.exit(0); }
        make.setAccessible(true);
      } else {
        int n = 0; java.lang.reflect.Method typed = null;
        for (java.lang.reflect.Method x : c.getDeclaredMethods()) {
          if (x.getName().equals(NAME) && x.getParameterCount() == K) { m = x; n++; if (sameTypes(x.getParameterTypes())) { typed = x; } }
        }
        if (typed != null) { m = typed; }
        else if (n > 1) { emit("{\"load_error\":\"overloaded methods: none has the declared parameter types\"}"); System.exit(0); }
        if (m == null) { emit("{\"load_error\":\"no method\"}"); System.exit(0); }
        m.setAccessible(true);
        if (!java.lang.reflect.Modifier.isStatic(m.getModifiers()) && !RECEIVER) {
          make = c.getDeclaredConstructor();
          make.setAccessible(true);
        }
      }
    } catch (Throwable t) {
      StringBuilder b = new StringBuilder("{\"load_error\":"); esc(b, t.toString()); b.append("}");
      emit(b.toString()); System.exit(0);
    }
    try { snapshot(Class.forName(CLASS)); } catch (Throwable t) { }
    java.io.ByteArrayOutputStream printed = new java.io.ByteArrayOutputStream();
    java.io.PrintStream capture = new java.io.PrintStream(printed, true);
    Thread dog = new Thread(() -> {
      while (true) {
        try { Thread.sleep(50); } catch (InterruptedException e) { return; }
        int cur = current;
        if (cur >= 0 && System.currentTimeMillis() - startedAt > limitMs) {
          emit("{\"i\":" + cur + ",\"t\":true}");
          Runtime.getRuntime().halt(3);
        }
      }
    });
    dog.setDaemon(true);
    dog.start();
    for (int i = start; i < N; i++) {
      StringBuilder b = new StringBuilder();
      restore();
      printed.reset();
      System.setOut(capture);
      startedAt = System.currentTimeMillis();
      current = i;
      try {
        // Building the inputs runs the user's constructors: inside the time limit, and an
        // exception there is this input's outcome.
        Object[] args = input(i);
        Object inst = null;
        if (RECEIVER) {
          inst = args[0];
          args = java.util.Arrays.copyOfRange(args, 1, args.length);
        }
        Object r;
        if (CONSTRUCTS) { r = make.newInstance(args); }
        else {
          if (make != null) inst = make.newInstance();
          r = m.invoke(inst, args);
        }
        current = -1;
        System.setOut(OUT);
        capture.flush();
        b.append("{\"i\":").append(i).append(",\"r\":");
        enc(b, r, 0);
        b.append(",\"a\":[");
        for (int j = 0; j < MUTABLE.length; j++) { if (j > 0) b.append(','); enc(b, args[MUTABLE[j]], 0); }
        // State after the call: the receiver's fields, the class's static fields, and what
        // the call printed.
        b.append("],\"o\":[\"l\",[");
        if (inst != null) enc(b, inst, 0); else b.append("[\"n\"]");
        b.append(',');
        encStatics(b);
        b.append(",[\"s\",");
        String text = printed.toString();
        esc(b, text.length() > 65536 ? text.substring(0, 65536) : text);
        b.append("]]]}");
      } catch (java.lang.reflect.InvocationTargetException e) {
        current = -1;
        System.setOut(OUT);
        Throwable cause = e.getCause() == null ? e : e.getCause();
        b.setLength(0);
        b.append("{\"i\":").append(i).append(",\"e\":"); esc(b, cause.getClass().getName()); b.append("}");
      } catch (Throwable e) {
        current = -1;
        System.setOut(OUT);
        b.setLength(0);
        b.append("{\"i\":").append(i).append(",\"e\":"); esc(b, e.getClass().getName()); b.append("}");
      }
      emit(b.toString());
    }
    emit("{\"done\":true}");
    System.exit(0);
  }
"#;

// ---------------------------------------------------------------- C and C++

fn c_str(s: &str) -> String {
    let mut out = String::from("\"");
    for b in s.bytes() {
        match b {
            b'\\' => out.push_str("\\\\"),
            b'"' => out.push_str("\\\""),
            b'?' => out.push_str("\\?"),
            0x20..=0x7e => out.push(char::from(b)),
            _ => {
                let _ = write!(out, "\\{b:03o}");
            }
        }
    }
    out.push('"');
    out
}

fn c_int(i: i128) -> String {
    if i == i128::from(i64::MIN) {
        "(-9223372036854775807LL - 1)".into()
    } else if i < 0 {
        format!("({i}LL)")
    } else {
        format!("{i}ULL")
    }
}

fn c_scalar(v: &Value) -> String {
    match v {
        Value::Int(i) => c_int(*i),
        Value::Float(f) => format!("cc_d({}ULL)", f.to_bits()),
        Value::Bool(b) => u8::from(*b).to_string(),
        Value::Char(c) => c.to_string(),
        _ => "0".into(),
    }
}

fn strip_const(decl: &str) -> String {
    decl.split_whitespace()
        .filter(|w| *w != "const")
        .collect::<Vec<_>>()
        .join(" ")
}

/// The C or C++ harness, which `#include`s the user's file (`user.c` / `user.cpp`).
pub fn c_family(
    sig: &Signature,
    cpp: bool,
    user_text: &str,
    inputs: &[Vec<Value>],
) -> Result<String, String> {
    let needs_using_std = !user_text.contains("std::")
        && !user_text.contains("using namespace std")
        && (user_text.contains("vector<") || user_text.contains("string"));
    let mut s = String::new();
    let user = if cpp { "user.cpp" } else { "user.c" };
    // Common headers first: snippets often rely on transitive includes.
    s.push_str(if cpp { CPP_PRELUDE } else { C_PRELUDE });
    if cpp && needs_using_std {
        s.push_str("using namespace std;\n");
    }
    let _ = writeln!(
        s,
        "#define main crosscheck_user_main\n#include \"{user}\"\n#undef main"
    );
    s.push_str(C_COMMON);
    s.push_str(C_ENC);
    // One encoder per struct type the call takes or returns (inner structs first).
    let mut structs: Vec<ObjectTy> = Vec::new();
    for t in sig.params.iter().map(|p| &p.ty).chain([&sig.ret]) {
        collect_structs(t, &mut structs);
    }
    for (k, o) in structs.iter().enumerate() {
        let _ = writeln!(
            s,
            "static void cc_enc_st{k}({} v) {{ printf(\"[\\\"l\\\",[\");",
            o.class
        );
        let tys = o.ctors.first().cloned().unwrap_or_default();
        for (j, (f, (t, _))) in o.fields.iter().zip(&tys).enumerate() {
            if j > 0 {
                s.push_str("  printf(\",\");\n");
            }
            let _ = writeln!(s, "  {};", enc_call(t, &format!("v.{f}"), &structs));
        }
        s.push_str("  printf(\"]]\"); }\n");
        let _ = writeln!(
            s,
            "static void cc_enc_st_list{k}(const {} *a, size_t n) {{ printf(\"[\\\"l\\\",[\"); for (size_t i = 0; i < n; i++) {{ if (i) printf(\",\"); cc_enc_st{k}(a[i]); }} printf(\"]]\"); }}",
            o.class
        );
    }
    // One encoder per linked-list parameter: the nodes reachable from the head after the
    // call, each as its index among the nodes built before (-1 for a node the call made),
    // the index its backward link points to (-2 for none), and its value fields.
    for (ri, raw) in sig.raw.iter().enumerate() {
        let Role::Chain {
            list, next, prev, ..
        } = &raw.role
        else {
            continue;
        };
        let Some(o) = chain_values(&sig.params[*list].ty) else {
            return Err(format!(
                "linked-list parameter `{}` without node values",
                raw.name
            ));
        };
        let node = chain_node(&raw.decl);
        let k = structs.iter().position(|x| x.class == o.class).unwrap_or(0);
        let back = match prev {
            Some(b) => format!(
                "printf(\",\"); {{ long long cc_px = -2; if (cc_p->{b}) {{ cc_px = -1; for (size_t cc_j = 0; cc_j < cc_n; cc_j++) if (cc_o[cc_j] == cc_p->{b}) cc_px = (long long)cc_j; }} cc_enc_i(cc_px); }}"
            ),
            None => String::new(),
        };
        let _ = writeln!(
            s,
            "static void cc_enc_chain{ri}({node} *cc_h, {node} **cc_o, size_t cc_n) {{\n  size_t cc_steps = 0;\n  printf(\"[\\\"l\\\",[\");\n  for ({node} *cc_p = cc_h; cc_p; cc_p = cc_p->{next}) {{\n    if (cc_steps) printf(\",\");\n    if (cc_steps++ > cc_n + 8) {{ printf(\"[\\\"s\\\",\\\"cycle\\\"]\"); break; }}\n    long long cc_ix = -1;\n    for (size_t cc_j = 0; cc_j < cc_n; cc_j++) if (cc_o[cc_j] == cc_p) cc_ix = (long long)cc_j;\n    printf(\"[\\\"l\\\",[\"); cc_enc_i(cc_ix); {back}\n    printf(\",\"); cc_enc_st{k}(*cc_p); printf(\"]]\");\n  }}\n  printf(\"]]\");\n}}"
        );
    }
    let _ = writeln!(s, "#define CC_MARK {}", c_str(MARK));
    s.push_str("static void run_case(int cc_i) {\n  switch (cc_i) {\n");
    for (n, inp) in inputs.iter().enumerate() {
        let _ = writeln!(s, "  case {n}: {{");
        let mut call_args = Vec::new();
        let mut post = Vec::new();
        for (ri, raw) in sig.raw.iter().enumerate() {
            let decl = strip_const(&raw.decl);
            match raw.role {
                Role::LenOf(k) => {
                    let len = match inp.get(k) {
                        Some(Value::List(items)) => items.len(),
                        _ => 0,
                    };
                    call_args.push(format!("({decl})({len})"));
                }
                Role::Chain {
                    list: k,
                    indirect,
                    ref next,
                    ref prev,
                } => {
                    // Each node in a heap block of its own, linked in list order.
                    let items = match inp.get(k) {
                        Some(Value::List(items)) => items.clone(),
                        _ => Vec::new(),
                    };
                    let Some(o) = chain_values(&sig.params[k].ty) else {
                        return Err(format!(
                            "linked-list parameter `{}` without node values",
                            raw.name
                        ));
                    };
                    let node = chain_node(&raw.decl);
                    let name = format!("cc_a{ri}");
                    let n = items.len();
                    let _ = writeln!(s, "    {node} *{name}_n[{}] = {{0}};", n.max(1));
                    let tys = o.ctors.first().cloned().unwrap_or_default();
                    for (j, item) in items.iter().enumerate() {
                        let _ = writeln!(
                            s,
                            "    {name}_n[{j}] = ({node} *)calloc(1, sizeof({node}));"
                        );
                        let args: &[Value] = match item {
                            Value::Object { args, .. } => args,
                            _ => &[],
                        };
                        for (fi, (f, (t, decl))) in o.fields.iter().zip(&tys).enumerate() {
                            let a = args.get(fi).cloned().unwrap_or(Value::None);
                            let d = strip_const(decl);
                            match t {
                                Ty::Object(inner) => {
                                    let _ = writeln!(
                                        s,
                                        "    {{ {d} cc_t = {}; {name}_n[{j}]->{f} = cc_t; }}",
                                        c_struct_init(&a, inner)
                                    );
                                }
                                _ => {
                                    let _ = writeln!(
                                        s,
                                        "    {name}_n[{j}]->{f} = ({d})({});",
                                        c_scalar(&a)
                                    );
                                }
                            }
                        }
                    }
                    for j in 0..n {
                        let after = if j + 1 < n {
                            format!("{name}_n[{}]", j + 1)
                        } else {
                            "NULL".into()
                        };
                        let _ = writeln!(s, "    {name}_n[{j}]->{next} = {after};");
                        if let Some(b) = prev {
                            let before = if j > 0 {
                                format!("{name}_n[{}]", j - 1)
                            } else {
                                "NULL".into()
                            };
                            let _ = writeln!(s, "    {name}_n[{j}]->{b} = {before};");
                        }
                    }
                    let head = if n > 0 {
                        format!("{name}_n[0]")
                    } else {
                        "NULL".into()
                    };
                    let _ = writeln!(s, "    {node} *{name} = {head};");
                    if sig.params[k].mutable {
                        post.push(format!("cc_enc_chain{ri}({name}, {name}_n, {n})"));
                    }
                    call_args.push(if indirect { format!("&{name}") } else { name });
                }
                Role::Pointee(k) => {
                    // One value in a heap cell of its own: a read past it is an invalid
                    // read for memcheck, not a neighbour's value.
                    let v = inp.get(k).cloned().unwrap_or(Value::None);
                    let name = format!("cc_a{ri}");
                    let cleaned = strip_const(&raw.decl);
                    let inner = cleaned.trim_end().trim_end_matches('*').trim_end();
                    if let Ty::Object(o) = &sig.params[k].ty {
                        // A struct: built by its initialiser, copied to the heap (a
                        // `const` field forbids assigning the whole struct).
                        let _ = writeln!(
                            s,
                            "    {inner} {name}_init = {};\n    {inner} *{name} = ({inner} *)cc_heap(&{name}_init, sizeof({inner}));",
                            c_struct_init(&v, o)
                        );
                        if sig.params[k].mutable {
                            post.push(enc_call(&sig.params[k].ty, &format!("*{name}"), &structs));
                        }
                        call_args.push(name);
                        continue;
                    }
                    let _ = writeln!(
                        s,
                        "    {inner} *{name} = ({inner} *)malloc(sizeof({inner}));\n    *{name} = ({inner})({});",
                        c_scalar(&v)
                    );
                    if sig.params[k].mutable {
                        post.push(format!("*{name}"));
                    }
                    call_args.push(name);
                }
                Role::Value(k) => {
                    let v = inp.get(k).cloned().unwrap_or(Value::None);
                    let p = &sig.params[k];
                    let name = format!("cc_a{ri}");
                    match &p.ty {
                        Ty::Str => {
                            let text = match &v {
                                Value::Str(t) => t.clone(),
                                Value::Char(c) => {
                                    char::from_u32(*c).map(String::from).unwrap_or_default()
                                }
                                _ => String::new(),
                            };
                            if cpp && clean_type(&raw.decl).contains("string") {
                                let _ = writeln!(
                                    s,
                                    "    std::string {name}({}, {});",
                                    c_str(&text),
                                    text.len()
                                );
                            } else {
                                // On the heap at its exact size: AddressSanitizer reports a
                                // read or write past it (a stack neighbour would be read
                                // silently).
                                let lit = c_str(&text);
                                match declared_size(&raw.decl) {
                                    // A buffer of declared size (`char word[UNLEN + 1]`): at
                                    // least that many bytes, the rest zero.
                                    Some(size) => {
                                        let _ = writeln!(
                                            s,
                                            "    char *{name} = (char *)cc_heap_at_least({lit}, sizeof({lit}), (size_t)({size}));"
                                        );
                                    }
                                    None => {
                                        let _ = writeln!(
                                            s,
                                            "    char *{name} = (char *)cc_heap({lit}, sizeof({lit}));"
                                        );
                                    }
                                }
                            }
                            if p.mutable {
                                post.push(name.clone());
                            }
                            call_args.push(name);
                        }
                        Ty::List(e) => {
                            let items = match &v {
                                Value::List(items) => items.clone(),
                                _ => Vec::new(),
                            };
                            let cleaned = clean_type(&raw.decl);
                            if **e == Ty::Str {
                                // `char **` / `char *[]` (NULL-terminated, as `argv` is) or
                                // `std::vector<std::string>`; read, not reported back.
                                let texts: Vec<String> = items
                                    .iter()
                                    .map(|v| match v {
                                        Value::Str(t) => c_str(t),
                                        _ => c_str(""),
                                    })
                                    .collect();
                                if cleaned.contains("vector") {
                                    let _ = writeln!(
                                        s,
                                        "    std::vector<std::string> {name} = {{{}}};",
                                        texts.join(", ")
                                    );
                                } else {
                                    for (j, t) in texts.iter().enumerate() {
                                        let _ = writeln!(s, "    char {name}_{j}[] = {t};");
                                    }
                                    let ptrs: Vec<String> =
                                        (0..texts.len()).map(|j| format!("{name}_{j}")).collect();
                                    let _ = writeln!(
                                        s,
                                        "    char *{name}[] = {{{}}};",
                                        ptrs.iter()
                                            .map(String::as_str)
                                            .chain(["NULL"])
                                            .collect::<Vec<_>>()
                                            .join(", ")
                                    );
                                }
                                call_args.push(name);
                                continue;
                            }
                            if matches!(**e, Ty::List(_) | Ty::Unknown) {
                                return Err("C/C++ lists of lists are not supported".into());
                            }
                            if let Ty::Object(o) = &**e {
                                // An array of structs, on the heap at its exact length.
                                let inner = strip_const(
                                    cleaned.trim_end_matches('*').trim_end_matches("[]"),
                                );
                                let inits: Vec<String> =
                                    items.iter().map(|x| c_struct_init(x, o)).collect();
                                let _ = writeln!(
                                    s,
                                    "    {inner} {name}_init[{}] = {{{}}};\n    {inner} *{name} = ({inner} *)cc_heap({name}_init, {} * sizeof({inner}));",
                                    items.len().max(1),
                                    if inits.is_empty() { "{0}".to_string() } else { inits.join(", ") },
                                    items.len()
                                );
                                if p.mutable {
                                    let k = structs
                                        .iter()
                                        .position(|x| x.class == o.class)
                                        .unwrap_or(0);
                                    post.push(format!(
                                        "cc_enc_st_list{k}({name}, {})",
                                        items.len()
                                    ));
                                }
                                call_args.push(name);
                                continue;
                            }
                            let lits: Vec<String> = items.iter().map(c_scalar).collect();
                            if cleaned.contains("vector") {
                                let inner = cleaned
                                    .split_once('<')
                                    .map(|(_, r)| r.trim_end_matches('>'))
                                    .unwrap_or("int")
                                    .trim_end_matches('&')
                                    .trim_end_matches('>');
                                let casted: Vec<String> =
                                    lits.iter().map(|l| format!("({inner})({l})")).collect();
                                let _ = writeln!(
                                    s,
                                    "    std::vector<{inner}> {name} = {{{}}};",
                                    casted.join(", ")
                                );
                                if p.mutable {
                                    post.push(name.clone());
                                }
                            } else {
                                let inner = strip_const(
                                    cleaned.trim_end_matches('*').trim_end_matches("[]"),
                                );
                                let casted: Vec<String> =
                                    lits.iter().map(|l| format!("({inner})({l})")).collect();
                                // Copied to the heap at its exact length (see strings).
                                let _ = writeln!(
                                    s,
                                    "    {inner} {name}_init[{}] = {{{}}};\n    {inner} *{name} = ({inner} *)cc_heap({name}_init, {} * sizeof({inner}));",
                                    items.len().max(1),
                                    if casted.is_empty() {
                                        "0".to_string()
                                    } else {
                                        casted.join(", ")
                                    },
                                    items.len()
                                );
                                if p.mutable {
                                    post.push(format!("CC_LIST({name}, {})", items.len()));
                                }
                            }
                            call_args.push(name);
                        }
                        Ty::Object(o) => {
                            let _ = writeln!(s, "    {decl} {name} = {};", c_struct_init(&v, o));
                            call_args.push(name);
                        }
                        _ => {
                            let _ = writeln!(s, "    {decl} {name} = ({decl})({});", c_scalar(&v));
                            call_args.push(name);
                        }
                    }
                }
            }
        }
        // Values past the parameters set the globals some function assigns, in order (see
        // `exec::equiv::differential`): state the call starts from.
        if let Some(values) = inp.get(sig.params.len()..) {
            for (g, v) in sig.globals.iter().filter(|g| g.assigned).zip(values) {
                match v {
                    Value::List(items) if g.array => {
                        for (j, item) in items.iter().enumerate() {
                            let _ = writeln!(
                                s,
                                "    if ({j}u < sizeof({0}) / sizeof({0}[0])) {0}[{j}] = (__typeof__({0}[0]))({1});",
                                g.name,
                                c_scalar(item)
                            );
                        }
                    }
                    v if !g.array => {
                        let _ =
                            writeln!(s, "    {0} = (__typeof__({0}))({1});", g.name, c_scalar(v));
                    }
                    _ => {}
                }
            }
        }
        let callee = match (&sig.class, cpp) {
            (Some(class), true) if sig.is_static => format!("{class}::{}", sig.name),
            (Some(class), true) => {
                let _ = writeln!(s, "    {class} cc_obj;");
                format!("cc_obj.{}", sig.name)
            }
            // The user's `main` was renamed above; calling `main` would re-enter the harness
            // (which forks per input: a fork bomb).
            _ if sig.name == "main" => "crosscheck_user_main".to_string(),
            _ => sig.name.clone(),
        };
        let call = format!("{callee}({})", call_args.join(", "));
        let void = clean_type(&sig.ret_decl) == "void";
        // What the call prints lies between this line and its result line.
        let _ = writeln!(
            s,
            "    printf(\"\\n\" CC_MARK \"{{\\\"i\\\":%d,\\\"begin\\\":true}}\\n\", cc_i);"
        );
        if void {
            let _ = writeln!(s, "    {call};");
            let _ = writeln!(s, "    printf(\"\\n\" CC_MARK \"{{\\\"i\\\":%d,\\\"r\\\":[\\\"n\\\"],\\\"a\\\":[\", cc_i);");
        } else {
            let ret = if cpp {
                "auto".to_string()
            } else {
                strip_const(&sig.ret_decl).replace("static ", "")
            };
            let ret = if ret.trim().is_empty() {
                "int".to_string()
            } else {
                ret
            };
            let _ = writeln!(s, "    {ret} cc_r = {call};");
            let _ = writeln!(
                s,
                "    printf(\"\\n\" CC_MARK \"{{\\\"i\\\":%d,\\\"r\\\":\", cc_i);"
            );
            let _ = writeln!(s, "    {};", enc_call(&sig.ret, "cc_r", &structs));
            s.push_str("    printf(\",\\\"a\\\":[\");\n");
        }
        for (j, p) in post.iter().enumerate() {
            if j > 0 {
                s.push_str("    printf(\",\");\n");
            }
            if p.starts_with("CC_LIST") || p.starts_with("cc_enc_") {
                let _ = writeln!(s, "    {p};");
            } else {
                let _ = writeln!(s, "    CC_ENC({p});");
            }
        }
        // The state after the call: no receiver, the globals, the printed text (filled in
        // by the reader, [`printed_by_case`]).
        s.push_str("    printf(\"],\\\"o\\\":[\\\"l\\\",[[\\\"n\\\"],[\\\"l\\\",[\");\n");
        for (j, g) in sig.globals.iter().enumerate() {
            if j > 0 {
                s.push_str("    printf(\",\");\n");
            }
            if g.array {
                // At most the first 1,024 elements of a large table.
                let _ = writeln!(
                    s,
                    "    CC_LIST({0}, sizeof({0}) / sizeof({0}[0]) > 1024 ? 1024 : sizeof({0}) / sizeof({0}[0]));",
                    g.name
                );
            } else {
                let _ = writeln!(s, "    CC_ENC({});", g.name);
            }
        }
        s.push_str("    printf(\"]],[\\\"s\\\",\\\"\\\"]]]}\\n\");\n    break;\n  }\n");
    }
    s.push_str("  default: break;\n  }\n}\n");
    let _ = writeln!(s, "#define CC_N {}", inputs.len());
    let _ = writeln!(s, "#define CC_LIMIT {INPUT_SECONDS}");
    s.push_str(C_DRIVER);
    Ok(s)
}

/// The size a C array parameter declares (`char [UNLEN + 1]` -> `UNLEN + 1`), as C text the
/// harness compiles beside the file's macros; `None` for a pointer or `[]`.
fn declared_size(decl: &str) -> Option<&str> {
    let (_, rest) = decl.split_once('[')?;
    let size = rest.trim_end().strip_suffix(']')?.trim();
    (!size.is_empty() && !size.contains(['[', ']', ';', '{', '}'])).then_some(size)
}

/// The value fields of a linked list's nodes (the logical parameter's element type).
fn chain_values(t: &Ty) -> Option<&ObjectTy> {
    match t {
        Ty::List(e) => match &**e {
            Ty::Object(o) => Some(o),
            _ => None,
        },
        _ => None,
    }
}

/// The node type a linked-list parameter points to, as declared (`struct charac **` ->
/// `struct charac`).
fn chain_node(decl: &str) -> String {
    strip_const(decl)
        .trim_end()
        .trim_end_matches(['*', ' '])
        .trim()
        .to_string()
}

/// The struct types of `t` (nested ones first), each once.
fn collect_structs(t: &Ty, out: &mut Vec<ObjectTy>) {
    if let Ty::List(e) = t {
        return collect_structs(e, out);
    }
    if let Ty::Object(o) = t {
        if o.fields.is_empty() || out.iter().any(|x| x.class == o.class) {
            return;
        }
        for (f, _) in o.ctors.first().into_iter().flatten() {
            collect_structs(f, out);
        }
        out.push((**o).clone());
    }
}

/// The C statement that encodes `expr` of type `t` (a struct through its encoder).
fn enc_call(t: &Ty, expr: &str, structs: &[ObjectTy]) -> String {
    match t {
        Ty::Object(o) => match structs.iter().position(|x| x.class == o.class) {
            Some(k) => format!("cc_enc_st{k}({expr})"),
            None => format!("CC_ENC({expr})"),
        },
        _ => format!("CC_ENC({expr})"),
    }
}

/// A C initialiser for a struct value, fields in declaration order (`{1.5f, {0, 2}}`).
fn c_struct_init(v: &Value, o: &ObjectTy) -> String {
    let tys = o.ctors.first().cloned().unwrap_or_default();
    let args: Vec<Value> = match v {
        Value::Object { args, .. } => args.clone(),
        _ => Vec::new(),
    };
    let parts: Vec<String> = tys
        .iter()
        .enumerate()
        .map(|(j, (t, decl))| {
            let a = args.get(j).cloned().unwrap_or(Value::None);
            match t {
                Ty::Object(inner) => c_struct_init(&a, inner),
                _ => format!("({})({})", strip_const(decl), c_scalar(&a)),
            }
        })
        .collect();
    format!("{{{}}}", parts.join(", "))
}

const C_COMMON: &str = r#"
static void *cc_heap(const void *src, size_t n) { void *p = malloc(n ? n : 1); if (p && n) memcpy(p, src, n); return p; }
static void *cc_heap_at_least(const void *src, size_t n, size_t m) { void *p = calloc(n > m ? n : m, 1); if (p && n) memcpy(p, src, n); return p; }
static double cc_d(unsigned long long bits) { double d; memcpy(&d, &bits, sizeof d); return d; }
static void cc_enc_i(long long v) { printf("[\"i\",\"%lld\"]", v); }
static void cc_enc_u(unsigned long long v) { printf("[\"i\",\"%llu\"]", v); }
static void cc_enc_d(double v) { long long b; memcpy(&b, &v, sizeof b); printf("[\"d\",\"%lld\"]", b); }
static void cc_enc_b(int v) { printf("[\"b\",%s]", v ? "true" : "false"); }
static void cc_enc_c(int v) { printf("[\"c\",%d]", (int)(unsigned char)v); }
static void cc_enc_s(const char *s) {
  if (!s) { printf("[\"n\"]"); return; }
  printf("[\"s\",\"");
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') printf("\\%c", c);
    else if (c < 0x20) printf("\\u%04x", c);
    else putchar(c);
  }
  printf("\"]");
}
"#;

const C_PRELUDE: &str = r#"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <limits.h>
"#;

const CPP_PRELUDE: &str = r#"
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstddef>
#include <cstdint>
#include <cmath>
#include <climits>
#include <algorithm>
#include <string>
#include <vector>
#include <type_traits>
#include <typeinfo>
#include <exception>
#define CC_CPP 1
"#;

const C_ENC: &str = r#"
static void cc_enc_o(const void *p) { (void)p; printf("[\"o\",\"pointer\"]"); }
#ifdef CC_CPP
template <typename T> static void cc_enc(const T &v);
static void cc_enc(const std::string &s) { cc_enc_s(s.c_str()); }
static void cc_enc(const char *s) { cc_enc_s(s); }
static void cc_enc(char *s) { cc_enc_s(s); }
template <typename T> static void cc_enc(const std::vector<T> &v) {
  printf("[\"l\",[");
  for (size_t i = 0; i < v.size(); i++) { if (i) printf(","); cc_enc(v[i]); }
  printf("]]");
}
template <typename T> static void cc_enc(const T &v) {
  if constexpr (std::is_same<T, bool>::value) cc_enc_b(v);
  else if constexpr (std::is_same<T, char>::value) cc_enc_c(v);
  else if constexpr (std::is_integral<T>::value && std::is_signed<T>::value) cc_enc_i((long long)v);
  else if constexpr (std::is_integral<T>::value) cc_enc_u((unsigned long long)v);
  else if constexpr (std::is_floating_point<T>::value) cc_enc_d((double)v);
  else if constexpr (std::is_pointer<T>::value) cc_enc_o((const void *)v);
  else printf("[\"o\",\"value\"]");
}
#define CC_ENC(x) cc_enc(x)
#else
#define CC_ENC(x) _Generic((x), _Bool: cc_enc_b, char: cc_enc_c, signed char: cc_enc_i, \
  unsigned char: cc_enc_u, short: cc_enc_i, unsigned short: cc_enc_u, int: cc_enc_i, \
  unsigned int: cc_enc_u, long: cc_enc_i, unsigned long: cc_enc_u, long long: cc_enc_i, \
  unsigned long long: cc_enc_u, float: cc_enc_d, double: cc_enc_d, long double: cc_enc_d, \
  char *: cc_enc_s, const char *: cc_enc_s, default: cc_enc_o)(x)
#endif
#define CC_LIST(a, n) do { printf("[\"l\",["); for (size_t cc_k = 0; cc_k < (size_t)(n); cc_k++) { \
  if (cc_k) printf(","); CC_ENC((a)[cc_k]); } printf("]]"); } while (0)
"#;

const C_DRIVER: &str = r#"
#ifdef CC_CPP
extern "C" {
#endif
extern int fork(void);
extern int waitpid(int, int *, int);
extern int kill(int, int);
extern int usleep(unsigned);
extern unsigned alarm(unsigned);
extern void _exit(int);
/* A failed `assert` (glibc's macro calls __assert_fail): an outcome of its own that both
   sides can share or not, not a crash taken for undefined behaviour. */
void __assert_fail(const char *cc_a, const char *cc_f, unsigned int cc_l, const char *cc_fn)
#ifdef CC_CPP
  noexcept
#endif
{
  (void)cc_a; (void)cc_f; (void)cc_l; (void)cc_fn;
  fflush(stdout);
  _exit(88);
  for (;;) {}
}
#ifdef CC_CPP
}
#endif
#define CC_SIGALRM 14
#define CC_EXITED(s) (((s) & 0x7f) == 0)
#define CC_EXITSTATUS(s) (((s) >> 8) & 0xff)
#define CC_SIGNALED(s) (((s) & 0x7f) != 0 && ((s) & 0x7f) != 0x7f)
#define CC_TERMSIG(s) ((s) & 0x7f)
int main(int argc, char **argv) {
  int start = argc > 1 ? atoi(argv[1]) : 0;
  int limit = argc > 2 ? atoi(argv[2]) : CC_LIMIT;
  long rss_mb = argc > 3 ? atol(argv[3]) : 0;
  for (int i = start; i < CC_N; i++) {
    fflush(stdout);
    int pid = fork();
    if (pid == 0) {
      alarm(limit);
#ifdef CC_CPP
      try { run_case(i); }
      catch (const std::exception &e) { printf("\n" CC_MARK "{\"i\":%d,\"e\":\"%s\"}\n", i, typeid(e).name()); }
      catch (...) { printf("\n" CC_MARK "{\"i\":%d,\"e\":\"unknown\"}\n", i); }
#else
      run_case(i);
#endif
      fflush(stdout);
      _exit(42);
    }
    int st = 0, got = 0;
    /* The child's resident memory, read every millisecond: under AddressSanitizer there is
       no address-space limit, and ASan's own RSS limit runs on a thread a forked child lacks.
       Past the limit the child is killed (signal 9: discarded, never a difference). */
    char cc_statm[64];
    snprintf(cc_statm, sizeof cc_statm, "/proc/%d/statm", pid);
    while (pid > 0 && (got = waitpid(pid, &st, 1 /* WNOHANG */)) == 0) {
      FILE *m = fopen(cc_statm, "r");
      long cc_size = 0, cc_rss = 0;
      if (m) {
        if (fscanf(m, "%ld %ld", &cc_size, &cc_rss) == 2 && rss_mb > 0 && cc_rss / 256 > rss_mb) kill(pid, 9);
        fclose(m);
      }
      usleep(1000);
    }
    if (pid < 0 || got < 0) { printf("\n" CC_MARK "{\"i\":%d,\"x\":\"fork\"}\n", i); continue; }
    if (CC_EXITED(st) && CC_EXITSTATUS(st) == 42) continue;
    if (CC_EXITED(st) && (CC_EXITSTATUS(st) == 86 || CC_EXITSTATUS(st) == 87)) printf("\n" CC_MARK "{\"i\":%d,\"ub\":true}\n", i);
    else if (CC_EXITED(st) && CC_EXITSTATUS(st) == 88) printf("\n" CC_MARK "{\"i\":%d,\"x\":\"assertion failed\"}\n", i);
    else if (CC_SIGNALED(st) && CC_TERMSIG(st) == CC_SIGALRM) printf("\n" CC_MARK "{\"i\":%d,\"t\":true}\n", i);
    else if (CC_SIGNALED(st)) printf("\n" CC_MARK "{\"i\":%d,\"x\":\"signal %d\"}\n", i, CC_TERMSIG(st));
    else printf("\n" CC_MARK "{\"i\":%d,\"x\":\"exit %d\"}\n", i, CC_EXITSTATUS(st));
  }
  printf("\n" CC_MARK "{\"done\":true}\n");
  fflush(stdout);
  return 0;
}
"#;

/// Microsoft C runtime names of standard and POSIX functions, with the glibc function that
/// takes the same arguments in the same order.
const MSVC_NAMES: &[(&str, &str)] = &[
    ("_snprintf", "snprintf"),
    ("_vsnprintf", "vsnprintf"),
    ("_strdup", "strdup"),
    ("_stricmp", "strcasecmp"),
    ("_strnicmp", "strncasecmp"),
    ("_strcmpi", "strcasecmp"),
    ("_fileno", "fileno"),
    ("_isatty", "isatty"),
    ("_unlink", "unlink"),
    ("_access", "access"),
    ("_getcwd", "getcwd"),
    ("_atoi64", "atoll"),
    ("_strtoi64", "strtoll"),
    ("_strtoui64", "strtoull"),
];

/// Compiler flags (`-D_snprintf=snprintf`) that let C or C++ written for Microsoft's C
/// runtime build with gcc: one for each name of [`MSVC_NAMES`] the text calls and never
/// declares or defines itself (every use is a call: no type word or `*` before it on its
/// line, no `#define`). `_snprintf` does not write the final NUL when it truncates, which
/// `snprintf` does; the rest behave alike.
pub fn msvc_compat_flags(text: &str) -> Vec<String> {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = Vec::new();
    'names: for (ms, std) in MSVC_NAMES {
        let mut called = false;
        for (at, _) in text.match_indices(ms) {
            let before = &text[..at];
            let after = &text[at + ms.len()..];
            if before.chars().next_back().is_some_and(ident)
                || after.chars().next().is_some_and(ident)
            {
                continue;
            }
            let line = before.rsplit('\n').next().unwrap_or("").trim_end();
            let declared = line.trim_start().starts_with('#')
                || line.ends_with('*')
                || line
                    .rsplit(|c: char| !ident(c))
                    .next()
                    .is_some_and(|w| !w.is_empty() && !["return", "else", "do"].contains(&w));
            if declared || !after.trim_start().starts_with('(') {
                continue 'names;
            }
            called = true;
        }
        if called {
            out.push(format!("-D{ms}={std}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{declared_size, java_simple_type, msvc_compat_flags};

    #[test]
    fn a_char_buffer_of_declared_size_gets_at_least_that_size() {
        assert_eq!(declared_size("char [UNLEN + 1]"), Some("UNLEN + 1"));
        assert_eq!(declared_size("char[16]"), Some("16"));
        assert_eq!(declared_size("char []"), None);
        assert_eq!(declared_size("char *"), None);
    }

    #[test]
    fn microsoft_runtime_names_build_with_their_glibc_twins_only_where_called() {
        let text = "int f(char *b) {\n    _snprintf(b, 8, \"%d\", 1);\n    return _stricmp(b, \"1\");\n}\n";
        assert_eq!(
            msvc_compat_flags(text),
            vec![
                "-D_snprintf=snprintf".to_string(),
                "-D_stricmp=strcasecmp".to_string()
            ]
        );
        assert!(msvc_compat_flags("int g(void) { return my_snprintf(0); }").is_empty());
        // The file supplies its own: declared, defined, or a macro.
        for own in [
            "int _snprintf(char *b, unsigned n, const char *f, ...);\nvoid h(char *b) { _snprintf(b, 1, \"\"); }",
            "#define _snprintf snprintf\nvoid h(char *b) { _snprintf(b, 1, \"\"); }",
            "char *_strdup(const char *s) { return 0; }\nvoid h(void) { _strdup(\"x\"); }",
        ] {
            assert!(msvc_compat_flags(own).is_empty(), "{own}");
        }
    }

    #[test]
    fn java_parameter_types_are_spelled_as_reflection_does() {
        assert_eq!(java_simple_type("char[]"), "char[]");
        assert_eq!(java_simple_type("final java.util.List<Map<K, V>>"), "List");
        assert_eq!(java_simple_type("int..."), "int[]");
        assert_eq!(java_simple_type("@Nullable Object [] []"), "Object[][]");
        assert_eq!(java_simple_type("Map.Entry<K, V>"), "Entry");
        assert_eq!(java_simple_type("T[]"), "*[]");
        assert_eq!(java_simple_type("E"), "*");
        assert_eq!(java_simple_type("ID"), "ID");
    }
}
