//! Defensive reading of model answers. Pure, deterministic, never panics.
//!
//! [`extract_json`] finds a JSON answer in model text, trying in order:
//! 1. the whole text (after dropping leading `<think>…</think>` reasoning blocks);
//! 2. fenced blocks (```` ```json ```` or bare ```` ``` ````, an unclosed last fence runs to
//!    the end of the text);
//! 3. the first balanced `{…}` / `[…]` that parses, scanning from each opener in turn (prose
//!    braces such as `{x}` are skipped; trailing text after the value is ignored);
//! 4. a truncated value (an opener never closed before the end of the text): repaired by
//!    closing an open string, finishing a cut `tru`/`fals`/`nul`, dropping a dangling number
//!    sign/exponent and trailing commas, then closing the open brackets; failing that, by
//!    cutting back to the last complete member. A repair that salvages nothing (`{}` from
//!    `{"a`) is an error, not an empty answer.
//!
//! Trailing commas before `}`/`]` are tolerated (flagged `repaired`). Repeated keys: the LAST
//! occurrence wins (serde_json's map semantics), and every repeated key is reported as a JSON
//! pointer in [`JsonAnswer::duplicate_keys`] so callers can treat it as a quality signal.
//! Nesting deeper than serde_json's limit (128) is [`AnswerError::Malformed`].
//!
//! [`parse_verdict`] reads a yes/no/unknown verdict. Following the research notes (paper 000's
//! protocol), [`Verdict::Unknown`] counts as a negative: use [`Verdict::is_positive`].

use serde::de::DeserializeOwned;
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::cell::RefCell;
use std::fmt;

/// How many opener positions are tried per text (bounds the work on hostile input).
const MAX_STARTS: usize = 24;
/// How many fenced blocks are tried per text.
const MAX_FENCES: usize = 16;
/// How many cut-back points are tried when repairing a truncated value.
const MAX_CUTS: usize = 8;
/// serde_json's nesting limit: a repair needing deeper brackets cannot parse, so is not tried.
const MAX_DEPTH: usize = 128;

/// Where in the text the answer was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnswerSource {
    Whole,
    Fenced,
    Embedded,
}

/// The expected top-level shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Any,
    Object,
    Array,
}

impl Shape {
    fn accepts(self, v: &Value) -> bool {
        match self {
            Shape::Any => true,
            Shape::Object => v.is_object(),
            Shape::Array => v.is_array(),
        }
    }

    fn opens(self, b: u8) -> bool {
        match self {
            Shape::Any => b == b'{' || b == b'[',
            Shape::Object => b == b'{',
            Shape::Array => b == b'[',
        }
    }
}

/// A JSON answer found in model text.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonAnswer {
    pub value: Value,
    /// The text needed fixing (truncation closed, trailing commas dropped). Treat the content
    /// as possibly incomplete.
    pub repaired: bool,
    pub source: AnswerSource,
    /// JSON pointers of keys that occurred more than once in their object (last one kept).
    pub duplicate_keys: Vec<String>,
}

impl JsonAnswer {
    /// Deserialises the value into `T`.
    pub fn into_typed<T: DeserializeOwned>(self) -> Result<T, AnswerError> {
        serde_json::from_value(self.value).map_err(|e| AnswerError::Schema(e.to_string()))
    }
}

/// Why no answer could be read. A recorded failure, never a panic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnswerError {
    /// No text, or only reasoning (`<think>` never closed).
    Empty,
    /// No `{` or `[` of the expected shape anywhere.
    NoJson,
    /// Candidates were found but none parsed, even after repair.
    Malformed(String),
    /// The JSON does not fit the expected Rust type.
    Schema(String),
}

impl fmt::Display for AnswerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AnswerError::Empty => write!(f, "the model gave no answer text"),
            AnswerError::NoJson => write!(f, "the model's answer contains no JSON"),
            AnswerError::Malformed(m) => write!(f, "the model's JSON answer is malformed: {m}"),
            AnswerError::Schema(m) => {
                write!(
                    f,
                    "the model's JSON answer does not have the expected fields: {m}"
                )
            }
        }
    }
}

