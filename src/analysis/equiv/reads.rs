//! Inputs shaped by a C, C++ or Python program's own reads, for programs compared without
//! sample inputs (`equiv --program` with no `--inputs`, and mutants of a `main`).
//!
//! **Python** reads lines (`input()`, `sys.stdin.readline()`), each shaped by what it becomes
//! (see [`program_reads`]'s Python part); a loop's lines repeat in order each turn.
//!
//! **Standard input.** Every `scanf(FORMAT, ...)` and `fscanf(stdin, FORMAT, ...)` whose format
//! is a string literal gives one read: its conversions (`%d`, `%u`, `%x`, `%f`, `%c`, `%s`,
//! `%[...]`) and the characters it expects verbatim. A generated input takes the reads in the
//! order of the text, each once, or several times when the read sits inside a loop (the reads
//! of one loop are drawn among each other, as a loop body reads one of them per turn). Data a
//! program does not consume is left unread; data it lacks ends its reads as at the end of a
//! file, which it must handle anyway.
//!
//! **Command-line arguments.** `argv[k]` with a literal `k` makes `argc` at least `k + 1`; an
//! argument read through `atoi`, `atol`, `atoll`, `strtol` or `strtoul` is an integer, through
//! `atof` or `strtod` a decimal, otherwise a short word. `argv[i]` with any other index (a
//! loop over the arguments) stands for arguments 1 to `N - 1` when the program guards with
//! `argc < N` or `argc != N` (`N` a literal or `#define`d constants), and for none otherwise.
//! A `main()` without parameters reads no command line, whatever `argv` it builds.
//!
//! **Values.** Integers are drawn from the program's own integer literals (and their
//! neighbours), small values, negatives (unless the conversion is unsigned), values up to a
//! thousand and the ends of a 32-bit `int`; decimals from the literals and short decimals;
//! characters and words from letters, digits and punctuation. Generation is deterministic.
//!
//! These are inputs the program itself asks for, not samples: a difference found on one counts
//! only when both sides end normally (see `exec::program`).

use super::program::{int_in, unit};
use crate::syntax::lang::{field, kind};
use crate::syntax::{Language, ParsedFile};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeSet;

/// One piece of a `scanf` format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Characters the format expects verbatim (`,` in `"%d,%d"`).
    Literal(String),
    /// Whitespace in the format: any amount of whitespace in the input.
    Space,
    /// `%d %i %u %x %o` (with any length modifier).
    Int { unsigned: bool, radix: u32 },
    /// `%f %e %g %a` (with any length modifier).
    Float,
    /// `%c`, `%5c`: that many characters.
    Chars(usize),
    /// `%s`, `%[...]`: a word of at most that many characters (0: no limit).
    Word(usize),
}

/// One read of standard input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Read {
    pub pieces: Vec<Piece>,
    /// The innermost loop around the read, if any, numbered in the order the reads meet
    /// loops (so two parses of one program have equal reads).
    pub in_loop: Option<usize>,
    /// A line of values of one kind whose number the program does not fix (Python's
    /// `list(map(int, input().split()))`): generated with as many values as the lone integer
    /// read just before it says (`n`, then `n` values).
    pub list: bool,
}

/// How a command-line argument is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arg {
    Int,
    Float,
    Word,
}

/// What a program reads: its `scanf` reads and its command-line arguments (`args[k]` is
/// `argv[k + 1]`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reads {
    pub stdin: Vec<Read>,
    pub args: Vec<Arg>,
    /// The program's integer and decimal literals, the values generation favours.
    pub ints: Vec<i64>,
    pub floats: Vec<f64>,
    /// Literals the program divides by or takes a remainder by (`year % 400`): their
    /// multiples are the values where such a test changes.
    pub divisors: Vec<i64>,
    /// Each read is one line (Python's `input()`), loop turns included; `scanf` reads are
    /// whitespace-separated.
    pub lines: bool,
}

impl Reads {
    pub fn is_empty(&self) -> bool {
        self.stdin.is_empty() && self.args.is_empty()
    }

    /// These reads with the other side's literals added (one shape, both sides' constants).
    pub fn with_literals_of(&self, other: &Reads) -> Reads {
        let mut r = self.clone();
        for (mine, theirs) in [
            (&mut r.ints, &other.ints),
            (&mut r.divisors, &other.divisors),
        ] {
            for v in theirs {
                if !mine.contains(v) {
                    mine.push(*v);
                }
            }
        }
        r
    }

    /// `3 scanf reads, 2 command-line arguments`.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if !self.stdin.is_empty() {
            let what = if self.lines {
                "line read(s)"
            } else {
                "scanf read(s)"
            };
            parts.push(format!("{} {what}", self.stdin.len()));
        }
        if !self.args.is_empty() {
            parts.push(format!("{} command-line argument(s)", self.args.len()));
        }
        parts.join(", ")
    }
}

/// One generated input: standard input and command-line arguments.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ShapedInput {
    pub stdin: String,
    pub args: Vec<String>,
}

