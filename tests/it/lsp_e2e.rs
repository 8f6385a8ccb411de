//! End-to-end tests of the language server over an in-memory pipe (the real `LspService`),
//! one test per behaviour of the protocol surface.

use crate::lsp_support;

use crosscheck::llm::{FakeClient, FakeReply};
use lsp_support::*;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};

const BROKEN_PY: &str =
    "def ok(a):\n    if a:\n        return 1\n    return 2\n\ndef bad(:\n    pass\n";

/// Two command injections (sinks on lines 8 and 11), each in its own function.
const FLOW_PY: &str = "import os\ndef work(xs):\n    total = 0\n    for x in xs:\n        if x > 0:\n            total += x\n    cmd = input()\n    os.system(cmd)\n    return total\ndef other():\n    os.system(input())\n";

const LOOPS_PY: &str = "def work(xs):\n    total = 0\n    for x in xs:\n        if x > 0:\n            total += x\n        else:\n            total -= 1\n    while total > 10:\n        total -= 10\n    return total\n";

#[tokio::test]
async fn open_publishes_syntax_errors_with_the_document_version_and_data() {
    let (c, _s) = start(no_llm(), init_params(None, false, Value::Null)).await;
    open(&c, "file:///w/broken.py", "python", 7, BROKEN_PY).await;
    let diags = diagnostics(&c, "file:///w/broken.py", 7).await;
    let syntax: Vec<&Value> = diags
        .iter()
        .filter(|d| d["code"] == "syntax-error")
        .collect();
    assert!(!syntax.is_empty(), "{diags:?}");
    let d = syntax[0];
    assert_eq!(d["severity"], 1);
    assert_eq!(d["source"], "crosscheck");
    assert_eq!(
        d["range"]["start"]["line"], 5,
        "the error is on line 6 (0-based 5)"
    );
    assert_eq!(d["data"]["tier"], "analyzer-only");
    assert_eq!(d["data"]["rule"], "syntax-error");
    assert_eq!(
        d["data"]["partial"], true,
        "code that does not parse: partial result"
    );
    assert!(d["data"]["llm"].is_null());
    // The fingerprint `crosscheck check` writes to SARIF: 32 hex digits and a counter.
    assert!(
        d["data"]["fingerprint"]
            .as_str()
            .is_some_and(|s| s.len() == 34
                && s.ends_with(":1")
                && s[..32].chars().all(|c| c.is_ascii_hexdigit())),
        "{d}"
    );
    // The function that parses is still analysed: hover works on it.
    let h = hover_text(&c, "file:///w/broken.py", 1, 4).await;
    assert!(h.contains("`ok(a)`"), "{h}");
    assert!(h.contains("1 branch"), "{h}");
}

#[tokio::test]
async fn clean_file_gets_an_empty_publication() {
    let (c, _s) = start(no_llm(), init_params(None, false, Value::Null)).await;
    open(&c, "file:///w/clean.py", "python", 1, LOOPS_PY).await;
    assert!(diagnostics(&c, "file:///w/clean.py", 1).await.is_empty());
}

#[tokio::test]
async fn hover_shows_cfg_summary_and_that_no_llm_is_configured() {
    let (c, _s) = start(no_llm(), init_params(None, false, Value::Null)).await;
    open(&c, "file:///w/loops.py", "python", 1, LOOPS_PY).await;
    diagnostics(&c, "file:///w/loops.py", 1).await;
    let h = hover_text(&c, "file:///w/loops.py", 2, 6).await;
    assert!(h.contains("**`work(xs)`**"), "{h}");
    assert!(h.contains("1 branch"), "{h}");
    assert!(h.contains("2 loops"), "{h}");
    assert!(h.contains("cyclomatic 4"), "{h}");
    assert!(h.contains("LLM not configured"), "{h}");
    // Outside any function: no hover.
    let r = c
        .request(
            "textDocument/hover",
            json!({"textDocument": {"uri": "file:///w/loops.py"}, "position": {"line": 40, "character": 0}}),
        )
        .await
        .unwrap();
    assert!(r.is_null());
}

