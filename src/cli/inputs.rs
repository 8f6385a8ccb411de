//! Collecting input files for the CLI: directory walks (respecting `.gitignore`), language
//! detection, and decoding with per-file errors. This is the only place the CLI reads sources.

use crate::analysis::filerole::{role_path, FileRole};
use crate::analysis::report::{refused_file, FileReport};
use crate::syntax::parse::{decode_source, DEFAULT_MAX_FILE_BYTES};
use crate::syntax::{Cancel, Language, ParsedFile};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Options shared by the commands that read source trees.
#[derive(Debug, Clone, clap::Args)]
pub struct InputArgs {
    /// Files or directories to analyse (directories are walked, honouring .gitignore).
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Force the language (python, java, c, cpp, solidity, javascript, typescript) instead of
    /// detecting it from the extension.
    #[arg(long, value_name = "LANG", value_parser = parse_language)]
    pub lang: Option<Language>,
    /// Files larger than this many bytes are refused with a per-file error.
    #[arg(long, default_value_t = DEFAULT_MAX_FILE_BYTES, value_name = "BYTES")]
    pub max_file_size: usize,
}

pub fn parse_language(s: &str) -> Result<Language, String> {
    Language::from_name(s).ok_or_else(|| {
        format!("unknown language `{s}` (expected python, java, c, cpp, solidity, javascript or typescript)")
    })
}

/// A source file read from disk, not yet parsed.
pub struct SourceFile {
    pub path: String,
    pub language: Language,
    pub text: String,
    /// What part of the project the file is, judged from its path below the directory given
    /// (a file given on its own: its name) and its text.
    pub role: FileRole,
}

/// Inputs sorted into readable sources and refused files.
pub struct Inputs {
    pub sources: Vec<SourceFile>,
    pub refused: Vec<FileReport>,
}

impl Inputs {
    /// Each readable source's role, by its shown path.
    pub fn roles(&self) -> BTreeMap<String, FileRole> {
        self.sources
            .iter()
            .map(|s| (s.path.clone(), s.role))
            .collect()
    }

    /// Parses every readable source.
    pub fn parse(self, cancel: &Cancel) -> (Vec<(String, ParsedFile)>, Vec<FileReport>) {
        let parsed = self
            .sources
            .into_iter()
            .map(|s| {
                let f = ParsedFile::parse_with_cancel(s.language, s.text, cancel);
                (s.path, f)
            })
            .collect();
        (parsed, self.refused)
    }
}

fn display(path: &Path) -> String {
    path.display().to_string()
}

/// Expands directories and reads every file. Never fails as a whole: each problem becomes a
/// refused file with a clear message.
pub fn collect_inputs(args: &InputArgs) -> Inputs {
    // (file, explicit, the directory it was found under)
    let mut files: Vec<(PathBuf, bool, Option<String>)> = Vec::new();
    let mut refused = Vec::new();
    for path in &args.paths {
        if path.is_dir() {
            let mut found = Vec::new();
            for entry in ignore::WalkBuilder::new(path)
                .sort_by_file_name(|a, b| a.cmp(b))
                .build()
            {
                match entry {
                    Ok(e) if e.file_type().is_some_and(|t| t.is_file()) => {
                        let p = e.into_path();
                        let lang = Language::from_path(&p);
                        let keep = match (args.lang, lang) {
                            (Some(forced), Some(detected)) => forced == detected,
                            (_, detected) => detected.is_some(),
                        };
                        if keep {
                            found.push((p, false, Some(display(path))));
                        }
                    }
                    Ok(_) => {}
                    Err(err) => refused.push(refused_file(
                        &display(path),
                        None,
                        format!("cannot walk directory: {err}"),
                    )),
                }
            }
            files.extend(found);
        } else {
            files.push((path.clone(), true, None));
        }
    }
    let mut sources = Vec::new();
    for (path, explicit, root) in files {
        let shown = display(&path);
        let language = args.lang.or_else(|| Language::from_path(&path));
        let Some(language) = language else {
            debug_assert!(explicit);
            refused.push(refused_file(
                &shown,
                None,
                "unknown language (no recognised extension); pass --lang".to_string(),
            ));
            continue;
        };
        let bytes = match std::fs::metadata(&path) {
            Ok(meta) if meta.len() > args.max_file_size as u64 => {
                refused.push(refused_file(
                    &shown,
                    Some(language),
                    format!(
                        "file is {} bytes, over the {}-byte limit; not analysed",
                        meta.len(),
                        args.max_file_size
                    ),
                ));
                continue;
            }
            Ok(_) => std::fs::read(&path),
            Err(e) => Err(e),
        };
        match bytes {
            Err(e) => refused.push(refused_file(
                &shown,
                Some(language),
                format!("cannot read file: {e}"),
            )),
            Ok(bytes) => match decode_source(&bytes, args.max_file_size) {
                Ok(text) => sources.push(SourceFile {
                    role: FileRole::classify(&role_path(&shown, root.as_deref()), text),
                    path: shown,
                    language,
                    text: text.to_string(),
                }),
                Err(e) => refused.push(refused_file(&shown, Some(language), e.to_string())),
            },
        }
    }
    // `.h` is C by default, but headers next to C++ sources are C++ headers.
    if args.lang.is_none() && sources.iter().any(|s| s.language == Language::Cpp) {
        for s in &mut sources {
            if s.language == Language::C && s.path.to_ascii_lowercase().ends_with(".h") {
                s.language = Language::Cpp;
            }
        }
    }
    Inputs { sources, refused }
}
