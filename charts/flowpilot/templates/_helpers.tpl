{{/* Names, labels and small shared snippets of the flowpilot chart. */}}

{{- define "flowpilot.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "flowpilot.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "flowpilot.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Namespace watched by the operator (and where task Pods run). */}}
{{- define "flowpilot.watchNamespace" -}}
{{- default .Release.Namespace .Values.watchNamespace }}
{{- end }}

{{- define "flowpilot.labels" -}}
helm.sh/chart: {{ include "flowpilot.chart" . }}
app.kubernetes.io/name: {{ include "flowpilot.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: flowpilot
{{- end }}

{{/* Selector labels of one component: include "flowpilot.selectorLabels" (dict "ctx" $ "component" "operator") */}}
{{- define "flowpilot.selectorLabels" -}}
app.kubernetes.io/name: {{ include "flowpilot.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/* Image reference: include "flowpilot.image" (dict "ctx" $ "image" .Values.operator.image) */}}
{{- define "flowpilot.image" -}}
{{- printf "%s:%s" .image.repository (default .ctx.Chart.AppVersion .image.tag) }}
{{- end }}

{{- define "flowpilot.operatorServiceAccount" -}}
{{- printf "%s-operator" (include "flowpilot.fullname" .) }}
{{- end }}

{{- define "flowpilot.apiServiceAccount" -}}
{{- printf "%s-api" (include "flowpilot.fullname" .) }}
{{- end }}

{{- define "flowpilot.taskServiceAccount" -}}
{{- printf "%s-task" (include "flowpilot.fullname" .) }}
{{- end }}

{{- define "flowpilot.inferenceRunnerServiceAccount" -}}
{{- printf "%s-inference-runner" (include "flowpilot.fullname" .) }}
{{- end }}

{{- define "flowpilot.leaseName" -}}
{{- default (printf "%s-operator" (include "flowpilot.fullname" .)) .Values.operator.leaderElection.leaseName }}
{{- end }}

{{/* Secret holding ENCRYPTION_KEY: the one named in values, else the one the chart creates. */}}
{{- define "flowpilot.encryptionKeySecret" -}}
{{- default (printf "%s-encryption-key" (include "flowpilot.fullname" .)) .Values.encryption.secretName }}
{{- end }}

{{/* Variables of task Pods that come from Secrets (RUNNER_ENV_FROM_SECRETS): the operator puts references to them in
Jobs, never their values. JSON {VAR: {name, key}}. */}}
{{- define "flowpilot.runnerEnvFromSecrets" -}}
{{- $refs := dict "ENCRYPTION_KEY" (dict "name" (include "flowpilot.encryptionKeySecret" .) "key" .Values.encryption.key) }}
{{- with .Values.storage.s3.credentialsSecret }}
{{- if .name }}
{{- $_ := set $refs "STORAGE_S3_ACCESS_KEY_ID" (dict "name" .name "key" .accessKeyIdKey) }}
{{- $_ := set $refs "STORAGE_S3_SECRET_ACCESS_KEY" (dict "name" .name "key" .secretAccessKeyKey) }}
{{- end }}
{{- end }}
{{- with .Values.logStore.postgres.urlSecret }}
{{- if .name }}
{{- $_ := set $refs "LOG_STORE_URL" (dict "name" .name "key" .key) }}
{{- end }}
{{- end }}
{{- $refs | toJson }}
{{- end }}

{{/* Environment shared by the operator and the API: the ConfigMap, the Pod's identity and the Secrets. */}}
{{- define "flowpilot.commonEnv" -}}
- name: POD_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
- name: POD_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
- name: ENCRYPTION_KEY
  valueFrom:
    secretKeyRef:
      name: {{ include "flowpilot.encryptionKeySecret" . }}
      key: {{ .Values.encryption.key }}
{{- with .Values.storage.s3.credentialsSecret }}
{{- if .name }}
- name: STORAGE_S3_ACCESS_KEY_ID
  valueFrom:
    secretKeyRef:
      name: {{ .name }}
      key: {{ .accessKeyIdKey }}
- name: STORAGE_S3_SECRET_ACCESS_KEY
  valueFrom:
    secretKeyRef:
      name: {{ .name }}
      key: {{ .secretAccessKeyKey }}
{{- end }}
{{- end }}
{{- with .Values.logStore.postgres.urlSecret }}
{{- if .name }}
- name: LOG_STORE_URL
  valueFrom:
    secretKeyRef:
      name: {{ .name }}
      key: {{ .key }}
{{- end }}
{{- end }}
{{- end }}

{{- define "flowpilot.metricsAnnotations" -}}
prometheus.io/scrape: "true"
prometheus.io/port: {{ . | quote }}
prometheus.io/path: /metrics
{{- end }}

{{/* Secret holding the TLS certificate of the Flow admission webhook (tls.crt, tls.key, ca.crt). */}}
{{- define "flowpilot.admissionTlsSecret" -}}
{{- printf "%s-admission-tls" (include "flowpilot.fullname" .) }}
{{- end }}
