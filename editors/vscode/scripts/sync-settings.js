#!/usr/bin/env node
// Rewrites the server's settings in package.json from `crosscheck schema lsp-settings`
// (the extension's own settings, in the crosscheck.server/client/trace namespaces, are kept).
// Usage: node scripts/sync-settings.js [path/to/crosscheck]   (default: $CROSSCHECK_BIN or
// ../../target/debug/crosscheck). Tests on both sides fail while package.json is out of sync.
"use strict";
const fs = require("fs");
const path = require("path");
const { execFileSync } = require("child_process");

const root = path.join(__dirname, "..");
const bin =
  process.argv[2] || process.env.CROSSCHECK_BIN || path.join(root, "..", "..", "target", "debug", "crosscheck");
const OWN = ["crosscheck.server.", "crosscheck.client.", "crosscheck.trace."];

const schema = JSON.parse(execFileSync(bin, ["schema", "lsp-settings"], { encoding: "utf8" }));
const pkgPath = path.join(root, "package.json");
const pkg = JSON.parse(fs.readFileSync(pkgPath, "utf8"));
const old = pkg.contributes.configuration.properties;
const props = {};
for (const [k, v] of Object.entries(old)) {
  if (OWN.some((ns) => k.startsWith(ns))) {
    props[k] = v;
  }
}
for (const [k, v] of Object.entries(schema.properties)) {
  props[k] = v;
}
pkg.contributes.configuration.properties = props;
fs.writeFileSync(pkgPath, JSON.stringify(pkg, null, 2) + "\n");
console.log(`package.json: ${Object.keys(schema.properties).length} server settings from ${bin}`);
