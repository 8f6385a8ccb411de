//! Input generation for differential testing: boundary values first, then seeded random values.
//! Pure and deterministic: the same domains, count and seed give the same inputs.
//!
//! Order: (1) every parameter at each of its boundary values while the others sit at a small
//! default (round-robin over the parameters, at most half of the tuples); (2) the cartesian
//! product of the small "interesting" values of all parameters (up to three quarters);
//! (3) random values (ChaCha8 seeded with `seed`), mostly small magnitudes (loops bounded by an
//! argument stay fast) and sometimes anywhere in the domain; in a third of these tuples
//! parameters of one domain repeat each other's values (a repeating block of parameters
//! copied whole, or single parameters). Duplicates are dropped.

use super::types::{Charset, Dom};
use super::value::Value;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeSet;

/// Boundary values of a domain, most interesting first.
pub fn boundary(dom: &Dom) -> Vec<Value> {
    match dom {
        Dom::Int { lo, hi } => {
            let mut v: Vec<i128> = vec![0, 1, -1, 2, -2, 3, -3, 7, -7, 10, -10, 5, 100, -100];
            for b in [8, 16, 31, 32, 63] {
                let p = 1i128 << b;
                v.extend([p - 1, p, -p, -p + 1]);
            }
            v.extend([*lo, *hi, lo.saturating_add(1), hi.saturating_sub(1)]);
            let mut seen = BTreeSet::new();
            v.into_iter()
                .filter(|x| lo <= x && x <= hi && seen.insert(*x))
                .map(Value::Int)
                .collect()
        }
        Dom::Float { single } => {
            let mut v = vec![
                0.0,
                -0.0,
                1.0,
                -1.0,
                2.5,
                -2.5,
                0.5,
                -0.5,
                1.5,
                -1.5,
                3.0,
                -3.0,
                0.1,
                100.0,
                -100.0,
                f64::NAN,
                f64::INFINITY,
                f64::NEG_INFINITY,
                1e-300,
                -1e-300,
            ];
            if *single {
                v.extend([
                    f64::from(f32::MAX),
                    f64::from(f32::MIN_POSITIVE),
                    f64::from(f32::MIN),
                ]);
                v = v.into_iter().map(|x| f64::from(x as f32)).collect();
            } else {
                v.extend([f64::MAX, f64::MIN_POSITIVE, f64::MIN, 5e-324]);
            }
            dedup_floats(v).into_iter().map(Value::Float).collect()
        }
        Dom::Bool => vec![Value::Bool(false), Value::Bool(true)],
        Dom::Char { charset } => {
            let mut v = vec!['a', 'Z', '0', ' ', 'z', 'A', '9', '.', '\n'];
            if *charset >= Charset::Bmp {
                v.extend(['é', 'ß', 'Ω']);
            }
            v.into_iter().map(|c| Value::Char(u32::from(c))).collect()
        }
        Dom::Str { charset } => {
            let mut v: Vec<&str> = vec![
                "",
                "a",
                "ab",
                "aa",
                "abc",
                "aba",
                "Hello World",
                "  x  ",
                "racecar",
                "aAbB",
                "123",
                "-5",
                "a,b,,c",
                "AbcD",
                "zz",
                "ba",
                "hello",
                "a b c",
                "0",
            ];
            if *charset >= Charset::Bmp {
                v.extend(["héllo", "ÀÉÎ", "日本語", "straße"]);
            }
            if *charset >= Charset::Full {
                v.extend(["😀", "a😀b"]);
            }
            v.into_iter().map(|s| Value::Str(s.to_string())).collect()
        }
        Dom::List(elem) => {
            let e = boundary(elem);
            let pick = |i: usize| e.get(i).cloned().unwrap_or(Value::Int(0));
            let mut out = vec![
                Value::List(vec![]),
                Value::List(vec![pick(0)]),
                Value::List(vec![pick(1)]),
                Value::List(vec![pick(2)]),
                Value::List(vec![pick(1), pick(3), pick(5)]),
                Value::List(vec![pick(5), pick(3), pick(1)]),
                Value::List(vec![pick(3), pick(3), pick(3)]),
                Value::List(vec![pick(1), pick(1), pick(3), pick(3), pick(5)]),
                Value::List(vec![pick(7), pick(4), pick(0), pick(7), pick(4), pick(2)]),
                Value::List(vec![pick(2), pick(4), pick(6), pick(8)]),
            ];
            if let Some(last) = e.last() {
                out.push(Value::List(vec![last.clone(), pick(1)]));
            }
            out
        }
        Dom::Object(ctors) => {
            // Each constructor with plain arguments, then one argument at a time through a
            // few of its small values.
            let mut out: Vec<Value> = Vec::new();
            let defaults: Vec<Vec<Value>> = ctors
                .iter()
                .map(|ps| ps.iter().map(default_value).collect())
                .collect();
            for (k, d) in defaults.iter().enumerate() {
                out.push(Value::Object {
                    ctor: k,
                    args: d.clone(),
                });
            }
            for (k, ps) in ctors.iter().enumerate() {
                for (i, p) in ps.iter().enumerate() {
                    for v in small(p).into_iter().take(4) {
                        let mut args = defaults[k].clone();
                        args[i] = v;
                        let o = Value::Object { ctor: k, args };
                        if !out.contains(&o) {
                            out.push(o);
                        }
                    }
                }
            }
            out.truncate(OBJECT_BOUNDARY);
            out
        }
    }
}