/// The reads of a C or C++ file (empty for other languages).
pub fn program_reads(file: &ParsedFile) -> Reads {
    if file.language == Language::Python {
        return python_reads(file);
    }
    if !matches!(file.language, Language::C | Language::Cpp) {
        return Reads::default();
    }
    let mut reads = Reads::default();
    let mut ints = BTreeSet::new();
    let mut divisors = BTreeSet::new();
    let mut floats: Vec<f64> = Vec::new();
    in_text_order(file, |n| match n.kind() {
        kind::CALL_EXPRESSION => {
            if let Some(r) = scanf_read(file, n) {
                reads.stdin.push(r);
            }
        }
        kind::NUMBER_LITERAL if ints.len() < 200 => {
            let t = file.node_text(n);
            match number(t) {
                Some(Num::Int(v)) => {
                    ints.insert(v);
                    if v.abs() >= 2 && is_divisor(file, n) {
                        divisors.insert(v.abs());
                    }
                }
                Some(Num::Float(v)) if floats.len() < 50 => floats.push(v),
                _ => {}
            }
        }
        _ => {}
    });
    number_loops(&mut reads);
    reads.ints = ints.into_iter().collect();
    reads.divisors = divisors.into_iter().collect();
    reads.floats = floats;
    // A `main()` (or `main(void)`) has no command line: an `argv` it uses is its own local (a
    // self-test that builds the arguments it passes on).
    let command_line = file
        .functions()
        .iter()
        .find(|f| f.simple_name == "main" && f.class.is_none())
        .is_none_or(|f| f.params.iter().any(|p| !p.is_empty()));
    if command_line {
        reads.args = argv_reads(&file.text);
    }
    reads
}

/// The reads of a Python program: every `input()` and `sys.stdin.readline()` is one line,
/// shaped by what the line becomes: `int(...)` one integer, `float(...)` one decimal,
/// `map(int, ....split())` or `[int(x) for x in ....split()]` integers (as many as the names
/// it is unpacked into, else three), `.split()` words, otherwise one word. A loop reads all of
/// its lines in order on every turn, and a loop that directly follows a lone integer read
/// runs that many times (`t = int(input())` then `for _ in range(t)`). `sys.stdin.read()`,
/// a line of several integers and a list no lone integer counts give no shape (see below).
fn python_reads(file: &ParsedFile) -> Reads {
    let mut reads = Reads {
        lines: true,
        ..Reads::default()
    };
    let mut ints = BTreeSet::new();
    let mut divisors = BTreeSet::new();
    in_text_order(file, |n| {
        if n.kind() == kind::CALL {
            if let Some(r) = python_read(file, n) {
                reads.stdin.push(r);
            }
        } else if n.kind() == kind::INTEGER && ints.len() < 200 {
            if let Ok(v) = file.node_text(n).replace('_', "").parse::<i64>() {
                ints.insert(v);
                if v.abs() >= 2 && is_divisor(file, n) {
                    divisors.insert(v.abs());
                }
            }
        }
    });
    number_loops(&mut reads);
    // Only shapes whose sizes are known: a line of several integers (`n, k = map(...)`) or a
    // list not counted by the lone integer just before it may hold sizes and indices that
    // the values drawn would contradict (`-1 0`, a list of 3 after `n = 5`, a query past the
    // end), inputs on which two right programs differ. Such a program gets no shaped input.
    let known = reads.stdin.iter().enumerate().all(|(i, r)| {
        let ints = r
            .pieces
            .iter()
            .filter(|p| matches!(p, Piece::Int { .. }))
            .count();
        if r.list && ints > 0 {
            i > 0
                && matches!(reads.stdin[i - 1].pieces.as_slice(), [Piece::Int { .. }])
                && reads.stdin[i - 1].in_loop == r.in_loop
        } else {
            ints <= 1
        }
    });
    if !known {
        reads.stdin.clear();
    }
    reads.ints = ints.into_iter().collect();
    reads.divisors = divisors.into_iter().collect();
    reads
}

