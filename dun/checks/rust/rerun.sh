# What a compile error hid from cargo's test run, run again (plugins/rust.yaml). cargo runs no test at all when
# one target does not compile. A crate whose library, binary or build script failed has nothing left to run: the
# workspace runs again without it. A crate where only test targets failed (`tests/it.rs`, the library's unit tests
# under cfg(test), a binary's) still has the others: each runs on its own (`--lib`, `--bin NAME`, `--test NAME`),
# since cargo stops at the first error and another target may be broken too. cargo stops at the first crate too: the
# workspace runs again while a re-run finds another that fails (5 rounds). Bounded: 40 targets a crate.
# Usage: sh rerun.sh LOG [--doc|--excluded] CARGO-COMMAND... (the first run's command without --workspace)
log=$1; shift
doc=no
case $1 in --doc) doc=yes; shift ;; --excluded) excluded=yes; shift ;; esac

# crate<TAB>target for each failure: `could not compile `x` (test "it")`; no target named by older cargo. Read from
# the first run's log and the re-runs' (LOG.more): cargo stops at the first crate that fails, so a re-run without it
# can fail on the next one.
failures() {
  cat "$log" "$log.more" 2>/dev/null | sed -n -e 's/^error: could not compile `\([^`]*\)` (\([^)]*\)).*/\1	\2/p' \
    -e 's/^error: could not compile `\([^`]*\)`.*/\1	/p' \
    -e 's/^error: failed to run custom build command for `\([^ `]*\)[ `].*/\1	build script/p' | sort -u
}
sort_out() {  # whole: crates with nothing left to run; split: crates where only test targets failed
  failed=$(failures)
  whole=$(printf '%s\n' "$failed" | awk -F '\t' '$2 !~ /^((test|bench|example) ".*"|lib test|bin ".*" test)$/ {print $1}' | sort -u)
  split=$(printf '%s\n' "$failed" | cut -f 1 | sort -u | grep -vxF "${whole:-@}")
}
if [ "${excluded:-}" = yes ]; then
  sort_out
  for crate in $whole; do printf -- '--exclude %s\n' "$crate"; done
  exit 0
fi
rm -f "$log.more"
sort_out
[ -n "$failed" ] || exit 0

# the rest of the workspace, without every crate that failed; again while a re-run finds another (5 rounds at most)
for round in 1 2 3 4 5; do
  "$@" --workspace $(for crate in $whole $split; do printf -- '--exclude %s ' "$crate"; done) >"$log.round" 2>&1
  grep -v '^error: no packages to compile' "$log.round"
  before=$failed
  cat "$log.round" >>"$log.more"
  sort_out
  [ "$failed" != "$before" ] || break
done
rm -f "$log.round"

# the targets of a kind cargo names when asked for one that does not exist
targets() {
  cargo test --no-run -p "$1" "--$2" '@dun-none@' 2>&1 | sed -n '/vailable .* targets:/,$ s/^    \([^ ].*\)$/\1/p'
}
run() {  # one target of one crate; a crate without a library says so, which is no failure
  "$@" 2>&1 | grep -v -e '^error: no library targets found' -e '^error: no tests to run'
}
for crate in $split; do
  broken=$(printf '%s\n' "$failed" | awk -F '\t' -v c="$crate" '$1 == c {print $2}')
  { printf '%s\n' "$broken" | grep -qx 'lib test' || echo --lib
    for bin in $(targets "$crate" bin); do
      printf '%s\n' "$broken" | grep -qxF "bin \"$bin\" test" || echo "--bin $bin"
    done
    for test in $(targets "$crate" test); do
      printf '%s\n' "$broken" | grep -qxF "test \"$test\"" || echo "--test $test"
    done
    [ $doc = no ] || echo --doc
  } | head -n 40 | while read -r target; do run "$@" -p "$crate" $target </dev/null; done
done
exit 0
