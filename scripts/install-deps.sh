#!/usr/bin/env bash
# Installs every Debian 12 package Trainscope needs to build, test and run its demo.
# Idempotent: when everything is present it prints nothing and touches nothing.
set -euo pipefail

packages=(
  # build
  cmake g++ make pkg-config clang-format clang-tidy
  # scripts/ccache-env.sh: a fresh clone recompiles only what changed
  ccache
  # scripts/sanitize.sh: clang's ASan/UBSan/TSan runtimes and libFuzzer
  libclang-rt-14-dev libfuzzer-14-dev
  # libraries
  prometheus-cpp-dev libcpp-httplib-dev nlohmann-json3-dev libspdlog-dev libfmt-dev
  libcli11-dev zlib1g-dev libssl-dev libgtest-dev libgmock-dev libbenchmark-dev
  libmicrohttpd-dev
  # --web-config-file: YAML parser, GnuTLS (TLS material), libcrypt (bcrypt)
  libyaml-cpp-dev libgnutls28-dev libcrypt-dev openssl
  # flows (eBPF + libpcap)
  libbpf-dev bpftool clang llvm libelf-dev libpcap-dev
  # flows tests: capsh drops capabilities for the BPF-not-permitted case
  libcap2-bin
  # profiler: pprof output (protobuf, project-written profile.proto); its
  # tests read the profiles with `go tool pprof` and strip a workload
  libprotobuf-dev protobuf-compiler golang-go binutils
  # tests and tools: real kernel networking, independent traffic, real Prometheus
  iproute2 procps iperf3 prometheus tcpdump tshark curl python3 ca-certificates
  # the mixin tests read rendered rules (tests/deploy/mixin_*.sh)
  python3-yaml
  # bench/http: HTTP load generator
  wrk
  # bench/cycle: per-cycle cost check (callgrind counts, callgrind.h)
  valgrind
  # browser tests of the report page (tests/browser): headless Chromium
  chromium
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
# deploy tests (tests/deploy): node + npm, unless a node is already present
# (e.g. from NodeSource, whose nodejs conflicts with Debian's npm). kubectl is
# not a Debian 12 package: see docs/deploy.md, "Tests".
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  missing+=(nodejs npm)
fi
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing packages: ${missing[*]}; run as root (or with sudo)" >&2
  exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# tshark asks whether non-root users may capture; answer once, non-interactively.
echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