/// One line read by `call`, if it is `input()` or `sys.stdin.readline()`.
fn python_read(file: &ParsedFile, call: tree_sitter::Node<'_>) -> Option<Read> {
    let f = call.child_by_field_name(field::FUNCTION)?;
    let name = file.node_text(f);
    if !matches!(name, "input" | "sys.stdin.readline" | "stdin.readline") {
        return None;
    }
    // The method chain on the line: `input().strip().split()`.
    let mut outer = call;
    let mut split = false;
    while let Some(attr) = outer.parent().filter(|p| p.kind() == kind::ATTRIBUTE) {
        let Some(method_call) = attr.parent().filter(|p| p.kind() == kind::CALL) else {
            break;
        };
        let method = attr
            .child_by_field_name(field::ATTRIBUTE)
            .map(|m| file.node_text(m))
            .unwrap_or("");
        split |= method == "split";
        outer = method_call;
    }
    // What the line becomes: the call it is an argument of, or the comprehension it feeds.
    let holder = outer
        .parent()
        .filter(|p| p.kind() == kind::ARGUMENT_LIST)
        .and_then(|a| a.parent())
        .filter(|c| c.kind() == kind::CALL);
    let converter = |c: tree_sitter::Node<'_>| {
        c.child_by_field_name(field::FUNCTION)
            .map(|f| file.node_text(f).to_string())
    };
    let comprehension = outer
        .parent()
        .filter(|p| p.kind() == kind::FOR_IN_CLAUSE)
        .and_then(|c| c.parent())
        .filter(|p| {
            matches!(
                p.kind(),
                kind::LIST_COMPREHENSION | kind::GENERATOR_EXPRESSION
            )
        });
    let element = |conv: &str| match conv {
        "int" => Some(Piece::Int {
            unsigned: false,
            radix: 10,
        }),
        "float" => Some(Piece::Float),
        _ => None,
    };
    let list = std::cell::Cell::new(false);
    let many = |piece: Piece, top: tree_sitter::Node<'_>| {
        let names = unpacked_names(top);
        list.set(names.is_none());
        let k = names.unwrap_or(3).clamp(1, 8);
        let mut pieces = Vec::new();
        for i in 0..k {
            if i > 0 {
                pieces.push(Piece::Space);
            }
            pieces.push(piece.clone());
        }
        pieces
    };
    let pieces = match (holder, comprehension) {
        (Some(h), _) if !split => match converter(h).as_deref().and_then(element) {
            Some(p) => vec![p],
            None => vec![Piece::Word(0)],
        },
        (Some(h), _) if converter(h).as_deref() == Some("map") => {
            // `map(int, input().split())`: the first argument converts.
            let conv = h
                .child_by_field_name(field::ARGUMENTS)
                .and_then(|a| a.named_child(0))
                .map(|c| file.node_text(c).to_string())
                .unwrap_or_default();
            let piece = element(&conv).unwrap_or(Piece::Word(0));
            many(piece, h)
        }
        (_, Some(comp)) if split => {
            // `[int(x) for x in input().split()]`: the comprehension's body converts.
            let body = comp.named_child(0);
            let piece = body
                .filter(|b| b.kind() == kind::CALL)
                .and_then(converter)
                .as_deref()
                .and_then(element)
                .unwrap_or(Piece::Word(0));
            many(piece, comp)
        }
        _ if split => many(Piece::Word(0), outer),
        _ => vec![Piece::Word(0)],
    };
    let list = list.get();
    Some(Read {
        pieces,
        in_loop: enclosing_loop(call),
        list,
    })
}

/// Visits the nodes of `file` in text order (at most two million: a bound on hostile input).
fn in_text_order<'t>(file: &'t ParsedFile, mut visit: impl FnMut(tree_sitter::Node<'t>)) {
    let mut stack = vec![file.tree.root_node()];
    let mut budget = 2_000_000usize;
    while let Some(n) = stack.pop() {
        budget = budget.saturating_sub(1);
        if budget == 0 {
            break;
        }
        visit(n);
        let mut c = n.walk();
        let kids: Vec<_> = n.children(&mut c).collect();
        stack.extend(kids.into_iter().rev());
    }
}

/// How many names the value of `expr` (through `list(...)`/`tuple(...)`) is unpacked into:
/// `a, b = map(int, ...)`.
fn unpacked_names(expr: tree_sitter::Node<'_>) -> Option<usize> {
    let mut top = expr;
    while let Some(p) = top
        .parent()
        .filter(|p| p.kind() == kind::ARGUMENT_LIST)
        .and_then(|a| a.parent())
        .filter(|c| c.kind() == kind::CALL)
    {
        top = p;
    }
    let assign = top.parent().filter(|p| p.kind() == kind::ASSIGNMENT)?;
    let left = assign.child_by_field_name(field::LEFT)?;
    matches!(left.kind(), kind::PATTERN_LIST | kind::TUPLE_PATTERN)
        .then(|| left.named_child_count())
}

/// Loops by their order among the reads, not by node id: two parses of one shape compare
/// equal.
fn number_loops(reads: &mut Reads) {
    let mut loops: Vec<usize> = Vec::new();
    for r in &mut reads.stdin {
        if let Some(id) = r.in_loop {
            let k = loops.iter().position(|l| *l == id).unwrap_or_else(|| {
                loops.push(id);
                loops.len() - 1
            });
            r.in_loop = Some(k);
        }
    }
}

/// Whether a literal is the right operand of `%` or `/`.
fn is_divisor(file: &ParsedFile, n: tree_sitter::Node<'_>) -> bool {
    let Some(p) = n.parent().filter(|p| p.kind() == kind::BINARY_EXPRESSION) else {
        return false;
    };
    let right = p.child_by_field_name(field::RIGHT).map(|r| r.id()) == Some(n.id());
    let op = p
        .child_by_field_name(field::OPERATOR)
        .map(|o| file.node_text(o))
        .unwrap_or("");
    right && matches!(op, "%" | "/")
}

enum Num {
    Int(i64),
    Float(f64),
}

fn number(t: &str) -> Option<Num> {
    let t = t.trim_end_matches(['u', 'U', 'l', 'L']);
    if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        return i64::from_str_radix(h, 16).ok().map(Num::Int);
    }
    if let Ok(v) = t.parse::<i64>() {
        return (v.abs() <= 1_000_000_000).then_some(Num::Int(v));
    }
    let f = t.trim_end_matches(['f', 'F']);
    f.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && v.abs() <= 1e9)
        .map(Num::Float)
}