/// At most this many boundary objects per object parameter.
const OBJECT_BOUNDARY: usize = 24;

fn dedup_floats(v: Vec<f64>) -> Vec<f64> {
    let mut seen = BTreeSet::new();
    v.into_iter().filter(|x| seen.insert(x.to_bits())).collect()
}

/// The few small values used for combinations.
fn small(dom: &Dom) -> Vec<Value> {
    let b = boundary(dom);
    let n = match dom {
        Dom::Int { .. } => 7,
        Dom::Float { .. } => 6,
        Dom::Bool => 2,
        Dom::Char { .. } => 3,
        Dom::Str { .. } => 5,
        Dom::List(_) => 5,
        Dom::Object(_) => 5,
    };
    b.into_iter().take(n).collect()
}

/// A plain value of the domain (what a parameter gets while others vary).
pub fn default_value(dom: &Dom) -> Value {
    match dom {
        Dom::Int { lo, hi } => Value::Int(if *lo <= 1 && 1 <= *hi { 1 } else { *lo }),
        Dom::Float { .. } => Value::Float(1.0),
        Dom::Bool => Value::Bool(true),
        Dom::Char { .. } => Value::Char(u32::from('a')),
        Dom::Str { .. } => Value::Str("abc".into()),
        Dom::List(e) => Value::List(vec![default_value(e), default_value(e)]),
        Dom::Object(ctors) => Value::Object {
            ctor: 0,
            args: ctors
                .first()
                .map(|ps| ps.iter().map(default_value).collect())
                .unwrap_or_default(),
        },
    }
}

/// A uniformly random number in `0..n` (n > 0).
fn below(rng: &mut ChaCha8Rng, n: u64) -> u64 {
    if n == 0 {
        0
    } else {
        rng.next_u64() % n
    }
}

fn random_int(rng: &mut ChaCha8Rng, lo: i128, hi: i128) -> i128 {
    let (lo2, hi2) = match below(rng, 10) {
        0..=6 => (lo.max(-20), hi.min(20)),
        7 | 8 => (lo.max(-1000), hi.min(1000)),
        _ => (lo, hi),
    };
    let (lo2, hi2) = if lo2 > hi2 { (lo, hi) } else { (lo2, hi2) };
    let span = (hi2 - lo2).unsigned_abs();
    let r = (u128::from(rng.next_u64()) << 64) | u128::from(rng.next_u64());
    let off = if span == u128::MAX { r } else { r % (span + 1) };
    lo2.saturating_add(off as i128).min(hi2)
}

fn random_char(rng: &mut ChaCha8Rng, charset: Charset) -> char {
    const ASCII: &[char] = &['a', 'b', 'c', 'A', 'B', ' ', '1', '0', '.', 'x', 'z', '-'];
    const MORE: &[char] = &['é', 'ü', 'Ω', '中'];
    // Beyond the BMP: two UTF-16 units in Java (surrogate pairs), four UTF-8 bytes in C.
    const SUPPLEMENTARY: &[char] = &['😀', '𝄞', '𐐷'];
    if charset >= Charset::Full && below(rng, 12) == 0 {
        SUPPLEMENTARY[below(rng, SUPPLEMENTARY.len() as u64) as usize]
    } else if charset >= Charset::Bmp && below(rng, 8) == 0 {
        MORE[below(rng, MORE.len() as u64) as usize]
    } else {
        ASCII[below(rng, ASCII.len() as u64) as usize]
    }
}

