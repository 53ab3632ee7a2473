#!/usr/bin/env bash
# The test suite on a fresh machine: install what the tests need, then run pytest.
#
#   bash tests/run.sh [PYTEST ARGS...]
#
# What the tests need besides the Python packages of the `test` extra: git, bubblewrap (the sandbox
# tests), chromium (the HTML report tests), tmux (the terminal tests), a running docker daemon and
# a small Debian image built locally by tests/environments/build_image.sh with debootstrap (the
# docker-backed tests; no image registry is needed). As root, what is missing is installed from
# Debian's packages and dockerd is started; as another user, the script names what to install and
# stops. The virtual environment is `.venv` in the checkout (created, or reused as it is).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"  # dockerd and debootstrap live there

need=()
command -v git >/dev/null || need+=(git)
command -v bwrap >/dev/null || need+=(bubblewrap)
command -v chromium >/dev/null || need+=(chromium)
command -v tmux >/dev/null || need+=(tmux)
command -v dockerd >/dev/null || need+=(docker.io)
command -v debootstrap >/dev/null || need+=(debootstrap)
python3 -c 'import ensurepip' 2>/dev/null || need+=(python3-venv)
if [ ${#need[@]} -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "error: the tests need Debian packages that are missing: ${need[*]} (as root: apt-get install -y ${need[*]})" >&2
        exit 2
    fi
    echo "installing ${need[*]}" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

if ! docker info >/dev/null 2>&1; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "error: the docker-backed tests need a running docker daemon (as root: dockerd --storage-driver overlay2 &)" >&2
        exit 2
    fi
    echo "starting dockerd" >&2
    (dockerd --storage-driver overlay2 >/tmp/ctxbench-dockerd.log 2>&1 &)
    for _ in $(seq 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
    docker info >/dev/null 2>&1 || { tail -n 20 /tmp/ctxbench-dockerd.log >&2; echo "error: dockerd did not start" >&2; exit 1; }
fi

# The image builds (a few minutes, once per recipe) while the Python packages install.
image_log=$(mktemp)
bash tests/environments/build_image.sh >"$image_log" 2>&1 &
image_build=$!
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/pip install -q -e '.[test]'
wait $image_build || { tail -n 30 "$image_log" >&2; echo "error: the docker test image did not build" >&2; exit 1; }
rm -f "$image_log"

exec .venv/bin/python -m pytest "$@"
