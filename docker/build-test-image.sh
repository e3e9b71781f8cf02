#!/usr/bin/env bash
# Builds the image the Docker runner's tests use, offline: a minimal Debian bookworm root file system
# from the machine's own apt mirror (debootstrap --variant=minbase) with python3, nodejs and bash,
# imported with `docker import` as sandbox4j-test:<tag>. Cached by tag: when the image exists it
# does nothing. Needs root (debootstrap), a reachable Docker engine and the Debian mirror in
# /etc/apt/sources.list*. Usage: docker/build-test-image.sh [tag]   (default tag: the TAG below)
set -euo pipefail
TAG="${1:-${SANDBOX4J_DOCKER_TEST_TAG:-bookworm-1}}"
IMAGE="sandbox4j-test:$TAG"
if docker image inspect "$IMAGE" >/dev/null 2>&1; then
  echo "docker test image: $IMAGE already present"
  exit 0
fi
command -v debootstrap >/dev/null 2>&1 || {
  echo "docker test image: debootstrap is missing (apt-get install -y debootstrap)" >&2; exit 1; }
# The first deb URI of the machine's apt sources (deb822 or one-line format).
MIRROR="$(grep -hsE '^(URIs:|deb )' /etc/apt/sources.list /etc/apt/sources.list.d/* \
  | grep -v security | head -1 | sed -E 's/^URIs:[[:space:]]*//; s/^deb[[:space:]]+(\[[^]]*\][[:space:]]+)?//; s/[[:space:]].*$//' || true)"
MIRROR="${MIRROR:-http://deb.debian.org/debian}"
DIR="$(mktemp -d /tmp/sandbox4j-rootfs.XXXXXX)"
trap 'rm -rf "$DIR"' EXIT
echo "docker test image: debootstrap bookworm from $MIRROR"
debootstrap --variant=minbase --include=python3,nodejs bookworm "$DIR" "$MIRROR" >"$DIR.log" 2>&1 \
  || { tail -20 "$DIR.log" >&2; rm -f "$DIR.log"; exit 1; }
rm -f "$DIR.log"
# Smaller image: no apt lists, caches or docs (the sandbox installs nothing at run time).
rm -rf "$DIR"/var/lib/apt/lists/* "$DIR"/var/cache/apt/* "$DIR"/usr/share/doc/* "$DIR"/usr/share/man/*
# The unprivileged user the runner runs code as (uid/gid 1000, like the default image's).
chroot "$DIR" groupadd -g 1000 sandbox
chroot "$DIR" useradd -u 1000 -g 1000 -M -d /work -s /bin/bash sandbox
mkdir -p "$DIR/work" && chown 1000:1000 "$DIR/work"
tar -C "$DIR" -c . | docker import \
  -c 'ENV PATH=/usr/local/bin:/usr/bin:/bin' -c 'WORKDIR /work' -c 'USER 1000:1000' \
  - "$IMAGE" >/dev/null
echo "docker test image: $IMAGE built"
