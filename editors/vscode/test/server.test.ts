// Against the real `crosscheck lsp` (when $CROSSCHECK_BIN or the repo's debug build exists): the
// messages this extension sends (settings, crosscheck/status, the server commands with the
// argument shapes the controller builds) are understood, and what the server publishes carries
// the tier data the presentation middleware reads. Uses vscode-jsonrpc, the transport under
// vscode-languageclient, with the capabilities VS Code announces (UTF-16 positions).

import * as assert from "assert";
import * as cp from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { createMessageConnection, MessageConnection, StreamMessageReader, StreamMessageWriter } from "vscode-jsonrpc/node";
import { ServerStatus } from "../src/status";
import { present, tierOf } from "../src/tiers";
import * as vscode from "vscode";
import { serverKeys, serverSettings } from "../src/settings";
import { Diagnostic, Range, stub } from "./stub/vscode";

const root = path.join(__dirname, "..", "..");

function crosscheckBin(): string | undefined {
  const candidates = [process.env.CROSSCHECK_BIN, path.join(root, "..", "..", "target", "debug", "crosscheck")];
  return candidates.find((c): c is string => !!c && fs.existsSync(c));
}

const SOURCE = [
  "def total(xs):",
  "    t = 0",
  "    for x in xs:",
  "        if x > 0:",
  "            t += x",
  "    return t",
  "",
  "",
  "def broken(:",
  "    pass",
  "",
].join("\n");

interface LspDiagnostic {
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  message: string;
  severity?: number;
  code?: string | number;
  source?: string;
  data?: { tier?: string; rule?: string; fingerprint?: string };
}

