//! Input hardening in front of tower-lsp-server.
//!
//! tower-lsp-server stops reading its input after the first frame it cannot decode (invalid
//! JSON, a body that is not a JSON-RPC message, a bad header): its framed reader ends the
//! stream after a decoder error, and with it the server. A client bug or a stray write must not
//! take the server down, so every frame passes through [`pump`] first:
//!
//! * well-formed JSON-RPC messages are forwarded unchanged;
//! * a body that is not JSON becomes a request to [`INVALID_MESSAGE`] with `id: null`, which
//!   the server answers with a `-32700` parse error (id `null`, as JSON-RPC requires);
//! * JSON that is not a JSON-RPC message (wrong `jsonrpc` version, an array, ...) is answered
//!   with `-32600` invalid request, under the message's id when it has a usable one;
//! * a request (with an id) to an implementation-dependent `$/` method the server does not
//!   implement is answered with `-32601` method not found, as the LSP specification asks
//!   (tower-lsp-server drops every unknown `$/` message, requests included);
//! * string escapes that no Rust string can hold (a lone UTF-16 surrogate such as `"\ud800"`)
//!   and invalid UTF-8 in a body are replaced by U+FFFD instead of rejecting the message;
//! * bodies over [`MAX_MESSAGE_BYTES`] are discarded without being buffered.
//!
//! **Resynchronisation.** A malformed header (no `Content-Length`, an unparsable or
//! overflowing length, an unknown header, a header line over 8 KiB) or a declared length that
//! does not match the body is answered with *one* `-32700`; the reader then discards input up
//! to the next plausible frame, a `Content-Length:` header, even one glued to the end of the
//! lost body, without answering the bytes it skips. A declared length larger than the body is
//! noticed without waiting for bytes that never come: when the bytes read so far are a whole
//! JSON value followed by a `Content-Length:` header, the value ends there. So one bad frame
//! costs one error answer, and every later well-formed message is read as sent.

use serde_json::{json, Value};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tower_lsp_server::jsonrpc::{Request, Response};

/// The internal method malformed input is turned into.
pub const INVALID_MESSAGE: &str = "crosscheck/invalidMessage";

/// Larger message bodies are discarded.
pub const MAX_MESSAGE_BYTES: usize = 256 * 1024 * 1024;

const MAX_HEADER_LINE: usize = 8 * 1024;

/// The `$/` methods the server implements (notifications all; a request with an id to any
/// other `$/` method is answered with method-not-found).
const KNOWN_DOLLAR_METHODS: &[&str] = &["$/setTrace", "$/cancelRequest", "$/progress"];

const HEADER: &[u8] = b"content-length:";

fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

fn replacement(id: Value, code: i64, message: &str) -> Vec<u8> {
    let body = json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": INVALID_MESSAGE,
        "params": {"code": code, "message": message},
    });
    frame(body.to_string().as_bytes())
}

/// Position of `Content-Length:` (ASCII case-insensitive) in `hay`.
fn find_header(hay: &[u8]) -> Option<usize> {
    if hay.len() < HEADER.len() {
        return None;
    }
    (0..=hay.len() - HEADER.len()).find(|&i| hay[i..i + HEADER.len()].eq_ignore_ascii_case(HEADER))
}

/// A byte buffer over the input that can be searched before it is consumed.
struct Input<R> {
    r: R,
    buf: Vec<u8>,
    pos: usize,
}

impl<R: AsyncRead + Unpin> Input<R> {
    fn avail(&self) -> &[u8] {
        &self.buf[self.pos..]
    }

