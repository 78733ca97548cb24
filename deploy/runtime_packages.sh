#!/usr/bin/env bash
# Prints the Debian packages (one a line, sorted) that hold the shared libraries the given ELF
# binaries load (ldd), so an image's runtime stage installs exactly what the binaries need.
#   deploy/runtime_packages.sh build/bin/hyloop build/bin/hyloop-*
# Fails, naming the library, when a library is missing or belongs to no package.
set -euo pipefail
[[ $# -gt 0 ]] || { echo "usage: $0 BINARY..." >&2; exit 2; }
libs=$(for b in "$@"; do
  ldd "$b" | awk -v bin="$b" '/=> not found/ {print "MISSING " $1 " " bin; next}
                              /=>/ {print $3} /^\t\/lib/ {print $1}'
done | sort -u)
if grep -q '^MISSING' <<<"$libs"; then
  grep '^MISSING' <<<"$libs" | sed 's/^MISSING \(.*\) \(.*\)/runtime_packages: \2 needs \1, which is not installed/' >&2
  exit 1
fi
# Every spelling of every library (usrmerge: dpkg may know it under /lib or /usr/lib, by its
# link name or its target), asked of dpkg in one call.
declare -A spellings=()
candidates=()
for lib in $libs; do
  real=$(readlink -f "$lib")
  for p in "$lib" "/usr$lib" "${lib#/usr}" "$real" "/usr$real" "${real#/usr}"; do
    spellings["$p"]=$lib
    candidates+=("$p")
  done
done
declare -A owner=()
while IFS= read -r line; do
  pkg=${line%%: *}
  path=${line#*: }
  owner["${spellings[$path]:-}"]=${pkg%%:*}
done < <(dpkg-query -S "${candidates[@]}" 2>/dev/null || true)
for lib in $libs; do
  [[ -n "${owner[$lib]:-}" ]] || { echo "runtime_packages: $lib belongs to no Debian package" >&2; exit 1; }
  echo "${owner[$lib]}"
done | sort -u
