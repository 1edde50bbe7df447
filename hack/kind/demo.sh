#!/usr/bin/env bash
# demo.sh (make demo): the whole product on a local Kind cluster, from a fresh machine with only
# package registries reachable. Brings up the cluster with cert-manager and Prometheus
# (kind-up.sh), installs the operator with its Helm chart (deploy.sh), applies config/demo: a
# 3-node TLS 1.3 Cassandra, waits until it is Ready and verified on the wire, then runs a small
# TradeoffStudy and prints its report and where to look next.
#
# Re-running is safe and fast: every step applies the same objects, a running cluster is kept,
# a datastore the upgraded operator has still to roll onto a new image is waited for, and a study
# that already finished is only reported. DEMO_TIMEOUT_DATASTORE and
# DEMO_TIMEOUT_STUDY (seconds) bound the two waits.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
source "$root/hack/build/versions.sh"
export KUBECONFIG="$root/bin/kind/kubeconfig"
kubectl="$root/bin/kubectl/$KUBE_VERSION/kubectl"
ns=secured-demo datastore=orders study=tls-cost
out="$root/bin/demo"
start=$SECONDS

source "$root/hack/kind/lib/progress.sh"

# On failure: which component, its state, and its last log lines.
failed_component=""
diagnose() {
  local rc=$?
  [[ $rc == 0 ]] && return
  printf '\n\033[1;31mdemo failed after %s%s\033[0m\n' "$(elapsed)" "${failed_component:+ in: $failed_component}" >&2
  if [[ -x $kubectl && -f $KUBECONFIG ]]; then
    case $failed_component in
      SecuredDatastore*|TradeoffStudy*)
        echo "--- conditions of $failed_component" >&2
        "$kubectl" -n "$ns" get "${failed_component%% *}" "${failed_component##*/}" \
          -o jsonpath='{range .status.conditions[*]}{.type}={.status} {.reason}: {.message}{"\n"}{end}' >&2 || true
        echo "--- recent events in $ns" >&2
        "$kubectl" -n "$ns" get events --sort-by=.lastTimestamp 2>/dev/null | tail -15 >&2 || true
        echo "--- pods in $ns" >&2
        "$kubectl" -n "$ns" get pods -o wide >&2 || true
        for pod in $("$kubectl" -n "$ns" get pods -o jsonpath='{range .items[?(@.status.phase!="Succeeded")]}{.metadata.name}{"\n"}{end}' 2>/dev/null); do
          echo "--- last log lines of pod $pod" >&2
          "$kubectl" -n "$ns" logs "$pod" --all-containers --tail=15 >&2 2>/dev/null || true
        done ;;
    esac
    if "$kubectl" -n secured-system get deployment secured-datastore-operator >/dev/null 2>&1; then
      echo "--- last log lines of the operator" >&2
      "$kubectl" -n secured-system logs deployment/secured-datastore-operator --tail=25 >&2 || true
    fi
  fi
  exit "$rc"
}
trap diagnose EXIT

datastore_state() {
  local phase ready nodes verified progress
  phase=$(jp secureddatastore "$datastore" '{.status.phase}')
  ready=$(jp secureddatastore "$datastore" '{.status.readyNodes}')
  nodes=$(jp secureddatastore "$datastore" '{.status.nodes}')
  verified=$(condition secureddatastore "$datastore" EncryptionVerified status)
  if [[ $phase == Ready && $verified == True ]]; then
    # A re-run that upgraded the operator can find the datastore Ready from before: the new
    # operator has yet to roll its nodes onto the new image, and a study started meanwhile would
    # measure beside that roll.
    statefulset_rolled_out
    return
  fi
  if [[ $phase == Failed ]]; then echo "failed: $(condition secureddatastore "$datastore" Ready message)"; return; fi
  progress=$(condition secureddatastore "$datastore" Progressing message)
  echo "phase ${phase:-<none>}, ${ready:-0}/${nodes:-3} nodes ready, EncryptionVerified ${verified:-Unknown}${progress:+: $progress}"
}