#[tokio::test]
async fn no_llm_is_announced_once_with_show_message() {
    let (c, _s) = start(no_llm(), init_params(None, false, Value::Null)).await;
    c.wait_message("window/showMessage", 0, T, |p| {
        p["message"]
            .as_str()
            .unwrap_or("")
            .contains("LLM not configured")
    })
    .await
    .expect("showMessage about the missing LLM");
    open(&c, "file:///w/a.py", "python", 1, LOOPS_PY).await;
    diagnostics(&c, "file:///w/a.py", 1).await;
    let r = c
        .request(
            "workspace/executeCommand",
            json!({"command": "crosscheck.explain", "arguments": [{"uri": "file:///w/a.py", "line": 1, "character": 4}]}),
        )
        .await
        .unwrap();
    assert_eq!(r["status"], "unavailable");
    assert!(r["message"]
        .as_str()
        .unwrap()
        .contains("LLM not configured"));
    let initial = c
        .messages("window/showMessage")
        .iter()
        .filter(|m| m["params"]["type"] == 3)
        .count();
    assert_eq!(initial, 1, "the INFO notice is sent once");
}

fn taint_diags(p: &Value) -> Vec<Value> {
    p["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "taint-command")
        .cloned()
        .collect()
}

#[tokio::test]
async fn each_taint_finding_is_asked_about_and_its_answer_decides_its_tier() {
    for (answer, tier) in [
        ("yes", "confirmed"),
        ("no", "analyzer-only"),
        ("unknown", "analyzer-only"),
    ] {
        let fake = scripted(answer);
        let (c, _s) = start(
            with_fake(fake.clone(), 0),
            init_params(None, false, Value::Null),
        )
        .await;
        let uri = "file:///w/flows.py";
        open(&c, uri, "python", 1, FLOW_PY).await;
        let first = diagnostics(&c, uri, 1).await;
        let before = first
            .iter()
            .filter(|d| d["code"] == "taint-command")
            .count();
        assert_eq!(before, 2, "{first:?}");
        wait_llm_idle(&c).await;
        // One request per finding, none for the functions (not edited).
        assert_eq!(fake.request_count(), 2, "{answer}");
        assert!(fake
            .requests()
            .iter()
            .all(|r| r.schema_name.as_deref() == Some("taint_flow")));
        let p = c
            .wait_message("textDocument/publishDiagnostics", 0, T, |p| {
                p["uri"] == uri
                    && taint_diags(p).len() == 2
                    && taint_diags(p).iter().all(|d| !d["data"]["llm"].is_null())
            })
            .await
            .expect("republished with both answers")
            .1;
        for d in taint_diags(&p) {
            assert_eq!(d["data"]["tier"], tier, "{answer}: {d}");
            // `input()` is local: an information under the default trust profile.
            assert_eq!(d["severity"], 3, "the flow's severity, whatever the answer");
            let llm = &d["data"]["llm"];
            assert_eq!(llm["task"], "taint");
            assert_eq!(llm["verdict"], answer);
            assert_eq!(llm["samples"], 1);
            assert_eq!(llm["models"][0]["model"], "fake:fake");
            assert!(
                llm["template"].as_str().unwrap().starts_with("taint_flow/"),
                "{llm}"
            );
            assert_eq!(llm["cached"], false);
        }
        assert!(
            p["diagnostics"]
                .as_array()
                .unwrap()
                .iter()
                .all(|d| d["data"]["tier"] != "llm-only"),
            "no LLM-only diagnostic from a yes/no question"
        );
        let h = hover_text(&c, uri, 1, 5).await;
        assert!(h.contains(&format!("**{tier}** (answer {answer}")), "{h}");
    }
}

#[tokio::test]
async fn code_actions_offer_suppress_label_and_llm_commands() {
    let (c, _s) = start(no_llm(), init_params(None, false, Value::Null)).await;
    let uri = "file:///w/broken.py";
    open(&c, uri, "python", 1, BROKEN_PY).await;
    let diags = diagnostics(&c, uri, 1).await;
    let d = diags.iter().find(|d| d["code"] == "syntax-error").unwrap();
    let line = d["range"]["start"]["line"].as_u64().unwrap() as u32;
    let actions = c
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": range(line, 0, line, 0),
                   "context": {"diagnostics": []}}),
        )
        .await
        .unwrap();
    let titles: Vec<String> = actions
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["title"].as_str().unwrap().to_string())
        .collect();
    assert!(
        titles.iter().any(|t| t.contains("suppress `syntax-error`")),
        "{titles:?}"
    );
    assert!(
        titles.iter().any(|t| t.contains("as correct")),
        "{titles:?}"
    );
    assert!(
        titles.iter().any(|t| t.contains("as incorrect")),
        "{titles:?}"
    );
    let suppress = actions
        .as_array()
        .unwrap()
        .iter()
        .find(|a| {
            a["title"]
                .as_str()
                .unwrap()
                .contains("suppress `syntax-error`")
        })
        .unwrap();
    let edit = &suppress["edit"]["changes"][uri][0];
    assert_eq!(edit["newText"], "# crosscheck: ignore[syntax-error]\n");
    assert_eq!(edit["range"]["start"]["line"], line);
    // Applying the edit hides the finding (the comment is documented suppression syntax).
    change(
        &c,
        uri,
        2,
        json!([{"range": edit["range"], "text": edit["newText"]}]),
    )
    .await;
    let after = diagnostics(&c, uri, 2).await;
    assert!(
        !codes(&after).contains(&"syntax-error".to_string()),
        "{after:?}"
    );
    // Function-level commands on a function.
    let actions = c
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": range(1, 4, 1, 4), "context": {"diagnostics": []}}),
        )
        .await
        .unwrap();
    let cmds: Vec<String> = actions
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| a["command"].as_str().map(str::to_string))
        .collect();
    assert!(
        cmds.contains(&"crosscheck.explain".to_string()),
        "{actions}"
    );
    assert!(
        cmds.contains(&"crosscheck.compareCfg".to_string()),
        "{actions}"
    );
}

