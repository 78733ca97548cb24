#!/usr/bin/env bash
# Builds the docker-compose stack's two images: hyloop:latest (deploy/Dockerfile) and
# hyloop-prometheus:latest (deploy/prometheus/Dockerfile), both FROM one base.
#
#   deploy/build-images.sh [--base IMAGE] [--binaries DIR] [--tag T] [--prometheus-tag T]
#
# --base      debian:12 (default, pulled) or the offline base of deploy/base-image.sh.
# --binaries  DIR holding a host build's hyloop and hyloop-* (e.g. build/bin): the image takes
#             those (stripped) instead of compiling the project again; the runtime libraries are
#             the Debian packages their ldd names (deploy/runtime_packages.sh). The host must be
#             Debian 12, like the image. Without it the build stage compiles from source.
# The docker CLI is $DOCKER (default: docker), talking to $DOCKER_HOST as usual.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source_dir=$(cd "$here/.." && pwd)
base=debian:12
binaries=""
tag=hyloop:latest
prometheus_tag=hyloop-prometheus:latest
while [[ $# -gt 0 ]]; do
  case "$1" in
    --base) base=$2; shift 2 ;;
    --binaries) binaries=$2; shift 2 ;;
    --tag) tag=$2; shift 2 ;;
    --prometheus-tag) prometheus_tag=$2; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "build-images: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
docker=${DOCKER:-docker}

context=$source_dir
mode=source
work=""
trap 'if [[ -n "$work" ]]; then rm -rf "$work"; fi' EXIT
if [[ -n "$binaries" ]]; then
  [[ -x "$binaries/hyloop" ]] || { echo "build-images: $binaries/hyloop: no such executable" >&2; exit 1; }
  mode=prebuilt
  # A small context: what the Dockerfile copies, and the binaries.
  work=$(mktemp -d /tmp/hyloop-image.XXXXXX)
  mkdir -p "$work/scripts" "$work/deploy" "$work/bin" "$work/kinds"
  cp "$source_dir/scripts/setup.sh" "$source_dir/scripts/build.sh" "$work/scripts/"
  cp "$source_dir/deploy/Dockerfile" "$source_dir/deploy/healthcheck.py" \
     "$source_dir/deploy/runtime_packages.sh" "$work/deploy/"
  cp -r "$source_dir/scenarios" "$source_dir/data" "$work/"
  for b in "$binaries"/hyloop "$binaries"/hyloop-*; do
    [[ -f "$b" && -x "$b" ]] || continue
    strip --strip-unneeded -o "$work/bin/$(basename "$b")" "$b"
  done
  # The kind plug-ins the binaries load: DIR/../lib/hyloop/kinds in a build tree.
  kinds=$(dirname "$binaries")/lib/hyloop/kinds
  ls "$kinds"/*.so >/dev/null 2>&1 || { echo "build-images: no kind plug-ins in $kinds" >&2; exit 1; }
  for k in "$kinds"/*.so; do strip --strip-unneeded -o "$work/kinds/$(basename "$k")" "$k"; done
  "$source_dir/deploy/runtime_packages.sh" "$work"/bin/* "$work"/kinds/* > "$work/packages.txt"
  context=$work
fi

# The two builds run side by side (mostly apt downloads).
echo "build-images: $tag from $base ($mode binaries); $prometheus_tag from $base (Debian's prometheus)"
"$docker" build -q -f "$source_dir/deploy/prometheus/Dockerfile" --build-arg BASE_IMAGE="$base" \
  -t "$prometheus_tag" "$source_dir/deploy/prometheus" >/dev/null &
prometheus_build=$!
"$docker" build -q -f "$context/deploy/Dockerfile" --build-arg BASE_IMAGE="$base" \
  --build-arg BINARIES="$mode" -t "$tag" "$context" >/dev/null \
  || { wait "$prometheus_build" || true; echo "build-images: $tag failed" >&2; exit 1; }
wait "$prometheus_build" || { echo "build-images: $prometheus_tag failed" >&2; exit 1; }
echo "$tag $prometheus_tag"
