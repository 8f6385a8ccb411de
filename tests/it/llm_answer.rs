//! Spec: reading JSON answers and verdicts out of model text.

use crosscheck::llm::answer::{
    extract_as, extract_json, extract_object, parse_verdict, AnswerError, AnswerSource, Verdict,
};
use serde::Deserialize;
use serde_json::json;

#[test]
fn plain_json_is_read_whole() {
    let a = extract_json(r#"  {"verdict": "Yes", "lines": [3, 4]}  "#).expect("ok");
    assert_eq!(a.value, json!({"verdict": "Yes", "lines": [3, 4]}));
    assert_eq!(a.source, AnswerSource::Whole);
    assert!(!a.repaired);
}

#[test]
fn fenced_json_block_is_read() {
    let text = "Here is my analysis.\n```json\n{\"edges\": [[1, 2]]}\n```\nHope this helps!";
    let a = extract_json(text).expect("ok");
    assert_eq!(a.value, json!({"edges": [[1, 2]]}));
    assert_eq!(a.source, AnswerSource::Fenced);
}

#[test]
fn bare_fence_without_language_tag_is_read() {
    let a = extract_json("```\n[\"f\", \"g\"]\n```").expect("ok");
    assert_eq!(a.value, json!(["f", "g"]));
}

#[test]
fn prose_wrapped_object_is_found() {
    let text = "Sure! The answer, as {requested}, is {\"calls\": [\"main\"]} and that is all.";
    let a = extract_json(text).expect("ok");
    assert_eq!(a.value, json!({"calls": ["main"]}));
    assert_eq!(a.source, AnswerSource::Embedded);
    assert!(!a.repaired);
}

#[test]
fn trailing_text_after_the_value_is_ignored() {
    let a = extract_json("{\"a\": 1}\n\nExplanation: a is one. {not json}").expect("ok");
    assert_eq!(a.value, json!({"a": 1}));
}

#[test]
fn braces_inside_strings_do_not_confuse_the_scanner() {
    let a = extract_json(r#"Answer: {"code": "if (x) { return ]; }", "ok": true} trailing"#)
        .expect("ok");
    assert_eq!(a.value["ok"], json!(true));
}

#[test]
fn truncated_string_value_is_closed_and_flagged() {
    let a =
        extract_json(r#"{"verdict": "No", "reasoning": "the loop at line 4 never"#).expect("ok");
    assert!(a.repaired);
    assert_eq!(a.value["verdict"], json!("No"));
    assert_eq!(a.value["reasoning"], json!("the loop at line 4 never"));
}

#[test]
fn truncated_nested_arrays_are_closed() {
    let a = extract_json("```json\n{\"edges\": [[1, 2], [2, 3], [3,").expect("ok");
    assert!(a.repaired);
    assert_eq!(a.value, json!({"edges": [[1, 2], [2, 3], [3]]}));
}

#[test]
fn truncation_inside_a_key_cuts_back_to_the_last_member() {
    let a = extract_json(r#"{"a": 1, "b": {"c": 2}, "unfinish"#).expect("ok");
    assert!(a.repaired);
    assert_eq!(a.value, json!({"a": 1, "b": {"c": 2}}));
}

#[test]
fn truncated_literal_and_number_are_finished() {
    assert_eq!(
        extract_json("[1, 2, tru").expect("ok").value,
        json!([1, 2, true])
    );
    assert_eq!(
        extract_json("{\"x\": 1.").expect("ok").value,
        json!({"x": 1})
    );
}

#[test]
fn truncated_escape_is_dropped() {
    let a = extract_json(r#"{"s": "tab\"#).expect("ok");
    assert_eq!(a.value, json!({"s": "tab"}));
    let b = extract_json(r#"{"s": "e\u00"#).expect("ok");
    assert_eq!(b.value, json!({"s": "e"}));
}

#[test]
fn truncation_before_any_member_is_an_error_not_an_empty_answer() {
    for text in [r#"{"a"#, "{", r#"{"a":"#, "I think {the answer"] {
        assert!(
            matches!(extract_json(text), Err(AnswerError::Malformed(_))),
            "{text}"
        );
    }
}

#[test]
fn trailing_commas_are_tolerated_and_flagged() {
    let a = extract_json("Result: {\"a\": [1, 2,], }").expect("ok");
    assert_eq!(a.value, json!({"a": [1, 2]}));
    assert!(a.repaired);
}

#[test]
fn repeated_keys_keep_the_last_value_and_are_reported() {
    let a = extract_json(r#"{"v": "Yes", "inner": {"k": 1, "k": 2}, "v": "No"}"#).expect("ok");
    assert_eq!(a.value["v"], json!("No"), "the last occurrence wins");
    assert_eq!(a.value["inner"]["k"], json!(2));
    assert_eq!(
        a.duplicate_keys,
        vec!["/inner/k".to_string(), "/v".to_string()]
    );
}

#[test]
fn reasoning_blocks_are_skipped() {
    let a = extract_json("<think>maybe {\"x\": 0}?</think>\n{\"x\": 1}").expect("ok");
    assert_eq!(a.value, json!({"x": 1}));
    assert_eq!(
        extract_json("<think>still thinking {\"x\""),
        Err(AnswerError::Empty)
    );
}

#[test]
fn empty_and_json_free_answers_are_errors() {
    assert_eq!(extract_json("   "), Err(AnswerError::Empty));
    assert_eq!(
        extract_json("I cannot answer that."),
        Err(AnswerError::NoJson)
    );
    assert!(matches!(
        extract_json("{see below}"),
        Err(AnswerError::Malformed(_))
    ));
}

#[test]
fn object_extraction_skips_arrays() {
    let a = extract_object("See [1] and [2]. {\"ok\": true}").expect("ok");
    assert_eq!(a.value, json!({"ok": true}));
    assert_eq!(
        extract_json("See [1] and [2].").expect("ok").value,
        json!([1])
    );
}

#[test]
fn typed_extraction_reports_missing_fields() {
    #[derive(Deserialize, Debug, PartialEq)]
    struct Answer {
        verdict: String,
        key_lines: Vec<u32>,
    }
    let (t, meta) = extract_as::<Answer>("```json\n{\"verdict\": \"No\", \"key_lines\": [2]}\n```")
        .expect("ok");
    assert_eq!(
        t,
        Answer {
            verdict: "No".into(),
            key_lines: vec![2]
        }
    );
    assert!(!meta.repaired);
    assert!(matches!(
        extract_as::<Answer>("{\"verdict\": \"No\"}"),
        Err(AnswerError::Schema(m)) if m.contains("key_lines")
    ));
}

#[test]
fn excessive_nesting_is_an_error_not_a_crash() {
    let deep = format!("{}{}", "[".repeat(300), "]".repeat(300));
    assert!(extract_json(&deep).is_err());
    let open_only = "[".repeat(100_000);
    assert!(extract_json(&open_only).is_err());
}

#[test]
fn huge_one_line_answer_is_handled() {
    let big = format!("{{\"e\": \"{}\"}}", "1+".repeat(2_000_000));
    let a = extract_json(&big).expect("ok");
    assert!(a.value["e"].as_str().is_some_and(|s| s.len() == 4_000_000));
    let braces = "{".repeat(4_000_000);
    assert!(extract_json(&braces).is_err());
}

/// A tiny deterministic generator (xorshift64*) so the fuzz run is reproducible.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[test]
fn fuzz_random_and_truncated_strings_never_panic() {
    let alphabet: Vec<char> = "{}[]\",:\\u0123456789.eE+-truefalsnl \n\t`json<think>/é\u{1F600}"
        .chars()
        .collect();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for _ in 0..4000 {
        let len = rng.below(64);
        let s: String = (0..len)
            .map(|_| alphabet[rng.below(alphabet.len())])
            .collect();
        let _ = extract_json(&s);
        let _ = extract_object(&s);
        let _ = parse_verdict(&s);
    }
    let doc = r#"{"verdict": "No", "reasoning": "x \"quoted\" \u00e9 {}", "key_lines": {"a": [1, 2.5e3, -4], "b": [true, false, null]}, "nested": [[{"k": []}]]}"#;
    let mut ok_after_first_member = 0;
    for cut in 0..=doc.len() {
        let Some(prefix) = doc.get(..cut) else {
            continue;
        };
        let r = extract_json(prefix);
        let r2 = extract_json(&format!("Answer:\n```json\n{prefix}"));
        assert_eq!(
            r.is_ok(),
            r2.is_ok(),
            "wrapping must not change the outcome at {cut}"
        );
        if let Ok(a) = r {
            assert!(a.value.is_object(), "{prefix}");
            assert_eq!(a.repaired, cut < doc.len(), "{prefix}");
            ok_after_first_member += 1;
        } else {
            // The first member ends at byte 16 (`{"verdict": "No"`); after it, repair must work.
            assert!(cut < 16, "unrepaired prefix of length {cut}: {prefix}");
        }
    }
    assert!(ok_after_first_member > doc.len() - 20);
}

// ----- verdicts -----

#[test]
fn verdict_from_first_word() {
    assert_eq!(
        parse_verdict("Yes. v2 depends on v1 through line 4."),
        Verdict::Yes
    );
    assert_eq!(parse_verdict("**No** - there is no path."), Verdict::No);
    assert_eq!(parse_verdict("TRUE"), Verdict::Yes);
    assert_eq!(parse_verdict("false"), Verdict::No);
}

#[test]
fn verdict_from_answer_marker_wins_over_earlier_words() {
    assert_eq!(
        parse_verdict("No obvious flow at first, but after line 7... Final answer: yes"),
        Verdict::Yes
    );
    assert_eq!(parse_verdict("Let me think.\n\nVerdict: NO"), Verdict::No);
}

#[test]
fn verdict_from_json_answer() {
    assert_eq!(
        parse_verdict(r#"{"verdict": "Yes", "reasoning": "no change"}"#),
        Verdict::Yes
    );
    assert_eq!(
        parse_verdict("```json\n{\"equivalent\": false}\n```"),
        Verdict::No
    );
    assert_eq!(parse_verdict(r#"{"answer": "unknown"}"#), Verdict::Unknown);
    assert_eq!(parse_verdict(r#"{"tainted": null}"#), Verdict::Unknown);
}

#[test]
fn unknown_verdicts_count_as_negative() {
    for text in [
        "I don't know.",
        "Unclear without the callee's body.",
        "It cannot be determined.",
        "",
        "Not necessarily.",
    ] {
        let v = parse_verdict(text);
        assert_eq!(v, Verdict::Unknown, "{text}");
        assert!(!v.is_positive());
    }
    assert!(Verdict::Yes.is_positive());
    assert!(!Verdict::No.is_positive());
}

#[test]
fn words_containing_no_are_not_no() {
    assert_eq!(
        parse_verdict("I know nothing about this; none apply."),
        Verdict::Unknown
    );
    assert_eq!(parse_verdict("The variable is tainted, yes."), Verdict::Yes);
}
