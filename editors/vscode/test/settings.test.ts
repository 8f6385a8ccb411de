import * as assert from "assert";
import * as vscode from "vscode";
import { stub } from "./stub/vscode";
import { contributedKeys, flatKeys, serverKeys, serverLaunch, serverSettings } from "../src/settings";

const cfg = () => vscode.workspace.getConfiguration("crosscheck");

describe("settings", () => {
  beforeEach(() => stub.reset());

  it("splits contributed settings into the server's and the extension's own", () => {
    const server = serverKeys(stub.packageJson);
    assert.ok(server.includes("crosscheck.tiers.llm-only"));
    assert.ok(server.includes("crosscheck.files.exclude"));
    assert.ok(!server.includes("crosscheck.server.path"));
    assert.ok(!server.includes("crosscheck.trace.server"));
    assert.ok(!server.includes("crosscheck.client.fadeUnverified"));
    assert.ok(contributedKeys(stub.packageJson).includes("crosscheck.server.path"));
  });

  it("sends nothing when nothing is set, so the user's config file keeps precedence", () => {
    assert.deepStrictEqual(serverSettings(cfg(), serverKeys(stub.packageJson), true), {});
  });

  it("sends only explicitly set keys, nested as in crosscheck.toml", () => {
    stub.set("tiers.llm-only", "hidden");
    stub.set("files.exclude", ["vendor/"], "workspaceValue");
    stub.set("llm.debounce_ms", 900, "workspaceFolderValue");
    stub.set("server.path", "/opt/crosscheck");
    stub.set("client.fadeUnverified", false);
    assert.deepStrictEqual(serverSettings(cfg(), serverKeys(stub.packageJson), true), {
      files: { exclude: ["vendor/"] },
      llm: { debounce_ms: 900 },
      tiers: { "llm-only": "hidden" },
    });
  });

  it("a key set back to its default value is still sent (it overrides the user file)", () => {
    stub.set("llm.enabled", true);
    assert.deepStrictEqual(serverSettings(cfg(), serverKeys(stub.packageJson), true), { llm: { enabled: true } });
  });

  it("an untrusted workspace never enables the LLM, whatever the settings say", () => {
    stub.set("llm.enabled", true, "workspaceValue");
    stub.set("tiers.refuted", "hint");
    assert.deepStrictEqual(serverSettings(cfg(), serverKeys(stub.packageJson), false), {
      llm: { enabled: false },
      tiers: { refuted: "hint" },
    });
  });

  it("flatKeys lists the dotted keys of a settings object", () => {
    assert.deepStrictEqual(flatKeys({ files: { exclude: ["a"] }, llm: { enabled: false, debounce_ms: 3 } }), [
      "files.exclude",
      "llm.debounce_ms",
      "llm.enabled",
    ]);
  });

  it("launches `crosscheck lsp` from PATH by default", () => {
    assert.deepStrictEqual(serverLaunch(cfg(), true), { command: "crosscheck", args: ["lsp"] });
  });

  it("launches the configured binary with extra arguments before `lsp`", () => {
    stub.set("server.path", "/opt/bin/crosscheck", "workspaceValue");
    stub.set("server.args", ["-v"]);
    assert.deepStrictEqual(serverLaunch(cfg(), true), { command: "/opt/bin/crosscheck", args: ["-v", "lsp"] });
  });

  it("in an untrusted workspace the binary comes from user settings only", () => {
    stub.set("server.path", "./evil.sh", "workspaceValue");
    stub.set("server.args", ["--evil"], "workspaceFolderValue");
    const untrusted = { CROSSCHECK_UNTRUSTED_WORKSPACE: "1" };
    assert.deepStrictEqual(serverLaunch(cfg(), false), { command: "crosscheck", args: ["lsp"], env: untrusted });
    stub.set("server.path", "/home/me/bin/crosscheck");
    assert.deepStrictEqual(serverLaunch(cfg(), false), {
      command: "/home/me/bin/crosscheck",
      args: ["lsp"],
      env: untrusted,
    });
  });
});
