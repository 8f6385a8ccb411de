//! Which questions the server asks about a document. The questions themselves are prepared
//! by the core (`crosscheck::facts::prepare_flow` and `prepare`), exactly as `crosscheck ask`
//! prepares them; this module only chooses them:
//!
//! * **One per taint finding shown** ([`flow_jobs`]): can the source's value reach the sink
//!   without sanitisation? The code units are the functions the flow's path passes through
//!   (in this file or others), or, for code outside functions, the lines around it
//!   (`crosscheck::facts::FlowFiles::question`, which `crosscheck check --llm` uses too).
//! * **Function tasks** ([`function_jobs`]): the configured tasks (`llm.tasks`, default CFG
//!   and call graph) for the functions `llm.function_checks` selects (default: those edited
//!   since the document was opened), scored with the Layer-1 metrics.
//!
//! Opening a file therefore costs at most one request per taint finding; an edit costs one
//! per changed function and task; an unchanged question costs nothing (its job key and the
//! answer cache are content-addressed).

use super::engine::{stable_hash, FileAnalysis, FunctionFacts};
use super::findings::{is_taint_rule, Finding};
use super::scheduler::{CheckJob, Subject};
use crate::crosscheck::facts::{prepare, FileFacts, FlowFiles, PrepareOptions};
use crate::crosscheck::taint_oracle::AnalyzerTaint;
use crate::crosscheck::task::Task;
use crate::syntax::functions::FunctionKind;
use crate::syntax::{Cancel, ParsedFile};
use std::collections::BTreeMap;
use std::sync::Arc;

/// At most this many flow questions per document (the rest stay analyzer-only, unasked).
pub const MAX_FLOW_JOBS: usize = 200;

/// The key of a taint finding's question: its fingerprint plus its source (two flows into
/// one sink are two questions). Independent of line numbers, and the same whether the flow
/// comes from the file-local or the workspace analysis (their intermediate steps may differ).
pub fn flow_key(fingerprint: &str, f: &Finding) -> String {
    let mut parts: Vec<&str> = vec![fingerprint];
    if let Some(source) = f.path.first() {
        parts.push(&source.file);
        parts.push(&source.text);
    }
    stable_hash(&parts)
}

/// The job slot of a flow question.
pub fn flow_slot(key: &str) -> String {
    format!("flow:{key}")
}

/// The job slot of a function task.
pub fn function_slot(fn_id: &str, task: Task) -> String {
    format!("fn:{fn_id}:{}", task.name())
}

/// Parsed text of another workspace file, by unit path.
pub type OtherFiles<'a> = dyn Fn(&str) -> Option<Arc<ParsedFile>> + 'a;

/// One question per taint finding (`findings` with their fingerprints, as shown), about the
/// document parse `parsed` and the other files on the flows' paths.
pub fn flow_jobs(
    a: &FileAnalysis,
    findings: &[(Finding, String)],
    parsed: &ParsedFile,
    other: &OtherFiles<'_>,
) -> Vec<CheckJob> {
    let mut others: BTreeMap<String, Arc<ParsedFile>> = BTreeMap::new();
    for (f, _) in findings.iter().filter(|(f, _)| is_taint_rule(&f.rule)) {
        for e in f.path.iter().filter(|e| e.file != a.path) {
            if !others.contains_key(&e.file) {
                if let Some(p) = other(&e.file) {
                    others.insert(e.file.clone(), p);
                }
            }
        }
    }
    let file = |p: &str| -> Option<&ParsedFile> {
        if p == a.path {
            Some(parsed)
        } else {
            others.get(p).map(|x| x.as_ref())
        }
    };
    let mut files = FlowFiles::new(&file);
    let mut jobs = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for (f, fingerprint) in findings.iter().filter(|(f, _)| is_taint_rule(&f.rule)) {
        if jobs.len() >= MAX_FLOW_JOBS {
            break;
        }
        if f.path.is_empty() {
            continue;
        }
        let key = flow_key(fingerprint, f);
        if !seen.insert(key.clone()) {
            continue;
        }
        match files.question(&a.path, &f.rule, &f.path) {
            Ok(q) => jobs.push(CheckJob {
                doc: a.uri.clone(),
                version: a.version,
                slot: flow_slot(&key),
                subject: Subject::Finding { key },
                label: format!("{} at line {}", f.rule, f.line),
                question: Arc::new(q),
            }),
            Err(e) => tracing::debug!("no question for {} at line {}: {e}", f.rule, f.line),
        }
    }
    jobs
}

/// The configured function tasks for the functions `include` selects. `parsed` must be the
/// parse the analysis was made from.
pub fn function_jobs(
    a: &FileAnalysis,
    parsed: &ParsedFile,
    tasks: &[Task],
    include: &dyn Fn(&FunctionFacts) -> bool,
    max_questions: usize,
    cancel: &Cancel,
) -> Vec<CheckJob> {
    let chosen: Vec<&FunctionFacts> = a
        .functions
        .iter()
        .filter(|f| f.kind != FunctionKind::Lambda && include(f))
        .collect();
    if chosen.is_empty() || tasks.is_empty() {
        return Vec::new();
    }
    let mut facts = FileFacts::new(&a.path, parsed);
    let index: BTreeMap<(usize, String), usize> = facts
        .functions
        .iter()
        .enumerate()
        .map(|(i, f)| ((f.node.start_byte(), f.name.clone()), i))
        .collect();
    let positions: Vec<(usize, &FunctionFacts)> = chosen
        .iter()
        .filter_map(|f| index.get(&(f.start_byte, f.name.clone())).map(|i| (*i, *f)))
        .collect();
    let options = PrepareOptions { max_questions };
    let taint = AnalyzerTaint;
    let mut jobs = Vec::new();
    for (i, f) in positions {
        for &task in tasks {
            if cancel.is_cancelled() {
                return jobs;
            }
            match prepare(task, &mut facts, i, Some(&taint), &options, cancel) {
                Ok(q) => jobs.push(CheckJob {
                    doc: a.uri.clone(),
                    version: a.version,
                    slot: function_slot(&f.id, task),
                    subject: Subject::Function { id: f.id.clone() },
                    label: format!("{} of {}", task.name(), f.name),
                    question: Arc::new(q),
                }),
                Err(e) => tracing::debug!("no {} question for {}: {e}", task.name(), f.name),
            }
        }
    }
    jobs
}
