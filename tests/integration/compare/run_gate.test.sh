#!/usr/bin/env bash
# Issue 44's gate, items 1-4, on real programs:
# 1. An unwatched program fails: own_loop (a loop of its own, a 900 ms stall) and Debian's
#    `sleep` get exit 5, said, and a JUnit error; --allow-unwatched gives the program's 0.
# 2. A hang the program's death cut short (SIGKILL to the program; `timeout`'s SIGTERM, as a CI
#    job's timeout sends)
#    keeps its cause and own frames from its report's last rewrite, in the summary, the JUnit
#    and, with --baseline, the comparison, where it is "regressed", failing, never "fixed".
# 3. lagscope-compare refuses what holds no run (an empty events file, a JSON file that is not
#    lagscope's, a text file, two empty folders): exit 2 and a sentence; a clean run's events
#    file (its run_started line, no hang) is a run.
# 4. JUnit testcases named the same in two runs (kind and top own frames), the signature and
#    the report in properties; --json of lagscope-run and lagscope-compare.
# Usage: run_gate.test.sh LAGSCOPE-RUN LAGSCOPE-COMPARE GLIB_TWO_STALLS OWN_LOOP
set -uo pipefail
run=$1 compare=$2 glib=$3 own=$4
source "$(dirname "$0")/common.sh" gate
wellformed() { xmllint --noout "$dir/$1" || fail "$1 is not well-formed XML"; }

# ---- 1. unwatched ------------------------------------------------------------------------
expect 5 own "$run" "${quiet[@]}" --junit "$dir/own.xml" -- "$own"
has own.out "own_loop: not watched"
has own.out "Not watched: exit 5 (--allow-unwatched when that is expected)"
lacks own.out "own_loop: no hang"
wellformed own.xml
has own.xml 'errors="1"'
has own.xml '<error type="unwatched"'
expect 0 own-allowed "$run" "${quiet[@]}" --allow-unwatched --junit "$dir/own-allowed.xml" -- "$own"
has own-allowed.out "Allowed (--allow-unwatched)"
lacks own-allowed.xml 'errors='
lacks own-allowed.xml '<error'
expect 5 sleep "$run" "${quiet[@]}" --quiet -- sleep 0.3
has sleep.out "sleep: not watched"
# The program's own failure stays its status; the run is still said to be unwatched.
expect 7 sleep-fails "$run" "${quiet[@]}" -- sh -c 'exit 7'
has sleep-fails.out "Not watched"
echo "ok   unwatched: exit 5 and a JUnit error (own_loop, sleep); --allow-unwatched: exit 0"

# ---- 2. a hang not ended -----------------------------------------------------------------
expect 0 base "$run" "${quiet[@]}" --events "$dir/base.jsonl" -- "$glib" --stall-ms 700
grep -q '"type":"hang_ended"' "$dir/base.jsonl" || fail "the baseline had no hang"

