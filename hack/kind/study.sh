#!/usr/bin/env bash
# study.sh FILE (make study STUDY=FILE): runs the TradeoffStudy in FILE on the Kind cluster with
# the operator deployed (make deploy), and prints its report. FILE holds one TradeoffStudy with
# its namespace, and whatever else it needs (a Namespace, EncryptionProfiles): config/studies/.
# The report is kept in bin/studies/<name>/ as report.{html,md,json}. A study that exists already
# is not started again: its progress is followed and, once it ended, it is only reported.
# STUDY_TIMEOUT (seconds, default 2 h) bounds the wait.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
source "$root/hack/build/versions.sh"
export KUBECONFIG="$root/bin/kind/kubeconfig"
kubectl="$root/bin/kubectl/$KUBE_VERSION/kubectl"
start=$SECONDS
source "$root/hack/kind/lib/progress.sh"

file=${1:?usage: study.sh FILE (a TradeoffStudy manifest, e.g. config/studies/seed000-ar.yaml)}
[[ -f $file ]] || { echo "study.sh: no file $file" >&2; exit 2; }
[[ -f $KUBECONFIG ]] || { echo "study.sh: no Kind cluster ($KUBECONFIG is missing): run make kind-up deploy first" >&2; exit 2; }

step "applying $file"
"$kubectl" apply --server-side --field-manager=make-study -f "$file" >&2
# kubectl answers a file of one object with the object, of several with a List.
ref=$("$kubectl" get -f "$file" -o go-template='{{define "ref"}}{{if eq .kind "TradeoffStudy"}}{{.metadata.namespace}}/{{.metadata.name}}{{"\n"}}{{end}}{{end}}{{if .items}}{{range .items}}{{template "ref" .}}{{end}}{{else}}{{template "ref" .}}{{end}}')
if [[ $(wc -l <<<"$ref") != 1 || $ref != */* || $ref == /* ]]; then
  echo "study.sh: $file must hold exactly one TradeoffStudy with metadata.namespace set (found: ${ref:-none})" >&2
  exit 2
fi
ns=${ref%%/*} study=${ref##*/}

step "study $ns/$study"
outcome=0
wait_for "study $study" "${STUDY_TIMEOUT:-7200}" study_state "$study" || outcome=$?
# A cancelled or failed study still reports what it measured; one that did not end has no report.
if [[ -z $(jp tradeoffstudy "$study" '{.status.reportConfigMap}') ]]; then
  exit "$outcome"
fi

step "the study's report (also in bin/studies/$study/)"
study_report "$study" "$root/bin/studies/$study"
say "study $study ended in $(elapsed)"
exit "$outcome"
