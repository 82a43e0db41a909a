{{- define "lib.labels" -}}
managed-by: {{ .Release.Service }}
chart: {{ .Chart.Name }}
{{- end -}}