/// One random value of a domain.
pub fn random(dom: &Dom, rng: &mut ChaCha8Rng) -> Value {
    match dom {
        Dom::Int { lo, hi } => Value::Int(random_int(rng, *lo, *hi)),
        Dom::Float { single } => {
            let x = match below(rng, 4) {
                0 => random_int(rng, -20, 20) as f64,
                1 => (random_int(rng, -2000, 2000) as f64) / 4.0,
                2 => (below(rng, 1 << 53) as f64 / (1u64 << 53) as f64 - 0.5) * 200.0,
                _ => (below(rng, 1 << 53) as f64 / (1u64 << 53) as f64 - 0.5) * 2e6,
            };
            Value::Float(if *single { f64::from(x as f32) } else { x })
        }
        Dom::Bool => Value::Bool(below(rng, 2) == 1),
        Dom::Char { charset } => Value::Char(u32::from(random_char(rng, *charset))),
        Dom::Str { charset } => {
            let len = below(rng, 9) as usize;
            Value::Str((0..len).map(|_| random_char(rng, *charset)).collect())
        }
        Dom::List(elem) => {
            let len = below(rng, 8) as usize;
            // Draw from a small pool so duplicates are common.
            let pool: Vec<Value> = (0..3).map(|_| random(elem, rng)).collect();
            Value::List(
                (0..len)
                    .map(|_| {
                        if below(rng, 2) == 0 {
                            pool[below(rng, pool.len() as u64) as usize].clone()
                        } else {
                            random(elem, rng)
                        }
                    })
                    .collect(),
            )
        }
        Dom::Object(ctors) => {
            let ctor = below(rng, ctors.len() as u64) as usize;
            Value::Object {
                ctor,
                args: ctors
                    .get(ctor)
                    .map(|ps| ps.iter().map(|p| random(p, rng)).collect())
                    .unwrap_or_default(),
            }
        }
    }
}

/// Integer constants of the compared code, which random integers favour: a comparison with
/// a constant (`alt > 600`) or a remainder by one (`year % 400`) changes at or near it, where
/// values drawn at random seldom fall.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hints {
    /// Integer literals (in either side's text).
    pub ints: Vec<i128>,
    /// Literals that are the right operand of `%` or `/`: their multiples are favoured too.
    pub divisors: Vec<i128>,
    /// Short string literals (`"admin"`, `'#'`): strings equal to, starting or ending with
    /// one are favoured, and characters of them.
    pub strs: Vec<String>,
}

