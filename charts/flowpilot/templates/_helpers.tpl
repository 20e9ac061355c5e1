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

{{/* Secret of the chart holding credentials given inline in values (storage.s3.accessKeyId / secretAccessKey,
logStore.postgres.url), so that no Pod or ConfigMap carries them as literals. */}}
{{- define "flowpilot.credentialsSecret" -}}
{{- printf "%s-credentials" (include "flowpilot.fullname" .) }}
{{- end }}

{{/* The Secret and keys of the bucket credentials: JSON {name, id, secret}; name empty: none (ambient identity). */}}
{{- define "flowpilot.s3Credentials" -}}
{{- $s3 := .Values.storage.s3 }}
{{- if $s3.credentialsSecret.name }}
{{- dict "name" $s3.credentialsSecret.name "id" $s3.credentialsSecret.accessKeyIdKey "secret" $s3.credentialsSecret.secretAccessKeyKey | toJson }}
{{- else if or $s3.accessKeyId $s3.secretAccessKey }}
{{- dict "name" (include "flowpilot.credentialsSecret" .) "id" "STORAGE_S3_ACCESS_KEY_ID" "secret" "STORAGE_S3_SECRET_ACCESS_KEY" | toJson }}
{{- else }}
{{- dict "name" "" | toJson }}
{{- end }}
{{- end }}

{{/* The Secret and key of the log store URL: JSON {name, key}; name empty: none. */}}
{{- define "flowpilot.logStoreUrl" -}}
{{- $pg := .Values.logStore.postgres }}
{{- if $pg.urlSecret.name }}
{{- dict "name" $pg.urlSecret.name "key" $pg.urlSecret.key | toJson }}
{{- else if $pg.url }}
{{- dict "name" (include "flowpilot.credentialsSecret" .) "key" "LOG_STORE_URL" | toJson }}
{{- else }}
{{- dict "name" "" | toJson }}
{{- end }}
{{- end }}

{{/* Variables of task and inference runner Pods that come from Secrets (RUNNER_ENV_FROM_SECRETS): the operator puts
references to them in Jobs, never their values. JSON {VAR: {name, key}}: the encryption key, the bucket credentials,
the log store URL, and every operator.extraEnv variable taken from a Secret (inference credentials). */}}
{{- define "flowpilot.runnerEnvFromSecrets" -}}
{{- $refs := dict "ENCRYPTION_KEY" (dict "name" (include "flowpilot.encryptionKeySecret" .) "key" .Values.encryption.key) }}
{{- $s3 := include "flowpilot.s3Credentials" . | fromJson }}
{{- if $s3.name }}
{{- $_ := set $refs "STORAGE_S3_ACCESS_KEY_ID" (dict "name" $s3.name "key" $s3.id) }}
{{- $_ := set $refs "STORAGE_S3_SECRET_ACCESS_KEY" (dict "name" $s3.name "key" $s3.secret) }}
{{- end }}
{{- $logs := include "flowpilot.logStoreUrl" . | fromJson }}
{{- if $logs.name }}
{{- $_ := set $refs "LOG_STORE_URL" (dict "name" $logs.name "key" $logs.key) }}
{{- end }}
{{- range .Values.operator.extraEnv }}
{{- $var := .name }}
{{- with .valueFrom }}
{{- with .secretKeyRef }}
{{- $_ := set $refs $var (dict "name" .name "key" .key) }}
{{- end }}
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
{{- $s3 := include "flowpilot.s3Credentials" . | fromJson }}
{{- if $s3.name }}
- name: STORAGE_S3_ACCESS_KEY_ID
  valueFrom:
    secretKeyRef:
      name: {{ $s3.name }}
      key: {{ $s3.id }}
- name: STORAGE_S3_SECRET_ACCESS_KEY
  valueFrom:
    secretKeyRef:
      name: {{ $s3.name }}
      key: {{ $s3.secret }}
{{- end }}
{{- $logs := include "flowpilot.logStoreUrl" . | fromJson }}
{{- if $logs.name }}
- name: LOG_STORE_URL
  valueFrom:
    secretKeyRef:
      name: {{ $logs.name }}
      key: {{ $logs.key }}
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
