#!/usr/bin/env bash
# issue 23: hyloop installed into a prefix (cmake --install), the example kind configured and
# built against that prefix only (find_package(hyloop), hyloop_add_kind), then run by the
# installed binaries in process and through the services (processes and co-located): the
# three samples.csv are byte-identical. A shipped scenario runs from the prefix's share/ with
# the working directory outside the source tree, and records what the build tree's hyloop does.
#   install_example_kind.sh BUILD_DIR SOURCE_DIR WORK_DIR
set -euo pipefail
build=$(realpath "$1"); source=$(realpath "$2"); work=$3
rm -rf "$work"; mkdir -p "$work"; work=$(realpath "$work")
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >"$work/install.log"
echo "installed into $prefix: $(du -sh "$prefix" | cut -f1)"
for f in bin/hyloop bin/hyloop-dynamics lib/cmake/hyloop/hyloopConfig.cmake \
         include/hyloop/version.hpp include/hyloop/v2/loop.pb.h share/hyloop/proto/hyloop/v2/loop.proto \
         share/hyloop/scenarios/sits/table1_scvg.yaml share/hyloop/report.py \
         lib/hyloop/kinds/hyloop_kind_sits.so lib/hyloop/kinds/hyloop_kind_vrths.so; do
  [[ -e "$prefix/$f" ]] || { echo "FAIL: $f not installed"; exit 1; }
done
binaries_before=$(sha256sum "$prefix"/bin/* | sha256sum)

# The example, as a lab builds it: its own folder, the prefix only (no hyloop source tree).
cp -r "$source/examples/kinds/oscillator" "$work/oscillator"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S "$work/oscillator" -B "$work/oscillator/build" "${generator[@]}" \
      -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" >"$work/configure.log"
cmake --build "$work/oscillator/build" >"$work/build.log"
kinds=$work/kinds
mkdir -p "$kinds"; chmod 755 "$kinds"
cp "$work/oscillator/build/hyloop_kind_oscillator.so" "$kinds/"
chmod 644 "$kinds/hyloop_kind_oscillator.so"

cd "$work"   # outside the source tree
scenario=$work/oscillator/oscillator.yaml
"$prefix/bin/hyloop" run "$scenario" --out run --kinds "$kinds" >/dev/null
HYLOOP_KIND_PATH=$kinds "$prefix/bin/hyloop" up "$scenario" --out up >/dev/null
"$prefix/bin/hyloop" up "$scenario" --out inproc --inproc --kinds "$kinds" >/dev/null
cmp run/samples.csv up/samples.csv
cmp run/samples.csv inproc/samples.csv
rows=$(($(wc -l <run/samples.csv) - 1))
echo "example kind: in process, hyloop up and hyloop up --inproc: samples.csv identical ($rows rows)"

# Without the plug-in the kind is unknown, and the message says which kinds there are.
if "$prefix/bin/hyloop" validate "$scenario" 2>err.txt; then
  echo "FAIL: the oscillator kind validated without its plug-in"; exit 1
fi
grep -q 'oscillator' err.txt && grep -q 'sits' err.txt

# A world-writable kinds directory is refused by name and reason.
mkdir -p "$work/open"; cp "$kinds/hyloop_kind_oscillator.so" "$work/open/"; chmod 777 "$work/open"
if "$prefix/bin/hyloop" run "$scenario" --out refused --kinds "$work/open" 2>refused.txt; then
  echo "FAIL: a plug-in in a world-writable directory was loaded"; exit 1
fi
grep -q "writable by anyone" refused.txt || { cat refused.txt; exit 1; }

# A shipped scenario from the prefix's share/, data files included (El Centro).
"$prefix/bin/hyloop" run "$prefix/share/hyloop/scenarios/rht/p4.yaml" --out p4 >/dev/null
(cd "$source" && "$build/bin/hyloop" run scenarios/rht/p4.yaml --out "$work/p4_build" >/dev/null)
cmp p4/samples.csv p4_build/samples.csv
echo "rht/p4 from the prefix: samples.csv identical to the build tree's run"

[[ "$(sha256sum "$prefix"/bin/* | sha256sum)" == "$binaries_before" ]]
echo "the installed binaries are unchanged by building and loading the kind"
