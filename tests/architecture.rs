//! Tidy tests that keep ARCHITECTURE.md's invariants true: layers depend one way, only `llm`
//! knows HTTP, only `lsp` knows LSP types, pure layers do no I/O, and nothing prints to stdout
//! outside the CLI's output function.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// Top-level module of a source file (`src/analysis/cfg.rs` -> `analysis`).
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy()
        .to_string();
    first.trim_end_matches(".rs").to_string()
}

/// Rank of each layer; a module may only use modules of lower or equal rank.
fn rank(module: &str) -> Option<u8> {
    Some(match module {
        "syntax" => 0,
        "stats" => 0,
        "analysis" => 1,
        "llm" | "crosscheck" | "prompts" => 2,
        "telemetry" | "store" | "config" | "eval" | "exec" => 3,
        "lsp" | "cli" | "main" | "lib" => 4,
        _ => return None,
    })
}

/// Code lines only: comment lines are skipped so docs may mention other layers.
fn code_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines().enumerate().filter(|(_, l)| {
        let t = l.trim_start();
        !(t.starts_with("//") || t.starts_with("*") || t.starts_with("/*"))
    })
}

#[test]
fn layers_depend_one_way_and_boundaries_hold() {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut violations = Vec::new();
    for file in &files {
        let module = module_of(&src, file);
        let Some(my_rank) = rank(&module) else {
            violations.push(format!(
                "{}: module `{module}` has no layer in tests/architecture.rs",
                file.display()
            ));
            continue;
        };
        let text = std::fs::read_to_string(file).unwrap();
        for (i, line) in code_lines(&text) {
            let at = format!("{}:{}", file.display(), i + 1);
            let mut rest = line;
            while let Some(pos) = rest.find("crate::") {
                let tail = &rest[pos + 7..];
                let target: String = tail
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if let Some(r) = rank(&target) {
                    if r > my_rank {
                        violations.push(format!(
                            "{at}: `{module}` (layer {my_rank}) uses `{target}` (layer {r})"
                        ));
                    }
                }
                rest = tail;
            }
            if module != "llm" && (line.contains("reqwest") || line.contains("hyper::")) {
                violations.push(format!("{at}: only `llm` may use HTTP"));
            }
            if module != "lsp" && (line.contains("tower_lsp_server") || line.contains("lsp_types"))
            {
                violations.push(format!("{at}: only `lsp` may use LSP types"));
            }
            if matches!(module.as_str(), "syntax" | "analysis" | "stats") {
                for banned in [
                    "std::fs",
                    "std::net",
                    "std::time::Instant",
                    "SystemTime",
                    "std::env",
                    "tokio",
                    "println!",
                    "print!(",
                    "eprintln!",
                    "eprint!(",
                ] {
                    if contains_token(line, banned) {
                        violations.push(format!("{at}: pure layer `{module}` uses `{banned}`"));
                    }
                }
            }
            if module != "cli"
                && (line.contains("println!") || line.contains("print!("))
                && !line.contains("eprint")
            {
                violations.push(format!(
                    "{at}: stdout belongs to the CLI output function and the LSP protocol"
                ));
            }
        }
    }
    assert!(
        violations.is_empty(),
        "architecture violations:\n{}",
        violations.join("\n")
    );
}

/// `needle` in `line` where it starts a name: not inside a longer identifier, so a JavaScript
/// rule about `setSystemTime` is not a use of `SystemTime`.
fn contains_token(line: &str, needle: &str) -> bool {
    line.match_indices(needle).any(|(i, _)| {
        !line[..i]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

#[test]
fn banned_names_match_whole_names_only() {
    assert!(contains_token("let t = SystemTime::now();", "SystemTime"));
    assert!(contains_token("use std::time::SystemTime;", "SystemTime"));
    assert!(!contains_token("\"setSystemTime\" => true,", "SystemTime"));
    assert!(contains_token("std::fs::read(p)", "std::fs"));
}