# kill_in_hang NAME ARGS...: lagscope-run ARGS -- glib_two_stalls with a 20 s stall, its
# program killed (SIGKILL) once the hang's report on disk is over 1 s old; the exit in NAME.code.
kill_in_hang() {
  local name=$1
  shift
  mkdir -p "$dir/$name-reports"
  "$run" "${quiet[@]}" --report-dir "$dir/$name-reports" "$@" -- "$glib" --stall-ms 20000 \
    >"$dir/$name.out" 2>&1 &
  local pid=$! program="" report="" i
  for ((i = 0; i < 300; i++)); do # 30 s at most, on a loaded machine
    [ -z "$program" ] && program=$(cat "/proc/$pid/task/$pid/children" 2>/dev/null | awk '{print $1}')
    report=$(ls "$dir/$name-reports"/*.json 2>/dev/null | head -1)
    if [ -n "$program" ] && [ -n "$report" ] &&
      grep -qE '"duration_ms":(1[0-9]{3}|[2-9][0-9]{3})' "$report"; then break; fi
    sleep 0.1
  done
  [ -n "$program" ] && [ -n "$report" ] || { kill "$pid"; cat "$dir/$name.out"; fail "$name: no report of the hang"; }
  kill -KILL "$program"
  wait "$pid"
  echo $? >"$dir/$name.code"
}

kill_in_hang killed --junit "$dir/killed.xml" --events "$dir/killed.jsonl"
[ "$(cat "$dir/killed.code")" -eq 137 ] || { cat "$dir/killed.out"; fail "killed: exit $(cat "$dir/killed.code"), not 137"; }
has killed.out "(the program ended during it), sleep: Slept "
has killed.out "in compare_known_stall (glib_two_stalls.c"
has killed.out "not ended: its cause and frames as of its report's last rewrite, $dir/killed-reports/"
wellformed killed.xml
has killed.xml "(not ended: the program ended during it); sleep: Slept "
has killed.xml "in compare_known_stall (glib_two_stalls.c"
# A CI job's timeout: `timeout` sends SIGTERM to lagscope-run, which passes it on; the program
# dies of it during its 60 s stall, and the summary still has the cause.
timeout 10 "$run" "${quiet[@]}" --report-dir "$dir/timeout-reports" -- "$glib" --stall-ms 60000 \
  >"$dir/timeout.out" 2>&1
code=$?
[ "$code" -eq 124 ] || { cat "$dir/timeout.out"; fail "timeout: exit $code, not 124"; }
has timeout.out "(the program ended during it), sleep: Slept "
has timeout.out "in compare_known_stall (glib_two_stalls.c"
# lagscope-compare on that run's --events file: the hang (hang_began alone) by its report.
expect 3 cmp-killed "$compare" "$dir/base.jsonl" "$dir/killed.jsonl"
grep '^  regressed FAIL' "$dir/cmp-killed.out" | grep -qF "compare_known_stall (1 not ended: over any budget)" ||
  { cat "$dir/cmp-killed.out"; fail "lagscope-compare: the hang not ended is not a failing regression"; }
echo "ok   killed in a hang: its cause and frames in the summary, the JUnit and lagscope-compare, not ended"

kill_in_hang against --baseline "$dir/base.jsonl" --junit "$dir/against.xml"
[ "$(cat "$dir/against.code")" -eq 3 ] || { cat "$dir/against.out"; fail "against: exit $(cat "$dir/against.code"), not 3"; }
has against.out "0 new, 1 regressed, 0 fixed, 0 unchanged"
grep '^  regressed FAIL' "$dir/against.out" | grep -qF "compare_known_stall (1 not ended: over any budget)" ||
  { cat "$dir/against.out"; fail "the hang not ended is not a failing regression"; }
wellformed against.xml
has against.xml 'failures="1"'
has against.xml "1 not ended"
# Over any budget: a budget longer than the hang so far does not pass it.
kill_in_hang budget --baseline "$dir/base.jsonl" --budget-ms 3000000
[ "$(cat "$dir/budget.code")" -eq 3 ] || { cat "$dir/budget.out"; fail "budget: exit $(cat "$dir/budget.code"), not 3"; }
echo "ok   --baseline: the hang not ended is regressed and fails (over any budget), not fixed"

# ---- 3. no data is no run ----------------------------------------------------------------
: >"$dir/empty.jsonl"
echo '{"name": "not lagscope", "version": 1}' >"$dir/other.json"
echo 'just some text' >"$dir/text.txt"
mkdir "$dir/empty-a" "$dir/empty-b"
for input in empty.jsonl other.json text.txt; do
  expect 2 "cmp-$input" "$compare" "$dir/base.jsonl" "$dir/$input"
  has "cmp-$input.out" "lagscope-compare: no run to compare: $dir/$input holds no run of lagscope's"
  lacks "cmp-$input.out" "fixed"
done
expect 2 cmp-folders "$compare" "$dir/empty-a" "$dir/empty-b"
has cmp-folders.out "$dir/empty-a holds no run of lagscope's: no hang report in it"
expect 2 run-empty-baseline "$run" "${quiet[@]}" --baseline "$dir/empty.jsonl" -- "$glib" --stall-ms 100
has run-empty-baseline.out "cannot compare: $dir/empty.jsonl holds no run of lagscope's"
# A clean run (no hang over the 250 ms threshold) is a run: its run_started line says which.
expect 0 clean "$run" "${quiet[@]}" --events "$dir/clean.jsonl" -- "$glib" --stall-ms 100
grep -q '"type":"run_started","run_id":"' "$dir/clean.jsonl" || fail "no run_started line"
expect 0 cmp-clean "$compare" "$dir/base.jsonl" "$dir/clean.jsonl"
has cmp-clean.out "0 new, 0 regressed, 1 fixed, 0 unchanged"
has cmp-clean.out "this run: run "
echo "ok   lagscope-compare: no run refused (exit 2); a clean run compared"
# ---- 4. output a CI history can track ------------------------------------------------------
# The same program twice: the JUnit testcases' names are the same in both runs (the kind and the
# top own frames, no duration), the signature and the report in properties; --json of both
# tools parses and says the exit, the signatures and their status.
for n in 1 2; do
  expect 0 "track$n" "$run" "${quiet[@]}" --junit "$dir/track$n.xml" --json "$dir/track$n.json" \
    --events "$dir/track$n.jsonl" -- "$glib" --new-stall
  wellformed "track$n.xml"
  grep -o '<testcase [^>]* name="[^"]*"' "$dir/track$n.xml" | sed 's/.* name=//' | sort >"$dir/names$n"
done
cmp -s "$dir/names1" "$dir/names2" || { cat "$dir/names1" "$dir/names2"; fail "testcase names differ between runs"; }
grep -qx '"sleep in compare_known_stall &lt;- known &lt;- main"' "$dir/names1" || { cat "$dir/names1"; fail "no stable name"; }
grep -qx '"cpu in compare_new_stall &lt;- added &lt;- main"' "$dir/names1" || { cat "$dir/names1"; fail "no stable name"; }
! grep -q ' ms' "$dir/names1" || fail "a testcase name holds a duration"
sig=$(grep -o '"signature":"[0-9a-f]\{16\}"' "$dir/track1.jsonl" | head -1 | cut -d'"' -f4)
has track1.xml "<property name=\"signature\" value=\"$sig\"/>"
has track1.xml '<property name="report" value="'
node -e '
  const d = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  const ok = d.tool === "lagscope-run" && d.exit === 0 && d.watched === true && d.hangs.length === 2 &&
    d.hangs.every(h => /^[0-9a-f]{16}$/.test(h.signature) && h.ended && h.report_path && h.name) &&
    d.run_id.length > 0;
  if (!ok) { console.log(JSON.stringify(d)); process.exit(1); }' "$dir/track1.json" || fail "lagscope-run --json"
expect 3 track-cmp "$compare" --json "$dir/track-cmp.json" "$dir/base.jsonl" "$dir/track1.jsonl"
node -e '
  const d = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).comparison;
  const by = Object.fromEntries(d.signatures.map(s => [s.what, s]));
  const ok = d.failing === 1 && by["cpu · compare_new_stall"].status === "new" &&
    by["cpu · compare_new_stall"].failing && by["sleep · compare_known_stall"].status !== "fixed" &&
    d.runs.baseline.length > 0 && d.runs.this_run.length > 0;
  if (!ok) { console.log(JSON.stringify(d)); process.exit(1); }' "$dir/track-cmp.json" || fail "lagscope-compare --json"
expect 3 track-run-cmp "$run" "${quiet[@]}" --baseline "$dir/base.jsonl" --json "$dir/track-run-cmp.json" -- "$glib" --new-stall
node -e '
  const d = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  if (!(d.exit === 3 && d.comparison.failing === 1)) { console.log(JSON.stringify(d)); process.exit(1); }' \
  "$dir/track-run-cmp.json" || fail "lagscope-run --baseline --json"
echo "ok   JUnit names stable across runs, signature and report in properties; --json of both tools"
echo "run_gate: every check passed"
