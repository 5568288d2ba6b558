#!/usr/bin/env bash
# Local stand-ins for the base images that the Dockerfile and compose.yaml name (python:3.11-slim,
# postgres:15, redis:7), for a machine that cannot pull from a registry. They are built from
# Debian 12's own packages: debootstrap makes a root file system, `docker import` turns it into an
# image, and the files in docker/base/ add Python 3.11, PostgreSQL 15 or Redis 7 the way the
# official images do (same commands on the PATH, same environment variables, same data folders).
#
#   sudo docker/base-images.sh            # builds only the names that `docker image inspect` lacks
#   FORCE=1 sudo docker/base-images.sh    # builds all three again
#
# Needs root (debootstrap), debootstrap, and a Debian mirror (MIRROR, default deb.debian.org).
# The stand-ins trust the CA certificates of this machine (/etc/ssl/certs/ca-certificates.crt), so
# that a build behind an intercepting proxy reaches PyPI as the host does.
set -euo pipefail
cd "$(dirname "$0")"

MIRROR="${MIRROR:-http://deb.debian.org/debian}"
SUITE=bookworm
ROOT_IMAGE="podium-local/debian:${SUITE}"
CA_BUNDLE="${CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}"

have() { [ -z "${FORCE:-}" ] && docker image inspect "$1" >/dev/null 2>&1; }

if ! have "$ROOT_IMAGE"; then
    rootfs="$(mktemp -d /var/tmp/podium-rootfs.XXXXXX)"
    trap 'rm -rf "$rootfs"' EXIT
    echo "debootstrap ${SUITE} (minbase) from ${MIRROR} ..."
    debootstrap --variant=minbase "$SUITE" "$rootfs" "$MIRROR" >/dev/null
    rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
    tar -C "$rootfs" -c . | docker import --change 'CMD ["/bin/bash"]' - "$ROOT_IMAGE"
fi

# The build context of each stand-in: its Dockerfile, its entry point, and the CA bundle.
context="$(mktemp -d)"
trap 'rm -rf "$context" ${rootfs:+"$rootfs"}' EXIT
cp base/* "$context"/
cp "$CA_BUNDLE" "$context/ca-certificates.crt"

for pair in python:3.11-slim=python postgres:15=postgres redis:7=redis; do
    name="${pair%%=*}" file="${pair#*=}"
    if have "$name"; then
        echo "$name: present, kept"
        continue
    fi
    echo "building the stand-in $name ..."
    # The host's network: the build runs apt-get, and the engine may have no NAT (iptables off).
    docker build --network host --build-arg "BASE=${ROOT_IMAGE}" -t "$name" -f "$context/${file}.Dockerfile" "$context" >/dev/null
done
docker image ls --format '{{.Repository}}:{{.Tag}}\t{{.Size}}' | grep -E '^(python:3.11-slim|postgres:15|redis:7|podium-local/debian)' || true
