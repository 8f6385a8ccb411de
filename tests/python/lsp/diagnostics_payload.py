"""Measures what a real client receives: starts `crosscheck lsp` over stdio with one workspace
folder, opens one C file and prints each publishDiagnostics for it (count, bytes of the JSON
body, most related locations on one diagnostic, severities) until the workspace flows arrive,
then shuts the server down and prints its exit code. Not a test (pytest collects `test_*.py`);
used for the figures in the session notes, e.g.

    python3 tests/python/lsp/diagnostics_payload.py target/release/crosscheck /tmp/ws/git \\
        /tmp/ws/git/builtin/commit.c
"""
import json, subprocess, sys, time, os
binary, root, path = sys.argv[1], sys.argv[2], sys.argv[3]
p = subprocess.Popen([binary, "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
def send(msg):
    b = json.dumps(msg).encode()
    p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(b) + b); p.stdin.flush()
def read():
    headers = {}
    while True:
        line = p.stdout.readline()
        if line in (b"\r\n", b""): break
        k, v = line.decode().split(":", 1); headers[k.strip().lower()] = v.strip()
    if "content-length" not in headers:
        sys.exit("the server closed its output")
    n = int(headers["content-length"]); body = p.stdout.read(n)
    return json.loads(body), n
uri = "file://" + path
send({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":None,"rootUri":"file://"+root,
  "workspaceFolders":[{"uri":"file://"+root,"name":"w"}],"capabilities":{"workspace":{"workspaceFolders":True}},
  "initializationOptions":{"llm":{"enabled":False}}}})
while True:
    m, n = read()
    if m.get("id") == 1: break
send({"jsonrpc":"2.0","method":"initialized","params":{}})
send({"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":uri,"languageId":"c","version":1,"text":open(path).read()}}})
start = time.time()
while time.time() - start < 240:
    m, n = read()
    if m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri:
        d = m["params"]["diagnostics"]
        rel = max((len(x.get("relatedInformation") or []) for x in d), default=0)
        sev = sorted(set(x["severity"] for x in d))
        print(f"{time.time()-start:6.1f}s publish: {len(d)} diagnostics, {n} bytes, most related {rel}, severities {sev}", flush=True)
        if any(x.get("relatedInformation") and len(x["relatedInformation"]) > 1 for x in d):
            break
    elif "id" in m and "method" in m:
        send({"jsonrpc":"2.0","id":m["id"],"result":None})
send({"jsonrpc":"2.0","id":2,"method":"shutdown"}); send({"jsonrpc":"2.0","method":"exit"})
p.wait(timeout=30); print("exit", p.returncode)