/// A `scanf`/`fscanf(stdin, ...)` call with a literal format.
fn scanf_read(file: &ParsedFile, call: tree_sitter::Node<'_>) -> Option<Read> {
    let name = file.node_text(call.child_by_field_name(field::FUNCTION)?);
    let args = call.child_by_field_name(field::ARGUMENTS)?;
    let mut c = args.walk();
    let list: Vec<_> = args.named_children(&mut c).collect();
    let format = match name.trim() {
        "scanf" | "scanf_s" => list.first()?,
        "fscanf" | "fscanf_s"
            if list.first().map(|a| file.node_text(*a).trim()) == Some("stdin") =>
        {
            list.get(1)?
        }
        _ => return None,
    };
    let text = string_value(file, *format)?;
    let pieces = parse_format(&text)?;
    Some(Read {
        pieces,
        in_loop: enclosing_loop(call),
        list: false,
    })
}

/// The value of a string literal (or of adjacent literals), escapes decoded.
fn string_value(file: &ParsedFile, n: tree_sitter::Node<'_>) -> Option<String> {
    match n.kind() {
        kind::STRING_LITERAL => {
            let raw = file.node_text(n);
            let inner = raw.strip_prefix('"')?.strip_suffix('"')?;
            Some(unescape(inner))
        }
        kind::CONCATENATED_STRING => {
            let mut c = n.walk();
            let mut s = String::new();
            for k in n.named_children(&mut c) {
                s.push_str(&string_value(file, k)?);
            }
            Some(s)
        }
        _ => None,
    }
}

fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match it.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some(o) => out.push(o),
            None => {}
        }
    }
    out
}

/// The pieces of a `scanf` format; `None` for a conversion this module does not know.
pub fn parse_format(f: &str) -> Option<Vec<Piece>> {
    let mut out: Vec<Piece> = Vec::new();
    let cs: Vec<char> = f.chars().collect();
    let mut i = 0;
    let mut lit = String::new();
    let flush = |lit: &mut String, out: &mut Vec<Piece>| {
        if !lit.is_empty() {
            out.push(Piece::Literal(std::mem::take(lit)));
        }
    };
    while i < cs.len() {
        let c = cs[i];
        if c.is_whitespace() {
            flush(&mut lit, &mut out);
            if out.last() != Some(&Piece::Space) {
                out.push(Piece::Space);
            }
            i += 1;
            continue;
        }
        if c != '%' {
            lit.push(c);
            i += 1;
            continue;
        }
        i += 1;
        if cs.get(i) == Some(&'%') {
            lit.push('%');
            i += 1;
            continue;
        }
        flush(&mut lit, &mut out);
        if cs.get(i) == Some(&'*') {
            i += 1;
        }
        let mut width = 0usize;
        while let Some(d) = cs.get(i).and_then(|c| c.to_digit(10)) {
            width = width.saturating_mul(10).saturating_add(d as usize);
            i += 1;
        }
        while cs
            .get(i)
            .is_some_and(|c| matches!(c, 'h' | 'l' | 'L' | 'q' | 'j' | 'z' | 't'))
        {
            i += 1;
        }
        let conv = *cs.get(i)?;
        i += 1;
        out.push(match conv {
            'd' | 'i' => Piece::Int {
                unsigned: false,
                radix: 10,
            },
            'u' => Piece::Int {
                unsigned: true,
                radix: 10,
            },
            'x' | 'X' => Piece::Int {
                unsigned: true,
                radix: 16,
            },
            'o' => Piece::Int {
                unsigned: true,
                radix: 8,
            },
            'f' | 'F' | 'e' | 'E' | 'g' | 'G' | 'a' | 'A' => Piece::Float,
            'c' => Piece::Chars(width.max(1)),
            's' => Piece::Word(width),
            '[' => {
                // Skip the set: `]` right after `[` or `[^` belongs to it.
                if cs.get(i) == Some(&'^') {
                    i += 1;
                }
                if cs.get(i) == Some(&']') {
                    i += 1;
                }
                while *cs.get(i)? != ']' {
                    i += 1;
                }
                i += 1;
                Piece::Word(width)
            }
            'n' => continue,
            _ => return None,
        });
    }
    flush(&mut lit, &mut out);
    Some(out)
}

fn enclosing_loop(n: tree_sitter::Node<'_>) -> Option<usize> {
    let mut p = n.parent();
    while let Some(x) = p {
        match x.kind() {
            kind::FOR_STATEMENT
            | kind::WHILE_STATEMENT
            | kind::DO_STATEMENT
            | kind::FOR_RANGE_LOOP => return Some(x.id()),
            kind::FUNCTION_DEFINITION => return None,
            _ => {}
        }
        p = x.parent();
    }
    None
}

