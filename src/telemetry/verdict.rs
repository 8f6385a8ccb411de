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
