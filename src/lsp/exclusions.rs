//! Which files are excluded: configured patterns (gitignore syntax, relative to the workspace
//! folder root) and, by default, `.gitignore` files from the folder root down to the file.
//! Anything inside a `.git` directory is always excluded. Excluded files are never parsed and
//! never sent to an LLM.
//!
//! For a file outside every workspace folder, patterns are matched against its file name only
//! (`*.min.js` applies, `vendor/` cannot), and no `.gitignore` is consulted.

use super::config::Settings;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::Match;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// An exclusion matcher for one workspace folder (or for files outside all folders).
pub struct Exclusions {
    root: Option<PathBuf>,
    globs: Gitignore,
    respect_gitignore: bool,
    /// `.gitignore` matchers by directory (`None`: the directory has none).
    gitignores: Mutex<BTreeMap<PathBuf, Option<Arc<Gitignore>>>>,
}

impl std::fmt::Debug for Exclusions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exclusions")
            .field("root", &self.root)
            .field("patterns", &self.globs.len())
            .field("respect_gitignore", &self.respect_gitignore)
            .finish()
    }
}

impl Exclusions {
    /// Builds the matcher; invalid patterns are skipped with a warning.
    pub fn new(root: Option<&Path>, settings: &Settings) -> (Exclusions, Vec<String>) {
        let mut warnings = Vec::new();
        // Paths are always matched relative (stripped by the caller), so the root is empty.
        let mut b = GitignoreBuilder::new("");
        for p in &settings.exclude {
            if let Err(e) = b.add_line(None, p) {
                warnings.push(format!("exclusion pattern `{p}` is invalid ({e}); ignored"));
            }
        }
        let globs = b.build().unwrap_or_else(|e| {
            warnings.push(format!("exclusion patterns could not be compiled ({e})"));
            Gitignore::empty()
        });
        (
            Exclusions {
                root: root.map(Path::to_path_buf),
                globs,
                respect_gitignore: settings.respect_gitignore,
                gitignores: Mutex::new(BTreeMap::new()),
            },
            warnings,
        )
    }

    /// True when `path` (absolute) must not be analysed.
    pub fn is_excluded(&self, path: &Path) -> bool {
        if path.components().any(|c| c.as_os_str() == ".git") {
            return true;
        }
        let Some(root) = &self.root else {
            return match path.file_name() {
                Some(name) => is_ignore(self.globs.matched(Path::new(name), false)),
                None => false,
            };
        };
        let Ok(rel) = path.strip_prefix(root) else {
            return match path.file_name() {
                Some(name) => is_ignore(self.globs.matched(Path::new(name), false)),
                None => false,
            };
        };
        if is_ignore(self.globs.matched_path_or_any_parents(rel, false)) {
            return true;
        }
        if self.respect_gitignore {
            return self.gitignored(root, rel);
        }
        false
    }

    /// Consults `.gitignore` files from the file's directory up to the root; the deepest file
    /// with a matching pattern decides (a `!pattern` re-includes).
    fn gitignored(&self, root: &Path, rel: &Path) -> bool {
        let mut dirs: Vec<PathBuf> = Vec::new();
        let mut cur = rel.parent();
        while let Some(d) = cur {
            dirs.push(d.to_path_buf());
            cur = d.parent();
        }
        // `dirs` goes deepest first and ends with "" (the root itself).
        for d in dirs {
            let Some(gi) = self.gitignore_in(&root.join(&d)) else {
                continue;
            };
            let Ok(below) = rel.strip_prefix(&d) else {
                continue;
            };
            match gi.matched_path_or_any_parents(below, false) {
                Match::Ignore(_) => return true,
                Match::Whitelist(_) => return false,
                Match::None => {}
            }
        }
        false
    }

    fn gitignore_in(&self, dir: &Path) -> Option<Arc<Gitignore>> {
        let mut cache = self.gitignores.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(hit) = cache.get(dir) {
            return hit.clone();
        }
        let file = dir.join(".gitignore");
        let gi = if file.is_file() {
            // Relative matching: build from the lines with an empty root.
            let mut b = GitignoreBuilder::new("");
            if let Ok(text) = std::fs::read_to_string(&file) {
                for line in text.lines() {
                    let _ = b.add_line(None, line);
                }
            }
            b.build().ok().map(Arc::new)
        } else {
            None
        };
        cache.insert(dir.to_path_buf(), gi.clone());
        gi
    }
}

fn is_ignore<T>(m: Match<T>) -> bool {
    matches!(m, Match::Ignore(_))
}
