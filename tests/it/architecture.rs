//! Tidy tests that keep ARCHITECTURE.md's invariants true: layers depend one way, the two front
//! ends (`cli`, `lsp`) never borrow from each other, only `llm` knows HTTP, only `lsp` knows LSP
//! types, pure layers do no I/O, and nothing prints to stdout outside the CLI's output function.
//!
//! Every source file is parsed (`syn`): `use` trees are flattened (grouped, renamed, `self`,
//! `super::` and `crate::` paths resolved against the file's module path), and every other path
//! and macro is visited, macro bodies included, so a path written inside `format!(..)` counts too.
//! Comments and doc text are not code and never count.

use proc_macro2::{TokenStream, TokenTree};
use std::path::{Path, PathBuf};
use syn::visit::Visit;

/// Every `.rs` file under `dir`.
pub(crate) fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// Module path of a source file relative to `src/` (`analysis/cfg/mod.rs` -> `analysis::cfg`,
/// `lib.rs` and `main.rs` -> the crate root; `main.rs` is named `main` so it has a layer).
fn module_path_of(rel: &str) -> Vec<String> {
    let rel = rel.trim_end_matches(".rs");
    if rel == "lib" {
        return Vec::new();
    }
    let mut parts: Vec<String> = rel.split('/').map(str::to_string).collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// Rank of each layer; a module may only use modules of lower or equal rank.
fn rank(module: &str) -> Option<u8> {
    Some(match module {
        "syntax" | "stats" => 0,
        "analysis" => 1,
        "llm" | "crosscheck" => 2,
        "telemetry" | "store" | "eval" | "exec" => 3,
        "lsp" | "cli" => 4,
        "app" | "main" | "" => 5,
        _ => return None,
    })
}

/// The layers that must not do I/O, read the clock or the environment, or print.
const PURE: [&str; 3] = ["syntax", "analysis", "stats"];

/// Paths the pure layers may not name (a path equal to one or below it).
const PURE_BANNED: [&str; 10] = [
    "std::fs",
    "std::net",
    "std::time",
    "std::env",
    "std::process",
    "std::thread",
    "std::io::stdout",
    "std::io::stderr",
    "std::io::stdin",
    "tokio",
];

/// Same-rank modules that must not use each other.
const FRONT_ENDS: [&str; 2] = ["cli", "lsp"];

/// One use of a path or a macro found in a file, already resolved to an absolute path
/// (`crate::x::y` -> `["x", "y"]`, external crates keep their name first).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Use {
    Internal(Vec<String>),
    External(Vec<String>),
    Macro(String),
}

struct Collector<'a> {
    /// The module the code being visited is in (inline `mod m { .. }` blocks push onto it).
    module: Vec<String>,
    /// The crate root's top-level modules, to recognise `use analysis::x` in `lib.rs`.
    top_modules: &'a [String],
    /// True in `main.rs`, where the library is named `crosscheck::`.
    binary: bool,
    out: Vec<Use>,
}