impl std::error::Error for AnswerError {}

/// Extracts a JSON value of any shape (see the module docs for the order of attempts).
pub fn extract_json(text: &str) -> Result<JsonAnswer, AnswerError> {
    extract_json_shaped(text, Shape::Any)
}

/// Extracts a JSON object (`{…}`), skipping arrays and scalars.
pub fn extract_object(text: &str) -> Result<JsonAnswer, AnswerError> {
    extract_json_shaped(text, Shape::Object)
}

/// Extracts and deserialises an object into `T`.
pub fn extract_as<T: DeserializeOwned>(text: &str) -> Result<(T, JsonAnswer), AnswerError> {
    let a = extract_object(text)?;
    let t = a.clone().into_typed()?;
    Ok((t, a))
}

pub fn extract_json_shaped(text: &str, shape: Shape) -> Result<JsonAnswer, AnswerError> {
    let body = strip_reasoning(text);
    let t = body.trim_start_matches('\u{feff}').trim();
    if t.is_empty() {
        return Err(AnswerError::Empty);
    }
    if let Ok((value, dups)) = parse_strict(t) {
        if shape.accepts(&value) {
            return Ok(JsonAnswer {
                value,
                repaired: false,
                source: AnswerSource::Whole,
                duplicate_keys: dups,
            });
        }
    }
    let mut first_err: Option<AnswerError> = None;
    for block in fenced_blocks(t).into_iter().take(MAX_FENCES) {
        match scan(block, shape) {
            Ok(mut a) => {
                a.source = AnswerSource::Fenced;
                return Ok(a);
            }
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    match scan(t, shape) {
        Ok(a) => Ok(a),
        Err(AnswerError::NoJson) => Err(first_err.unwrap_or(AnswerError::NoJson)),
        Err(e) => Err(e),
    }
}

/// Drops leading `<think>…</think>` / `<thinking>…</thinking>` blocks. An unclosed leading
/// block means the whole text is reasoning.
fn strip_reasoning(text: &str) -> &str {
    let mut t = text.trim_start();
    for _ in 0..8 {
        let close = if t.starts_with("<think>") {
            "</think>"
        } else if t.starts_with("<thinking>") {
            "</thinking>"
        } else {
            return t;
        };
        match t.find(close) {
            Some(i) => t = t.get(i + close.len()..).unwrap_or("").trim_start(),
            None => return "",
        }
    }
    t
}

/// Contents of ``` fenced blocks, in order. An unclosed final fence runs to the end.
fn fenced_blocks(t: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = t;
    while let Some(open) = rest.find("```") {
        let after = rest.get(open + 3..).unwrap_or("");
        // The language tag runs to the end of the line.
        let content_start = after.find('\n').map(|i| i + 1).unwrap_or(after.len());
        let content = after.get(content_start..).unwrap_or("");
        match content.find("```") {
            Some(close) => {
                out.push(content.get(..close).unwrap_or(""));
                rest = content.get(close + 3..).unwrap_or("");
            }
            None => {
                out.push(content);
                break;
            }
        }
        if out.len() >= MAX_FENCES {
            break;
        }
    }
    out
}

enum End {
    Balanced(usize),
    Mismatch(usize),
    Unbalanced,
}

/// From an opener at `start`, finds its matching closer (string-aware).
fn find_end(b: &[u8], start: usize) -> End {
    let mut stack: Vec<u8> = Vec::new();
    let mut in_str = false;
    let mut esc = false;
    for (i, &c) in b.iter().enumerate().skip(start) {
        if in_str {
            if esc {
                esc = false;
            } else if c == b'\\' {
                esc = true;
            } else if c == b'"' {
                in_str = false;
            }
            continue;
        }
        match c {
            b'"' => in_str = true,
            b'{' => stack.push(b'}'),
            b'[' => stack.push(b']'),
            b'}' | b']' => {
                if stack.pop() != Some(c) {
                    return End::Mismatch(i);
                }
                if stack.is_empty() {
                    return End::Balanced(i);
                }
            }
            _ => {}
        }
    }
    End::Unbalanced
}

fn scan(s: &str, shape: Shape) -> Result<JsonAnswer, AnswerError> {
    let b = s.as_bytes();
    let mut pos = 0;
    let mut tries = 0;
    let mut last_err: Option<String> = None;
    while let Some(off) = b
        .get(pos..)
        .and_then(|r| r.iter().position(|&c| shape.opens(c)))
    {
        let start = pos + off;
        tries += 1;
        if tries > MAX_STARTS {
            break;
        }
        match find_end(b, start) {
            End::Balanced(end) => {
                let slice = s.get(start..=end).unwrap_or("");
                match parse_lenient(slice) {
                    Ok((value, dups, repaired)) if shape.accepts(&value) => {
                        return Ok(JsonAnswer {
                            value,
                            repaired,
                            source: AnswerSource::Embedded,
                            duplicate_keys: dups,
                        })
                    }
                    Ok(_) => {}
                    Err(e) => last_err = Some(e),
                }
                pos = start + 1;
            }
            End::Mismatch(at) => {
                last_err = Some(format!("mismatched bracket at byte {at}"));
                pos = start + 1;
            }
            End::Unbalanced => {
                let tail = s.get(start..).unwrap_or("");
                return match repair(tail) {
                    Ok((value, dups)) if shape.accepts(&value) => Ok(JsonAnswer {
                        value,
                        repaired: true,
                        source: AnswerSource::Embedded,
                        duplicate_keys: dups,
                    }),
                    Ok(_) => Err(AnswerError::Malformed(
                        "the truncated value has the wrong shape".to_string(),
                    )),
                    Err(e) => Err(AnswerError::Malformed(e)),
                };
            }
        }
    }
    match last_err {
        Some(e) => Err(AnswerError::Malformed(e)),
        None if tries == 0 => Err(AnswerError::NoJson),
        None => Err(AnswerError::Malformed(
            "no candidate of the expected shape parsed".to_string(),
        )),
    }
}

/// Strict parse, else a parse after dropping trailing commas (then `repaired`).
fn parse_lenient(s: &str) -> Result<(Value, Vec<String>, bool), String> {
    match parse_strict(s) {
        Ok((v, d)) => Ok((v, d, false)),
        Err(e) => {
            let fixed = drop_trailing_commas(s);
            if fixed.len() == s.len() {
                return Err(e);
            }
            parse_strict(&fixed)
                .map(|(v, d)| (v, d, true))
                .map_err(|_| e)
        }
    }
}

/// Removes commas (outside strings) that are followed, after whitespace, by `}`, `]` or the end.
fn drop_trailing_commas(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut in_str = false;
    let mut esc = false;
    for (i, ch) in s.char_indices() {
        if in_str {
            if esc {
                esc = false;
            } else if ch == '\\' {
                esc = true;
            } else if ch == '"' {
                in_str = false;
            }
            out.push(ch);
            continue;
        }
        if ch == '"' {
            in_str = true;
        } else if ch == ',' {
            let next = b
                .get(i + 1..)
                .and_then(|r| r.iter().find(|c| !c.is_ascii_whitespace()));
            if matches!(next, None | Some(b'}') | Some(b']')) {
                continue;
            }
        }
        out.push(ch);
    }
    out
}

/// End-of-text scanner state for a truncated value.
struct TailState {
    stack: Vec<u8>,
    in_str: bool,
    esc: bool,
    /// Byte offsets where the prefix is a complete member list (after an opener, before a
    /// comma, after a nested closer), with the bracket depth there. Only the last few are kept.
    cuts: Vec<(usize, usize)>,
}

fn scan_tail(s: &str) -> TailState {
    let mut st = TailState {
        stack: Vec::new(),
        in_str: false,
        esc: false,
        cuts: Vec::new(),
    };
    let push_cut = |cuts: &mut Vec<(usize, usize)>, at: usize, depth: usize| {
        if cuts.len() >= 4 * MAX_CUTS {
            cuts.drain(..cuts.len() - MAX_CUTS);
        }
        cuts.push((at, depth));
    };
    for (i, &c) in s.as_bytes().iter().enumerate() {
        if st.in_str {
            if st.esc {
                st.esc = false;
            } else if c == b'\\' {
                st.esc = true;
            } else if c == b'"' {
                st.in_str = false;
            }
            continue;
        }
        match c {
            b'"' => st.in_str = true,
            b'{' => {
                st.stack.push(b'}');
                push_cut(&mut st.cuts, i + 1, st.stack.len());
            }
            b'[' => {
                st.stack.push(b']');
                push_cut(&mut st.cuts, i + 1, st.stack.len());
            }
            b'}' | b']' => {
                st.stack.pop();
                if !st.stack.is_empty() {
                    push_cut(&mut st.cuts, i + 1, st.stack.len());
                }
            }
            b',' if !st.stack.is_empty() => push_cut(&mut st.cuts, i, st.stack.len()),
            _ => {}
        }
    }
    st
}

fn closers(stack: &[u8]) -> String {
    stack.iter().rev().map(|&c| c as char).collect()
}

/// Repairs a value that starts at an opener and runs off the end of the text.
fn repair(s: &str) -> Result<(Value, Vec<String>), String> {
    let st = scan_tail(s);
    if st.stack.len() <= MAX_DEPTH {
        if let Some(found) = repair_in_place(s, &st) {
            return Ok(found);
        }
    }
    // Candidate C: cut back to a complete member list.
    for &(cut, depth) in st.cuts.iter().rev().take(MAX_CUTS) {
        if depth > MAX_DEPTH {
            continue;
        }
        let prefix = s.get(..cut).unwrap_or("");
        let pst = scan_tail(prefix);
        let candidate = format!("{prefix}{}", closers(&pst.stack));
        if let Ok((v, d)) = parse_strict(&drop_trailing_commas(&candidate)) {
            if salvaged_something(&v) {
                return Ok((v, d));
            }
        }
    }
    Err(if st.stack.len() > MAX_DEPTH {
        format!("the answer is nested deeper than {MAX_DEPTH} levels")
    } else {
        "the answer is cut off before any complete member".to_string()
    })
}

/// Candidate A: keep everything, finish the last token, close the brackets.
fn repair_in_place(s: &str, st: &TailState) -> Option<(Value, Vec<String>)> {
    let mut a = s.to_string();
    if st.in_str {
        if st.esc {
            a.pop(); // the dangling backslash
        }
        drop_partial_unicode_escape(&mut a);
        a.push('"');
    } else {
        finish_last_token(&mut a);
    }
    a.push_str(&closers(&st.stack));
    parse_strict(&drop_trailing_commas(&a))
        .ok()
        .filter(|(v, _)| salvaged_something(v))
}

fn salvaged_something(v: &Value) -> bool {
    match v {
        Value::Object(m) => !m.is_empty(),
        Value::Array(a) => !a.is_empty(),
        _ => true,
    }
}

/// Removes an incomplete `\uXXX` escape at the end of an open string.
fn drop_partial_unicode_escape(a: &mut String) {
    let b = a.as_bytes();
    let n = b.len();
    for hex in 0..4 {
        if n < 2 + hex {
            break;
        }
        let u = n - hex - 1;
        let slash = u.wrapping_sub(1);
        let tail_is_hex = b
            .get(u + 1..)
            .is_some_and(|t| t.iter().all(u8::is_ascii_hexdigit));
        if b.get(u) == Some(&b'u') && b.get(slash) == Some(&b'\\') && tail_is_hex {
            // The backslash must not itself be escaped.
            let preceding = b
                .get(..slash)
                .map(|p| p.iter().rev().take_while(|&&c| c == b'\\').count())
                .unwrap_or(0);
            if preceding % 2 == 0 {
                a.truncate(slash);
            }
            return;
        }
    }
}

/// Completes a cut literal (`tru` → `true`) or trims a dangling number end (`1.`, `-`, `2e+`).
fn finish_last_token(a: &mut String) {
    let trimmed_len = a.trim_end().len();
    a.truncate(trimmed_len);
    let word_start = a
        .rfind(|c: char| !c.is_ascii_alphabetic())
        .map(|i| i + 1)
        .unwrap_or(0);
    let word = a.get(word_start..).unwrap_or("").to_string();
    if !word.is_empty() {
        for lit in ["true", "false", "null"] {
            if lit.starts_with(word.as_str()) && lit != word {
                a.push_str(lit.get(word.len()..).unwrap_or(""));
                return;
            }
        }
    }
    while a.ends_with(['-', '+', '.', 'e', 'E']) {
        // Only inside a number: stop at a letter that belongs to a word (e.g. `true`).
        let before = a
            .len()
            .checked_sub(2)
            .and_then(|i| a.as_bytes().get(i))
            .copied();
        if a.ends_with(['e', 'E']) && !before.is_some_and(|c| c.is_ascii_digit() || c == b'.') {
            break;
        }
        a.pop();
    }
}

/// Parses exactly one JSON value, recording repeated keys (last wins).
fn parse_strict(s: &str) -> Result<(Value, Vec<String>), String> {
    let dups = RefCell::new(Vec::new());
    let mut de = serde_json::Deserializer::from_str(s);
    let v = ValueSeed {
        dups: &dups,
        path: String::new(),
    }
    .deserialize(&mut de)
    .map_err(|e| e.to_string())?;
    de.end().map_err(|e| e.to_string())?;
    Ok((v, dups.into_inner()))
}

struct ValueSeed<'a> {
    dups: &'a RefCell<Vec<String>>,
    path: String,
}

fn pointer_escape(k: &str) -> String {
    k.replace('~', "~0").replace('/', "~1")
}

impl<'de> DeserializeSeed<'de> for ValueSeed<'_> {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v)
            .map(Value::Number)
            .unwrap_or(Value::Null))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(ValueSeed {
            dups: self.dups,
            path: format!("{}/{}", self.path, out.len()),
        })? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(k) = map.next_key::<String>()? {
            let path = format!("{}/{}", self.path, pointer_escape(&k));
            let v = map.next_value_seed(ValueSeed {
                dups: self.dups,
                path: path.clone(),
            })?;
            if out.insert(k, v).is_some() {
                self.dups.borrow_mut().push(path);
            }
        }
        Ok(Value::Object(out))
    }
}