    fn consume(&mut self, n: usize) {
        self.pos = (self.pos + n).min(self.buf.len());
        if self.pos == self.buf.len() {
            self.buf.clear();
            self.pos = 0;
        } else if self.pos > 64 * 1024 && self.pos * 2 > self.buf.len() {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
    }

    /// Reads more input; false at its end (or on a read error).
    async fn fill(&mut self) -> bool {
        let mut chunk = [0u8; 64 * 1024];
        match self.r.read(&mut chunk).await {
            Ok(0) | Err(_) => false,
            Ok(k) => {
                self.buf.extend_from_slice(&chunk[..k]);
                true
            }
        }
    }

    /// One header line without its terminator; `Some(None)` for a line over
    /// [`MAX_HEADER_LINE`] (consumed entirely, never buffered whole); `None` at end of input.
    async fn line(&mut self) -> Option<Option<Vec<u8>>> {
        let mut too_long = false;
        loop {
            if let Some(i) = self.avail().iter().position(|&b| b == b'\n') {
                if too_long {
                    self.consume(i + 1);
                    return Some(None);
                }
                let mut line = self.avail()[..i].to_vec();
                self.consume(i + 1);
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                return Some(Some(line));
            }
            if self.avail().len() > MAX_HEADER_LINE {
                // Keep the tail, where a glued `Content-Length:` could start.
                if let Some(at) = find_header(self.avail()).filter(|&at| at > 0) {
                    // The next frame's header is glued to the end of the garbage: the garbage
                    // is one bad line, the header the next.
                    self.consume(at);
                    return Some(None);
                }
                let keep = HEADER.len() - 1;
                let drop = self.avail().len() - keep;
                self.consume(drop);
                too_long = true;
            }
            if !self.fill().await {
                let rest = self.avail().to_vec();
                self.consume(rest.len());
                return if rest.is_empty() || too_long {
                    None
                } else {
                    Some(Some(rest))
                };
            }
        }
    }

    /// A body of `n` bytes, or `Err(k)` when a whole JSON value of `k < n` bytes is followed by
    /// the next frame's `Content-Length:` (the declared length was too large). `None` at end of
    /// input.
    async fn body(&mut self, n: usize) -> Option<Result<Vec<u8>, usize>> {
        let mut scanned = 0usize;
        loop {
            if self.avail().len() >= n {
                let body = self.avail()[..n].to_vec();
                self.consume(n);
                return Some(Ok(body));
            }
            let from = scanned.saturating_sub(HEADER.len());
            let avail = self.avail();
            if let Some(rel) = find_header(&avail[from..]) {
                let at = from + rel;
                if serde_json::from_slice::<serde::de::IgnoredAny>(&avail[..at]).is_ok() {
                    self.consume(at);
                    return Some(Err(at));
                }
            }
            scanned = avail.len();
            if !self.fill().await {
                return None;
            }
        }
    }

    /// Discards `n` bytes without keeping them.
    async fn skip(&mut self, mut n: usize) -> bool {
        loop {
            let k = n.min(self.avail().len());
            self.consume(k);
            n -= k;
            if n == 0 {
                return true;
            }
            if !self.fill().await {
                return false;
            }
        }
    }
}

/// Replaces `\uXXXX` escapes of lone UTF-16 surrogates with `\ufffd`; `None` when there are
/// none. Escapes are read in order, so `\\u` (an escaped backslash, then `u`) is left alone.
fn repair_surrogates(body: &[u8]) -> Option<Vec<u8>> {
    fn hex4(b: &[u8]) -> Option<u16> {
        let s = std::str::from_utf8(b.get(..4)?).ok()?;
        u16::from_str_radix(s, 16).ok()
    }
    let mut out = Vec::with_capacity(body.len());
    let mut changed = false;
    let mut i = 0;
    while i < body.len() {
        if body[i] != b'\\' || i + 1 >= body.len() {
            out.push(body[i]);
            i += 1;
            continue;
        }
        if body[i + 1] != b'u' {
            out.extend_from_slice(&body[i..i + 2]);
            i += 2;
            continue;
        }
        let Some(cu) = hex4(&body[i + 2..]) else {
            out.extend_from_slice(&body[i..i + 2]);
            i += 2;
            continue;
        };
        let is_high = (0xD800..0xDC00).contains(&cu);
        let is_low = (0xDC00..0xE000).contains(&cu);
        if is_high {
            let next_low = body.get(i + 6..i + 8) == Some(b"\\u")
                && hex4(&body[i + 8..]).is_some_and(|c| (0xDC00..0xE000).contains(&c));
            if next_low {
                out.extend_from_slice(&body[i..i + 12]);
                i += 12;
                continue;
            }
        }
        if is_high || is_low {
            out.extend_from_slice(b"\\ufffd");
            changed = true;
        } else {
            out.extend_from_slice(&body[i..i + 6]);
        }
        i += 6;
    }
    changed.then_some(out)
}

/// What a body read whole becomes.
enum Checked {
    /// A frame for the server: the message (maybe repaired), or the replacement that answers it
    /// (`-32600`, `-32601`).
    Frame(Vec<u8>),
    /// Not JSON at all: the replacement answering `-32700`. The declared length was probably
    /// wrong, so the reader resynchronises after it.
    NotJson(Vec<u8>),
}

/// The body as tower-lsp-server can decode it: unchanged, repaired (lone surrogates, invalid
/// UTF-8), or the replacement frame that answers it.
fn check_body(body: Vec<u8>, end: &SessionEnd) -> Checked {
    let mut body = body;
    let value: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(first) => {
            let mut fixed = match String::from_utf8_lossy(&body) {
                std::borrow::Cow::Owned(s) => Some(s.into_bytes()),
                std::borrow::Cow::Borrowed(_) => None,
            };
            if let Some(r) = repair_surrogates(fixed.as_deref().unwrap_or(&body)) {
                fixed = Some(r);
            }
            match fixed.and_then(|f| serde_json::from_slice(&f).ok().map(|v| (f, v))) {
                Some((f, v)) => {
                    tracing::warn!(
                        "client message with lone surrogates or invalid UTF-8; replaced by U+FFFD"
                    );
                    body = f;
                    v
                }
                None => {
                    return Checked::NotJson(replacement(
                        Value::Null,
                        -32700,
                        &format!("parse error: {first}"),
                    ))
                }
            }
        }
    };
    let is_response = serde_json::from_value::<Response>(value.clone()).is_ok();
    let is_request = serde_json::from_value::<Request>(value.clone()).is_ok();
    if is_request {
        let method = value.get("method").and_then(Value::as_str).unwrap_or("");
        let id = value.get("id").filter(|v| !v.is_null());
        end.note(method, id.is_some());
        if let (true, Some(id)) = (method.starts_with("$/"), id) {
            if !KNOWN_DOLLAR_METHODS.contains(&method) {
                return Checked::Frame(replacement(
                    id.clone(),
                    -32601,
                    &format!("method not found: {method}"),
                ));
            }
        }
    }
    if is_response || is_request {
        return Checked::Frame(frame(&body));
    }
    let id = match value.get("id") {
        Some(v @ (Value::Number(_) | Value::String(_)))
            if v.as_i64().is_some() || v.is_string() =>
        {
            v.clone()
        }
        _ => Value::Null,
    };
    Checked::Frame(replacement(
        id,
        -32600,
        "invalid request: not a JSON-RPC 2.0 message",
    ))
}

