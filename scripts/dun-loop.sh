#!/usr/bin/env bash
# dun-loop.sh: the dun loop in your own shell. dun decides everything (limits, waits, the dual gate, the circuit
# breaker); this script only runs what dun says. The agent reads its prompt on stdin and prints its answer.
#
#   scripts/dun-loop.sh [-C REPO] -- AGENT_COMMAND [ARGS...]
#   scripts/dun-loop.sh -- claude -p --output-format json --dangerously-skip-permissions
#
# Exit codes, as `dun loop`: 0 complete, 1 stopped with work remaining, 2 usage error.
# Environment: DUN (the dun command, default `dun`).
set -u
DUN=${DUN:-dun}
repo=.
while [ $# -gt 0 ]; do
  case $1 in
    -C) repo=$2; shift 2 ;;
    --) shift; break ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || { echo "dun-loop.sh: give the agent command after --" >&2; exit 2; }
cd "$repo" || exit 2
timeout_s=$("$DUN" config get loop.iteration_timeout_s) || exit 2
grace_s=$("$DUN" config get loop.kill_grace_s) || exit 2

# act on one decision line: go/continue/confirm -> return 0; wait -> sleep, return 1; stop -> exit
act() {
  local rc=$1 line=$2
  case $rc in
    0) return 0 ;;
    10) set -- $line; echo "dun-loop.sh: waiting $2 s ($3)" >&2; sleep "$2"; return 1 ;;
    20) echo "dun-loop.sh: $line" >&2; exit 0 ;;
    21) echo "dun-loop.sh: $line" >&2; exit 1 ;;
    *) echo "dun-loop.sh: dun failed ($rc): $line" >&2; exit 2 ;;
  esac
}

while :; do
  line=$("$DUN" respond --decide --before); act $? "$line" || continue
  n=${line#go }
  # `timeout` runs the agent in its own process group and signals the whole group: TERM, then KILL after grace.
  # stdout is the answer dun parses; stderr (warnings, errors) is kept apart so it can never break its shape.
  # The agent runs in dun's sandbox as `dun loop` runs its own (loop.sandbox; `off` runs it as it is), with the
  # guard wired into claude; the checks that judge it run confined too (in `dun respond --decide`).
  timeout -k "$grace_s" "$timeout_s" "$DUN" sandbox --loop -- "$@" < ".dun/logs/iteration-$n.prompt.md" \
    > ".dun/logs/iteration-$n.out" 2> ".dun/logs/iteration-$n.err"
  agent_rc=$?
  line=$("$DUN" respond --decide --iteration "$n" --exit-code "$agent_rc")
  if act $? "$line"; then
    sleep "${line#continue }"
  fi
done
