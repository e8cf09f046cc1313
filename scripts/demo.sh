#!/usr/bin/env bash
# `make demo`: copy examples/ into a fresh git repository and show what dun finds there.
set -euo pipefail
DUN=${1:-dun}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/dun-demo.XXXXXX")
cp -R "$here/examples/." "$work/"
cd "$work"
git init -q -b main
git add -A
git -c user.name=dun-demo -c user.email=demo@example.invalid commit -qm "demo project"
echo "== demo repository: $work"
echo "== dun check"
set +e
"$DUN" check
rc=$?
set -e
echo "== dun check exited $rc (0: nothing actionable, 1: work remains, 2: config error, 3: internal error)"
[ "$rc" -le 1 ] || exit "$rc"
echo "== dun iterate (the prompt an agent would get; try: dun iterate | claude -p \"\$(cat -)\")"
"$DUN" iterate
echo "== a short scripted night with the fake agent, and its HTML report"
# its own state directory: the demo's calls neither wait for nor fill this machine's shared hourly window
XDG_STATE_HOME="$work/state" "$(dirname "$DUN")/python" "$here/tests/history_demo.py" "$work/night"