/// One header block as read.
#[derive(Default)]
struct Header {
    length: Option<Result<usize, ()>>,
    /// An unknown header, an over-long line, or garbage before a glued `Content-Length:`.
    bad: bool,
}

/// Reads one header block up to its blank line; `None` at end of input.
async fn header<R: AsyncRead + Unpin>(inp: &mut Input<R>) -> Option<Header> {
    let mut h = Header::default();
    let mut any = false;
    loop {
        let line = inp.line().await?;
        let Some(line) = line else {
            h.bad = true;
            any = true;
            continue;
        };
        if line.iter().all(u8::is_ascii_whitespace) {
            if any {
                return Some(h);
            }
            continue;
        }
        any = true;
        let lower = line.to_ascii_lowercase();
        if let Some(at) = find_header(&lower) {
            if at > 0 {
                h.bad = true;
            }
            let v = String::from_utf8_lossy(&lower[at + HEADER.len()..]).into_owned();
            h.length = Some(v.trim().parse::<usize>().map_err(|_| ()));
        } else if !lower.starts_with(b"content-type:") {
            h.bad = true;
        }
    }
}

/// Copies LSP frames from `input` to `output`, replacing malformed ones (see the module docs).
/// Returns at the end of `input` or when `output` is closed.
pub async fn pump<R, W>(input: R, output: W)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    pump_noting_end(input, output, &SessionEnd::default()).await
}

