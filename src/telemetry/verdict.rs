//! Binary verdicts carried by records (data dependency, taint, equivalence, ...).
//!
//! A normalised answer carries a binary verdict when it is a JSON boolean, a verdict string
//! (`"yes"`/`"no"`/`"true"`/`"false"`/`"1"`/`"0"`, any case; `"unknown"` counts as no, as in
//! the research notes), or an object whose `"verdict"` key holds one of those (`null` there is
//! unknown, hence no). Anything else (an AST, a CFG, a points-to set) carries none.
//!
//! The LLM's verdict of a record is the majority over its parsed samples that carry one; a tie
//! gives none (the record is then left out of the LLM-vs-analyzer figures).

use serde_json::Value;

use crate::crosscheck::record::CrossCheckRecord;
use crate::stats::labels::binary_token;

fn word(s: &str) -> Option<bool> {
    binary_token(s).or_else(|| s.trim().eq_ignore_ascii_case("unknown").then_some(false))
}

/// The binary verdict of a normalised answer, if it carries one.
pub fn binary_verdict(answer: &Value) -> Option<bool> {
    match answer {
        Value::Bool(b) => Some(*b),
        Value::String(s) => word(s),
        Value::Object(map) => match map.get("verdict")? {
            Value::Bool(b) => Some(*b),
            Value::String(s) => word(s),
            Value::Null => Some(false),
            _ => None,
        },
        _ => None,
    }
}

/// The analyzer's verdict of a record.
pub fn analyzer_verdict(record: &CrossCheckRecord) -> Option<bool> {
    binary_verdict(&record.analyzer)
}

/// The LLM's majority verdict over the record's parsed samples (`None` on a tie or if no
/// sample carries a verdict).
pub fn llm_verdict(record: &CrossCheckRecord) -> Option<bool> {
    let (mut yes, mut no) = (0usize, 0usize);
    for sample in record.samples.iter().filter(|s| s.parsed) {
        match binary_verdict(&sample.answer) {
            Some(true) => yes += 1,
            Some(false) => no += 1,
            None => {}
        }
    }
    match yes.cmp(&no) {
        std::cmp::Ordering::Greater => Some(true),
        std::cmp::Ordering::Less => Some(false),
        std::cmp::Ordering::Equal => None,
    }
}

/// The analyzer's per-item verdicts of a record that asked several yes/no questions at once
/// (`taint`: `{"variables": [{"id", "tainted"}]}`, `data_dependency`:
/// `{"questions": [{"id", "dependent"}]}`), by question id.
fn analyzer_items(record: &CrossCheckRecord) -> Vec<(String, bool)> {
    let a = &record.analyzer;
    let (list, key) = match (a.get("variables"), a.get("questions")) {
        (Some(Value::Array(l)), _) => (l, "tainted"),
        (_, Some(Value::Array(l))) => (l, "dependent"),
        _ => return Vec::new(),
    };
    list.iter()
        .filter_map(|q| {
            let id = match q.get("id")? {
                Value::Number(n) => n.to_string(),
                Value::String(s) => s.clone(),
                _ => return None,
            };
            let v = match q.get(key)? {
                Value::Bool(b) => *b,
                Value::String(s) => word(s)?,
                _ => return None,
            };
            Some((id, v))
        })
        .collect()
}

/// Every paired (LLM, analyzer) verdict of a record: one pair for a record with a single
/// verdict (a taint flow, an equivalence), one per question for a record that asked several
/// at once (a function's variables for taint, variable pairs for data dependency), where the
/// LLM's verdict per question is the majority over the parsed samples (an unanswered question
/// counts as "unknown", hence no; a tie leaves the question out). Empty when the record
/// carries no binary verdicts.
pub fn verdict_pairs(record: &CrossCheckRecord) -> Vec<(bool, bool)> {
    if let Some(reference) = analyzer_verdict(record) {
        return llm_verdict(record)
            .map(|l| vec![(l, reference)])
            .unwrap_or_default();
    }
    let items = analyzer_items(record);
    let parsed: Vec<&Value> = record
        .samples
        .iter()
        .filter(|s| s.parsed)
        .map(|s| &s.answer)
        .collect();
    if items.is_empty() || parsed.is_empty() {
        return Vec::new();
    }
    items
        .into_iter()
        .filter_map(|(id, reference)| {
            let yes = parsed
                .iter()
                .filter(|a| a.get(&id).and_then(binary_verdict) == Some(true))
                .count();
            let no = parsed.len() - yes;
            match yes.cmp(&no) {
                std::cmp::Ordering::Greater => Some((true, reference)),
                std::cmp::Ordering::Less => Some((false, reference)),
                std::cmp::Ordering::Equal => None,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn verdict_shapes() {
        assert_eq!(binary_verdict(&json!(true)), Some(true));
        assert_eq!(binary_verdict(&json!("No")), Some(false));
        assert_eq!(binary_verdict(&json!("unknown")), Some(false));
        assert_eq!(
            binary_verdict(&json!({"verdict": "yes", "lines": [3]})),
            Some(true)
        );
        assert_eq!(binary_verdict(&json!({"verdict": null})), Some(false));
        assert_eq!(binary_verdict(&json!({"nodes": []})), None);
        assert_eq!(binary_verdict(&json!("maybe later")), None);
        assert_eq!(binary_verdict(&json!(1)), None);
    }
}