impl Collector<'_> {
    fn resolve(&self, segs: &[String]) -> Option<Use> {
        let first = segs.first()?;
        match first.as_str() {
            "crate" => Some(Use::Internal(segs[1..].to_vec())),
            "crosscheck" if self.binary => Some(Use::Internal(segs[1..].to_vec())),
            "self" => {
                let mut p = self.module.clone();
                p.extend_from_slice(&segs[1..]);
                Some(Use::Internal(p))
            }
            "super" => {
                let mut p = self.module.clone();
                let mut rest = segs;
                while rest.first().is_some_and(|s| s == "super") {
                    p.pop();
                    rest = &rest[1..];
                }
                p.extend_from_slice(rest);
                Some(Use::Internal(p))
            }
            name if self.module.is_empty() && self.top_modules.iter().any(|m| m == name) => {
                Some(Use::Internal(segs.to_vec()))
            }
            _ if segs.len() > 1 => Some(Use::External(segs.to_vec())),
            _ => None,
        }
    }

    fn push(&mut self, segs: &[String]) {
        if let Some(u) = self.resolve(segs) {
            self.out.push(u);
        }
    }

    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let mut full = prefix.clone();
                if n.ident != "self" {
                    full.push(n.ident.to_string());
                }
                self.push_use(&full);
            }
            syn::UseTree::Rename(r) => {
                let mut full = prefix.clone();
                if r.ident != "self" {
                    full.push(r.ident.to_string());
                }
                self.push_use(&full);
            }
            syn::UseTree::Glob(_) => {
                let full = prefix.clone();
                self.push_use(&full);
            }
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.use_tree(prefix, t);
                }
            }
        }
    }

    /// A `use` of a single name (`use tokio;`) still names an external crate.
    fn push_use(&mut self, full: &[String]) {
        match self.resolve(full) {
            Some(u) => self.out.push(u),
            None if full.len() == 1 => self.out.push(Use::External(full.to_vec())),
            None => {}
        }
    }

    /// Paths inside a macro's tokens: runs of `ident :: ident ...`.
    fn tokens(&mut self, ts: TokenStream) {
        let mut run: Vec<String> = Vec::new();
        let mut colons = 0;
        let flush = |me: &mut Self, run: &mut Vec<String>| {
            if run.len() > 1 {
                me.push(run);
            }
            run.clear();
        };
        for tt in ts {
            match tt {
                TokenTree::Ident(i) => {
                    if colons != 2 {
                        flush(self, &mut run);
                    }
                    run.push(i.to_string());
                    colons = 0;
                }
                TokenTree::Punct(p) if p.as_char() == ':' && !run.is_empty() => colons += 1,
                TokenTree::Group(g) => {
                    flush(self, &mut run);
                    colons = 0;
                    self.tokens(g.stream());
                }
                TokenTree::Punct(p) if p.as_char() == '!' && !run.is_empty() => {
                    self.out
                        .push(Use::Macro(run.last().cloned().unwrap_or_default()));
                    flush(self, &mut run);
                    colons = 0;
                }
                _ => {
                    flush(self, &mut run);
                    colons = 0;
                }
            }
        }
        flush(self, &mut run);
    }
}

impl<'ast> Visit<'ast> for Collector<'_> {
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        let mut prefix = Vec::new();
        self.use_tree(&mut prefix, &u.tree);
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        self.module.push(m.ident.to_string());
        syn::visit::visit_item_mod(self, m);
        self.module.pop();
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segs: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        self.push(&segs);
        syn::visit::visit_path(self, p);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        if let Some(last) = m.path.segments.last() {
            self.out.push(Use::Macro(last.ident.to_string()));
        }
        self.tokens(m.tokens.clone());
        syn::visit::visit_macro(self, m);
    }
}

/// What a file (at `rel`, relative to `src/`) uses, resolved.
fn uses_of(rel: &str, text: &str, top_modules: &[String]) -> Result<Vec<Use>, String> {
    let file = syn::parse_file(text).map_err(|e| format!("{rel}: does not parse: {e}"))?;
    let mut c = Collector {
        module: module_path_of(rel),
        top_modules,
        binary: rel == "main.rs",
        out: Vec::new(),
    };
    c.visit_file(&file);
    Ok(c.out)
}

fn starts_with(path: &[String], prefix: &str) -> bool {
    let want: Vec<&str> = prefix.split("::").collect();
    path.len() >= want.len() && path.iter().zip(&want).all(|(a, b)| a == b)
}