impl Hints {
    /// The integer literals of source texts (any of the supported languages), read as
    /// tokens: digits not inside a name or a decimal, at most 200 distinct values of
    /// magnitude up to 10^9.
    pub fn from_texts(texts: &[&str]) -> Hints {
        let mut ints = BTreeSet::new();
        let mut divisors = BTreeSet::new();
        for text in texts {
            let b = text.as_bytes();
            let mut i = 0;
            while i < b.len() && ints.len() < 200 {
                if !b[i].is_ascii_digit() {
                    i += 1;
                    continue;
                }
                let start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                let prev = start.checked_sub(1).map(|p| b[p]);
                let next = b.get(i).copied();
                if prev.is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'.')
                    || next == Some(b'.')
                {
                    continue;
                }
                let tok = text[start..i].trim_end_matches(['u', 'U', 'l', 'L']);
                let v = if let Some(h) = tok.strip_prefix("0x").or_else(|| tok.strip_prefix("0X")) {
                    i128::from_str_radix(h, 16).ok()
                } else {
                    tok.replace('_', "").parse::<i128>().ok()
                };
                let Some(v) = v.filter(|v| v.abs() <= 1_000_000_000) else {
                    continue;
                };
                ints.insert(v);
                let before = text[..start].trim_end();
                if v >= 2
                    && (before.ends_with('%') || before.ends_with('/'))
                    && !before.ends_with("//")
                {
                    divisors.insert(v);
                }
            }
        }
        Hints {
            ints: ints.into_iter().collect(),
            divisors: divisors.into_iter().collect(),
            strs: string_literals(texts),
        }
    }

    fn is_empty(&self) -> bool {
        self.ints.is_empty() && self.divisors.is_empty() && self.strs.is_empty()
    }

    /// A string built from a literal that `charset` allows: the literal, or it with a
    /// character before or after.
    fn pick_str(&self, rng: &mut ChaCha8Rng, charset: Charset) -> Option<String> {
        let fit: Vec<&String> = self
            .strs
            .iter()
            .filter(|s| charset != Charset::Ascii || s.is_ascii())
            .collect();
        if fit.is_empty() {
            return None;
        }
        let lit = fit[below(rng, fit.len() as u64) as usize].clone();
        Some(match below(rng, 4) {
            0 => format!("{}{lit}", random_char(rng, charset)),
            1 => format!("{lit}{}", random_char(rng, charset)),
            _ => lit,
        })
    }

    /// A character of the string literals that `charset` allows.
    fn pick_char(&self, rng: &mut ChaCha8Rng, charset: Charset) -> Option<char> {
        let chars: Vec<char> = self
            .strs
            .iter()
            .flat_map(|s| s.chars())
            .filter(|c| charset != Charset::Ascii || c.is_ascii())
            .collect();
        (!chars.is_empty()).then(|| chars[below(rng, chars.len() as u64) as usize])
    }

    /// An integer near a constant (or a multiple of a divisor) inside `lo..=hi`.
    fn pick(&self, rng: &mut ChaCha8Rng, lo: i128, hi: i128) -> Option<i128> {
        let v = if !self.divisors.is_empty() && below(rng, 3) == 0 {
            let d = self.divisors[below(rng, self.divisors.len() as u64) as usize];
            d * (below(rng, 12) as i128 + 1)
        } else if !self.ints.is_empty() {
            let c = self.ints[below(rng, self.ints.len() as u64) as usize];
            let c = if below(rng, 4) == 0 { -c } else { c };
            c + below(rng, 3) as i128 - 1
        } else {
            return None;
        };
        (lo..=hi).contains(&v).then_some(v)
    }
}

/// The short string literals of source texts: double-quoted (and single-quoted, which is a
/// string in Python and one character elsewhere), on one line, without escapes, 1 to 24
/// characters; at most 100.
fn string_literals(texts: &[&str]) -> Vec<String> {
    let mut out = BTreeSet::new();
    for text in texts {
        for line in text.lines() {
            let mut rest = line;
            while let Some(open) = rest.find(['"', '\'']) {
                let q = rest[open..].chars().next().unwrap_or('"');
                let after = &rest[open + 1..];
                let Some(close) = after.find(q) else { break };
                let lit = &after[..close];
                if !lit.is_empty() && lit.chars().count() <= 24 && !lit.contains('\\') {
                    out.insert(lit.to_string());
                }
                rest = &after[close + 1..];
            }
            if out.len() >= 100 {
                break;
            }
        }
    }
    out.into_iter().collect()
}

/// A random value of a domain, integers, strings and characters (also inside lists and
/// objects) near the hints a third of the time.
fn random_hinted(dom: &Dom, hints: &Hints, rng: &mut ChaCha8Rng) -> Value {
    match dom {
        Dom::Str { charset } if !hints.strs.is_empty() && below(rng, 3) == 0 => {
            match hints.pick_str(rng, *charset) {
                Some(s) => Value::Str(s),
                None => random(dom, rng),
            }
        }
        Dom::Char { charset } if !hints.strs.is_empty() && below(rng, 3) == 0 => {
            match hints.pick_char(rng, *charset) {
                Some(c) => Value::Char(u32::from(c)),
                None => random(dom, rng),
            }
        }
        Dom::Int { lo, hi } if !hints.is_empty() && below(rng, 3) == 0 => {
            match hints.pick(rng, *lo, *hi) {
                Some(v) => Value::Int(v),
                None => random(dom, rng),
            }
        }
        Dom::List(elem)
            if !hints.is_empty()
                && matches!(**elem, Dom::Int { .. } | Dom::Str { .. } | Dom::Char { .. }) =>
        {
            let len = below(rng, 8) as usize;
            Value::List((0..len).map(|_| random_hinted(elem, hints, rng)).collect())
        }
        Dom::Object(ctors) if !hints.is_empty() => {
            let ctor = below(rng, ctors.len() as u64) as usize;
            Value::Object {
                ctor,
                args: ctors
                    .get(ctor)
                    .map(|ps| ps.iter().map(|p| random_hinted(p, hints, rng)).collect())
                    .unwrap_or_default(),
            }
        }
        _ => random(dom, rng),
    }
}

