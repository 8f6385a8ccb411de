#!/usr/bin/env bash
# Neovim (Debian's 0.7.2) headless end-to-end tests of `crosscheck lsp`:
#   lsp_test.lua       a hand-made client (vim.lsp.start_client)
#   plugin_test.lua    the plugin in editors/nvim, loaded via the runtimepath as its README says
#   dispatch_test.lua  the plugin's start-up paths for 0.7 / 0.8-0.10 / 0.11+ and code lens, with
#                      the Neovim LSP entry points replaced by recorders
# Prints each check and `nvim: N passed, N failed`.
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
total_passed=0
total_failed=0

# run NAME INIT SCRIPT [NVIM ARGS...]: one headless Neovim per test file, isolated
# config/data/state directories and a project folder with the fixture and a crosscheck.toml.
run() {
    local name="$1" init="$2" script="$3"
    shift 3
    local dir="$tmp/$name"
    mkdir -p "$dir/project"
    cp tests/nvim/fixture.py "$dir/project/fixture.py"
    : >"$dir/project/crosscheck.toml"
    local rc=0
    CROSSCHECK_BIN="$BIN" NVIM_TEST_OUT="$dir/result.txt" NVIM_TEST_PROJECT="$dir/project" \
        CROSSCHECK_NVIM_PLUGIN="$PWD/editors/nvim" \
        CROSSCHECK_CONFIG="$dir/none.toml" CROSSCHECK_DATA_DIR="$dir/data" \
        XDG_CONFIG_HOME="$dir/config" XDG_DATA_HOME="$dir/data" XDG_STATE_HOME="$dir/state" \
        timeout 180 nvim --headless "$@" -u "$init" -i NONE -n \
        -c "luafile $script" </dev/null >"$dir/nvim.log" 2>&1 || rc=$?
    local p=0 f=1
    if [ -f "$dir/result.txt" ]; then
        grep -v '^nvim: ' "$dir/result.txt" || true
        local summary
        summary=$(sed -n 's/^nvim: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$dir/result.txt")
        if [ -n "$summary" ]; then read -r p f <<<"$summary"; else echo "FAIL $name: no summary line"; fi
        if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; echo "FAIL $name: nvim exit code $rc"; fi
    else
        echo "FAIL $name: no result (nvim exit code $rc); log:"
        cat "$dir/nvim.log"
    fi
    total_passed=$((total_passed + p))
    total_failed=$((total_failed + f))
}

run lsp NONE tests/nvim/lsp_test.lua --noplugin
run plugin tests/nvim/plugin_init.lua tests/nvim/plugin_test.lua
run dispatch NONE tests/nvim/dispatch_test.lua --noplugin

echo "nvim: $total_passed passed, $total_failed failed"
[ "$total_failed" -eq 0 ]