/// `argv[k]` uses with a literal index, and how each is read. A use with any other index
/// (`argv[prio]` in a loop) stands for every argument from 1 up to what the program's guard
/// `argc < N` (or `argc != N`, `N` a literal or `#define`d constants added or subtracted)
/// demands, read the same way; without such a guard it reads nothing the shape can tell,
/// and the arguments are those of the literal uses alone.
fn argv_reads(text: &str) -> Vec<Arg> {
    let mut args: Vec<Option<Arg>> = Vec::new();
    let mut variable: Option<Arg> = None;
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(pos) = text[from..].find("argv[") {
        let at = from + pos;
        from = at + 5;
        if at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_') {
            continue;
        }
        let digits: String = text[from..]
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == ' ')
            .filter(|c| !c.is_whitespace())
            .collect();
        let literal = digits.parse::<usize>().ok().filter(|_| {
            text[from..]
                .trim_start_matches([' ', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9'])
                .starts_with(']')
        });
        let how = read_as(&text[..at]);
        let Some(k) = literal else {
            variable = Some(match (variable, how) {
                (Some(Arg::Int), _) | (_, Arg::Int) => Arg::Int,
                (Some(Arg::Float), _) | (_, Arg::Float) => Arg::Float,
                _ => Arg::Word,
            });
            continue;
        };
        if k == 0 || k > 16 {
            continue;
        }
        if args.len() < k {
            args.resize(k, None);
        }
        let slot = &mut args[k - 1];
        // A number read anywhere keeps the argument a number.
        *slot = match (*slot, how) {
            (Some(Arg::Int), _) | (_, Arg::Int) => Some(Arg::Int),
            (Some(Arg::Float), _) | (_, Arg::Float) => Some(Arg::Float),
            _ => Some(Arg::Word),
        };
    }
    if let (Some(how), Some(n)) = (variable, argc_guard(text)) {
        if args.len() < n - 1 {
            args.resize(n - 1, None);
        }
        for slot in &mut args {
            if slot.is_none() {
                *slot = Some(how);
            }
        }
    }
    args.into_iter().map(|a| a.unwrap_or(Arg::Word)).collect()
}

/// The `N` of a guard `argc < N` or `argc != N` (the program needs `N - 1` arguments), with
/// `N` a literal, a `#define`d integer, or those added and subtracted (`(MAXPRIO+1)`); at
/// most 17.
fn argc_guard(text: &str) -> Option<usize> {
    let defines: std::collections::BTreeMap<&str, i64> = text
        .lines()
        .filter_map(|l| {
            let mut w = l.trim().strip_prefix("#define")?.split_whitespace();
            let (name, value) = (w.next()?, w.next()?);
            Some((name, value.parse::<i64>().ok()?))
        })
        .collect();
    let term = |t: &str| -> Option<i64> {
        let t = t.trim();
        t.parse::<i64>().ok().or_else(|| defines.get(t).copied())
    };
    let mut from = 0;
    while let Some(pos) = text[from..].find("argc") {
        let at = from + pos;
        from = at + 4;
        let rest = text[from..].trim_start();
        let Some(rhs) = rest.strip_prefix("!=").or_else(|| {
            rest.strip_prefix('<')
                .filter(|r| !r.starts_with(['=', '<']))
        }) else {
            continue;
        };
        // Up to the `)` that closes the condition (parentheses inside counted).
        let mut depth = 0i32;
        let end = rhs
            .char_indices()
            .find(|&(_, c)| {
                match c {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    _ => {}
                }
                depth < 0 || matches!(c, '&' | '|' | ';' | '{' | '\n')
            })
            .map_or(rhs.len(), |(i, _)| i);
        let expr: String = rhs[..end]
            .chars()
            .filter(|c| !matches!(c, '(' | ')'))
            .collect();
        let mut total = 0i64;
        let mut sign = 1i64;
        let mut ok = true;
        for (i, part) in expr.split_inclusive(['+', '-']).enumerate() {
            let (t, next) = match part.strip_suffix('+') {
                Some(t) => (t, 1),
                None => match part.strip_suffix('-') {
                    Some(t) => (t, -1),
                    None => (part, 1),
                },
            };
            match term(t) {
                Some(v) => total += sign * v,
                None if i == 0 && t.trim().is_empty() => {}
                None => ok = false,
            }
            sign = next;
        }
        if ok && (2..=17).contains(&total) {
            return usize::try_from(total).ok();
        }
    }
    None
}

/// How the `argv` use ending `before` is read: the call it is an argument of (the word
/// before the nearest `(`).
fn read_as(before: &str) -> Arg {
    let Some(b) = before.trim_end().strip_suffix('(') else {
        return Arg::Word;
    };
    let start = b
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map_or(0, |i| i + 1);
    match &b[start..] {
        "atoi" | "atol" | "atoll" | "strtol" | "strtoul" | "strtoll" | "strtoull" => Arg::Int,
        "atof" | "strtod" | "strtof" => Arg::Float,
        _ => Arg::Word,
    }
}

/// A uniform integer in `lo..=hi`.
fn pick(rng: &mut ChaCha8Rng, lo: i64, hi: i64) -> i64 {
    int_in(rng, i128::from(lo), i128::from(hi)) as i64
}

/// A uniform index below `len` (0 when `len` is 0).
fn idx(rng: &mut ChaCha8Rng, len: usize) -> usize {
    super::program::below(rng, len as u64) as usize
}

