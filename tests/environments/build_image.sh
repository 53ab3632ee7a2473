#!/usr/bin/env bash
# Build the small Debian image the docker-backed tests run in, unless it is there already:
# debootstrap (minbase bookworm) with Python, pytest and git, imported as ctxbench-test:bookworm.
# Usage: tests/environments/build_image.sh [IMAGE]   (needs root, a running dockerd, debootstrap)
set -euo pipefail
image=${1:-ctxbench-test:bookworm}
mirror=${CTXBENCH_DEBIAN_MIRROR:-http://deb.debian.org/debian}
if docker image inspect "$image" >/dev/null 2>&1; then
    exit 0
fi
root=$(mktemp -d /var/tmp/ctxbench-image-XXXXXX)
trap 'rm -rf "$root"' EXIT
echo "building docker image $image (debootstrap bookworm, a few minutes)" >&2
debootstrap --variant=minbase --include=python3,python3-pytest,python-is-python3,git,procps \
    bookworm "$root" "$mirror" >"$root.log" 2>&1 || { tail -n 20 "$root.log" >&2; exit 1; }
rm -f "$root.log"
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
mkdir -p "$root/testbed"
tar -C "$root" -c . | docker import --change 'WORKDIR /testbed' --change 'CMD ["/bin/bash"]' - "$image" >/dev/null
echo "built docker image $image" >&2