/// Generates up to `count` distinct input tuples for the given parameter domains.
pub fn generate(doms: &[Dom], count: usize, seed: u64) -> Vec<Vec<Value>> {
    generate_hinted(doms, count, seed, &Hints::default())
}

/// [`generate`], the random tuples drawing integers near `hints` a third of the time.
pub fn generate_hinted(doms: &[Dom], count: usize, seed: u64, hints: &Hints) -> Vec<Vec<Value>> {
    let mut out: Vec<Vec<Value>> = Vec::new();
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut push = |tuple: Vec<Value>, out: &mut Vec<Vec<Value>>| {
        if out.len() >= count {
            return;
        }
        let key = format!("{tuple:?}");
        if seen.insert(key) {
            out.push(tuple);
        }
    };
    if doms.is_empty() {
        push(Vec::new(), &mut out);
        return out;
    }
    let defaults: Vec<Value> = doms.iter().map(default_value).collect();
    // (1) one parameter at a time through its boundary values.
    // Round-robin over the parameters, so that the cap (half of `count`, leaving room for
    // combinations and random tuples) keeps every parameter's most interesting values.
    let bounds: Vec<Vec<Value>> = doms.iter().map(boundary).collect();
    let longest = bounds.iter().map(Vec::len).max().unwrap_or(0);
    'boundary: for k in 0..longest {
        for (i, b) in bounds.iter().enumerate() {
            if out.len() >= count.div_ceil(2) {
                break 'boundary;
            }
            if let Some(v) = b.get(k) {
                let mut t = defaults.clone();
                t[i] = v.clone();
                push(t, &mut out);
            }
        }
    }
    // (2) combinations of small values, capped.
    let smalls: Vec<Vec<Value>> = doms.iter().map(small).collect();
    let mut idx = vec![0usize; doms.len()];
    let mut combos = 0;
    'outer: loop {
        if combos >= count.min(400)
            || out.len() >= count - count / 4
            || smalls.iter().any(Vec::is_empty)
        {
            break;
        }
        let t: Vec<Value> = idx
            .iter()
            .zip(&smalls)
            .map(|(&k, s)| s[k].clone())
            .collect();
        push(t, &mut out);
        combos += 1;
        let mut pos = 0;
        loop {
            if pos == idx.len() {
                break 'outer;
            }
            idx[pos] += 1;
            if idx[pos] < smalls[pos].len() {
                break;
            }
            idx[pos] = 0;
            pos += 1;
        }
    }
    // (3) seeded random values.
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut attempts = 0;
    while out.len() < count && attempts < count.saturating_mul(20) {
        attempts += 1;
        let mut t: Vec<Value> = doms
            .iter()
            .map(|d| random_hinted(d, hints, &mut rng))
            .collect();
        // Some tuples repeat values between parameters of one domain (`a == b`, two objects
        // built alike), which independent draws almost never do: a sixth copy the parameter
        // list's repeating block whole (`x1, y1, x2, y2`: `x2 = x1, y2 = y1`), a sixth copy
        // single parameters from earlier ones of their domain. A third draw integers
        // as indices of the tuple's first list or string (`sort(a, lo, hi)`, a position in
        // a text): random integers almost never fall inside one.
        match below(&mut rng, 6) {
            2 | 3 => {
                if let Some(len) = t.iter().find_map(|v| sequence_len(v, 1)) {
                    for (i, d) in doms.iter().enumerate() {
                        let Dom::Int { lo, hi } = d else { continue };
                        if *lo > 0 || *hi < len as i128 || below(&mut rng, 4) == 0 {
                            continue;
                        }
                        let v = below(&mut rng, len as u64 + 1) as i128;
                        t[i] = Value::Int(if *lo < 0 && below(&mut rng, 8) == 0 {
                            -1
                        } else {
                            v
                        });
                    }
                }
            }
            0 => {
                if let Some(p) =
                    (1..doms.len()).find(|&p| (p..doms.len()).all(|i| doms[i] == doms[i - p]))
                {
                    for i in p..doms.len() {
                        t[i] = t[i - p].clone();
                    }
                }
            }
            1 => {
                for i in 1..doms.len() {
                    let earlier: Vec<usize> = (0..i).filter(|&j| doms[j] == doms[i]).collect();
                    if !earlier.is_empty() && below(&mut rng, 3) != 0 {
                        let j = earlier[below(&mut rng, earlier.len() as u64) as usize];
                        t[i] = t[j].clone();
                    }
                }
            }
            // Strings of one tuple share characters (a text and its delimiters, a word and
            // the text it is looked for in): independent draws rarely do.
            4 => share_characters(&mut t, &mut rng),
            _ => {}
        }
        push(t, &mut out);
    }
    out
}

