// The packaged entry point: dist/extension.js (esbuild bundle with vscode-languageclient inside)
// loads with only `vscode` external and exports activate/deactivate.

import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";

const bundle = path.join(__dirname, "..", "..", "dist", "extension.js");

describe("bundle", () => {
  it("dist/extension.js loads and exports activate and deactivate", function () {
    if (!fs.existsSync(bundle)) {
      // Built by `npm run bundle` (ci.sh runs it before the tests).
      this.skip();
    }
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const ext = require(bundle) as { activate?: unknown; deactivate?: unknown };
    assert.strictEqual(typeof ext.activate, "function");
    assert.strictEqual(typeof ext.deactivate, "function");
  });

  it("bundles vscode-languageclient instead of requiring it at run time", function () {
    if (!fs.existsSync(bundle)) {
      this.skip();
    }
    const text = fs.readFileSync(bundle, "utf8");
    assert.ok(!/require\(["']vscode-languageclient/.test(text));
    assert.ok(/require\(["']vscode["']\)/.test(text));
  });
});
