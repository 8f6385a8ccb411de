import * as assert from "assert";
import { Diagnostic, DiagnosticSeverity, DiagnosticTag, Range, stub, Uri } from "./stub/vscode";
import { Controller, EXTENSION_COMMANDS, SERVER_COMMANDS, STATUS_REQUEST } from "../src/controller";
import { fakeFactory } from "./fakes";

const FILE = "file:///w/app.py";

function context() {
  return { subscriptions: [] as { dispose(): unknown }[], extension: { packageJSON: stub.packageJson } };
}

function finding(line: number, rule: string, tier: string, fingerprint: string): Diagnostic {
  const d = new Diagnostic(new Range(line, 0, line, 20), `${rule} here`, DiagnosticSeverity.Warning);
  d.source = "crosscheck";
  d.code = rule;
  (d as unknown as { data: unknown }).data = { tier, rule, fingerprint };
  return d;
}

const statusAnswer = { llm_available: true, scheduler: { requests: 1, cache_hits: 0, completed: 1, failed: 0, pending: 0 } };

async function activated(answers: Record<string, (p: unknown) => unknown> = {}, failStart?: Error) {
  const ctx = context();
  const { factory, clients } = fakeFactory(
    { [STATUS_REQUEST]: () => statusAnswer, "workspace/executeCommand": () => ({ status: "done", message: "ok" }), ...answers },
    failStart,
  );
  const controller = new Controller(ctx, factory);
  await controller.activate();
  return { controller, clients, ctx };
}

