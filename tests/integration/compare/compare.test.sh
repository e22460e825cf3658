#!/usr/bin/env bash
# lagscope-run --baseline and lagscope-compare on a real program (glib_two_stalls): the same
# program twice gives nothing new and nothing regressed (exit 0); with --new-stall the
# comparison names exactly compare_new_stall as new and fails the run (exit 3, JUnit with one
# failing testcase of two, Markdown), unless the budget is over that stall; lagscope-compare
# reads events files and report folders alike, says which runs are fixed, and refuses bad
# input with exit 2 and a sentence. Each lagscope-run's viewer: --port 0 --bind 127.0.0.1.
# Usage: compare.test.sh LAGSCOPE-RUN LAGSCOPE-COMPARE GLIB_TWO_STALLS
set -uo pipefail
run=$1 compare=$2 program=$3
source "$(dirname "$0")/common.sh" compare
viewer=(--port 0 --bind 127.0.0.1)

# 1. The baseline: one stall, its events kept.
expect 0 base "$run" "${viewer[@]}" --events "$dir/base.jsonl" --report-dir "$dir/base-reports" -- "$program"
grep -q '"type":"hang_ended"' "$dir/base.jsonl" || fail "the baseline run had no hang"
grep -q '"signature":"' "$dir/base.jsonl" || fail "hang_ended without a signature"
echo "ok   baseline: $(grep -c '"type":"hang_ended"' "$dir/base.jsonl") hang"

# 2. The same program again: nothing new, nothing regressed.
expect 0 same "$run" "${viewer[@]}" --baseline "$dir/base.jsonl" --junit "$dir/same.xml" \
  --summary-md "$dir/same.md" -- "$program"
has same.out "0 new, 0 regressed, 0 fixed, 1 unchanged"
has same.xml 'tests="1" failures="0"'
has same.md "| unchanged |"
echo "ok   the same program: 0 new, 0 regressed (exit 0)"

# 3. With --new-stall: exactly compare_new_stall is new, and the run fails.
expect 3 new "$run" "${viewer[@]}" --baseline "$dir/base.jsonl" --junit "$dir/new.xml" \
  --summary-md "$dir/new.md" --events "$dir/new.jsonl" -- "$program" --new-stall
has new.out "1 new, 0 regressed, 0 fixed, 1 unchanged"
[ "$(grep -c '^  new FAIL' "$dir/new.out")" -eq 1 ] || fail "not one new signature"
grep '^  new FAIL' "$dir/new.out" | grep -qF "compare_new_stall" || fail "the new one is not compare_new_stall"
grep '^  unchanged' "$dir/new.out" | grep -qF "compare_known_stall" || fail "the known one is not unchanged"
has new.xml 'tests="2" failures="1"'
grep -B1 '<failure' "$dir/new.xml" | grep -qF "compare_new_stall" || fail "JUnit's failing testcase"
has new.md "| **new (fails)** |"
echo "ok   --new-stall: compare_new_stall new (exit 3, JUnit 1 failure of 2, Markdown)"

# 4. A budget over the new stall's 400 ms: new, yet not failing.
expect 0 budget "$run" "${viewer[@]}" --baseline "$dir/base.jsonl" --budget-ms 2000 -- "$program" --new-stall
has budget.out "1 new, 0 regressed"
lacks budget.out "FAIL"
echo "ok   --budget-ms 2000: new but within the budget (exit 0)"

# 5. lagscope-compare: events files and report folders, both ways.
expect 3 cmp "$compare" "$dir/base.jsonl" "$dir/new.jsonl"
has cmp.out "1 new, 0 regressed, 0 fixed, 1 unchanged"
expect 3 cmp-folder "$compare" "$dir/base-reports" "$dir/new.jsonl"
has cmp-folder.out "1 new, 0 regressed, 0 fixed, 1 unchanged"
expect 0 cmp-back "$compare" "$dir/new.jsonl" "$dir/base.jsonl"
has cmp-back.out "0 new, 0 regressed, 1 fixed, 1 unchanged"
grep '^  fixed' "$dir/cmp-back.out" | grep -qF "compare_new_stall" || fail "fixed is not compare_new_stall"
# A regression: the known stall's total time, doubled in this run, past 250 ms and 25 %.
cat "$dir/base.jsonl" "$dir/base.jsonl" >"$dir/twice.jsonl"
expect 3 regressed "$compare" "$dir/base.jsonl" "$dir/twice.jsonl"
has regressed.out "0 new, 1 regressed"
expect 0 tolerated "$compare" --tolerance-pct 150 "$dir/base.jsonl" "$dir/twice.jsonl"
has tolerated.out "0 new, 0 regressed, 0 fixed, 1 unchanged"
echo "ok   lagscope-compare: events and report folders; fixed; regressed past the tolerance, not within it"

# 6. Bad input: a clear sentence, exit 2; bad lines are skipped and counted.
expect 2 missing "$compare" "$dir/nothing.jsonl" "$dir/base.jsonl"
has missing.out "cannot read $dir/nothing.jsonl: No such file or directory"
mkfifo "$dir/fifo"
expect 2 fifo "$compare" "$dir/fifo" "$dir/base.jsonl"
has fifo.out "not a regular file"
printf 'garbage\n{"type":"hang_ended","signature":"zz","duration_ms":5}\n{"type":"hang_ended","duration_ms":"x"}\n' >"$dir/bad.jsonl"
cat "$dir/base.jsonl" >>"$dir/bad.jsonl"
expect 0 bad "$compare" "$dir/base.jsonl" "$dir/bad.jsonl"
has bad.out "(this run: 3 lines or files were not lagscope's hangs: skipped)"
expect 2 usage "$compare" "$dir/base.jsonl"
expect 2 option "$compare" --tolerance-ms -5 "$dir/base.jsonl" "$dir/base.jsonl"
expect 2 run-option "$run" --summary-md "$dir/x.md" -- "$program"
echo "ok   bad input: exit 2 with a sentence; bad lines skipped and counted"
echo "compare: every check passed"
