{{/*
The name every object and the scrape job carry: the rules and dashboards
select job="trainscope-agent" (dashboards/mixin/config.libsonnet), so it is not derived
from the release name.
*/}}
{{- define "trainscope.name" -}}trainscope-agent{{- end }}

{{/*
Labels of every object: the kustomize tree's (app.kubernetes.io/part-of)
and Helm's usual four, which tests/deploy/chart_equivalence.mjs sets aside
when it compares with kubectl kustomize.
*/}}
{{- define "trainscope.commonLabels" -}}
app.kubernetes.io/part-of: trainscope
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}

{{/* The common labels and app.kubernetes.io/name. */}}
{{- define "trainscope.labels" -}}
app.kubernetes.io/name: {{ include "trainscope.name" . }}
{{ include "trainscope.commonLabels" . }}
{{- end }}

{{- define "trainscope.selectorLabels" -}}
app.kubernetes.io/name: {{ include "trainscope.name" . }}
{{- end }}

{{- define "trainscope.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{- define "trainscope.serviceAccountName" -}}
{{ .Values.serviceAccount.name }}
{{- end }}

{{/*
The agent's listen address: the pod's loopback only behind kube-rbac-proxy
(the proxy holds the pod IP's port).
*/}}
{{- define "trainscope.listen" -}}
{{ if .Values.kubeRbacProxy.enabled }}127.0.0.1{{ else }}0.0.0.0{{ end }}:{{ .Values.agent.port }}
{{- end }}

{{/*
A flag value as the agent reads it: YAML numbers arrive as float64, which
Go templates print as 3.3554432e+07, so whole numbers are printed as
integers; an unquoted on/off arrives as a boolean (YAML 1.1).
*/}}
{{- define "trainscope.flagValue" -}}
{{- if kindIs "bool" . -}}
{{ ternary "on" "off" . }}
{{- else if and (kindIs "float64" .) (eq . (floor .)) -}}
{{ int64 . }}
{{- else -}}
{{ . }}
{{- end -}}
{{- end }}

{{/*
The agent's arguments, in the order of daemonset/base/daemonset.yaml:
--listen, --discovery, the host mounts, the other flags by name,
--web-config-file, then extraArgs.
*/}}
{{- define "trainscope.args" -}}
- --listen={{ include "trainscope.listen" . }}
{{- with .Values.agent.flags.discovery }}
- --discovery={{ . }}
{{- end }}
- --host-proc=/host/proc
- --host-sys=/host/sys
- --cgroup-root=/host/sys/fs/cgroup
{{- range $name, $value := .Values.agent.flags }}
{{- if and (ne $name "discovery") (not (kindIs "invalid" $value)) }}
- {{ printf "--%s=%s" $name (include "trainscope.flagValue" $value) | quote }}
{{- end }}
{{- end }}
{{- if .Values.webConfig.enabled }}
- --web-config-file=/etc/trainscope/web/web-config.yml
{{- end }}
{{- range .Values.agent.extraArgs }}
- {{ . | quote }}
{{- end }}
{{- end }}

{{/* The probes' scheme: https through kube-rbac-proxy or with TLS on. */}}
{{- define "trainscope.probeScheme" -}}
{{- if or .Values.kubeRbacProxy.enabled (and .Values.webConfig.enabled (include "trainscope.webTLS" .)) -}}
HTTPS
{{- end -}}
{{- end }}

{{/*
Whether the agent serves TLS with the web config: always with a Secret you
make (it is expected to hold tls.crt and tls.key, as daemonset/components/
web-config says), with one the chart makes when webConfig.tls has a
certificate.
*/}}
{{- define "trainscope.webTLS" -}}
{{- if or (not .Values.webConfig.create) .Values.webConfig.tls.crt -}}
true
{{- end -}}
{{- end }}

{{/* The ServiceMonitor's (or PodMonitor's) scheme and credentials. */}}
{{- define "trainscope.endpointSecurity" -}}
{{- if .Values.kubeRbacProxy.enabled }}
scheme: https
bearerTokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token
tlsConfig:
  # The proxy's certificate is self-signed, generated at its start
  # (kube-prometheus's node-exporter does the same).
  insecureSkipVerify: true
{{- else if .Values.webConfig.enabled }}
{{- $secret := .Values.webConfig.secretName }}
{{- if include "trainscope.webTLS" . }}
scheme: https
tlsConfig:
  ca:
    secret: {name: {{ $secret }}, key: ca.crt}
  serverName: {{ .Values.webConfig.serverName }}
{{- end }}
{{- if eq .Values.webConfig.auth "bearer" }}
authorization:
  type: Bearer
  credentials: {name: {{ $secret }}, key: token}
{{- else if eq .Values.webConfig.auth "basic" }}
basicAuth:
  username: {name: {{ $secret }}, key: username}
  password: {name: {{ $secret }}, key: password}
{{- end }}
{{- end }}
{{- end }}

{{/*
The scrape endpoint (ServiceMonitor and PodMonitor): dict "root" $ and
"monitor" (.Values.serviceMonitor or .Values.podMonitor).
*/}}
{{- define "trainscope.endpoint" -}}
{{- $root := .root }}
port: {{ if $root.Values.kubeRbacProxy.enabled }}https{{ else }}metrics{{ end }}
path: /metrics
# The agent's own namespace/pod/container labels name the training pods;
# without honorLabels the Operator's target labels of the same names would
# push them to exported_namespace/exported_pod (daemonset/base/servicemonitor.yaml).
honorLabels: true
interval: {{ .monitor.interval }}
scrapeTimeout: {{ .monitor.scrapeTimeout }}
relabelings:
  # instance = node name instead of pod IP:port.
  - sourceLabels: [__meta_kubernetes_pod_node_name]
    targetLabel: instance
  # The target labels that name the agent's own pod.
  - action: labeldrop
    regex: (namespace|pod|container)
{{- include "trainscope.endpointSecurity" $root }}
{{- end }}