/// The violations of one file.
fn violations_in(rel: &str, text: &str, top_modules: &[String]) -> Vec<String> {
    let module = module_path_of(rel)
        .first()
        .cloned()
        .unwrap_or_else(|| if rel == "main.rs" { "main" } else { "" }.into());
    let Some(my_rank) = rank(&module) else {
        return vec![format!(
            "{rel}: module `{module}` has no layer in tests/it/architecture.rs"
        )];
    };
    let uses = match uses_of(rel, text, top_modules) {
        Ok(u) => u,
        Err(e) => return vec![e],
    };
    let mut out = Vec::new();
    for u in uses {
        match &u {
            Use::Internal(path) => {
                let Some(target) = path.first() else { continue };
                if target == &module {
                    continue;
                }
                if let Some(r) = rank(target) {
                    if r > my_rank {
                        out.push(format!(
                            "{rel}: `{module}` (layer {my_rank}) uses `{}` (layer {r})",
                            path.join("::")
                        ));
                    }
                }
                if FRONT_ENDS.contains(&module.as_str()) && FRONT_ENDS.contains(&target.as_str()) {
                    out.push(format!(
                        "{rel}: front end `{module}` borrows from front end `{}`",
                        path.join("::")
                    ));
                }
            }
            Use::External(path) => {
                let name = path.join("::");
                let krate = path[0].as_str();
                if module != "llm" && matches!(krate, "reqwest" | "hyper") {
                    out.push(format!("{rel}: only `llm` may use HTTP (`{name}`)"));
                }
                if module != "lsp" && matches!(krate, "tower_lsp_server" | "lsp_types") {
                    out.push(format!("{rel}: only `lsp` may use LSP types (`{name}`)"));
                }
                if PURE.contains(&module.as_str()) {
                    for banned in PURE_BANNED {
                        if starts_with(path, banned) {
                            out.push(format!("{rel}: pure layer `{module}` uses `{name}`"));
                        }
                    }
                }
            }
            Use::Macro(name) => {
                let prints = matches!(name.as_str(), "println" | "print");
                if PURE.contains(&module.as_str())
                    && (prints || matches!(name.as_str(), "eprintln" | "eprint" | "dbg"))
                {
                    out.push(format!("{rel}: pure layer `{module}` uses `{name}!`"));
                }
                if prints && module != "cli" {
                    out.push(format!(
                        "{rel}: `{name}!` outside the CLI: stdout belongs to the CLI output \
                         function and the LSP protocol"
                    ));
                }
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

#[test]
fn layers_depend_one_way_and_boundaries_hold() {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let top_modules: Vec<String> = std::fs::read_dir(&src)
        .unwrap()
        .flatten()
        .map(|e| {
            e.file_name()
                .to_string_lossy()
                .trim_end_matches(".rs")
                .to_string()
        })
        .collect();
    let mut violations = Vec::new();
    for file in &files {
        let rel = file
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let text = std::fs::read_to_string(file).unwrap();
        violations.extend(violations_in(&rel, &text, &top_modules));
    }
    assert!(
        violations.is_empty(),
        "architecture violations:\n{}",
        violations.join("\n")
    );
    assert!(files.len() > 100, "only {} source files found", files.len());
}

fn tops() -> Vec<String> {
    [
        "syntax",
        "analysis",
        "llm",
        "crosscheck",
        "store",
        "lsp",
        "cli",
        "app",
    ]
    .map(String::from)
    .to_vec()
}

#[test]
fn use_paths_are_resolved_grouped_renamed_and_relative() {
    let check = |rel: &str, text: &str| violations_in(rel, text, &tops());
    // Grouped and nested `use` trees.
    assert_eq!(
        check(
            "analysis/x.rs",
            "use crate::{syntax::Cancel, lsp::{a, b as c}};"
        ),
        [
            "analysis/x.rs: `analysis` (layer 1) uses `lsp::a` (layer 4)",
            "analysis/x.rs: `analysis` (layer 1) uses `lsp::b` (layer 4)"
        ]
    );
    // `super::` climbs the file's module path; two levels up from analysis/taint/x.rs is the root.
    assert!(check("analysis/taint/x.rs", "use super::super::Y;").is_empty());
    assert_eq!(
        check("analysis/taint/x.rs", "use super::super::super::lsp::Z;").len(),
        1
    );
    // `self::` in an inline module stays in the file's module.
    assert!(check("syntax/a.rs", "mod m { use self::lsp::X; }").is_empty());
    // A path in an expression, and one inside a macro's tokens.
    assert_eq!(
        check("syntax/a.rs", "fn f() { crate::llm::ask(); }").len(),
        1
    );
    assert_eq!(
        check(
            "syntax/a.rs",
            "fn f() { let _ = format!(\"{}\", crate::store::X); }"
        )
        .len(),
        1
    );
    // Comments and doc text are not code.
    assert!(check(
        "syntax/a.rs",
        "//! uses crate::lsp\n/// crate::cli\nfn f() {}"
    )
    .is_empty());
    // The front ends never borrow from each other, whatever the direction.
    assert_eq!(check("cli/a.rs", "use crate::lsp::findings;").len(), 1);
    assert_eq!(check("lsp/a.rs", "use crate::cli::print_stdout;").len(), 1);
    assert!(check("app.rs", "use crate::{cli, lsp};").is_empty());
    // In lib.rs a bare module name is the crate's module; main.rs names the library.
    assert!(check("lib.rs", "use lsp::X;").is_empty());
    assert!(check("main.rs", "fn main() { crosscheck::app::main(); }").is_empty());
}

#[test]
fn pure_layers_do_no_io_and_only_the_cli_prints() {
    let check = |rel: &str, text: &str| violations_in(rel, text, &tops());
    assert_eq!(check("syntax/a.rs", "use std::{fs, io::Read};").len(), 1);
    assert_eq!(
        check("analysis/a.rs", "use std::time::{Duration, Instant};").len(),
        2
    );
    assert_eq!(
        check("stats/a.rs", "fn f() { std::env::var(\"X\"); }").len(),
        1
    );
    assert_eq!(check("analysis/a.rs", "use std::thread as t;").len(), 1);
    assert_eq!(check("analysis/a.rs", "use tokio;").len(), 1);
    assert_eq!(
        check("analysis/a.rs", "fn f() { eprintln!(\"x\"); }").len(),
        1
    );
    // A name that merely contains a banned one is not it.
    assert!(check("analysis/a.rs", "fn f() { let setSystemTime = 1; }").is_empty());
    assert!(check("analysis/a.rs", "use crate::analysis::time::X;").is_empty());
    // stdout: the CLI alone prints.
    assert_eq!(check("lsp/a.rs", "fn f() { println!(\"x\"); }").len(), 1);
    assert!(check("cli/a.rs", "fn f() { println!(\"x\"); }").is_empty());
    assert!(check("lsp/a.rs", "fn f() { eprintln!(\"x\"); }").is_empty());
    // HTTP and LSP types stay in their modules.
    assert_eq!(check("exec/a.rs", "use reqwest::Client;").len(), 1);
    assert!(check("llm/a.rs", "use reqwest::Client;").is_empty());
    assert_eq!(
        check("cli/a.rs", "use tower_lsp_server::lsp_types::Url;").len(),
        1
    );
    // Upward use across layers.
    assert_eq!(check("syntax/a.rs", "use crate::analysis::X;").len(), 1);
    assert!(check("analysis/a.rs", "use crate::syntax::X;").is_empty());
}

/// ARCHITECTURE.md's code map matches the tree: every top-level module directory of `src/` has
/// a `### \`src/<module>/\`` section, every file and folder directly inside it is named in that
/// section (`name`, `name.rs` or `name/`), and every section names a directory that exists.
#[test]
fn the_code_map_names_every_module_and_only_existing_ones() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let map = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let mut sections: Vec<(String, String)> = Vec::new();
    for part in map.split("\n### `src/").skip(1) {
        let Some((name, rest)) = part.split_once('`') else {
            continue;
        };
        let body = rest.split("\n## ").next().unwrap_or("");
        sections.push((name.trim_end_matches('/').to_string(), body.to_string()));
    }
    assert!(
        sections.len() >= 12,
        "code map sections: {}",
        sections.len()
    );
    let mut problems = Vec::new();
    for (name, _) in &sections {
        if !root.join("src").join(name).exists() {
            problems.push(format!(
                "the code map has a section for src/{name}, which does not exist"
            ));
        }
    }
    let mut dirs: Vec<_> = std::fs::read_dir(root.join("src"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir() && p.join("mod.rs").exists())
        .collect();
    dirs.sort();
    for dir in dirs {
        let module = dir.file_name().unwrap().to_string_lossy().into_owned();
        let Some((_, body)) = sections.iter().find(|(n, _)| *n == module) else {
            problems.push(format!("src/{module}/ has no section in the code map"));
            continue;
        };
        let mut entries: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for e in entries {
            let file = e.file_name().unwrap().to_string_lossy().into_owned();
            if file == "mod.rs" || !(e.is_dir() || file.ends_with(".rs")) {
                continue;
            }
            let stem = file.trim_end_matches(".rs");
            let named = [
                format!("`{stem}`"),
                format!("`{stem}.rs"),
                format!("`{stem}/"),
                format!(" {stem}.rs"),
                format!("`{module}/{stem}"),
            ]
            .iter()
            .any(|n| body.contains(n.as_str()));
            if !named {
                problems.push(format!(
                    "src/{module}/{file} is not named in its code-map section"
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
