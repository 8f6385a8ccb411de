#!/usr/bin/env bash
# Builds, tests and packages the VS Code extension from a clean node_modules.
# Usage: bash editors/vscode/ci.sh   (Node >= 20; the npm registry for `npm ci`, nothing else)
# The schema-sync and real-server tests use $CROSSCHECK_BIN, else target/debug/crosscheck if built;
# without a binary they are reported as pending (the Rust test keeps package.json in sync too).
set -euo pipefail
cd "$(dirname "$0")"
t0=$(date +%s)
log() { echo "[vscode +$(( $(date +%s) - t0 ))s] $*"; }

if [ -z "${CROSSCHECK_BIN:-}" ] && [ -x ../../target/debug/crosscheck ]; then
    CROSSCHECK_BIN="$(cd ../../target/debug && pwd)/crosscheck"
fi
export CROSSCHECK_BIN="${CROSSCHECK_BIN:-}"

log "npm ci"
rm -rf node_modules out dist
# Install scripts are not needed (esbuild finds its platform package; nothing is signed).
npm ci --ignore-scripts --no-audit --no-fund --loglevel=error

log "tsc"
npx --no-install tsc -p .

log "esbuild bundle"
npm run --silent bundle -- --log-level=warning

log "mocha${CROSSCHECK_BIN:+ (server: $CROSSCHECK_BIN)}"
npx --no-install mocha

log "vsce package"
version=$(node -p 'require("./package.json").version')
vsix="crosscheck-${version}.vsix"
rm -f "$vsix"
npx --no-install vsce package --no-dependencies --skip-license --allow-missing-repository --out "$vsix" >/dev/null
size=$(wc -c <"$vsix")
log "packaged $(pwd)/$vsix ($size bytes)"
echo "$(pwd)/$vsix $size"