/// When a tuple holds two or more strings, each one gets, half of the time, one to three
/// characters of the others inserted at random places.
fn share_characters(t: &mut [Value], rng: &mut ChaCha8Rng) {
    let mut texts: Vec<String> = Vec::new();
    for v in t.to_vec().iter_mut() {
        for_each_string(v, &mut |s: &mut String| texts.push(s.clone()));
    }
    if texts.len() < 2 {
        return;
    }
    let mut k = 0;
    for v in t.iter_mut() {
        for_each_string(v, &mut |s: &mut String| {
            let others: Vec<char> = texts
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != k)
                .flat_map(|(_, o)| o.chars())
                .collect();
            k += 1;
            if others.is_empty() || below(rng, 2) == 0 {
                return;
            }
            let mut chars: Vec<char> = s.chars().collect();
            for _ in 0..1 + below(rng, 3) {
                let c = others[below(rng, others.len() as u64) as usize];
                let at = below(rng, chars.len() as u64 + 1) as usize;
                chars.insert(at, c);
            }
            *s = chars.into_iter().collect();
        });
    }
}

fn for_each_string(v: &mut Value, f: &mut dyn FnMut(&mut String)) {
    match v {
        Value::Str(s) => f(s),
        Value::List(xs) | Value::Object { args: xs, .. } => {
            for x in xs {
                for_each_string(x, f);
            }
        }
        _ => {}
    }
}

