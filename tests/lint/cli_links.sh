#!/usr/bin/env bash
# The `trainscope` CLI links only what its commands use (docs/architecture.md):
# no libbpf, no NVML loading, no HTTP server (libmicrohttpd, GnuTLS), no
# profiler (libelf, protobuf), no libpcap (`flows --read` loads it when it
# reads a capture).
# Fails naming each library or code that should not be there.
#   tests/lint/cli_links.sh BUILD_DIR/agent/cli/trainscope
set -euo pipefail
binary=${1:?usage: cli_links.sh PATH_TO_TRAINSCOPE}
[ -x "$binary" ] || { echo "cli_links: $binary not built"; exit 1; }
needed=$(readelf -d "$binary" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p')
symbols=$(nm -C "$binary")
problems=0
# (libyaml-cpp is allowed: --kubeconfig reads a kubeconfig, which is YAML.)
for lib in libbpf libmicrohttpd libgnutls libelf libprotobuf \
  libprometheus-cpp libpcap; do
  if grep -q "^$lib\.so" <<<"$needed"; then
    echo "cli_links: $binary needs $lib"
    problems=$((problems + 1))
  fi
done
# Code linked in statically: the NVML loader, the BPF loaders, the server.
for code in 'trainscope::NvmlLibrary' 'trainscope::PeerFlowsBpf' \
  'trainscope::profiler::ProfilerBpf' 'trainscope::HttpServer' \
  'trainscope::Collector'; do
  if grep -q "$code" <<<"$symbols"; then
    echo "cli_links: $binary contains $code"
    problems=$((problems + 1))
  fi
done
[ "$problems" -eq 0 ] || exit 1
echo "cli_links: $binary needs only: $(tr '\n' ' ' <<<"$needed")"