/// A yes/no/unknown verdict read from model text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Verdict {
    Yes,
    No,
    Unknown,
}

impl Verdict {
    /// Only `Yes` is positive: `Unknown` counts as negative (research notes, paper 000).
    pub fn is_positive(self) -> bool {
        self == Verdict::Yes
    }
}

/// JSON keys that hold a verdict, in priority order.
const VERDICT_KEYS: [&str; 14] = [
    "verdict",
    "answer",
    "final_answer",
    "result",
    "decision",
    "equivalent",
    "is_equivalent",
    "dependent",
    "is_dependent",
    "data_dependent",
    "tainted",
    "is_tainted",
    "reachable",
    "flows",
];

const YES_WORDS: [&str; 3] = ["yes", "true", "yep"];
const NO_WORDS: [&str; 3] = ["no", "false", "nope"];
const UNKNOWN_WORDS: [&str; 12] = [
    "unknown",
    "unclear",
    "uncertain",
    "unsure",
    "undetermined",
    "undeterminable",
    "indeterminate",
    "cannot",
    "can't",
    "maybe",
    "possibly",
    "insufficient",
];
const MARKERS: [&str; 5] = ["answer", "verdict", "conclusion", "result", "decision"];

/// Reads a verdict. Order: a JSON answer with a verdict key (bool or yes/no string); the last
/// marker (`answer`, `verdict`, `conclusion`, `result`, `decision`) followed within three words
/// by yes/no/true/false or an unknown-word; the first word; otherwise, if only yes-words or
/// only no-words occur, that side. Everything else is [`Verdict::Unknown`].
pub fn parse_verdict(text: &str) -> Verdict {
    let body = strip_reasoning(text);
    if let Ok(a) = extract_json(body) {
        if let Some(v) = verdict_of_json(&a.value) {
            return v;
        }
    }
    free_text_verdict(body)
}