/// The length of a non-empty list or string, looked for `depth` levels into objects'
/// constructor arguments too.
fn sequence_len(v: &Value, depth: u32) -> Option<usize> {
    match v {
        Value::List(xs) if !xs.is_empty() => Some(xs.len()),
        Value::Str(s) if !s.is_empty() => Some(s.chars().count()),
        Value::Object { args, .. } if depth > 0 => {
            args.iter().find_map(|a| sequence_len(a, depth - 1))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boundary_values_come_first_and_respect_the_domain() {
        let dom = Dom::Int {
            lo: i128::from(i32::MIN),
            hi: i128::from(i32::MAX),
        };
        let b = boundary(&dom);
        assert_eq!(b[0], Value::Int(0));
        assert!(b.contains(&Value::Int(i128::from(i32::MAX))));
        assert!(b.contains(&Value::Int(i128::from(i32::MIN))));
        assert!(!b.contains(&Value::Int(1i128 << 31)));
    }

    #[test]
    fn strings_of_a_tuple_borrow_each_others_characters() {
        let mut gained = [0usize; 2];
        for seed in 0..40 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut t = vec![
                Value::Str("abc".into()),
                Value::Int(7),
                Value::Object {
                    ctor: 0,
                    args: vec![Value::Str("xyz".into())],
                },
            ];
            share_characters(&mut t, &mut rng);
            assert_eq!(t[1], Value::Int(7));
            let Value::Str(first) = &t[0] else { panic!() };
            let Value::Object { args, .. } = &t[2] else {
                panic!()
            };
            let Value::Str(second) = &args[0] else {
                panic!()
            };
            // Only insertions, and only of the other string's characters.
            assert!(first.chars().all(|c| "abcxyz".contains(c)), "{first}");
            assert!(second.chars().all(|c| "abcxyz".contains(c)), "{second}");
            gained[0] += usize::from(first.chars().any(|c| "xyz".contains(c)));
            gained[1] += usize::from(second.chars().any(|c| "abc".contains(c)));
        }
        assert!(gained.iter().all(|&g| (10..=30).contains(&g)), "{gained:?}");
        // One string alone has nothing to borrow.
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut t = vec![Value::Str("abc".into())];
        share_characters(&mut t, &mut rng);
        assert_eq!(t, [Value::Str("abc".into())]);
    }

    #[test]
    fn strings_beyond_the_bmp_only_where_both_sides_take_them() {
        let beyond = |charset| {
            generate_hinted(&[Dom::Str { charset }], 200, 3, &Hints::default())
                .iter()
                .filter(|t| matches!(&t[0], Value::Str(s) if s.chars().any(|c| c > '\u{ffff}')))
                .count()
        };
        assert!(beyond(Charset::Full) >= 20, "{}", beyond(Charset::Full));
        assert_eq!(beyond(Charset::Bmp), 0);
        assert_eq!(beyond(Charset::Ascii), 0);
    }

    #[test]
    fn some_integers_index_the_list_of_their_tuple() {
        let int = Dom::Int {
            lo: i128::from(i32::MIN),
            hi: i128::from(i32::MAX),
        };
        let doms = [Dom::List(Box::new(int.clone())), int.clone(), int];
        let inputs = generate_hinted(&doms, 300, 7, &Hints::default());
        let inside = inputs
            .iter()
            .filter(|t| match (&t[0], &t[1], &t[2]) {
                (Value::List(xs), Value::Int(a), Value::Int(b)) => {
                    xs.len() > 2
                        && (0..xs.len() as i128).contains(a)
                        && (0..xs.len() as i128).contains(b)
                        && a != b
                }
                _ => false,
            })
            .count();
        // Without the index-shaped draws, 6 of these 300 tuples do (from the small combinations).
        assert!(inside >= 9, "{inside} tuples index their list twice");
    }

    #[test]
    fn floats_include_negative_zero_nan_and_halves() {
        let b = boundary(&Dom::Float { single: false });
        assert!(b.iter().any(|v| matches!(v, Value::Float(f) if f.is_nan())));
        assert!(b
            .iter()
            .any(|v| matches!(v, Value::Float(f) if *f == 0.0 && f.is_sign_negative())));
        assert!(b.contains(&Value::Float(-2.5)));
    }

    #[test]
    fn generation_is_deterministic_and_distinct() {
        let doms = vec![
            Dom::List(Box::new(Dom::Int { lo: -5, hi: 5 })),
            Dom::Str {
                charset: Charset::Ascii,
            },
        ];
        let a = generate(&doms, 200, 7);
        let b = generate(&doms, 200, 7);
        assert_eq!(a, b);
        assert_eq!(a.len(), 200);
        let keys: BTreeSet<String> = a.iter().map(|t| format!("{t:?}")).collect();
        assert_eq!(keys.len(), a.len());
        assert!(a.iter().any(|t| t[0] == Value::List(vec![])));
        // ASCII only when C is involved.
        assert!(a.iter().all(|t| match &t[1] {
            Value::Str(s) => s.is_ascii(),
            _ => false,
        }));
        assert_ne!(generate(&doms, 200, 8), a);
    }

    #[test]
    fn constants_of_the_code_are_favoured() {
        let h = Hints::from_texts(&[
            "#define LIMIT 600\nint f(int y) { return y % 400 == 0 && x1 > 2.5 && y < 0x10; } // 7",
        ]);
        assert_eq!(h.ints, vec![0, 7, 16, 400, 600]);
        assert_eq!(h.divisors, vec![400]);
        let dom = Dom::Int {
            lo: i128::from(i32::MIN),
            hi: i128::from(i32::MAX),
        };
        let plain = generate(std::slice::from_ref(&dom), 300, 1);
        let hinted = generate_hinted(std::slice::from_ref(&dom), 300, 1, &h);
        let count = |v: &[Vec<Value>], f: &dyn Fn(i128) -> bool| {
            v.iter()
                .filter(|t| matches!(t[0], Value::Int(x) if f(x)))
                .count()
        };
        let near = |x: i128| (599..=601).contains(&x);
        let multiple = |x: i128| x > 400 && x % 400 == 0;
        assert!(
            count(&hinted, &near) > count(&plain, &near),
            "near a constant"
        );
        assert!(count(&hinted, &multiple) > 0, "multiples of a divisor");
        assert_eq!(hinted, generate_hinted(&[dom], 300, 1, &h), "deterministic");
        let h = Hints::from_texts(&["if name == \"admin\" or name.startswith('x-'): # it's\n"]);
        assert!(h.strs.contains(&"admin".to_string()) && h.strs.contains(&"x-".to_string()));
        let s = Dom::Str {
            charset: Charset::Ascii,
        };
        let gen = generate_hinted(&[s], 200, 2, &h);
        assert!(gen.iter().any(|t| t[0] == Value::Str("admin".into())));
        assert!(gen
            .iter()
            .any(|t| matches!(&t[0], Value::Str(v) if v.starts_with("x-") && v.len() == 3)));
    }
}