#[tokio::test]
async fn mark_correct_stores_a_label_through_the_record_sink() {
    let sink = Arc::new(MemorySink::default());
    let mut opts = no_llm();
    opts.records = Some(sink.clone());
    opts.clock = || 1_700_000_000;
    let (c, _s) = start(opts, init_params(None, false, Value::Null)).await;
    let uri = "file:///w/broken.py";
    open(&c, uri, "python", 1, BROKEN_PY).await;
    let diags = diagnostics(&c, uri, 1).await;
    let d = diags.iter().find(|d| d["code"] == "syntax-error").unwrap();
    let fp = d["data"]["fingerprint"].clone();
    let r = c
        .request(
            "workspace/executeCommand",
            json!({"command": "crosscheck.markIncorrect",
                   "arguments": [{"uri": uri, "rule": "syntax-error", "line": 5, "fingerprint": fp}]}),
        )
        .await
        .unwrap();
    assert_eq!(r["stored"], true);
    let labels = sink.labels.lock().unwrap().clone();
    assert_eq!(labels.len(), 1);
    assert_eq!(labels[0].subject, fp.as_str().unwrap());
    assert!(!labels[0].correct);
    assert_eq!(labels[0].timestamp, 1_700_000_000);
    // The user is told, not only the client's code.
    let shown: Vec<String> = c
        .messages("window/showMessage")
        .iter()
        .map(|m| m["params"]["message"].as_str().unwrap_or("").to_string())
        .collect();
    assert!(
        shown
            .iter()
            .any(|m| m.contains("finding marked as incorrect")),
        "{shown:?}"
    );
}

#[tokio::test]
async fn mark_without_a_store_says_so_and_bad_arguments_are_rejected() {
    let (c, _s) = start(no_llm(), init_params(None, false, Value::Null)).await;
    let r = c
        .request(
            "workspace/executeCommand",
            json!({"command": "crosscheck.markCorrect", "arguments": [{"fingerprint": "abc"}]}),
        )
        .await
        .unwrap();
    assert_eq!(r["stored"], false);
    assert!(r["message"]
        .as_str()
        .unwrap()
        .contains("no telemetry store"));
    let e = c
        .request(
            "workspace/executeCommand",
            json!({"command": "crosscheck.markCorrect", "arguments": []}),
        )
        .await
        .unwrap_err();
    assert_eq!(e["code"], -32602);
    let e = c
        .request(
            "workspace/executeCommand",
            json!({"command": "nope", "arguments": []}),
        )
        .await
        .unwrap_err();
    assert_eq!(e["code"], -32602);
}