fn pick_int(r: &Reads, unsigned: bool, rng: &mut ChaCha8Rng) -> i64 {
    let v = match pick(rng, 0, 99) {
        0..=14 if !r.divisors.is_empty() => {
            // A multiple of a divisor (`200` for `% 100`), not always one of a larger one.
            let d = r.divisors[idx(rng, r.divisors.len())];
            d * pick(rng, 1, 12)
        }
        0..=34 if !r.ints.is_empty() => {
            let base = r.ints[idx(rng, r.ints.len())];
            base + pick(rng, -1, 1)
        }
        0..=59 => pick(rng, 0, 10),
        60..=69 => pick(rng, -10, -1),
        70..=94 => pick(rng, -1000, 1000),
        _ => [i32::MAX as i64, i32::MIN as i64, 0, 1, -1][idx(rng, 5)],
    };
    // Python's integers do not overflow, and a line's number is most often a size or a
    // count: a value like the modulus `1000000007` there only makes both sides time out.
    let v = if r.lines && v.abs() > 100_000 {
        pick(rng, 0, 1000)
    } else {
        v
    };
    if unsigned {
        v.unsigned_abs().min(u32::MAX as u64) as i64
    } else {
        v
    }
}

fn pick_float(r: &Reads, rng: &mut ChaCha8Rng) -> String {
    match pick(rng, 0, 99) {
        0..=29 if !r.floats.is_empty() => format!("{}", r.floats[idx(rng, r.floats.len())]),
        0..=49 => format!("{}", pick_int(r, false, rng)),
        _ => {
            let places = idx(rng, 3) + 1;
            let v: f64 = unit(rng) * 200.0 - 100.0;
            format!("{v:.places$}")
        }
    }
}

const WORD_CHARS: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
const CHARS: &[u8] = b"abcxyzABCXYZ0123456789.,;:-+*/()[]{}<>=!?_@#";

fn word(len: usize, rng: &mut ChaCha8Rng) -> String {
    (0..len)
        .map(|_| WORD_CHARS[idx(rng, WORD_CHARS.len())] as char)
        .collect()
}

/// One read and its line end. In line mode a list line gets as many values as the lone
/// integer line just before it says; a count that is negative or too large for a line is
/// rewritten to the number of values drawn (1 to 8).
fn render_line(
    read: &Read,
    r: &Reads,
    rng: &mut ChaCha8Rng,
    out: &mut String,
    last_int: &mut Option<(usize, usize, i64)>,
) {
    let start = out.len();
    match (read.list, read.pieces.first(), last_int.take()) {
        (true, Some(piece), Some((at, end, n))) if r.lines && end == start => {
            let count = if (0..=30).contains(&n) {
                n as usize
            } else {
                let c = idx(rng, 8) + 1;
                out.truncate(at);
                out.push_str(&format!("{c}\n"));
                c
            };
            let one = Read {
                pieces: vec![piece.clone()],
                in_loop: None,
                list: false,
            };
            for k in 0..count {
                if k > 0 {
                    out.push(' ');
                }
                render(&one, r, rng, out);
            }
        }
        // A lone integer on a line is most often a size or a count; a negative one is an
        // input no problem gives, on which two right answers may differ (`range(-1)` against
        // a loop that never ends), so it is drawn non-negative.
        _ if r.lines && matches!(read.pieces.as_slice(), [Piece::Int { .. }]) => {
            let count = Read {
                pieces: vec![Piece::Int {
                    unsigned: true,
                    radix: 10,
                }],
                in_loop: None,
                list: false,
            };
            render(&count, r, rng, out);
        }
        _ => render(read, r, rng, out),
    }
    let value = matches!(read.pieces.as_slice(), [Piece::Int { .. }])
        .then(|| out[start..].trim().parse::<i64>().ok())
        .flatten();
    out.push('\n');
    if let Some(v) = value.filter(|_| r.lines) {
        *last_int = Some((start, out.len(), v));
    }
}

fn render(read: &Read, r: &Reads, rng: &mut ChaCha8Rng, out: &mut String) {
    for p in &read.pieces {
        match p {
            Piece::Literal(s) => out.push_str(s),
            Piece::Space => out.push(' '),
            Piece::Int { unsigned, radix } => {
                let v = pick_int(r, *unsigned, rng);
                match radix {
                    16 => out.push_str(&format!("{:x}", v)),
                    8 => out.push_str(&format!("{:o}", v)),
                    _ => out.push_str(&v.to_string()),
                }
            }
            Piece::Float => out.push_str(&pick_float(r, rng)),
            Piece::Chars(n) => {
                for _ in 0..*n {
                    out.push(CHARS[idx(rng, CHARS.len())] as char);
                }
            }
            Piece::Word(w) => {
                let max = if *w == 0 { 8 } else { (*w).min(8) };
                let len = idx(rng, max) + 1;
                out.push_str(&word(len, rng));
            }
        }
    }
}

