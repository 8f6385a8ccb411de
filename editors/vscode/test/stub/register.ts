// Loaded by mocha before the tests (.mocharc.json): `require("vscode")` resolves to the stub.
// Classes the stub does not define (vscode-languageclient subclasses many at load time) resolve
// to empty placeholder classes, so that the bundled extension can be loaded as a smoke test.

import Module = require("module");
import * as path from "path";

const stubPath = path.join(__dirname, "vscode.js");
const mod = Module as unknown as {
  _resolveFilename(request: string, ...rest: unknown[]): string;
};
const original = mod._resolveFilename;
mod._resolveFilename = function (request: string, ...rest: unknown[]): string {
  if (request === "vscode") {
    return stubPath;
  }
  return original.call(this, request, ...rest);
};

// eslint-disable-next-line @typescript-eslint/no-require-imports
const real = require(stubPath) as Record<string | symbol, unknown>;
const placeholders = new Map<string, unknown>();
const proxied = new Proxy(real, {
  get(target, prop) {
    if (prop in target || typeof prop !== "string" || !/^[A-Z]/.test(prop)) {
      return target[prop];
    }
    if (!placeholders.has(prop)) {
      placeholders.set(prop, { [prop]: class {} }[prop]);
    }
    return placeholders.get(prop);
  },
});
const cached = require.cache[stubPath];
if (cached) {
  cached.exports = proxied;
}
