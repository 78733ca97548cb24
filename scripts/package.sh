#!/usr/bin/env bash
# Builds hyloop's Debian package from the one build tree (build/hyloop_<version>_<arch>.deb:
# binaries, libraries, headers, the CMake package, protos, scenarios, data; installs under /usr).
#   scripts/package.sh            set up, build, cpack
#   scripts/package.sh --check    ... then install the .deb into a fresh minimal Debian 12 root
#                                 (debootstrap from this machine's apt source) and run shipped
#                                 scenarios and a report there, as a lab's machine would
set -euo pipefail
cd "$(dirname "$0")/.."
check=0
for arg in "$@"; do
  case "$arg" in
    --check) check=1 ;;
    -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
    *) echo "package: unknown argument '$arg' (allowed: --check)" >&2; exit 2 ;;
  esac
done
./scripts/setup.sh
./scripts/build.sh
rm -f build/hyloop_*.deb
(cd build && cpack -G DEB >/dev/null)
deb=$(ls build/hyloop_*.deb)
echo "package: $deb ($(du -h "$deb" | cut -f1))"
[[ $check -eq 1 ]] || exit 0

command -v debootstrap >/dev/null || { apt-get install -y -qq debootstrap >/dev/null; }
mirror=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
[[ -n "$mirror" ]] || mirror=$(awk '/^deb /{print $2; exit}' /etc/apt/sources.list 2>/dev/null)
root=$(mktemp -d /var/tmp/hyloop-deb-check.XXXXXX)
cleanup() {
  for m in $(awk -v w="$root/" 'index($2, w) == 1 {print $2}' /proc/mounts | sort -r); do
    umount -l "$m" 2>/dev/null || true
  done
  rm -rf --one-file-system "$root"
}
trap cleanup EXIT
echo "package: a fresh Debian 12 root in $root (debootstrap from $mirror)"
debootstrap --variant=minbase bookworm "$root" "$mirror" >"$root.log" 2>&1 ||
  { echo "package: debootstrap failed, see $root.log" >&2; exit 1; }
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
mount -t proc proc "$root/proc"
cp "$deb" "$root/tmp/"
in_root() { chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin \
              DEBIAN_FRONTEND=noninteractive /bin/bash -c "$1"; }
in_root "apt-get update -qq >/dev/null && apt-get install -y -qq /tmp/$(basename "$deb") >/dev/null"
in_root "cd /tmp && hyloop --version && hyloop run /usr/share/hyloop/scenarios/sits/table1_scvg.yaml --out scvg \
         && hyloop run /usr/share/hyloop/scenarios/rht/p4.yaml --out p4 && hyloop summary scvg \
         && hyloop report scvg && ls scvg/plots && hyloop up /usr/share/hyloop/scenarios/fcu/inverse.yaml --out fcu --inproc"
echo "package: the .deb installed on a fresh Debian 12 root and ran sits/table1_scvg, rht/p4, fcu/inverse (up --inproc) and a report"
