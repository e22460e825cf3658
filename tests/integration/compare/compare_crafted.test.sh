#!/usr/bin/env bash
# lagscope-compare on crafted input (issue 42, items 5 and 7), in every build:
# 1. 200 000 distinct signatures are grouped within a generous bound (before: 66 s, as the
#    search of the groups was quadratic; tests/bench/bench_compare prints the figures).
# 2. A label with "]]>", markup, quotes, control bytes and bytes that are not UTF-8 gives JUnit
#    XML that xmllint accepts, and a Markdown row that keeps its six cells and reads, by
#    CommonMark's escapes, as the label's text: no markup, no HTML.
# 3. --junit and --summary-md a FIFO that no one reads: exit 2 at once with the reason (each run
#    under `timeout`: a timeout fails the test); --junit /dev/stdout into a pipe works.
# 4. A side that holds no run (an empty file, a JSON or text file not lagscope's, two empty
#    folders) is exit 2 with the reason (issue 44, item 3; before: exit 0, all "fixed").
# 5. A hang not ended in an events file counts by its report (issue 44, item 2).
# Usage: compare_crafted.test.sh LAGSCOPE-COMPARE BOUND-SECONDS
set -uo pipefail
compare=$1 bound=$2
dir=$(mktemp -d /tmp/lagscope-crafted-XXXXXX)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL $*"; exit 1; }
expect() {
  local code=$1 name=$2
  shift 2
  timeout "$bound" "$@" >"$dir/$name.out" 2>&1
  local got=$?
  [ "$got" -eq "$code" ] || { head -c 2000 "$dir/$name.out"; fail "$name: exit $got, not $code"; }
}
has() { grep -qF -- "$2" "$dir/$1" || { cat "$dir/$1"; fail "$1 lacks: $2"; }; }

# 1. 200 000 signatures: the baseline has the first 100 000 of them.
awk 'BEGIN { for (i = 0; i < 200000; i++)
  printf "{\"type\":\"hang_ended\",\"signature\":\"%08x%08x\",\"duration_ms\":300,\"cause\":{\"kind\":\"cpu\",\"label\":\"cpu · f%d\"}}\n", i, (i * 48271) % 2147483647, i }' >"$dir/many.jsonl"
head -n 100000 "$dir/many.jsonl" >"$dir/half.jsonl"
start=$SECONDS
expect 3 many "$compare" "$dir/half.jsonl" "$dir/many.jsonl"
has many.out "200000 signatures: 100000 new, 0 regressed, 0 fixed, 100000 unchanged"
echo "ok   200 000 signatures grouped in $((SECONDS - start)) s (bound $bound s)"