fn verdict_of_json(v: &Value) -> Option<Verdict> {
    match v {
        Value::Bool(b) => Some(if *b { Verdict::Yes } else { Verdict::No }),
        Value::String(s) => Some(word_verdict(s)),
        Value::Object(m) => {
            for key in VERDICT_KEYS {
                let hit = m
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case(key))
                    .map(|(_, v)| v);
                match hit {
                    Some(Value::Bool(b)) => {
                        return Some(if *b { Verdict::Yes } else { Verdict::No })
                    }
                    Some(Value::String(s)) => return Some(word_verdict(s)),
                    Some(Value::Null) => return Some(Verdict::Unknown),
                    _ => {}
                }
            }
            None
        }
        _ => None,
    }
}

/// A verdict string such as `"Yes"`, `"no."`, `"TRUE"`, `"unknown"`, or a sentence.
fn word_verdict(s: &str) -> Verdict {
    match s
        .trim()
        .trim_end_matches(['.', '!'])
        .to_ascii_lowercase()
        .as_str()
    {
        "yes" | "y" | "true" => Verdict::Yes,
        "no" | "n" | "false" => Verdict::No,
        _ => free_text_verdict(s),
    }
}

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '_'))
        .map(|w| w.trim_matches('\'').to_lowercase())
        .filter(|w| !w.is_empty())
        .collect()
}

