#!/usr/bin/env bash
# Makes a Debian 12 base image without a registry: debootstrap (minbase) from apt's own mirror,
# then `docker import`. The images of deploy/Dockerfile and deploy/prometheus/Dockerfile build
# FROM it (build argument BASE_IMAGE) where debian:12 cannot be pulled; their apt-get installs
# from the same mirror. Run as root (debootstrap), from anywhere:
#
#   deploy/base-image.sh [--name hyloop-base:bookworm] [--cache DIR] [--mirror URL]
#
# --cache DIR keeps the root file system as DIR/debian-bookworm-minbase.tar, so a second run only
# imports it (3 s instead of about a minute); without it the tree is made in a temporary
# directory. The mirror defaults to the first URI of the host's apt sources; the image gets the
# host's apt sources (bookworm, -updates, -security), so it installs the versions the host has.
# The docker CLI is $DOCKER (default: docker), talking to $DOCKER_HOST as usual.
set -euo pipefail
name=hyloop-base:bookworm
cache=""
mirror=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --name) name=$2; shift 2 ;;
    --cache) cache=$2; shift 2 ;;
    --mirror) mirror=$2; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "base-image: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
docker=${DOCKER:-docker}

if [[ -z "$mirror" ]]; then
  # deb822 (URIs: ...) first, then one-line sources; the first non-security URI.
  mirror=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '/^URIs:/ {print $2}' \
           | grep -v security | head -1 || true)
  [[ -n "$mirror" ]] || mirror=$(grep -h '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
                                   2>/dev/null | grep -v security | awk '{print $2}' | head -1 || true)
  [[ -n "$mirror" ]] || mirror=http://deb.debian.org/debian
fi

work=""
cleanup() { if [[ -n "$work" ]]; then rm -rf "$work"; fi; }
trap cleanup EXIT
if [[ -n "$cache" ]]; then
  mkdir -p "$cache"
  tarball=$cache/debian-bookworm-minbase.tar
else
  work=$(mktemp -d /tmp/hyloop-base.XXXXXX)
  tarball=$work/debian-bookworm-minbase.tar
fi

if [[ ! -s "$tarball" ]]; then
  command -v debootstrap >/dev/null || { echo "base-image: debootstrap is not installed (scripts/setup.sh --with-docker)" >&2; exit 1; }
  [[ $(id -u) -eq 0 ]] || { echo "base-image: debootstrap needs root" >&2; exit 1; }
  root=$(mktemp -d "${cache:-/tmp}/rootfs.XXXXXX")
  trap 'rm -rf "$root"; cleanup' EXIT
  echo "base-image: debootstrap --variant=minbase bookworm from $mirror"
  debootstrap --variant=minbase bookworm "$root" "$mirror" >"$root.log" 2>&1 \
    || { tail -20 "$root.log" >&2; rm -f "$root.log"; exit 1; }
  rm -f "$root.log"
  # The host's apt sources when it is Debian 12 (same mirror, -updates and -security), else
  # debootstrap's own line. No package cache or lists in the image.
  if grep -qs bookworm /etc/apt/sources.list.d/*.sources; then
    rm -f "$root/etc/apt/sources.list"
    cp /etc/apt/sources.list.d/*.sources "$root/etc/apt/sources.list.d/"
  fi
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/var/log/*.log
  tar --numeric-owner -C "$root" -cf "$tarball.tmp" .
  mv "$tarball.tmp" "$tarball"
  rm -rf "$root"
fi
# Imported once per tarball: a new import would be a new image and invalidate every build cache
# layer above it. The label names the tarball's size and modification time.
key=$(stat -c %s-%Y "$tarball")
if [[ "$("$docker" image inspect -f '{{index .Config.Labels "org.hyloop.rootfs"}}' "$name" 2>/dev/null)" != "$key" ]]; then
  echo "base-image: docker import $tarball $name"
  "$docker" import --change 'CMD ["/bin/bash"]' --change "LABEL org.hyloop.rootfs=$key" \
    "$tarball" "$name" >/dev/null
fi
echo "$name"