/// `count` distinct inputs shaped by `reads` (none when the program reads nothing).
pub fn shaped_inputs(reads: &Reads, count: usize, seed: u64) -> Vec<ShapedInput> {
    if reads.is_empty() || count == 0 {
        return Vec::new();
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    let mut attempts = 0;
    while out.len() < count && attempts < count * 10 {
        attempts += 1;
        let mut stdin = String::new();
        let mut i = 0;
        // Where the last read began when it was a lone integer outside a loop (line mode).
        let mut count_line: Option<usize> = None;
        // The last line read when it was a lone integer (line mode): (start, end, value).
        let mut last_int: Option<(usize, usize, i64)> = None;
        while i < reads.stdin.len() {
            let Some(l) = reads.stdin[i].in_loop else {
                let lone_int = matches!(reads.stdin[i].pieces.as_slice(), [Piece::Int { .. }]);
                count_line = (reads.lines && lone_int).then_some(stdin.len());
                render_line(&reads.stdin[i], reads, &mut rng, &mut stdin, &mut last_int);
                i += 1;
                continue;
            };
            // The reads of one loop, drawn among each other for each turn.
            let group: Vec<&Read> = reads.stdin[i..]
                .iter()
                .take_while(|r| r.in_loop == Some(l))
                .collect();
            i += group.len();
            let turns = [0usize, 1, 2, 3, 4, 5, 6, 8, 10, 16, 24][idx(&mut rng, 11)];
            if let Some(at) = count_line.take() {
                // `t = int(input())` then a loop: `t` counts its turns.
                stdin.truncate(at);
                stdin.push_str(&format!("{turns}\n"));
                last_int = None;
            }
            if reads.lines {
                // A loop body reads its lines in order, every turn.
                for _ in 0..turns {
                    for read in &group {
                        render_line(read, reads, &mut rng, &mut stdin, &mut last_int);
                    }
                }
                continue;
            }
            for t in 0..turns {
                let read = group[idx(&mut rng, group.len())];
                render(read, reads, &mut rng, &mut stdin);
                stdin.push(if t % 8 == 7 { '\n' } else { ' ' });
            }
            stdin.push('\n');
        }
        let args = reads
            .args
            .iter()
            .map(|a| match a {
                Arg::Int => pick_int(reads, false, &mut rng).to_string(),
                Arg::Float => pick_float(reads, &mut rng),
                Arg::Word => {
                    let len = idx(&mut rng, 6) + 1;
                    word(len, &mut rng)
                }
            })
            .collect();
        let x = ShapedInput { stdin, args };
        if seen.insert(x.clone()) {
            out.push(x);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_become_pieces() {
        assert_eq!(
            parse_format("%d,%d,%d").unwrap(),
            vec![
                Piece::Int {
                    unsigned: false,
                    radix: 10
                },
                Piece::Literal(",".into()),
                Piece::Int {
                    unsigned: false,
                    radix: 10
                },
                Piece::Literal(",".into()),
                Piece::Int {
                    unsigned: false,
                    radix: 10
                },
            ]
        );
        assert_eq!(
            parse_format(" %lf %5s%c %[^\n]%%").unwrap(),
            vec![
                Piece::Space,
                Piece::Float,
                Piece::Space,
                Piece::Word(5),
                Piece::Chars(1),
                Piece::Space,
                Piece::Word(0),
                Piece::Literal("%".into()),
            ]
        );
        assert_eq!(parse_format("%p"), None);
    }

    #[test]
    fn reads_of_a_program_in_text_order_with_their_loops() {
        let src = r#"
#include <stdio.h>
int main(int argc, char **argv) {
    int n, a[5], i; unsigned u; char name[9];
    int k = atoi(argv[2]);
    printf("%s", argv[1]);
    scanf("%d %u", &n, &u);
    for (i = 0; i < 5; i++) scanf("%d,", &a[i]);
    fscanf(stdin, "%8s", name);
    fscanf(f, "%d", &n);
    if (n == 42) puts("x");
    if (n % 400 == 0 || n / 7 > 2) puts("y");
    return 0;
}
"#;
        let r = program_reads(&ParsedFile::parse(Language::C, src.to_string()));
        assert_eq!(r.stdin.len(), 3, "{r:?}");
        assert!(r.stdin[0].in_loop.is_none());
        assert!(r.stdin[1].in_loop.is_some());
        assert_eq!(
            r,
            program_reads(&ParsedFile::parse(Language::C, src.to_string())),
            "two parses read alike"
        );
        assert_eq!(r.stdin[2].pieces, vec![Piece::Word(8)]);
        assert_eq!(r.args, vec![Arg::Word, Arg::Int]);
        assert!(r.ints.contains(&42));
        assert_eq!(r.divisors, vec![7, 400]);
        let gen = shaped_inputs(&r, 50, 3);
        assert!(gen.len() >= 40);
        assert_eq!(gen, shaped_inputs(&r, 50, 3), "deterministic");
        for g in &gen {
            let first = g.stdin.lines().next().unwrap();
            let v: Vec<&str> = first.split(' ').collect();
            assert!(
                v[0].parse::<i64>().is_ok() && v[1].parse::<u64>().is_ok(),
                "{g:?}"
            );
            assert_eq!(g.args.len(), 2);
            assert!(g.args[1].parse::<i64>().is_ok());
        }
        assert!(
            gen.iter().any(|g| g.stdin.contains("42")),
            "literals favoured"
        );
        let first =
            |g: &ShapedInput| -> i64 { g.stdin.split(' ').next().unwrap().parse().unwrap() };
        assert!(
            gen.iter().any(|g| first(g) % 400 == 0 && first(g) > 400),
            "multiples of divisors"
        );
        assert!(program_reads(&ParsedFile::parse(
            Language::Java,
            "class A { void f() { System.in.read(); } }\n".to_string()
        ))
        .is_empty());
    }

    #[test]
    fn a_main_without_parameters_reads_no_command_line() {
        let own = "int main() {\n    char *argv[3];\n    argv[1] = \"-v\";\n    argv[2] = \"7\";\n    run(atoi(argv[2]), argv[1]);\n    return 0;\n}\n";
        let file = ParsedFile::parse(Language::C, own.to_string());
        assert!(program_reads(&file).args.is_empty());
        let real = own.replace("int main()", "int main(int argc, char **argv)");
        let file = ParsedFile::parse(Language::C, real);
        let args = program_reads(&file).args;
        assert!(args.len() >= 2 && args[1] == Arg::Int, "{args:?}");
    }

    #[test]
    fn arguments_read_in_a_loop_count_from_the_argc_guard() {
        let sched = "#define MAXPRIO 3\nint main(int argc, char *argv[]) {\n    int p;\n    if (argc < (MAXPRIO+1)) return 1;\n    for (p = MAXPRIO; p >= 1; p--) init(p, atoi(argv[p]));\n    return 0;\n}\n";
        assert_eq!(argv_reads(sched), vec![Arg::Int; 3]);
        // A literal use keeps its own reading; `!=` guards count too.
        let mixed = "int main(int argc, char **argv) {\n    if (argc != 4) return 1;\n    puts(argv[1]);\n    for (int i = 2; i < argc; i++) s += atof(argv[i]);\n}\n";
        assert_eq!(argv_reads(mixed), vec![Arg::Word, Arg::Float, Arg::Float]);
        // No guard: a variable index says nothing about how many there are.
        let open = "int main(int argc, char **argv) {\n    for (int i = 1; i < argc; i++) puts(argv[i]);\n}\n";
        assert_eq!(argv_reads(open), Vec::<Arg>::new());
        // A guard the text cannot evaluate (an unknown name) counts nothing.
        let unknown = open.replace("for", "if (argc < LIMIT) return 1;\n    for");
        assert_eq!(argv_reads(&unknown), Vec::<Arg>::new());
        assert_eq!(
            argc_guard("if (argc < 2 + N - 1) return;\n#define N 3\n"),
            Some(4)
        );
        assert_eq!(argc_guard("if (argc <= 3) return;"), None);
    }

    #[test]
    fn python_lines_are_shaped_by_what_they_become() {
        let src = r#"
import sys
t = int(input())
for _ in range(t):
    n = int(input())
    a = [int(x) for x in input().split()]
    name = input().strip()
    if n % 7 == 0:
        print(name)
r = float(sys.stdin.readline())
first, second = input().split()
"#;
        let r = program_reads(&ParsedFile::parse(Language::Python, src.to_string()));
        let int = Piece::Int {
            unsigned: false,
            radix: 10,
        };
        let shapes: Vec<(Vec<Piece>, bool)> = r
            .stdin
            .iter()
            .map(|x| (x.pieces.clone(), x.in_loop.is_some()))
            .collect();
        assert_eq!(
            shapes,
            vec![
                (vec![int.clone()], false),
                (vec![int.clone()], true),
                (
                    vec![int.clone(), Piece::Space, int.clone(), Piece::Space, int],
                    true
                ),
                (vec![Piece::Word(0)], true),
                (vec![Piece::Float], false),
                (vec![Piece::Word(0), Piece::Space, Piece::Word(0)], false),
            ]
        );
        assert!(r.lines && r.ints.contains(&7));
        // The test count counts the loop's turns, and every turn is a line of its own.
        let gen = shaped_inputs(&r, 40, 5);
        assert!(gen.len() >= 30, "{gen:?}");
        for g in &gen {
            let lines: Vec<&str> = g.stdin.lines().collect();
            let t: usize = lines[0].parse().unwrap();
            assert_eq!(lines.len(), 1 + 3 * t + 2, "{g:?}");
            assert!(lines[1 + 3 * t].parse::<f64>().is_ok(), "{g:?}");
            for k in 0..t {
                let n: usize = lines[1 + 3 * k].parse().unwrap();
                assert_eq!(lines[2 + 3 * k].split_whitespace().count(), n, "{g:?}");
            }
        }
        // Several integers on a line, or a list nothing counts: sizes unknown, no shape.
        for src in [
            "n, k = map(int, input().split())\nprint(n + k)\n",
            "a = list(map(int, input().split()))\nprint(max(a))\n",
        ] {
            let r = program_reads(&ParsedFile::parse(Language::Python, src.to_string()));
            assert!(r.stdin.is_empty(), "{src}: {r:?}");
        }
        assert!(gen.iter().any(|g| g.stdin.starts_with("3\n")));
        // `n`, then a list of `n` values: as many values as `n` says, and `n` small enough.
        let src = "n = int(input())\na = list(map(float, input().split()))\nprint(sum(a) / n)\n";
        let r = program_reads(&ParsedFile::parse(Language::Python, src.to_string()));
        assert!(r.stdin[1].list, "{r:?}");
        let gen = shaped_inputs(&r, 40, 9);
        assert!(gen.len() >= 30, "{gen:?}");
        for g in &gen {
            let lines: Vec<&str> = g.stdin.lines().collect();
            let n: usize = lines[0].parse().unwrap();
            assert!(n <= 30, "{g:?}");
            assert_eq!(
                lines.get(1).map_or(0, |l| l.split_whitespace().count()),
                n,
                "{g:?}"
            );
        }
    }
}