# statefulset_rolled_out: "done" once the datastore's StatefulSet runs the Cassandra image the
# operator was deployed with on every node, or why not.
statefulset_rolled_out() {
  local want image generation observed current update updated replicas
  want=$("$kubectl" -n secured-system get deployment secured-datastore-operator \
    -o jsonpath='{range .spec.template.spec.containers[0].args[*]}{@}{"\n"}{end}' | sed -n 's/^--cassandra-image=//p')
  IFS="|" read -r image generation observed current update updated replicas < <(jp statefulset "$datastore" \
    '{.spec.template.spec.containers[?(@.name=="cassandra")].image}|{.metadata.generation}|{.status.observedGeneration}|{.status.currentRevision}|{.status.updateRevision}|{.status.updatedReplicas}|{.spec.replicas}{"\n"}')
  if [[ -n $want && $image != "$want" ]]; then
    echo "Ready on ${image:-no image}; waiting for the operator to roll it onto $want"
  elif [[ $observed != "$generation" || $current != "$update" || ${updated:-0} != "$replicas" ]]; then
    echo "rolling statefulset/$datastore: ${updated:-0}/$replicas nodes updated"
  else
    echo done
  fi
}

# The operator applies the shipped profiles when it starts (the chart cannot: see charts/README.md).
shipped_profiles_state() {
  local n
  n=$("$kubectl" get encryptionprofiles plaintext tls13-aes128-gcm tls13-client-only -o name 2>/dev/null | wc -l)
  if [[ $n == 3 ]]; then echo done; else echo "$n of the 3 profiles the demo uses exist"; fi
}

failed_component="Kind cluster (hack/kind/kind-up.sh)"
step "Kind cluster with cert-manager, Prometheus and the node crypto labeller"
"$root/hack/kind/kind-up.sh"

failed_component="operator Helm release (hack/kind/deploy.sh)"
step "the operator, installed with its Helm chart"
"$root/hack/kind/deploy.sh"
failed_component="the shipped profiles (applied by the operator)"
wait_for "the shipped EncryptionProfiles" 180 shipped_profiles_state
say "encryption profiles: $("$kubectl" get encryptionprofiles -o name | wc -l), applied by the operator from the chart's shipped profiles"

failed_component="SecuredDatastore $ns/$datastore"
step "a 3-node Cassandra with TLS 1.3 on client and internode traffic (config/demo/10-datastore.yaml)"
"$kubectl" apply --server-side --field-manager=make-demo -f "$root/config/demo/00-namespace.yaml" -f "$root/config/demo/10-datastore.yaml" >&2
wait_for "$datastore Ready and EncryptionVerified" "${DEMO_TIMEOUT_DATASTORE:-1200}" datastore_state
say "$(condition secureddatastore "$datastore" EncryptionVerified message)"
"$kubectl" -n "$ns" get secureddatastore "$datastore" >&2

failed_component="TradeoffStudy $ns/$study"
step "a trade-off study: plaintext vs TLS 1.3 on one node per acceleration level, hardware AES on and emulated off, at a fixed rate (config/demo/20-study.yaml)"
"$kubectl" apply --server-side --field-manager=make-demo -f "$root/config/demo/20-study.yaml" >&2
wait_for "study $study" "${DEMO_TIMEOUT_STUDY:-2400}" study_state "$study"

failed_component="the study report (kubectl secured)"
step "the study's report"
study_report "$study" "$out"

failed_component=""
cat <<EOF

demo done in $(elapsed). Where to look next:
  export KUBECONFIG=$KUBECONFIG
  kubectl -n $ns get sds,tos                               # short for secureddatastores,tradeoffstudies
  kubectl -n $ns get secureddatastore $datastore -o jsonpath='{.status.encryption.observed}'   # what the wire accepts
  open $out/report.html                                # the study, with charts (no server needed)
  kubectl -n monitoring port-forward svc/prometheus 9090  # then http://localhost:9090: secured_datastore_* series
  Grafana: import dashboards/*.json (the chart ships them as ConfigMaps for Grafana's sidecar)
  make kind-down                                       # delete the cluster (cached images stay)
EOF
