#!/usr/bin/env bash
# Neovim (Debian's 0.7.2) headless end-to-end test of `crosscheck lsp`.
# Usage: tests/nvim/run.sh  (CROSSCHECK_BIN defaults to target/debug/crosscheck)
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN="${CROSSCHECK_BIN:-$PWD/target/debug/crosscheck}"
if ! command -v nvim >/dev/null 2>&1; then
    echo "tests/nvim: nvim is not installed (apt-get install -y neovim)" >&2
    exit 1
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
set +e
CROSSCHECK_BIN="$BIN" NVIM_TEST_OUT="$tmp/result.txt" CROSSCHECK_CONFIG="$tmp/none.toml" \
    CROSSCHECK_DATA_DIR="$tmp/data" \
    XDG_CONFIG_HOME="$tmp/config" XDG_DATA_HOME="$tmp/data" XDG_STATE_HOME="$tmp/state" \
    timeout 180 nvim --headless --noplugin -u NONE -i NONE -n \
    -c "luafile tests/nvim/lsp_test.lua" </dev/null >"$tmp/nvim.log" 2>&1
rc=$?
set -e
if [ -f "$tmp/result.txt" ]; then
    cat "$tmp/result.txt"
else
    echo "tests/nvim: no result (nvim exit code $rc); log:" >&2
    cat "$tmp/nvim.log" >&2
    echo "nvim: 0 passed, 1 failed"
    exit 1
fi
exit "$rc"
