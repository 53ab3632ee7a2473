#!/usr/bin/env bash
# Build the small Debian image the docker-backed tests run in, unless it is there already: debootstrap
# (minbase bookworm) with Python, git and the Debian package python3-more-itertools, plus the pytest of
# image-requirements.txt pip-installed from PyPI into the image's /usr/local, imported as
# ctxbench-test:bookworm-<hash>. The hash (12 hex digits) is of this script and the requirements file,
# so a changed recipe builds a new image (and removes the images of earlier recipes). Prints the image's name on stdout.
# Usage: tests/environments/build_image.sh          build it if missing (root, a running dockerd,
#                                                   debootstrap, python3 with venv), print its name
#        tests/environments/build_image.sh --tag    only print its name
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
requirements=$here/image-requirements.txt
hash=$(cat "$here/build_image.sh" "$requirements" | sha256sum | cut -c1-12)
image=ctxbench-test:bookworm-$hash
case "${1:-}" in
    --tag) echo "$image"; exit 0 ;;
    "") ;;
    *) echo "error: unknown argument $1 (usage: $0 [--tag])" >&2; exit 2 ;;
esac
mirror=${CTXBENCH_DEBIAN_MIRROR:-http://deb.debian.org/debian}
if docker image inspect "$image" >/dev/null 2>&1; then
    echo "$image"
    exit 0
fi
work=$(mktemp -d /var/tmp/ctxbench-image-XXXXXX)
trap 'rm -rf "$work"' EXIT
root=$work/root
echo "building docker image $image (debootstrap bookworm, a few minutes)" >&2
debootstrap --variant=minbase --include=python3,python-is-python3,python3-more-itertools,git,procps \
    bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1 || { tail -n 20 "$work/debootstrap.log" >&2; exit 1; }
# The pinned wheels (pure Python) for the image's interpreter, from PyPI through a pip of this machine.
version=$(chroot "$root" python3 -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
python3 -m venv "$work/pip"
"$work/pip/bin/pip" install -q --no-deps --only-binary=:all: --python-version "$version" --implementation cp \
    --target "$root/usr/local/lib/python$version/dist-packages" -r "$requirements"
rm -rf "$root/usr/local/lib/python$version/dist-packages/bin"
# The image's python imports that pytest, not another one.
pinned=$(sed -n 's/^pytest==//p' "$requirements")
found=$(chroot "$root" python -c 'import pytest; print(pytest.__version__, pytest.__file__)')
case "$found" in
    "$pinned /usr/local/"*) ;;
    *) echo "the image's python imports pytest $found, not $pinned from /usr/local" >&2; exit 1 ;;
esac
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/usr/share/doc/* "$root"/usr/share/man/*
mkdir -p "$root/testbed"
tar -C "$root" -c . | docker import --change 'WORKDIR /testbed' --change 'CMD ["/bin/bash"]' - "$image" >/dev/null
echo "built docker image $image" >&2
# Images of earlier recipes go (one not removable now, e.g. in use by a container, stays for the next build).
docker image ls --format '{{.Repository}}:{{.Tag}}' ctxbench-test | grep -v -x -F "$image" \
    | xargs -r docker rmi >/dev/null 2>&1 || true
echo "$image"
