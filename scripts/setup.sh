#!/usr/bin/env bash
# Installs the Debian 12 packages hyloop's build, tests and plots need. Idempotent; silent when
# everything is present. Run as root (or with sudo available).
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache git pkg-config clang-format
  libeigen3-dev libyaml-cpp-dev libcli11-dev nlohmann-json3-dev
  googletest libgtest-dev libgmock-dev libbenchmark-dev
  python3 python3-matplotlib python3-numpy
  libprotobuf-dev protobuf-compiler libzmq3-dev cppzmq-dev
  libgrpc++-dev protobuf-compiler-grpc grpc-proto libspdlog-dev
  python3-grpcio python3-grpc-tools python3-zmq
  prometheus-cpp-dev
  # Tests only: promtool (`promtool check metrics|config`) and the server the CI metrics test
  # starts on loopback. Debian enables a prometheus.service on install; hyloop never uses it.
  prometheus
  # Tests only: `docker-compose config` validates docker-compose.yml offline (no engine needed).
  docker-compose
  # The three-host test's network namespaces.
  iproute2
  # OpenSSL 3: `hyloop certs` (lab CA, TLS certificates) and constant-time token checks.
  libssl-dev
  # SQLite 3: the run journal (crash-safe recording, libs/experiment run_journal.hpp).
  libsqlite3-dev
  # scripts/fuzz.sh: clang 14 and its runtime libraries (libFuzzer, ASan, UBSan:
  # libclang_rt.fuzzer-x86_64.a is in libclang-rt-14-dev).
  clang libclang-rt-14-dev
  # scripts/package.sh: cpack's DEB generator reads the binaries' shared-library needs with
  # dpkg-shlibdeps, and needs file(1) for it (a minimal Debian root has neither by default).
  file dpkg-dev
  # `hyloop export` and `outputs.format: hdf5` (HDF5 C API, MATLAB .mat via matio); the
  # export tests read the files back with h5py and scipy.io.loadmat.
  libhdf5-dev libmatio-dev python3-h5py python3-scipy
  # `pip install ./clients/python` into a venv (--system-site-packages, offline; the docs test).
  python3-venv python3-pip python3-setuptools python3-wheel
  # tools/check_scenario_doc.py reads resolved scenarios (the docs test).
  python3-yaml
  # tools/check_scenario_schema.py: every scenario against `hyloop schema KIND` (draft 2020-12).
  python3-jsonschema
  # bench/loop_measure.py (ctest loop_measure_smoke): cyclictest, the bare-timer reference; and
  # hyperfine, which times the in-process jobs against each other (issue 26).
  rt-tests hyperfine
)

# --with-docker (opt-in; CI uses it): a Docker engine, and debootstrap for the offline base image
# of the compose test (ctest compose_stack, skipped without them). Not by default: a lab may run
# Docker's own docker-ce, which conflicts with Debian's docker.io (kept when dockerd exists).
for arg in "$@"; do
  case "$arg" in
    --with-docker)
      packages+=(debootstrap iptables)
      command -v dockerd >/dev/null || packages+=(docker.io) ;;
    -h|--help) echo "usage: scripts/setup.sh [--with-docker]"; exit 0 ;;
    *) echo "setup: unknown argument '$arg' (allowed: --with-docker)" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

sudo=""
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "setup: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "setup: installing ${#missing[@]} Debian packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq >/dev/null
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done"
