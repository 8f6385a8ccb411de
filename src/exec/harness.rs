//! Harness programs for differential testing: one per side, calling the function under test on
//! every input (embedded as literals) and printing one result line per input, prefixed by
//! [`MARK`] so output printed by the function itself is ignored. A harness takes the index of the
//! first input to run as its only argument, so a run that died can be resumed after the input
//! that killed it. The last line is `{"done":true}`.
//!
//! Per-input time limit: Python raises from an interval timer; Java's watchdog thread prints a
//! timeout line and halts the JVM with exit status [`RESUME_EXIT`] (the runner resumes at the
//! next input); C and C++ run each input in a forked child with `alarm`, and report UBSan's exit
//! status [`UB_EXIT`] as undefined behaviour.

use crate::analysis::equiv::types::{clean_type, Role, Signature, Ty};
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
        Value::None | Value::Other(_) => "None".into(),
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

const PY_PRELUDE: &str = r#"import sys, json, struct, copy, signal
sys.setrecursionlimit(5000)
def _d(bits):
    return struct.unpack('<d', struct.pack('<q', bits))[0]
"#;

const PY_MAIN: &str = r#"
class _Timeout(BaseException):
    pass
def _alarm(signum, frame):
    raise _Timeout()
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
        return ["s", v]
    if isinstance(v, (list, tuple)):
        return ["l", [enc(x, depth + 1) for x in v]]
    return ["o", type(v).__name__ + ":" + repr(v)[:200]]
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
    for i in range(start, len(INPUTS)):
        args = copy.deepcopy(INPUTS[i])
        try:
            signal.setitimer(signal.ITIMER_REAL, LIMIT)
            try:
                r = fn(*args)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            line = {"i": i, "r": enc(r), "a": [enc(args[j]) for j in MUTABLE]}
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
        (Value::Int(i), _) => format!("({i})"),
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
/// static and instance methods alike; instances from the no-argument constructor).
pub fn java(sig: &Signature, class_name: &str, inputs: &[Vec<Value>]) -> String {
    let mut s = String::new();
    s.push_str("public class CcHarness {\n");
    let _ = writeln!(s, "  static final String MARK = {};", java_str(MARK));
    let _ = writeln!(s, "  static final int N = {};", inputs.len());
    let _ = writeln!(s, "  static final int K = {};", sig.params.len());
    let mutable: Vec<String> = sig
        .params
        .iter()
        .enumerate()
        .filter(|(_, p)| p.mutable)
        .map(|(i, _)| i.to_string())
        .collect();
    let _ = writeln!(
        s,
        "  static final int[] MUTABLE = {{{}}};",
        mutable.join(", ")
    );
    let _ = writeln!(s, "  static final String CLASS = {};", java_str(class_name));
    let _ = writeln!(s, "  static final String NAME = {};", java_str(&sig.name));
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
            let args: Vec<String> = inp
                .iter()
                .zip(&sig.params)
                .zip(&sig.raw)
                .map(|((v, p), r)| java_boxed(v, &p.ty, &r.decl))
                .collect();
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
  static volatile long startedAt = 0;
  static final Object LOCK = new Object();
  static void esc(StringBuilder b, String s) {
    b.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '"' || c == '\\') { b.append('\\').append(c); }
      else if (c < 0x20 || c > 0x7e) { b.append(String.format("\\u%04x", (int) c)); }
      else { b.append(c); }
    }
    b.append('"');
  }
  static void enc(StringBuilder b, Object o, int depth) {
    if (depth > 50) { b.append("[\"o\",\"deep\"]"); return; }
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
    } else { b.append("[\"o\","); String t = String.valueOf(o); esc(b, o.getClass().getName() + ":" + (t.length() > 200 ? t.substring(0, 200) : t)); b.append("]"); }
  }
  static void emit(String s) {
    synchronized (LOCK) { System.out.print("\n" + MARK + s + "\n"); System.out.flush(); }
  }
  public static void main(String[] argv) throws Exception {
    int start = argv.length > 0 ? Integer.parseInt(argv[0]) : 0;
    java.lang.reflect.Method m = null;
    Object inst = null;
    try {
      Class<?> c = Class.forName(CLASS);
      for (java.lang.reflect.Method x : c.getDeclaredMethods()) {
        if (x.getName().equals(NAME) && x.getParameterCount() == K) { m = x; }
      }
      if (m == null) { emit("{\"load_error\":\"no method\"}"); System.exit(0); }
      m.setAccessible(true);
      if (!java.lang.reflect.Modifier.isStatic(m.getModifiers())) {
        java.lang.reflect.Constructor<?> k = c.getDeclaredConstructor();
        k.setAccessible(true);
        inst = k.newInstance();
      }
    } catch (Throwable t) {
      StringBuilder b = new StringBuilder("{\"load_error\":"); esc(b, t.toString()); b.append("}");
      emit(b.toString()); System.exit(0);
    }
    Thread dog = new Thread(() -> {
      while (true) {
        try { Thread.sleep(50); } catch (InterruptedException e) { return; }
        int cur = current;
        if (cur >= 0 && System.currentTimeMillis() - startedAt > LIMIT_MS) {
          emit("{\"i\":" + cur + ",\"t\":true}");
          Runtime.getRuntime().halt(3);
        }
      }
    });
    dog.setDaemon(true);
    dog.start();
    for (int i = start; i < N; i++) {
      Object[] args = input(i);
      StringBuilder b = new StringBuilder();
      startedAt = System.currentTimeMillis();
      current = i;
      try {
        Object r = m.invoke(inst, args);
        current = -1;
        b.append("{\"i\":").append(i).append(",\"r\":");
        enc(b, r, 0);
        b.append(",\"a\":[");
        for (int j = 0; j < MUTABLE.length; j++) { if (j > 0) b.append(','); enc(b, args[MUTABLE[j]], 0); }
        b.append("]}");
      } catch (java.lang.reflect.InvocationTargetException e) {
        current = -1;
        Throwable cause = e.getCause() == null ? e : e.getCause();
        b.setLength(0);
        b.append("{\"i\":").append(i).append(",\"e\":"); esc(b, cause.getClass().getName()); b.append("}");
      } catch (Throwable e) {
        current = -1;
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
                                let _ = writeln!(s, "    char {name}[] = {};", c_str(&text));
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
                                let _ = writeln!(
                                    s,
                                    "    {inner} {name}[{}] = {{{}}};",
                                    items.len().max(1),
                                    if casted.is_empty() {
                                        "0".to_string()
                                    } else {
                                        casted.join(", ")
                                    }
                                );
                                if p.mutable {
                                    post.push(format!("CC_LIST({name}, {})", items.len()));
                                }
                            }
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
            let _ = writeln!(s, "    CC_ENC(cc_r);");
            s.push_str("    printf(\",\\\"a\\\":[\");\n");
        }
        for (j, p) in post.iter().enumerate() {
            if j > 0 {
                s.push_str("    printf(\",\");\n");
            }
            if p.starts_with("CC_LIST") {
                let _ = writeln!(s, "    {p};");
            } else {
                let _ = writeln!(s, "    CC_ENC({p});");
            }
        }
        s.push_str("    printf(\"]}\\n\");\n    break;\n  }\n");
    }
    s.push_str("  default: break;\n  }\n}\n");
    let _ = writeln!(s, "#define CC_N {}", inputs.len());
    let _ = writeln!(s, "#define CC_LIMIT {INPUT_SECONDS}");
    s.push_str(C_DRIVER);
    Ok(s)
}

