#!/usr/bin/env bash
# Builds the real model servers of tests/realserver once per version into a cache outside the
# project (MINECLAW_MODEL_SERVERS, default ~/.cache/mineclaw/model-servers):
#   llama-cpp-python-<v>/  its own virtual environment with llama-cpp-python[server] and gguf
#   llama-server-<v>/bin/  llama.cpp's llama-server, built from the llama.cpp sources that
#                          llama-cpp-python's source distribution carries (no other download)
# Each is reused while its stamp is there. Without a C/C++ compiler or cmake (and no root to
# install them) it prints one line and exits 0: the tests of what was not built are not run.
set -u
LCP_VERSION=0.3.36      # keep in step with tests/realserver/model_servers.py
GGUF_VERSION=0.19.0
PYTHON=${PYTHON:-python3}
CACHE=${MINECLAW_MODEL_SERVERS:-${XDG_CACHE_HOME:-$HOME/.cache}/mineclaw/model-servers}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
LCP=$CACHE/llama-cpp-python-$LCP_VERSION
LS=$CACHE/llama-server-$LCP_VERSION
SDIST=$CACHE/dl/llama_cpp_python-$LCP_VERSION.tar.gz

# with_progress WHAT COMMAND...: runs COMMAND, saying every minute that WHAT is still building
# (a first build takes about 30 minutes on two loaded cores; a silent step looks like a hang).
with_progress() {
  local what=$1 start=$SECONDS
  shift
  "$@" &
  local pid=$!
  while ! wait_a_minute "$pid"; do
    echo "  still building $what ($(( (SECONDS - start) / 60 )) min so far)" >&2
  done
  wait "$pid"
}
# True once PID has exited; false after a minute of it still running.
wait_a_minute() {
  local i
  for i in $(seq 60); do kill -0 "$1" 2>/dev/null || return 0; sleep 1; done
  return 1
}

have_tools() { command -v cc >/dev/null && command -v c++ >/dev/null && command -v cmake >/dev/null; }

if [ -f "$LCP/.built" ] && [ -x "$LS/bin/llama-server" ]; then exit 0; fi
if ! have_tools; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing a C/C++ compiler and cmake from the distribution (the real model servers are built from source)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq --no-install-recommends build-essential cmake >/dev/null \
      || echo "apt-get install build-essential cmake failed" >&2
  fi
  if ! have_tools; then
    echo "not built: the real model servers (tests/realserver): no C/C++ compiler or cmake" >&2
    exit 0
  fi
fi
echo "building the real model servers of the tests (once per version, into $CACHE):"
echo "  llama-cpp-python $LCP_VERSION's server and llama.cpp's llama-server, compiled from source;"
echo "  about 30 minutes on two loaded cores, a few on an idle machine with more. They serve the"
echo "  tests' tiny random model; to chat with a real local model see docs/providers.md (provider add)."
mkdir -p "$CACHE/dl"
if [ ! -f "$SDIST" ]; then
  echo "fetching llama-cpp-python $LCP_VERSION's source distribution (once)"
  "$PYTHON" -m pip download --quiet --no-deps --no-binary :all: "llama-cpp-python==$LCP_VERSION" \
    -d "$CACHE/dl" || { echo "could not fetch llama-cpp-python $LCP_VERSION" >&2; exit 1; }
fi
# Portable code (no -march=native): the cache may outlive the CPU it was built on.
FLAGS="-DGGML_NATIVE=OFF -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF"
if [ ! -f "$LCP/.built" ]; then
  echo "building llama-cpp-python $LCP_VERSION's server into $LCP (once per version; 10-20 minutes on two cores)"
  rm -rf "$LCP" && "$PYTHON" -m venv "$LCP" || exit 1
  CMAKE_ARGS="$FLAGS" CMAKE_BUILD_PARALLEL_LEVEL=$JOBS with_progress llama-cpp-python \
    "$LCP/bin/pip" install --quiet "$SDIST[server]" "gguf==$GGUF_VERSION" \
    || { echo "llama-cpp-python build failed" >&2; exit 1; }
  touch "$LCP/.built"
fi
if [ ! -x "$LS/bin/llama-server" ]; then
  echo "building llama.cpp's llama-server from the same sources into $LS (once per version; 10-15 minutes on two cores)"
  WORK=$LS/work && rm -rf "$WORK" && mkdir -p "$WORK" "$LS/bin" || exit 1
  tar xzf "$SDIST" -C "$WORK" "llama_cpp_python-$LCP_VERSION/vendor/llama.cpp" || exit 1
  SRC=$WORK/llama_cpp_python-$LCP_VERSION/vendor/llama.cpp
  GENERATOR=$(command -v ninja >/dev/null && echo "-G Ninja" || echo "")
  # No web UI (it would be fetched), no TLS, static: one binary to keep.
  cmake -S "$SRC" -B "$WORK/build" $GENERATOR -DCMAKE_BUILD_TYPE=Release $FLAGS \
      -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DBUILD_SHARED_LIBS=OFF >/dev/null \
    && with_progress llama-server cmake --build "$WORK/build" --target llama-server -j "$JOBS" >/dev/null \
    && cp "$WORK/build/bin/llama-server" "$LS/bin/llama-server" \
    || { echo "llama-server build failed" >&2; exit 1; }
  rm -rf "$WORK"
fi