fn classify(word: &str) -> Option<Verdict> {
    if YES_WORDS.contains(&word) {
        Some(Verdict::Yes)
    } else if NO_WORDS.contains(&word) {
        Some(Verdict::No)
    } else if UNKNOWN_WORDS.contains(&word) {
        Some(Verdict::Unknown)
    } else {
        None
    }
}

fn free_text_verdict(text: &str) -> Verdict {
    let w = words(text);
    for i in (0..w.len()).rev() {
        let is_marker = w
            .get(i)
            .is_some_and(|x| MARKERS.contains(&x.as_str()) || x == "final");
        if !is_marker {
            continue;
        }
        let found = w.iter().skip(i + 1).take(3).find_map(|x| classify(x));
        if let Some(v) = found {
            return v;
        }
    }
    if let Some(v) = w.first().and_then(|x| classify(x)) {
        return v;
    }
    let yes = w.iter().any(|x| YES_WORDS.contains(&x.as_str()));
    let no = w.iter().any(|x| NO_WORDS.contains(&x.as_str()));
    match (yes, no) {
        (true, false) => Verdict::Yes,
        (false, true) => Verdict::No,
        _ => Verdict::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fenced_blocks_handle_unclosed_fences() {
        assert_eq!(
            fenced_blocks("a ```json\n{}\n``` b ```\n[1"),
            vec!["{}\n", "[1"]
        );
        assert!(fenced_blocks("no fences").is_empty());
    }

    #[test]
    fn trailing_commas_are_dropped_outside_strings_only() {
        assert_eq!(
            drop_trailing_commas(r#"{"a": ",}", "b": [1,2,],}"#),
            r#"{"a": ",}", "b": [1,2]}"#
        );
    }

    #[test]
    fn partial_unicode_escapes_are_removed() {
        let mut s = r#"{"a": "x\u00"#.to_string();
        drop_partial_unicode_escape(&mut s);
        assert_eq!(s, r#"{"a": "x"#);
        let mut t = r#"{"a": "x\\u00"#.to_string();
        drop_partial_unicode_escape(&mut t);
        assert_eq!(
            t, r#"{"a": "x\\u00"#,
            "an escaped backslash is literal text"
        );
    }

    #[test]
    fn cut_literals_and_numbers_are_finished() {
        for (input, want) in [
            ("[tru", "[true"),
            ("[1, fa", "[1, false"),
            ("[1.", "[1"),
            ("[2e+", "[2"),
            ("[-", "["),
        ] {
            let mut s = input.to_string();
            finish_last_token(&mut s);
            assert_eq!(s, want, "{input}");
        }
    }
}
