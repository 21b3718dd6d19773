#!/usr/bin/env bash
# The web-config Secret the chart makes (webConfig.create) works with the
# real agent: `helm template` renders it with a test CA, certificate and
# credentials; its keys are written out as the Secret's mount would hold
# them and the real agent starts with --web-config-file on a fixture host.
# Two modes: TLS with a bearer token, then TLS with basic auth (the
# password's bcrypt hash is made by the chart's template). Each: /healthz
# open, /metrics 401 without or with wrong credentials, 200 with the
# Secret's. Loopback only; everything goes at exit.
#   bash tests/deploy/chart_web_config.sh --agent build/agent/trainscope-agent
source "$(dirname "$0")/lib.sh"
need_node
need openssl "install openssl"
need curl "install curl"
agent=$REPO_ROOT/build/agent/trainscope-agent
[ "${1:-}" = --agent ] && agent=$2
[ -x "$agent" ] || { echo "FAIL: $agent is not built (ninja -C build trainscope-agent)" >&2; exit 1; }
bash "$REPO_ROOT/scripts/install-helm.sh"
helm=$(bash "$REPO_ROOT/scripts/install-helm.sh" --print)

tmp=$(mktemp -d /tmp/trainscope-chart-web.XXXXXX)
agent_pid=
cleanup() {
  local rc=$?
  if [ -n "$agent_pid" ]; then kill "$agent_pid" 2>/dev/null || true; wait "$agent_pid" 2>/dev/null || true; fi
  [ $rc -eq 0 ] || tail -15 "$tmp"/agent-*.log 2>/dev/null || true
  rm -rf "$tmp"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

(
  cd "$tmp"
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=trainscope-test-ca -keyout ca.key -out ca.crt 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj /CN=trainscope-agent -keyout tls.key -out tls.csr 2>/dev/null
  printf 'subjectAltName=DNS:trainscope-agent\n' > san.ext
  openssl x509 -req -in tls.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile san.ext -out tls.crt 2>/dev/null
)
cp -a "$REPO_ROOT/tests/fixtures/hosts/v2-systemd" "$tmp/host"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')

code() {  # code PATH [curl args...]: the agent's HTTP status
  local path=$1; shift
  curl -s -o /dev/null -w '%{http_code}' --max-time 5 --cacert "$tmp/ca.crt" \
    --resolve "trainscope-agent:$port:127.0.0.1" "$@" "https://trainscope-agent:$port$path" || true
}
expect() {  # expect WANT WHAT GOT
  if [ "$3" = "$1" ]; then echo "ok: $2: $3"; else echo "FAIL: $2: $3, want $1" >&2; exit 1; fi
}

run_mode() {  # run_mode NAME HELM-ARGS...: render, mount, start, check
  local name=$1; shift
  local secret=$tmp/$name
  mkdir -p "$secret"
  "$helm" template trainscope "$REPO_ROOT/daemonset/chart/trainscope" --namespace trainscope \
    --show-only templates/web-config-secret.yaml --set webConfig.enabled=true,webConfig.create=true \
    --set-file webConfig.tls.crt="$tmp/tls.crt",webConfig.tls.key="$tmp/tls.key",webConfig.tls.ca="$tmp/ca.crt" \
    "$@" > "$tmp/$name.yaml"
  # The Secret's keys as files, as the kubelet mounts them.
  node --input-type=module -e '
    import { readFileSync, writeFileSync } from "node:fs";
    import { createRequire } from "node:module";
    const YAML = createRequire(process.argv[1] + "/package.json")("yaml");
    const s = YAML.parse(readFileSync(process.argv[2], "utf8"));
    for (const [k, v] of Object.entries(s.stringData)) writeFileSync(`${process.argv[3]}/${k}`, v);
  ' "$DEPLOY_DIR" "$tmp/$name.yaml" "$secret"
  "$agent" --web-config-file "$secret/web-config.yml" --listen "127.0.0.1:$port" --interval 0.5 \
    --node-name node-a --discovery file --pod-file "$tmp/host/pods.json" --host-proc "$tmp/host/proc" \
    --host-sys "$tmp/host/sys" --cgroup-root "$tmp/host/sys/fs/cgroup" --flows off --profiler off \
    > "$tmp/agent-$name.log" 2>&1 &
  agent_pid=$!
  for ((i = 0; i < 50; i++)); do
    [ "$(code /healthz)" = 200 ] && break
    kill -0 "$agent_pid" 2>/dev/null || { echo "FAIL: $name: the agent refused the chart's web config" >&2; exit 1; }
    sleep 0.2
  done
  expect 200 "$name: /healthz without credentials" "$(code /healthz)"
  expect 401 "$name: /metrics without credentials" "$(code /metrics)"
}

stop_agent() {
  kill "$agent_pid"; wait "$agent_pid" 2>/dev/null || true; agent_pid=
}

run_mode bearer --set webConfig.auth=bearer,webConfig.bearerToken=chart-test-token
expect 401 "bearer: /metrics with a wrong token" "$(code /metrics -H 'Authorization: Bearer wrong')"
expect 200 "bearer: /metrics with the Secret's token" \
  "$(code /metrics -H "Authorization: Bearer $(cat "$tmp/bearer/token")")"
stop_agent

run_mode basic --set webConfig.auth=basic,webConfig.basicAuth.username=prometheus,webConfig.basicAuth.password=chart-test-pw
expect 401 "basic: /metrics with a wrong password" "$(code /metrics -u prometheus:wrong)"
expect 200 "basic: /metrics with the Secret's username and password" \
  "$(code /metrics -u "$(cat "$tmp/basic/username"):$(cat "$tmp/basic/password")")"
stop_agent
echo "chart_web_config: the chart's web config works with the agent (bearer, basic)"