/// What the transport saw of a session's end, in stream order: the server's own `shutdown`
/// handler may not have run yet when an `exit` written right behind the request ends the
/// session, yet the specification asks for exit code 0 when `shutdown` was *received* first.
#[derive(Debug, Default)]
pub struct SessionEnd {
    shutdown: std::sync::atomic::AtomicBool,
    exit_first: std::sync::atomic::AtomicBool,
}

impl SessionEnd {
    /// A `shutdown` request came in before any `exit` notification.
    pub fn shutdown_before_exit(&self) -> bool {
        use std::sync::atomic::Ordering::SeqCst;
        self.shutdown.load(SeqCst) && !self.exit_first.load(SeqCst)
    }

    /// Notes a request (`has_id`) or notification the transport forwards, in stream order.
    fn note(&self, method: &str, has_id: bool) {
        use std::sync::atomic::Ordering::SeqCst;
        match method {
            "shutdown" if has_id => self.shutdown.store(true, SeqCst),
            "exit" if !self.shutdown.load(SeqCst) => self.exit_first.store(true, SeqCst),
            _ => {}
        }
    }
}

/// [`pump`], noting in `end` the `shutdown` and `exit` messages it forwards.
pub async fn pump_noting_end<R, W>(input: R, mut output: W, end: &SessionEnd)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut inp = Input {
        r: input,
        buf: Vec::new(),
        pos: 0,
    };
    // After a malformed frame has been answered, input is skipped silently until a frame
    // reads well again.
    let mut resyncing = false;
    loop {
        let Some(h) = header(&mut inp).await else {
            return;
        };
        let mut out = Vec::new();
        let error = |why: &str, out: &mut Vec<u8>, resyncing: &mut bool| {
            if !*resyncing {
                out.extend(replacement(
                    Value::Null,
                    -32700,
                    &format!("parse error: {why}"),
                ));
            }
            *resyncing = true;
        };
        match h.length {
            Some(Ok(n)) if n > MAX_MESSAGE_BYTES => {
                if !inp.skip(n).await {
                    return;
                }
                out.extend(replacement(
                    Value::Null,
                    -32600,
                    "message too large; discarded",
                ));
                resyncing = false;
            }
            Some(Ok(n)) => {
                if h.bad {
                    error("malformed header", &mut out, &mut resyncing);
                }
                match inp.body(n).await {
                    None => return,
                    Some(Err(_)) => error(
                        "Content-Length larger than the message body",
                        &mut out,
                        &mut resyncing,
                    ),
                    Some(Ok(body)) => match check_body(body, end) {
                        Checked::Frame(f) => {
                            out.extend(f);
                            resyncing = false;
                        }
                        Checked::NotJson(f) => {
                            // The length was wrong or the bytes are garbage: one answer, then
                            // resynchronise.
                            if !resyncing {
                                out.extend(f);
                            }
                            resyncing = true;
                        }
                    },
                }
            }
            Some(Err(())) => error("invalid Content-Length", &mut out, &mut resyncing),
            None if h.bad => error("malformed header", &mut out, &mut resyncing),
            None => error("missing Content-Length", &mut out, &mut resyncing),
        }
        if out.is_empty() {
            continue;
        }
        if output.write_all(&out).await.is_err() || output.flush().await.is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn run(input: &[u8]) -> Vec<Value> {
        let mut out = Vec::new();
        pump(input, &mut out).await;
        messages(&out)
    }

    /// The bodies of the frames the pump wrote.
    fn messages(out: &[u8]) -> Vec<Value> {
        let mut msgs = Vec::new();
        let mut rest = out;
        while let Some(at) = rest.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = std::str::from_utf8(&rest[..at]).unwrap();
            let n: usize = head.trim_start_matches("Content-Length: ").parse().unwrap();
            msgs.push(serde_json::from_slice(&rest[at + 4..at + 4 + n]).unwrap());
            rest = &rest[at + 4 + n..];
        }
        msgs
    }

    #[tokio::test]
    async fn valid_frames_pass_and_invalid_ones_are_replaced() {
        let ok = br#"{"jsonrpc":"2.0","id":1,"method":"shutdown"}"#;
        let mut input = frame(ok);
        input.extend(frame(b"{not json"));
        input.extend(frame(br#"{"jsonrpc":"1.0","id":7,"method":"x"}"#));
        input.extend(b"X-Garbage: 1\r\n\r\n");
        input.extend(frame(ok));
        let msgs = run(&input).await;
        assert_eq!(msgs.len(), 5);
        assert_eq!(msgs[0]["method"], "shutdown");
        assert_eq!(msgs[1]["method"], INVALID_MESSAGE);
        assert_eq!(msgs[1]["id"], Value::Null);
        assert_eq!(msgs[1]["params"]["code"], -32700);
        assert_eq!(msgs[2]["id"], 7);
        assert_eq!(msgs[2]["params"]["code"], -32600);
        assert_eq!(msgs[3]["params"]["code"], -32700);
        assert_eq!(msgs[4]["method"], "shutdown");
    }

    #[tokio::test]
    async fn over_long_header_lines_are_skipped_without_buffering_them() {
        let mut input = vec![b'a'; 100_000];
        input.extend(b"\r\n\r\n");
        input.extend(frame(br#"{"jsonrpc":"2.0","method":"exit"}"#));
        let msgs = run(&input).await;
        assert_eq!(msgs.len(), 2);
        assert_eq!(msgs[1]["method"], "exit");
    }

    fn req(id: u64, method: &str) -> Vec<u8> {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}"}}"#).into_bytes()
    }

    #[tokio::test]
    async fn an_unparsable_length_costs_one_error_and_the_session_goes_on() {
        for bad_len in ["abc", "", "-3", "99999999999999999999999999"] {
            let mut input = format!("Content-Length: {bad_len}\r\n\r\n").into_bytes();
            input.extend(req(1, "initialize"));
            input.extend(frame(&req(2, "shutdown")));
            input.extend(frame(br#"{"jsonrpc":"2.0","method":"exit"}"#));
            let msgs = run(&input).await;
            let errors: Vec<_> = msgs
                .iter()
                .filter(|m| m["method"] == INVALID_MESSAGE)
                .collect();
            assert_eq!(errors.len(), 1, "{bad_len:?}: {msgs:?}");
            assert_eq!(errors[0]["params"]["code"], -32700);
            let methods: Vec<_> = msgs.iter().map(|m| m["method"].clone()).collect();
            assert_eq!(
                methods[1..],
                [json!("shutdown"), json!("exit")],
                "{bad_len:?}: {msgs:?}"
            );
        }
    }

    /// One `-32700` for the bad frame, then the `shutdown` request (id 2) that followed it.
    fn assert_one_parse_error_then_shutdown(msgs: &[Value]) {
        assert_eq!(msgs.len(), 2, "{msgs:?}");
        assert_eq!(msgs[0]["params"]["code"], -32700);
        assert_eq!(msgs[1]["id"], 2);
    }

    #[tokio::test]
    async fn a_missing_header_and_a_wrong_length_resynchronise() {
        // No header at all, the body glued to the next frame.
        let mut input = req(1, "initialize");
        input.extend(frame(&req(2, "shutdown")));
        assert_one_parse_error_then_shutdown(&run(&input).await);

        // A length too small: the rest of the body is skipped, the next frame read.
        let body = req(1, "initialize");
        let mut input = format!("Content-Length: {}\r\n\r\n", body.len() - 5).into_bytes();
        input.extend(&body);
        input.extend(frame(&req(2, "shutdown")));
        assert_one_parse_error_then_shutdown(&run(&input).await);

        // A length too large: the reader does not wait for bytes that never come.
        let mut input = format!("Content-Length: {}\r\n\r\n", body.len() + 500).into_bytes();
        input.extend(&body);
        input.extend(frame(&req(2, "shutdown")));
        assert_one_parse_error_then_shutdown(&run(&input).await);
    }

    #[tokio::test]
    async fn lone_surrogates_and_invalid_utf8_are_replaced_not_rejected() {
        let open = br#"{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"text":"a\ud800b\udc00c\\ud800\ud83d\ude00"}}"#;
        let msgs = run(&frame(open)).await;
        assert_eq!(msgs.len(), 1);
        assert_eq!(
            msgs[0]["params"]["text"], "a\u{fffd}b\u{fffd}c\\ud800\u{1f600}",
            "lone surrogates become U+FFFD; an escaped backslash and a real pair stay"
        );
        let mut raw = br#"{"jsonrpc":"2.0","method":"x","params":{"text":""#.to_vec();
        raw.extend([0xff, 0xfe]);
        raw.extend(br#""}}"#);
        let msgs = run(&frame(&raw)).await;
        assert_eq!(msgs[0]["params"]["text"], "\u{fffd}\u{fffd}");
    }

    #[tokio::test]
    async fn dollar_requests_with_an_id_get_method_not_found() {
        let mut input = frame(&req(4, "$/unknownThing"));
        input.extend(frame(
            br#"{"jsonrpc":"2.0","method":"$/unknownNotification"}"#,
        ));
        let msgs = run(&input).await;
        assert_eq!(msgs[0]["id"], 4);
        assert_eq!(msgs[0]["method"], INVALID_MESSAGE);
        assert_eq!(msgs[0]["params"]["code"], -32601);
        assert_eq!(
            msgs[1]["method"], "$/unknownNotification",
            "notifications pass"
        );
    }

    /// Random garbage, split and merged writes: every well-formed request after the garbage
    /// arrives, in order, exactly once.
    #[tokio::test]
    async fn fuzzed_streams_never_lose_a_later_well_formed_request() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        type Garbage<'a> = &'a dyn Fn(&mut rand_chacha::ChaCha8Rng) -> Vec<u8>;
        let garbage: [Garbage; 7] = [
            &|_| b"Content-Length: abc\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":99}".to_vec(),
            &|_| b"Content-Length: 3\r\n\r\n{\"jsonrpc\":\"2.0\"}".to_vec(),
            &|_| b"{\"half\": tru".to_vec(),
            &|r| {
                (0..r.random_range(1..300))
                    .map(|_| r.random::<u8>())
                    .collect()
            },
            &|_| b"X-Whatever: 1\r\n\r\n".to_vec(),
            &|_| frame(b"not json at all"),
            &|_| b"\r\n\r\n\n".to_vec(),
        ];
        for round in 0..200 {
            let mut input = Vec::new();
            let mut expected = Vec::new();
            for i in 0..6u64 {
                if rng.random_bool(0.5) {
                    let g = garbage[rng.random_range(0..garbage.len())](&mut rng);
                    // Raw garbage must not contain a plausible frame start of its own.
                    if find_header(&g.to_ascii_lowercase()).is_none()
                        || g.starts_with(b"Content-Length")
                    {
                        input.extend(g);
                    }
                }
                let id = round * 10 + i;
                input.extend(frame(&req(id, "workspace/symbol")));
                expected.push(id);
            }
            // Deliver in random pieces.
            let (mut w, r) = tokio::io::duplex(1 << 16);
            let pieces: Vec<Vec<u8>> = {
                let mut v = Vec::new();
                let mut rest = &input[..];
                while !rest.is_empty() {
                    let k = rng.random_range(1..=rest.len().min(97));
                    v.push(rest[..k].to_vec());
                    rest = &rest[k..];
                }
                v
            };
            let writer = tokio::spawn(async move {
                for p in pieces {
                    w.write_all(&p).await.unwrap();
                }
            });
            let mut out = Vec::new();
            pump(r, &mut out).await;
            writer.await.unwrap();
            let msgs = messages(&out);
            let got: Vec<u64> = msgs
                .iter()
                .filter(|m| m["method"] == "workspace/symbol")
                .filter_map(|m| m["id"].as_u64())
                .collect();
            assert_eq!(got, expected, "round {round}");
        }
    }
}
