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
//! * headers without `Content-Length`, unparsable lengths or header lines over 8 KiB are
//!   answered with a parse error and skipped up to the next blank line; bodies over
//!   [`MAX_MESSAGE_BYTES`] are discarded without being buffered.

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tower_lsp_server::jsonrpc::{Request, Response};

/// The internal method malformed input is turned into.
pub const INVALID_MESSAGE: &str = "crosscheck/invalidMessage";

/// Larger message bodies are discarded.
pub const MAX_MESSAGE_BYTES: usize = 256 * 1024 * 1024;

const MAX_HEADER_LINE: usize = 8 * 1024;

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

/// Reads one header line (without its terminator), at most [`MAX_HEADER_LINE`] bytes kept.
/// `None` at end of input; `Some(Err(()))` for an over-long line (consumed entirely).
async fn header_line<R: AsyncRead + Unpin>(r: &mut BufReader<R>) -> Option<Result<String, ()>> {
    let mut line = Vec::new();
    let mut too_long = false;
    loop {
        let buf = match r.fill_buf().await {
            Ok(b) => b,
            Err(_) => return None,
        };
        if buf.is_empty() {
            if line.is_empty() && !too_long {
                return None;
            }
            break;
        }
        let (take, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        if line.len() + take <= MAX_HEADER_LINE {
            line.extend_from_slice(&buf[..take]);
        } else {
            too_long = true;
        }
        r.consume(take);
        if done {
            break;
        }
    }
    if too_long {
        return Some(Err(()));
    }
    let s = String::from_utf8_lossy(&line);
    Some(Ok(s.trim_end_matches(['\r', '\n']).to_string()))
}

/// Checks one body; `Ok` when tower-lsp-server can decode it, else the replacement frame.
fn check_body(body: &[u8]) -> Result<(), Vec<u8>> {
    let value: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => {
            return Err(replacement(
                Value::Null,
                -32700,
                &format!("parse error: {e}"),
            ))
        }
    };
    let is_response = serde_json::from_value::<Response>(value.clone()).is_ok();
    let is_request = serde_json::from_value::<Request>(value.clone()).is_ok();
    if is_response || is_request {
        return Ok(());
    }
    let id = match value.get("id") {
        Some(v @ (Value::Number(_) | Value::String(_)))
            if v.as_i64().is_some() || v.is_string() =>
        {
            v.clone()
        }
        _ => Value::Null,
    };
    Err(replacement(
        id,
        -32600,
        "invalid request: not a JSON-RPC 2.0 message",
    ))
}

/// Copies LSP frames from `input` to `output`, replacing malformed ones (see the module docs).
/// Returns at the end of `input` or when `output` is closed.
pub async fn pump<R, W>(input: R, mut output: W)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut r = BufReader::with_capacity(64 * 1024, input);
    loop {
        let mut content_len: Option<Result<usize, ()>> = None;
        let mut bad_header = false;
        let mut any = false;
        loop {
            let Some(line) = header_line(&mut r).await else {
                return;
            };
            let Ok(line) = line else {
                bad_header = true;
                any = true;
                continue;
            };
            if line.trim().is_empty() {
                if any {
                    break;
                }
                continue;
            }
            any = true;
            let lower = line.to_ascii_lowercase();
            if let Some(v) = lower.strip_prefix("content-length:") {
                content_len = Some(v.trim().parse::<usize>().map_err(|_| ()));
            } else if !lower.starts_with("content-type:") {
                bad_header = true;
            }
        }
        let frame_out = match content_len {
            Some(Ok(n)) if n > MAX_MESSAGE_BYTES => {
                let mut rest = (&mut r).take(n as u64);
                let _ = tokio::io::copy(&mut rest, &mut tokio::io::sink()).await;
                replacement(Value::Null, -32600, "message too large; discarded")
            }
            Some(Ok(n)) => {
                let mut body = vec![0u8; n];
                if r.read_exact(&mut body).await.is_err() {
                    return;
                }
                match check_body(&body) {
                    Ok(()) => frame(&body),
                    Err(replacement) => replacement,
                }
            }
            _ => {
                let why = if bad_header {
                    "malformed header"
                } else {
                    "missing or invalid Content-Length"
                };
                replacement(Value::Null, -32700, &format!("parse error: {why}"))
            }
        };
        if output.write_all(&frame_out).await.is_err() || output.flush().await.is_err() {
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
        let mut msgs = Vec::new();
        let mut rest = &out[..];
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
}