# 2. A crafted label.
label='a|b`c*d_e <script>alert(1)</script> &amp; ]]> \"q\" \\| [l](http://x) ~~s~~ # h \u0001\u001b[31m \t'
printf '{"type":"hang_ended","signature":"00000000000000aa","duration_ms":900,"cause":{"kind":"cpu","label":"%s\xff\xfe \xe2\x82 \xc3\xa9"}}\n' "$label" >"$dir/crafted.jsonl"
# The baseline: a clean run (its run_started line, no hang). An empty file is no run (exit 2).
echo '{"type":"run_started","run_id":"crafted-baseline","pid":1}' >"$dir/clean.jsonl"
expect 3 crafted "$compare" --junit "$dir/crafted.xml" --summary-md "$dir/crafted.md" "$dir/clean.jsonl" "$dir/crafted.jsonl"
xmllint --noout "$dir/crafted.xml" || { cat -v "$dir/crafted.xml"; fail "the JUnit file is not XML"; }
has crafted.xml 'tests="1" failures="1"'
# The row: six cells split at unescaped pipes; the label's cell, read by CommonMark's rules
# (a backslash before ASCII punctuation, the entities &lt; &gt; &amp;), is the label as text,
# and no punctuation in it is left unescaped (it would be markup).
node - "$dir/crafted.md" <<'NODE' || { cat -v "$dir/crafted.md"; fail "the Markdown row"; }
const text = require('fs').readFileSync(process.argv[2], 'utf8');
const rows = text.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| status'));
if (rows.length !== 1) throw new Error(`${rows.length} rows, not 1`);
const cells = [];
let cell = '', row = rows[0];
for (let i = 1; i < row.length; i++) {
  if (row[i] === '\\') { cell += row[i] + row[i + 1]; i++; continue; }
  if (row[i] === '|') { cells.push(cell.trim()); cell = ''; continue; }
  cell += row[i];
}
if (cells.length !== 6) throw new Error(`${cells.length} cells, not 6: ${JSON.stringify(cells)}`);
let read = '';
const raw = cells[2];
for (let i = 0; i < raw.length; i++) {
  const c = raw[i];
  if (c === '\\' && /[!-\/:-@\[-`{-~]/.test(raw[i + 1])) { read += raw[++i]; continue; }
  const entity = /^&(lt|gt|amp);/.exec(raw.slice(i));
  if (entity) { read += { lt: '<', gt: '>', amp: '&' }[entity[1]]; i += entity[0].length - 1; continue; }
  if (/[!-\/:-@\[-`{-~]/.test(c)) throw new Error(`unescaped ${c} at ${i} in ${raw}`);
  read += c;
}
const want = 'a|b`c*d_e <script>alert(1)</script> &amp; ]]> "q" \\| [l](http://x) ~~s~~ # h   [31m  ' +
  '\ufffd\ufffd \ufffd\ufffd \u00e9';
if (read !== want) throw new Error(`read ${JSON.stringify(read)}, not ${JSON.stringify(want)}`);
NODE
echo "ok   a crafted label: JUnit parses, the Markdown row has six cells and reads as the label"

# 3. Result files that would block; /dev/stdout into a pipe.
mkfifo "$dir/fifo"
expect 2 junit-fifo "$compare" --junit "$dir/fifo" "$dir/clean.jsonl" "$dir/crafted.jsonl"
has junit-fifo.out "lagscope-compare: cannot write --junit $dir/fifo: a FIFO that no one reads"
expect 2 md-fifo "$compare" --summary-md "$dir/fifo" "$dir/clean.jsonl" "$dir/crafted.jsonl"
has md-fifo.out "lagscope-compare: cannot write --summary-md $dir/fifo: a FIFO that no one reads"
expect 2 dir-out "$compare" --junit "$dir" "$dir/clean.jsonl" "$dir/crafted.jsonl"
has dir-out.out "cannot write --junit $dir: a folder"
{ timeout "$bound" "$compare" --junit /dev/stdout "$dir/clean.jsonl" "$dir/crafted.jsonl"; true; } |
  sed -n '/^<?xml/,$p' | xmllint --noout - || fail "--junit /dev/stdout into a pipe: not XML"
echo "ok   --junit, --summary-md: a FIFO no one reads and a folder refused at once; /dev/stdout into a pipe written"
# 4. No data is no run (issue 44, item 3): exit 2 and a sentence, never "fixed"; a JSON line
# that names a run_started without an id, a run of lagscope's, still counts as one.
: >"$dir/empty.jsonl"
printf '{"name":"not lagscope","hang_id":1}\n' >"$dir/other.json"
printf 'some text\n\0\377 bytes\n' >"$dir/text.txt"
mkdir "$dir/none-a" "$dir/none-b"
for input in empty.jsonl other.json text.txt; do
  expect 2 "no-run-$input" "$compare" "$dir/crafted.jsonl" "$dir/$input"
  has "no-run-$input.out" "no run to compare: $dir/$input holds no run of lagscope's"
  expect 2 "no-base-$input" "$compare" "$dir/$input" "$dir/crafted.jsonl"
done
expect 2 no-run-folders "$compare" "$dir/none-a" "$dir/none-b"
has no-run-folders.out "$dir/none-a holds no run of lagscope's: no hang report in it"
printf '{"type":"run_started"}\n' >"$dir/bare.jsonl"
expect 0 bare-run "$compare" "$dir/crafted.jsonl" "$dir/bare.jsonl"
has bare-run.out "0 new, 0 regressed, 1 fixed"
echo "ok   no run (an empty file, JSON or text not lagscope's, empty folders): exit 2, said"
# 5. A hang not ended (hang_began alone: the program killed during it) counts by its report in
# the run's report_dir (run_started), checked inside (pid, hang id): not ended, over any budget,
# failing. 100 000 hangs begun that never end, their folder /: bounded, counted, not compared.
mkdir "$dir/reports"
printf '{"hang_id":1,"state":"in_progress","app":{"pid":77},"duration_ms":1500,"heaviest_stack":[],"cause":{"kind":"sleep","summary":"Slept 1400 ms","label":"sleep · f"},"signature":"00000000000000bb"}' \
  >"$dir/reports/20261128T000000.000Z-77-1.json"
printf '{"type":"run_started","run_id":"killed","pid":77,"report_dir":"%s"}\n{"type":"hang_began","seq":1,"hang_id":1}\n' \
  "$dir/reports" >"$dir/killed.jsonl"
expect 3 killed "$compare" --budget-ms 100000 "$dir/clean.jsonl" "$dir/killed.jsonl"
has killed.out "new FAIL        00000000000000bb          0 x 0 ms       1 x 1500 ms  sleep · f (1 not ended: over any budget)"
awk 'BEGIN { print "{\"type\":\"run_started\",\"run_id\":\"many\",\"pid\":1,\"report_dir\":\"/\"}";
  for (i = 1; i <= 100000; i++) print "{\"type\":\"hang_began\",\"hang_id\":" i "}" }' >"$dir/open.jsonl"
expect 0 open-many timeout "$bound" "$compare" "$dir/clean.jsonl" "$dir/open.jsonl"
has open-many.out "(this run: 100000 hangs not ended whose report was not found: not compared)"
echo "ok   a hang not ended by its report (over any budget); 100 000 without one: bounded, counted"
echo "compare_crafted: every check passed"