/// Applies LSP incremental edits to a string (UTF-16 columns), with the server's documented
/// clamping: a column inside a character rounds down to its start, past the end of a line
/// to the line's end.
fn apply_utf16(text: &str, line: u32, col: u32, end_line: u32, end_col: u32, new: &str) -> String {
    let offset = |l: u32, c: u32| -> usize {
        let mut start = 0usize;
        for _ in 0..l {
            start = text[start..]
                .find('\n')
                .map(|i| start + i + 1)
                .unwrap_or(text.len());
        }
        let line_end = text[start..]
            .find('\n')
            .map(|i| start + i)
            .unwrap_or(text.len());
        let mut units = 0u32;
        for (i, ch) in text[start..line_end].char_indices() {
            let next = units + ch.len_utf16() as u32;
            if next > c {
                return start + i;
            }
            units = next;
        }
        line_end
    };
    let a = offset(line, col);
    let b = offset(end_line, end_col);
    format!("{}{}{}", &text[..a], new, &text[b..])
}

#[tokio::test]
async fn three_hundred_rapid_incremental_edits_end_equal_to_a_fresh_open() {
    let (c, _s) = start(no_llm(), init_params(None, false, Value::Null)).await;
    let uri = "file:///w/edit.py";
    let mut text = String::from("def f(a):\n    return a\n");
    open(&c, uri, "python", 1, &text).await;
    diagnostics(&c, uri, 1).await;
    // A deterministic pseudo-random edit script: inserts, deletions and replacements,
    // including non-ASCII text, sent without waiting for any response.
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n.max(1)
    };
    let pieces = [
        "x",
        " + 1",
        "\n    y = 2",
        "é",
        "😀",
        "(",
        ")",
        ":",
        "\n",
        "def g():\n    pass\n",
    ];
    for v in 2..302i64 {
        let lines: Vec<&str> = text.split('\n').collect();
        let l0 = next(lines.len() as u64) as u32;
        let len0 = lines[l0 as usize].encode_utf16().count() as u64;
        let c0 = next(len0 + 1) as u32;
        let (l1, c1) = if next(3) == 0 {
            let l1 = (l0 + next(2) as u32).min(lines.len() as u32 - 1);
            let len1 = lines[l1 as usize].encode_utf16().count() as u64;
            let c1 = if l1 == l0 {
                c0 + next(len0 - c0 as u64 + 1) as u32
            } else {
                next(len1 + 1) as u32
            };
            (l1, c1)
        } else {
            (l0, c0)
        };
        let piece = if next(4) == 0 {
            ""
        } else {
            pieces[next(pieces.len() as u64) as usize]
        };
        text = apply_utf16(&text, l0, c0, l1, c1, piece);
        change(
            &c,
            uri,
            v,
            json!([{"range": range(l0, c0, l1, c1), "text": piece}]),
        )
        .await;
    }
    let last = diagnostics(&c, uri, 301).await;
    let fresh_uri = "file:///w/fresh.py";
    open(&c, fresh_uri, "python", 1, &text).await;
    let fresh = diagnostics(&c, fresh_uri, 1).await;
    assert_eq!(comparable(&last), comparable(&fresh), "final text:\n{text}");
}

#[tokio::test]
async fn malformed_json_rpc_is_answered_or_ignored_and_the_server_keeps_working() {
    let (c, _s) = start(no_llm(), init_params(None, false, Value::Null)).await;
    // Invalid JSON: a parse error response with a null id.
    let body = b"{\"jsonrpc\": \"2.0\", \"id\": 99, \"method\": ";
    let mut framed = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    framed.extend_from_slice(body);
    c.send_raw(&framed).await;
    let parse_error = c
        .raw_response(&Value::Null, T)
        .await
        .expect("parse error response");
    assert_eq!(parse_error["error"]["code"], -32700);
    // Unknown request method: MethodNotFound.
    let e = c
        .request("crosscheck/noSuchMethod", json!({}))
        .await
        .unwrap_err();
    assert_eq!(e["code"], -32601);
    // Notification with wrong params: ignored (no response possible).
    c.notify("textDocument/didOpen", json!({"textDocument": 42}))
        .await;
    c.notify("textDocument/didChange", json!("nonsense")).await;
    // Unknown notification.
    c.notify("$/somethingElse", json!({})).await;
    // A working request afterwards.
    open(&c, "file:///w/ok.py", "python", 1, LOOPS_PY).await;
    diagnostics(&c, "file:///w/ok.py", 1).await;
    let h = hover_text(&c, "file:///w/ok.py", 0, 4).await;
    assert!(h.contains("work(xs)"), "{h}");
}