describe("against the real server", function () {
  this.timeout(60000);
  let proc: cp.ChildProcess | undefined;
  let conn: MessageConnection | undefined;
  let dir = "";
  let uri = "";
  const logs: string[] = [];
  const published: { uri: string; version?: number; diagnostics: LspDiagnostic[] }[] = [];

  before(async function () {
    const bin = crosscheckBin();
    if (!bin) {
      this.skip();
    }
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "crosscheck-vscode-"));
    const file = path.join(dir, "app.py");
    fs.writeFileSync(file, SOURCE);
    uri = `file://${file}`;
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const k of Object.keys(env)) {
      if (k.startsWith("CROSSCHECK_LLM_")) {
        delete env[k];
      }
    }
    env.CROSSCHECK_CONFIG = path.join(dir, "no-config.toml");
    env.CROSSCHECK_DATA_DIR = path.join(dir, "data");
    env.XDG_CONFIG_HOME = path.join(dir, "config");
    proc = cp.spawn(bin!, ["lsp"], { env, stdio: ["pipe", "pipe", "ignore"] });
    conn = createMessageConnection(new StreamMessageReader(proc.stdout!), new StreamMessageWriter(proc.stdin!));
    conn.onNotification("textDocument/publishDiagnostics", (p) => published.push(p));
    conn.onNotification("window/logMessage", (p: { message: string }) => logs.push(p.message));
    conn.onNotification("window/showMessage", (p: { message: string }) => logs.push(p.message));
    conn.onRequest("workspace/applyEdit", () => ({ applied: true }));
    conn.onRequest("client/registerCapability", () => null);
    conn.onRequest("workspace/configuration", (p: { items: unknown[] }) => p.items.map(() => null));
    conn.listen();
    const init = await conn.sendRequest("initialize", {
      processId: process.pid,
      rootUri: `file://${dir}`,
      workspaceFolders: [{ uri: `file://${dir}`, name: "w" }],
      capabilities: { general: { positionEncodings: ["utf-16"] }, workspace: { configuration: true } },
      // What the controller sends in a restricted workspace with one tier setting.
      initializationOptions: { llm: { enabled: false }, tiers: { "llm-only": "hidden" } },
    });
    assert.ok(init);
    await conn.sendNotification("initialized", {});
    await conn.sendNotification("textDocument/didOpen", {
      textDocument: { uri, languageId: "python", version: 1, text: SOURCE },
    });
  });

  after(async () => {
    try {
      await conn?.sendRequest("shutdown");
      await conn?.sendNotification("exit");
    } catch {
      // the process may already be gone
    }
    conn?.dispose();
    proc?.kill();
    if (dir) {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  async function diagnosticsWhere(pred: (ds: LspDiagnostic[]) => boolean): Promise<LspDiagnostic[]> {
    const deadline = Date.now() + 30000;
    while (Date.now() < deadline) {
      const last = [...published].reverse().find((p) => p.uri === uri);
      if (last && pred(last.diagnostics)) {
        return last.diagnostics;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`no matching publishDiagnostics; got ${JSON.stringify(published)}`);
  }

  it("publishes diagnostics whose data carries the tier the middleware reads", async () => {
    const ds = await diagnosticsWhere((d) => d.some((x) => x.code === "syntax-error"));
    const d = ds.find((x) => x.code === "syntax-error")!;
    assert.strictEqual(d.range.start.line, 8);
    assert.strictEqual(d.data?.tier, "analyzer-only");
    assert.ok(d.data?.fingerprint, "a fingerprint for the label commands");
    const vd = new Diagnostic(new Range(8, 0, 8, 1), d.message, d.severity ?? 1);
    vd.source = d.source;
    (vd as unknown as { data: unknown }).data = d.data;
    assert.strictEqual(tierOf(vd as never), "analyzer-only");
    present([vd as never], { fadeUnverified: true });
    assert.strictEqual(vd.source, "crosscheck (analyzer-only)");
  });

  it("accepts every server setting package.json contributes, without warnings", async () => {
    stub.reset();
    const keys = serverKeys(stub.packageJson);
    for (const k of keys) {
      stub.set(k.slice("crosscheck.".length), stub.packageJson.contributes.configuration.properties[k].default);
    }
    const settings = serverSettings(vscode.workspace.getConfiguration("crosscheck"), keys, true);
    // The tables: files, llm, rules, taint, tiers.
    assert.strictEqual(Object.keys(settings).length, 5, JSON.stringify(settings));
    await conn!.sendNotification("workspace/didChangeConfiguration", { settings: { crosscheck: settings } });
    const status = await conn!.sendRequest<ServerStatus>("crosscheck/status");
    assert.ok(status);
    assert.deepStrictEqual(
      logs.filter((l) => /ignored|unknown key|must be/.test(l)),
      [],
    );
  });

  it("answers crosscheck/status with the fields the status bar shows", async () => {
    const status = await conn!.sendRequest<ServerStatus>("crosscheck/status");
    assert.strictEqual(status.llm_available, false);
    for (const k of ["requests", "cache_hits", "completed", "failed", "pending"] as const) {
      assert.strictEqual(typeof status.scheduler?.[k], "number", k);
    }
  });

  it("offers code actions whose commands are the server commands the extension wraps", async () => {
    const actions = await conn!.sendRequest<{ title: string; command?: { command: string } | string }[]>(
      "textDocument/codeAction",
      {
        textDocument: { uri },
        range: { start: { line: 8, character: 0 }, end: { line: 8, character: 0 } },
        context: { diagnostics: [] },
      },
    );
    const commands = actions.map((a) => (typeof a.command === "string" ? a.command : a.command?.command));
    assert.ok(commands.includes("crosscheck.markCorrect"), JSON.stringify(actions));
    assert.ok(commands.includes("crosscheck.markIncorrect"), JSON.stringify(actions));
    assert.ok(actions.some((a) => a.title.includes("suppress `syntax-error`")), JSON.stringify(actions));
  });

  it("understands the explain command as the controller sends it", async () => {
    const r = await conn!.sendRequest<{ status: string; message: string }>("workspace/executeCommand", {
      command: "crosscheck.explain",
      arguments: [{ uri, line: 1, character: 4 }],
    });
    assert.strictEqual(r.status, "unavailable");
    assert.ok(r.message.length > 0);
  });

  it("understands the suppress command as the controller sends it", async () => {
    const r = await conn!.sendRequest<{ status: string }>("workspace/executeCommand", {
      command: "crosscheck.suppress",
      arguments: [{ uri, line: 8, rule: "syntax-error" }],
    });
    assert.strictEqual(r.status, "done");
  });

  it("understands the label command as the controller sends it", async () => {
    const ds = await diagnosticsWhere((d) => d.some((x) => x.code === "syntax-error"));
    const d = ds.find((x) => x.code === "syntax-error")!;
    const r = await conn!.sendRequest<{ status: string; message: string }>("workspace/executeCommand", {
      command: "crosscheck.markCorrect",
      arguments: [{ uri, rule: "syntax-error", line: 8, fingerprint: d.data?.fingerprint, tier: d.data?.tier }],
    });
    assert.ok(["done", "unavailable"].includes(r.status), JSON.stringify(r));
  });
});
