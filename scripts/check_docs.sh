#!/usr/bin/env bash
# Runs every fenced block marked runnable (```sh runnable, ```python runnable) in README.md,
# docs/*.md and clients/python/README.md against a build, in a scratch directory, and fails when
# a marked command fails. Prints every shell block that is not runnable and why
# (tools/doc_blocks.py). Usage: scripts/check_docs.sh [BUILD_DIR] [FILE.md ...]
#   BUILD_DIR defaults to build/ (its bin/ goes first on PATH and is linked as build/ in the
#   scratch directory, so `build/bin/hyloop` in a doc means the build under test).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
shift || true
build="$(cd "$build" && pwd)"
if [ "$#" -eq 0 ]; then
  set -- "$root/README.md" "$root"/docs/*.md "$root/clients/python/README.md"
fi
[ -x "$build/bin/hyloop" ] || { echo "check_docs: no $build/bin/hyloop (build first)" >&2; exit 2; }
scratch="$build/check_docs"
exec /usr/bin/python3 "$root/tools/doc_blocks.py" run --source "$root" --build "$build" \
  --scratch "$scratch" --timeout "${CHECK_DOCS_TIMEOUT:-120}" --jobs "${CHECK_DOCS_JOBS:-2}" "$@"