#[tokio::test]
async fn never_answering_llm_keeps_edits_and_requests_fast() {
    let fake = Arc::new(FakeClient::from_fn(|_| FakeReply::Hang));
    let (c, _s) = start(
        with_fake(fake.clone(), 0),
        init_params(None, false, Value::Null),
    )
    .await;
    let uri = "file:///w/hang.py";
    open(&c, uri, "python", 1, FLOW_PY).await;
    diagnostics(&c, uri, 1).await;
    // The questions about the opened text are sent, and never answered.
    let deadline = Instant::now() + T;
    while fake.request_count() == 0 {
        assert!(Instant::now() < deadline, "no check sent");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let started = Instant::now();
    let mut worst = Duration::ZERO;
    for v in 2..=40i64 {
        let t = Instant::now();
        // Never `0`: every version differs from the opened text.
        let digit = ((v % 9) + 1).to_string();
        change(
            &c,
            uri,
            v,
            json!([{"range": range(2, 12, 2, 13), "text": digit}]),
        )
        .await;
        diagnostics(&c, uri, v).await;
        let h = hover_text(&c, uri, 2, 4).await;
        assert!(h.contains("pending"), "{h}");
        worst = worst.max(t.elapsed());
    }
    assert!(
        worst < Duration::from_secs(2),
        "slowest edit+hover round trip: {worst:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(20));
    // Once the workspace analysis caught up, the hanging question about the first text of
    // `work` was cancelled and replaced by those for the final text: its flow and its two
    // function tasks (it was edited); `other`'s flow question is unchanged and still runs.
    let deadline = Instant::now() + T;
    let st = loop {
        let st = status(&c).await;
        if st["workspace_pending"] == false && st["scheduler"]["cancelled"].as_u64() >= Some(1) {
            break st;
        }
        assert!(Instant::now() < deadline, "{st}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    assert_eq!(st["scheduler"]["pending"], 4, "{st}");
    assert_eq!(st["scheduler"]["completed"], 0);
    assert!(fake.request_count() >= 2);
    let last = fake.requests().last().unwrap().user.clone();
    assert!(
        last.contains("total = 5"),
        "the final text (v40) was sent: {last}"
    );
    // A clean shutdown is still possible while a check hangs.
    assert!(c.request("shutdown", Value::Null).await.is_ok());
}

#[tokio::test]
async fn unchanged_function_text_is_served_from_the_cache() {
    let fake = scripted("yes");
    let (c, _s) = start(
        with_fake(fake.clone(), 0),
        init_params(None, false, Value::Null),
    )
    .await;
    let uri = "file:///w/cache.py";
    open(&c, uri, "python", 1, FLOW_PY).await;
    diagnostics(&c, uri, 1).await;
    wait_llm_idle(&c).await;
    assert_eq!(fake.request_count(), 2, "one per finding");
    // Lines added ABOVE the function move it but do not change its text: no new request.
    change(
        &c,
        uri,
        2,
        json!([{"range": range(0, 0, 0, 0), "text": "import os\n\n"}]),
    )
    .await;
    diagnostics(&c, uri, 2).await;
    wait_llm_idle(&c).await;
    assert_eq!(
        fake.request_count(),
        2,
        "moved code is not asked about again"
    );
    // Edit and undo inside `work` (now line 5, `    total = 0`): the edit asks `work`'s
    // flow again plus its two function tasks; the undo brings back the opened text, whose
    // answer is in the cache (and `work` no longer counts as edited).
    change(
        &c,
        uri,
        3,
        json!([{"range": range(4, 12, 4, 13), "text": "7"}]),
    )
    .await;
    diagnostics(&c, uri, 3).await;
    wait_llm_idle(&c).await;
    assert_eq!(
        fake.request_count(),
        5,
        "the changed function's questions only"
    );
    change(
        &c,
        uri,
        4,
        json!([{"range": range(4, 12, 4, 13), "text": "0"}]),
    )
    .await;
    diagnostics(&c, uri, 4).await;
    let st = wait_llm_idle(&c).await;
    assert_eq!(
        fake.request_count(),
        5,
        "the undone text was answered from the cache"
    );
    assert!(st["scheduler"]["cache_hits"].as_u64().unwrap() >= 1, "{st}");
}

#[tokio::test]
async fn position_encoding_is_utf8_when_offered_else_utf16() {
    for (utf8, expect) in [(true, "utf-8"), (false, "utf-16")] {
        let (c, _s) = lsp_support_start_raw(utf8).await;
        assert_eq!(c.0["capabilities"]["positionEncoding"], expect);
        let st = status(&c.1).await;
        assert_eq!(st["encoding"], expect);
    }
}

async fn lsp_support_start_raw(
    utf8: bool,
) -> (
    (Value, crosscheck::lsp::client::LspClient),
    tokio::task::JoinHandle<i32>,
) {
    let (client, server) = crosscheck::lsp::client::LspClient::in_process(no_llm());
    let r = client
        .initialize(init_params(None, utf8, Value::Null))
        .await
        .unwrap();
    ((r, client), server)
}

/// Edits before, inside (between the surrogates of) and after an astral character, in both
/// encodings: the final diagnostics must equal those of the expected text opened fresh.
#[tokio::test]
async fn edits_around_emoji_are_placed_correctly_in_both_encodings() {
    // Line 1: `    s = "a😀b"` — UTF-16 columns: `"` at 8, a 9, 😀 10-11, b 12, `"` 13.
    // UTF-8 columns: a 9, 😀 10-13, b 14.
    let base = "def f():\n    s = \"a😀b\"\n    return s\n";
    for utf8 in [false, true] {
        let ((_, c), _s) = lsp_support_start_raw(utf8).await;
        let uri = format!("file:///w/emoji{utf8}.py");
        open(&c, &uri, "python", 1, base).await;
        diagnostics(&c, &uri, 1).await;
        let (after_emoji, inside_emoji) = if utf8 { (14, 11) } else { (12, 11) };
        // After the emoji: insert `X` before `b`.
        change(
            &c,
            &uri,
            2,
            json!([{"range": range(1, after_emoji, 1, after_emoji), "text": "X"}]),
        )
        .await;
        // Inside the emoji (a column between surrogates / inside the UTF-8 sequence): rounds
        // down to the emoji's start, so `Y` lands before it.
        change(
            &c,
            &uri,
            3,
            json!([{"range": range(1, inside_emoji, 1, inside_emoji), "text": "Y"}]),
        )
        .await;
        // Before: a syntax error at the start of line 1 keeps a diagnostic whose range end
        // depends on the encoding.
        change(
            &c,
            &uri,
            4,
            json!([{"range": range(1, 4, 1, 4), "text": ") "}]),
        )
        .await;
        let got = diagnostics(&c, &uri, 4).await;
        let expected_text = "def f():\n    ) s = \"aY😀Xb\"\n    return s\n";
        let fresh = format!("file:///w/emoji{utf8}-fresh.py");
        open(&c, &fresh, "python", 1, expected_text).await;
        let want = diagnostics(&c, &fresh, 1).await;
        assert_eq!(comparable(&got), comparable(&want), "utf8={utf8}");
        let line = "    ) s = \"aY😀Xb\"";
        let end = if utf8 {
            line.len()
        } else {
            line.encode_utf16().count()
        };
        let d = got
            .iter()
            .find(|d| d["range"]["start"]["line"] == 1)
            .expect("error on line 1");
        assert_eq!(d["range"]["end"]["character"], end, "utf8={utf8}: {d}");
    }
}

#[tokio::test]
async fn set_trace_turns_on_log_trace_notifications() {
    let (c, _s) = start(no_llm(), init_params(None, false, Value::Null)).await;
    c.notify("$/setTrace", json!({"value": "verbose"})).await;
    open(&c, "file:///w/t.py", "python", 1, LOOPS_PY).await;
    diagnostics(&c, "file:///w/t.py", 1).await;
    let (_, p) = c
        .wait_message("$/logTrace", 0, T, |p| {
            p["message"].as_str().unwrap_or("").contains("t.py")
        })
        .await
        .expect("$/logTrace after setTrace verbose");
    assert!(p["verbose"].as_str().unwrap_or("").contains("functions"));
    assert_eq!(status(&c).await["trace"], "verbose");
}

#[tokio::test]
async fn cancel_request_for_unknown_ids_is_harmless() {
    let (c, _s) = start(no_llm(), init_params(None, false, Value::Null)).await;
    c.notify("$/cancelRequest", json!({"id": 12345})).await;
    open(&c, "file:///w/c.py", "python", 1, LOOPS_PY).await;
    diagnostics(&c, "file:///w/c.py", 1).await;
    // A request cancelled before it is read is answered with RequestCancelled or its result.
    let id = c
        .request_start(
            "textDocument/hover",
            json!({"textDocument": {"uri": "file:///w/c.py"}, "position": {"line": 1, "character": 4}}),
        )
        .await;
    c.notify("$/cancelRequest", json!({"id": id})).await;
    match c.response(id, T).await {
        Ok(v) => assert!(v["contents"]["value"].as_str().unwrap().contains("work")),
        Err(e) => assert_eq!(e["code"], -32800),
    }
    assert!(hover_text(&c, "file:///w/c.py", 1, 4)
        .await
        .contains("work"));
}

#[tokio::test]
async fn closing_a_document_clears_its_diagnostics() {
    let (c, _s) = start(no_llm(), init_params(None, false, Value::Null)).await;
    let uri = "file:///w/close.py";
    open(&c, uri, "python", 1, BROKEN_PY).await;
    assert!(!diagnostics(&c, uri, 1).await.is_empty());
    let from = c.log_len();
    c.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": uri}}),
    )
    .await;
    let (_, p) = c
        .wait_message("textDocument/publishDiagnostics", from, T, |p| {
            p["uri"] == uri
        })
        .await
        .expect("cleared");
    assert!(p["diagnostics"].as_array().unwrap().is_empty());
    assert!(p.get("version").is_none_or(Value::is_null));
}

#[tokio::test]
async fn an_unreachable_llm_is_announced_once_and_deterministic_results_keep_coming() {
    let fake = Arc::new(FakeClient::from_fn(|_| {
        FakeReply::Error(crosscheck::llm::LlmError::Connect(
            "connection refused".into(),
        ))
    }));
    let mut opts = with_fake(fake.clone(), 0);
    opts.llm_retry_first_delay = Duration::from_millis(1);
    let (c, _s) = start(opts, init_params(None, false, Value::Null)).await;
    open(&c, "file:///w/u.py", "python", 1, FLOW_PY).await;
    diagnostics(&c, "file:///w/u.py", 1).await;
    let st = wait_llm_idle(&c).await;
    // Each check is tried once and retried with backoff, then given up.
    let tries = 1 + crosscheck::lsp::scheduler::RETRIES as usize;
    assert_eq!(fake.request_count(), 2 * tries, "{st}");
    assert_eq!(st["scheduler"]["retries"], 2 * (tries - 1), "{st}");
    assert_eq!(
        st["scheduler"]["consecutive_failures"], 2,
        "the status can say the LLM is failing: {st}"
    );
    let warnings: Vec<Value> = c
        .messages("window/showMessage")
        .into_iter()
        .filter(|m| {
            m["params"]["message"]
                .as_str()
                .unwrap_or("")
                .contains("unreachable")
        })
        .collect();
    assert_eq!(warnings.len(), 1, "announced once: {warnings:?}");
    let h = hover_text(&c, "file:///w/u.py", 1, 4).await;
    assert!(h.contains("the check failed"), "{h}");
    assert!(h.contains("1 loop"), "deterministic part still there: {h}");
}

/// One function of `lines` lines whose def-use relation grows with the square of its length.
fn huge_function(lines: usize) -> String {
    let mut s = String::from("def big(a, b):\n");
    for i in 0..lines {
        let v = i % 50;
        s.push_str(&match i % 4 {
            0 => format!("    x{v} = a + {i}\n"),
            1 => format!("    if x{v} > b:\n"),
            2 => format!("        b = x{v} + b\n"),
            _ => format!("    a = g(a, b, x{v})\n"),
        });
    }
    s.push_str("    return a\n");
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_small_file_is_published_while_a_huge_function_is_still_analysed() {
    let (c, _s) = start(no_llm(), init_params(None, false, Value::Null)).await;
    let big = huge_function(12_000);
    open(&c, "file:///w/big.py", "python", 1, &big).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let t = Instant::now();
    open(&c, "file:///w/small.py", "python", 1, BROKEN_PY).await;
    let small = diagnostics(&c, "file:///w/small.py", 1).await;
    let small_after = t.elapsed();
    assert!(!small.is_empty());
    // The large one is still being analysed: the small one did not wait for it.
    let big_published_first = c.latest_diagnostics("file:///w/big.py").is_some();
    diagnostics(&c, "file:///w/big.py", 1).await;
    let big_after = t.elapsed();
    assert!(
        !big_published_first && small_after < big_after,
        "small after {small_after:?}, big after {big_after:?}"
    );
}

#[tokio::test]
async fn an_edit_cancels_the_analysis_of_the_version_it_replaces() {
    let (c, _s) = start(no_llm(), init_params(None, false, Value::Null)).await;
    let big = huge_function(12_000);
    open(&c, "file:///w/big.py", "python", 1, &big).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    change(
        &c,
        "file:///w/big.py",
        2,
        json!([{"text": "def f(a):\n    return a\n"}]),
    )
    .await;
    let t = Instant::now();
    let diags = diagnostics(&c, "file:///w/big.py", 2).await;
    assert!(diags.is_empty(), "{diags:?}");
    assert!(
        c.messages("textDocument/publishDiagnostics")
            .iter()
            .all(|m| m["params"]["version"] != 1),
        "the replaced version is never published"
    );
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
}

#[tokio::test]
async fn an_over_size_file_says_it_was_not_analysed_and_names_the_setting() {
    let opts = json!({"files": {"max_file_bytes": 64}});
    let (c, _s) = start(no_llm(), init_params(None, false, opts)).await;
    open(
        &c,
        "file:///w/large.py",
        "python",
        3,
        &"x = 1\n".repeat(100),
    )
    .await;
    let diags = diagnostics(&c, "file:///w/large.py", 3).await;
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert_eq!(diags[0]["code"], "file-not-analysed");
    assert_eq!(diags[0]["severity"], 3);
    let msg = diags[0]["message"].as_str().unwrap();
    assert!(
        msg.contains("600 bytes") && msg.contains("64") && msg.contains("max_file_bytes"),
        "{msg}"
    );
}

#[tokio::test]
async fn the_server_is_not_idle_while_it_indexes_the_workspace() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..400 {
        std::fs::write(
            dir.path().join(format!("m{i}.py")),
            format!("def f{i}(a):\n    if a:\n        return g{i}(a)\n    return 0\n"),
        )
        .unwrap();
    }
    let (c, _s) = start(no_llm(), init_params(Some(dir.path()), false, Value::Null)).await;
    let first = status(&c).await;
    assert!(
        first["workspace_files"].as_u64() == Some(400) || first["idle"] == false,
        "idle while indexing: {first}"
    );
    let done = wait_llm_idle(&c).await;
    assert_eq!(done["indexing"], false, "{done}");
    assert_eq!(done["workspace_files"], 400, "{done}");
}

/// A function edited right after opening (before any question was scheduled) still counts
/// as edited: the baseline is the first analysis after opening, not the first scheduling.
#[tokio::test]
async fn a_function_edited_at_once_after_opening_gets_its_function_tasks() {
    let fake = scripted("yes");
    let (c, _s) = start(
        with_fake(fake.clone(), 0),
        init_params(None, false, Value::Null),
    )
    .await;
    let uri = "file:///w/quick.py";
    open(&c, uri, "python", 1, FLOW_PY).await;
    diagnostics(&c, uri, 1).await;
    change(
        &c,
        uri,
        2,
        json!([{"range": range(2, 12, 2, 13), "text": "3"}]),
    )
    .await;
    diagnostics(&c, uri, 2).await;
    wait_llm_idle(&c).await;
    let forms: Vec<String> = fake
        .requests()
        .iter()
        .map(|r| r.schema_name.clone().unwrap_or_default())
        .collect();
    let flows = forms.iter().filter(|f| *f == "taint_flow").count();
    let cfg = forms.iter().filter(|f| *f == "cfg").count();
    let calls = forms.iter().filter(|f| *f == "call_graph").count();
    assert!(flows >= 2, "{forms:?}");
    assert_eq!(
        (cfg, calls),
        (1, 1),
        "the edited function's tasks: {forms:?}"
    );
}