const C_COMMON: &str = r#"
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
extern unsigned alarm(unsigned);
extern void _exit(int);
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
  for (int i = start; i < CC_N; i++) {
    fflush(stdout);
    int pid = fork();
    if (pid == 0) {
      alarm(CC_LIMIT);
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
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) < 0) { printf("\n" CC_MARK "{\"i\":%d,\"x\":\"fork\"}\n", i); continue; }
    if (CC_EXITED(st) && CC_EXITSTATUS(st) == 42) continue;
    if (CC_EXITED(st) && CC_EXITSTATUS(st) == 86) printf("\n" CC_MARK "{\"i\":%d,\"ub\":true}\n", i);
    else if (CC_SIGNALED(st) && CC_TERMSIG(st) == CC_SIGALRM) printf("\n" CC_MARK "{\"i\":%d,\"t\":true}\n", i);
    else if (CC_SIGNALED(st)) printf("\n" CC_MARK "{\"i\":%d,\"x\":\"signal %d\"}\n", i, CC_TERMSIG(st));
    else printf("\n" CC_MARK "{\"i\":%d,\"x\":\"exit %d\"}\n", i, CC_EXITSTATUS(st));
  }
  printf("\n" CC_MARK "{\"done\":true}\n");
  fflush(stdout);
  return 0;
}
"#;
