// The manifest: what VS Code reads before running any code.

import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { execFileSync } from "child_process";
import { stub } from "./stub/vscode";
import { LANGUAGE_IDS } from "../src/languages";
import { CLIENT_NAMESPACES, serverKeys } from "../src/settings";

const root = path.join(__dirname, "..", "..");
const pkg = stub.packageJson;

/** The crosscheck binary for the schema comparison: $CROSSCHECK_BIN or the repo's debug build. */
function crosscheckBin(): string | undefined {
  const candidates = [process.env.CROSSCHECK_BIN, path.join(root, "..", "..", "target", "debug", "crosscheck")];
  return candidates.find((c): c is string => !!c && fs.existsSync(c));
}

describe("package.json", () => {
  it("activates on every language the server analyses", () => {
    for (const id of LANGUAGE_IDS) {
      assert.ok(pkg.activationEvents.includes(`onLanguage:${id}`), id);
    }
  });

  it("declares limited support for untrusted workspaces, restricting the binary and the LLM", () => {
    const u = pkg.capabilities.untrustedWorkspaces;
    assert.strictEqual(u.supported, "limited");
    for (const k of ["crosscheck.server.path", "crosscheck.server.args", "crosscheck.llm.enabled"]) {
      assert.ok(u.restrictedConfigurations.includes(k), k);
    }
  });

  it("runs the bundled entry point and names its engine", () => {
    assert.strictEqual(pkg.main, "./dist/extension.js");
    assert.ok(pkg.engines.vscode.startsWith("^1."));
  });

  it("ships only the bundle, the manifest and the README", () => {
    const ignore = fs.readFileSync(path.join(root, ".vscodeignore"), "utf8");
    assert.ok(ignore.split("\n").includes("**"));
    assert.ok(ignore.includes("!dist/extension.js"));
  });

  it("the extension's own settings live in its namespaces", () => {
    const own = Object.keys(pkg.contributes.configuration.properties).filter((k) => !serverKeys(pkg).includes(k));
    assert.deepStrictEqual(own.filter((k) => !CLIENT_NAMESPACES.some((ns) => k.startsWith(ns))), []);
    assert.ok(own.includes("crosscheck.trace.server"));
  });

  it("contributes exactly the server's settings schema (`crosscheck schema lsp-settings`)", function () {
    const bin = crosscheckBin();
    if (!bin) {
      // The same comparison runs on the Rust side (src/lsp/settings_schema.rs).
      this.skip();
    }
    const schema = JSON.parse(execFileSync(bin!, ["schema", "lsp-settings"], { encoding: "utf8" }));
    const contributed = pkg.contributes.configuration.properties;
    const server = Object.fromEntries(serverKeys(pkg).map((k) => [k, contributed[k]]));
    assert.deepStrictEqual(server, schema.properties);
  });
});
