# progress.sh: the waiting and progress output shared by demo.sh and study.sh. Source it after
# setting kubectl, ns and start.

elapsed() { local s=$((SECONDS - ${1:-$start})); printf '%d:%02d' $((s / 60)) $((s % 60)); }
step() { printf '\n\033[1m==> [%s] %s\033[0m\n' "$(elapsed)" "$*" >&2; }
say() { printf '    [%s] %s\n' "$(elapsed)" "$*" >&2; }

# wait_for DESCRIPTION TIMEOUT CHECK [ARG...]: runs CHECK every 5 s until it prints "done",
# failing on "failed: ..."; shows each new state line at once and the waiting time every 30 s.
wait_for() {
  local what=$1 timeout=$2 since=$SECONDS last="" line="" beat=$SECONDS
  shift 2
  say "waiting for $what (up to $((timeout / 60)) min)"
  while :; do
    line=$("$@" 2>&1 || true)
    case $line in
      done) say "$what: done after $(elapsed "$since")"; return 0 ;;
      failed:*) say "$what: ${line#failed: }"; return 1 ;;
    esac
    if [[ $line != "$last" ]] || ((SECONDS - beat >= 30)); then
      say "$what, waiting $(elapsed "$since"): $line"
      last=$line beat=$SECONDS
    fi
    if ((SECONDS - since > timeout)); then
      say "$what: not within $((timeout / 60)) min; last state: $line"
      return 1
    fi
    sleep 5
  done
}

jp() { "$kubectl" -n "$ns" get "$1" "$2" -o jsonpath="$3"; }
condition() { jp "$1" "$2" "{.status.conditions[?(@.type==\"$3\")].$4}"; }

# study_state NAME: one line on the study's progress, "done" once it succeeded.
study_state() {
  local study=$1 phase next runs progress
  if ! phase=$(jp tradeoffstudy "$study" '{.status.phase}' 2>&1); then
    echo "failed: cannot read study $study: $phase"
    return
  fi
  case $phase in
    Succeeded) echo done; return ;;
    Failed|Cancelled) echo "failed: study $phase: $(condition tradeoffstudy "$study" Progressing message)"; return ;;
  esac
  next=$(jp tradeoffstudy "$study" '{.status.nextRun}')
  runs=$(jp tradeoffstudy "$study" '{range .status.schedule[*]}{@}{"\n"}{end}' | wc -l)
  progress=$(condition tradeoffstudy "$study" Progressing message)
  echo "phase ${phase:-<none>}, run ${next:-0}/${runs}${progress:+: $progress}"
}

# study_report NAME DIR: the report on the terminal, and as HTML, Markdown and JSON in DIR.
study_report() {
  local study=$1 dir=$2
  mkdir -p "$dir"
  go build -o "$root/bin/kubectl-secured" "$root/cmd/kubectl-secured"
  "$root/bin/kubectl-secured" study report "$study" -n "$ns"
  local format
  for format in html markdown json; do
    "$root/bin/kubectl-secured" study report "$study" -n "$ns" -o "$format" >"$dir/report.${format/markdown/md}"
  done
}