describe("controller", () => {
  beforeEach(() => stub.reset());

  describe("activation", () => {
    it("starts `crosscheck lsp` with only the explicitly set server settings", async () => {
      stub.set("tiers.llm-only", "hidden");
      const { controller, clients } = await activated();
      assert.strictEqual(clients.length, 1);
      assert.ok(clients[0].started);
      assert.deepStrictEqual(clients[0].spec.launch, { command: "crosscheck", args: ["lsp"] });
      assert.deepStrictEqual(clients[0].spec.initializationOptions, { tiers: { "llm-only": "hidden" } });
      await controller.dispose();
      assert.ok(clients[0].stopped);
    });

    it("registers every command package.json contributes, and no other", async () => {
      const { controller } = await activated();
      const contributed = (stub.packageJson.contributes.commands as { command: string }[]).map((c) => c.command).sort();
      assert.deepStrictEqual([...stub.commands.keys()].sort(), contributed);
      assert.deepStrictEqual(Object.values(EXTENSION_COMMANDS).sort(), contributed);
      await controller.dispose();
    });

    it("never registers a server command id (vscode-languageclient registers those)", async () => {
      const { controller } = await activated();
      for (const id of Object.values(SERVER_COMMANDS)) {
        assert.ok(!stub.commands.has(id), id);
      }
      await controller.dispose();
    });

    it("shows the backend state in the status bar after start", async () => {
      const { controller } = await activated();
      const item = stub.statusItem();
      assert.ok(item.visible);
      assert.strictEqual(item.command, EXTENSION_COMMANDS.showStatus);
      assert.ok(item.text.includes("LLM 1 checked"), item.text);
      await controller.dispose();
    });

    it("reports a server that cannot start in the status bar and an error message", async () => {
      const { controller } = await activated({}, new Error("spawn crosscheck ENOENT"));
      assert.strictEqual(controller.view().state, "failed");
      assert.ok(stub.messages.some((m) => m.kind === "error" && m.text.includes("crosscheck.server.path")));
      await controller.dispose();
    });
  });

  describe("workspace trust", () => {
    it("an untrusted workspace starts the server in deterministic mode only", async () => {
      stub.trusted = false;
      stub.set("llm.enabled", true, "workspaceValue");
      stub.set("server.path", "./run-me.sh", "workspaceValue");
      const { controller, clients } = await activated();
      assert.deepStrictEqual(clients[0].spec.initializationOptions, { llm: { enabled: false } });
      assert.strictEqual(clients[0].spec.launch.command, "crosscheck");
      assert.strictEqual(controller.view().state, "restricted");
      await controller.dispose();
    });

    it("granting trust restarts the server with the full settings", async () => {
      stub.trusted = false;
      stub.set("llm.enabled", true);
      const { controller, clients } = await activated();
      await stub.grantTrust();
      assert.strictEqual(clients.length, 2);
      assert.ok(clients[0].stopped);
      assert.deepStrictEqual(clients[1].spec.initializationOptions, { llm: { enabled: true } });
      assert.strictEqual(controller.view().state, "llm");
      await controller.dispose();
    });

    it("the workspace/configuration pull is answered with the filtered settings", async () => {
      stub.trusted = false;
      stub.set("rules.disable", ["analysis-partial"]);
      const { controller, clients } = await activated();
      assert.deepStrictEqual(clients[0].spec.configuration(["crosscheck", "editor"]), [
        { llm: { enabled: false }, rules: { disable: ["analysis-partial"] } },
        undefined,
      ]);
      await controller.dispose();
    });
  });

  describe("configuration changes", () => {
    it("pushes changed server settings with didChangeConfiguration", async () => {
      const { controller, clients } = await activated();
      stub.set("tiers.refuted", "hint");
      await stub.changed("crosscheck.tiers.refuted");
      assert.deepStrictEqual(clients[0].notifications, [
        { method: "workspace/didChangeConfiguration", params: { settings: { crosscheck: { tiers: { refuted: "hint" } } } } },
      ]);
      assert.strictEqual(clients.length, 1);
      await controller.dispose();
    });

    it("restarts when a setting is removed (the server cannot unset a key)", async () => {
      stub.set("files.exclude", ["gen/"]);
      const { controller, clients } = await activated();
      stub.set("files.exclude", undefined);
      await stub.changed("crosscheck.files.exclude");
      assert.strictEqual(clients.length, 2);
      assert.deepStrictEqual(clients[1].spec.initializationOptions, {});
      await controller.dispose();
    });

    it("restarts when the server binary changes", async () => {
      const { controller, clients } = await activated();
      stub.set("server.path", "/opt/crosscheck");
      await stub.changed("crosscheck.server.path");
      assert.strictEqual(clients.length, 2);
      assert.strictEqual(clients[1].spec.launch.command, "/opt/crosscheck");
      await controller.dispose();
    });

    it("ignores other extensions' settings", async () => {
      const { controller, clients } = await activated();
      await stub.changed("python.analysis");
      assert.deepStrictEqual(clients[0].notifications, []);
      assert.strictEqual(clients.length, 1);
      await controller.dispose();
    });
  });

  describe("diagnostics middleware", () => {
    it("applies the tier presentation before VS Code sees the diagnostics", async () => {
      const { controller, clients } = await activated();
      let shown: Diagnostic[] = [];
      const ds = [finding(2, "taint", "llm-only", "a"), finding(4, "taint", "confirmed", "b")];
      clients[0].spec.handleDiagnostics(Uri.parse(FILE) as never, ds as never, (_u, d) => (shown = d as never));
      assert.deepStrictEqual(shown.map((d) => d.source), ["crosscheck (llm-only)", "crosscheck (confirmed)"]);
      assert.deepStrictEqual(shown[0].tags, [DiagnosticTag.Unnecessary]);
      await controller.dispose();
    });

    it("fadeUnverified=false keeps unverified findings unfaded", async () => {
      stub.set("client.fadeUnverified", false);
      const { controller, clients } = await activated();
      let shown: Diagnostic[] = [];
      clients[0].spec.handleDiagnostics(Uri.parse(FILE) as never, [finding(2, "taint", "llm-only", "a")] as never, (_u, d) => (shown = d as never));
      assert.strictEqual(shown[0].tags, undefined);
      await controller.dispose();
    });
  });

  describe("commands", () => {
    it("explain sends crosscheck.explain with the cursor position", async () => {
      const { controller, clients } = await activated();
      stub.openEditor(FILE, 7, 4);
      await stub.commands.get(EXTENSION_COMMANDS.explainAtCursor)!();
      const req = clients[0].requests.find((r) => r.method === "workspace/executeCommand");
      assert.deepStrictEqual(req?.params, {
        command: "crosscheck.explain",
        arguments: [{ uri: FILE, line: 7, character: 4 }],
      });
      assert.ok(stub.messages.some((m) => m.kind === "statusBar" && m.text === "crosscheck: ok"));
      await controller.dispose();
    });

    it("compare CFG sends crosscheck.compareCfg", async () => {
      const { controller, clients } = await activated();
      stub.openEditor(FILE, 1, 0);
      await stub.commands.get(EXTENSION_COMMANDS.compareCfgAtCursor)!();
      const req = clients[0].requests.find((r) => r.method === "workspace/executeCommand");
      assert.strictEqual((req?.params as { command: string }).command, "crosscheck.compareCfg");
      await controller.dispose();
    });

    it("mark correct sends the finding's rule, line, tier and fingerprint", async () => {
      const { controller, clients } = await activated();
      stub.diagnostics.set(FILE, [finding(3, "taint-flow", "analyzer-only", "fp-3"), finding(9, "x", "confirmed", "fp-9")]);
      stub.openEditor(FILE, 3, 5);
      await stub.commands.get(EXTENSION_COMMANDS.markCorrectAtCursor)!();
      const req = clients[0].requests.find((r) => r.method === "workspace/executeCommand");
      assert.deepStrictEqual(req?.params, {
        command: "crosscheck.markCorrect",
        arguments: [{ uri: FILE, rule: "taint-flow", line: 3, fingerprint: "fp-3", tier: "analyzer-only" }],
      });
      await controller.dispose();
    });

    it("with several findings on the line, mark incorrect asks which one", async () => {
      const { controller, clients } = await activated();
      stub.diagnostics.set(FILE, [finding(3, "a-rule", "confirmed", "fp-a"), finding(3, "b-rule", "llm-only", "fp-b")]);
      stub.openEditor(FILE, 3, 0);
      stub.quickPickAnswer = 1;
      await stub.commands.get(EXTENSION_COMMANDS.markIncorrectAtCursor)!();
      const req = clients[0].requests.find((r) => r.method === "workspace/executeCommand");
      const args = (req?.params as { command: string; arguments: { fingerprint: string }[] });
      assert.strictEqual(args.command, "crosscheck.markIncorrect");
      assert.strictEqual(args.arguments[0].fingerprint, "fp-b");
      await controller.dispose();
    });

    it("cancelling the choice sends nothing", async () => {
      const { controller, clients } = await activated();
      stub.diagnostics.set(FILE, [finding(3, "a", "confirmed", "1"), finding(3, "b", "confirmed", "2")]);
      stub.openEditor(FILE, 3, 0);
      await stub.commands.get(EXTENSION_COMMANDS.markIncorrectAtCursor)!();
      assert.ok(!clients[0].requests.some((r) => r.method === "workspace/executeCommand"));
      await controller.dispose();
    });

    it("suppress sends crosscheck.suppress for the finding at the cursor", async () => {
      const { controller, clients } = await activated();
      stub.diagnostics.set(FILE, [finding(6, "syntax-error", "analyzer-only", "fp")]);
      stub.openEditor(FILE, 6, 2);
      await stub.commands.get(EXTENSION_COMMANDS.suppressAtCursor)!();
      const req = clients[0].requests.find((r) => r.method === "workspace/executeCommand");
      assert.deepStrictEqual(req?.params, {
        command: "crosscheck.suppress",
        arguments: [{ uri: FILE, line: 6, rule: "syntax-error" }],
      });
      await controller.dispose();
    });

    it("no finding at the cursor: a message, no request", async () => {
      const { controller, clients } = await activated();
      stub.diagnostics.set(FILE, [finding(6, "syntax-error", "analyzer-only", "fp")]);
      stub.openEditor(FILE, 2, 0);
      await stub.commands.get(EXTENSION_COMMANDS.suppressAtCursor)!();
      assert.ok(!clients[0].requests.some((r) => r.method === "workspace/executeCommand"));
      assert.ok(stub.messages.some((m) => m.text.includes("no crosscheck finding at the cursor")));
      await controller.dispose();
    });

    it("commands while the server is down warn instead of failing", async () => {
      const { controller } = await activated({}, new Error("ENOENT"));
      stub.openEditor(FILE, 1, 0);
      const r = await stub.commands.get(EXTENSION_COMMANDS.explainAtCursor)!();
      assert.strictEqual(r, undefined);
      assert.ok(stub.messages.some((m) => m.kind === "warning" && m.text.includes("not running")));
      await controller.dispose();
    });

    it("restart stops the old client and starts a new one", async () => {
      const { controller, clients } = await activated();
      await stub.commands.get(EXTENSION_COMMANDS.restartServer)!();
      assert.strictEqual(clients.length, 2);
      assert.ok(clients[0].stopped && clients[1].started);
      await controller.dispose();
    });
  });
});
