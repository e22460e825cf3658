#!/usr/bin/env bash
# lagscope-run's channel and files as an attacker or a full disk would meet them (issue 42,
# items 3, 5, 6), on a real GLib program (glib_two_stalls: a 400 ms stall; --stall-at, and
# --file-limit as on a full disk):
# 1. TMPDIR a link in a folder anyone may write (not sticky) to a safe folder: the link swapped
#    after the check to a folder whose channel is a link to a file of the victim's. The victim's
#    file gets nothing; the run still sees its hang (exit 3).
# 2. The channel's writes fail (no file may grow past 10 bytes): exit 4, "could not be
#    written ... File too large", never exit 0 with "no hang" over a 100 ms budget.
# 3. The channel replaced by a forged copy during the run: exit 4, "removed or replaced".
# 4. --events: an existing 0644 file of ours is made 0600 (said); a link, or another user's
#    file (when root can make one), is refused (exit 2), the target untouched.
# 5. --junit and --summary-md a FIFO that no one reads: refused at once, not waited on for ever
#    (each run under `timeout`: a timeout fails the test); --junit /dev/stdout into a pipe works.
# Usage: run_channel.test.sh LAGSCOPE-RUN GLIB_TWO_STALLS
set -uo pipefail
run=$1 program=$2
bound=60 # s: a run that did not end by then hangs (timeout's 124 is a failure): expect's bound
source "$(dirname "$0")/common.sh" channel
# await WHAT COMMAND...: until COMMAND succeeds, at most $bound s.
await() {
  local what=$1 end=$((SECONDS + bound))
  shift
  until "$@"; do
    [ "$SECONDS" -lt "$end" ] || fail "no $what in $bound s"
    sleep 0.05
  done
}

# 1. The TMPDIR link, swapped once checked.
mkdir -m 0777 "$dir/world" && chmod 0777 "$dir/world" # anyone may write, not sticky
mkdir -m 0700 "$dir/safe" "$dir/attacker"
printf 'precious\n' >"$dir/victim.txt"
ln -s "$dir/safe" "$dir/world/link"
TMPDIR="$dir/world/link" timeout "$bound" "$run" --no-server --budget-ms 100 -- "$program" \
  --stall-at 3000 >"$dir/link.out" 2>&1 &
pid=$!
made() { compgen -G "$dir/safe/lagscope-run-*" >/dev/null; }
await "private folder" made
name=$(basename "$(compgen -G "$dir/safe/lagscope-run-*")")
mkdir "$dir/attacker/$name"
ln -s "$dir/victim.txt" "$dir/attacker/$name/hangs.jsonl"
ln -s "$dir/attacker" "$dir/world/link.new" && mv -T "$dir/world/link.new" "$dir/world/link"
wait "$pid"
code=$?
[ "$(cat "$dir/victim.txt")" = precious ] || { cat "$dir/link.out"; head -c 300 "$dir/victim.txt"; fail "the victim's file got the events"; }
[ "$code" -eq 3 ] || { cat "$dir/link.out"; fail "TMPDIR link: exit $code, not 3 (the hang over the budget)"; }
echo "ok   TMPDIR a link swapped after the check: the victim's file untouched, the hang seen (exit 3)"

# 2. Writes that fail, as on a full disk.
expect 4 limit "$run" --no-server --budget-ms 100 -- "$program" --file-limit 10
has limit.out "lagscope-run: the channel from lagscope in glib_two_stalls failed: "
has limit.out "could not be written"
has limit.out "File too large"
grep -q "no hang" "$dir/limit.out" && { cat "$dir/limit.out"; fail "a failed channel said no hang"; }
echo "ok   the channel's writes failed: exit 4, said"

# 3. The channel replaced by a forged copy.
mkdir -m 0700 "$dir/tmp"
TMPDIR="$dir/tmp" timeout "$bound" "$run" --no-server --budget-ms 100 -- "$program" \
  --stall-at 3000 >"$dir/forged.out" 2>&1 &
pid=$!
loaded() { [ -s "$(compgen -G "$dir/tmp/lagscope-run-*/hangs.jsonl" || echo /nonexistent)" ]; }
await "run_loops line" loaded
channel=$(compgen -G "$dir/tmp/lagscope-run-*/hangs.jsonl")
cp "$channel" "$dir/forged" && chmod 0444 "$dir/forged" && mv "$dir/forged" "$channel"
wait "$pid"
code=$?
[ "$code" -eq 4 ] || { cat "$dir/forged.out"; fail "forged channel: exit $code, not 4"; }
has forged.out "was removed or replaced during the run"
echo "ok   the channel replaced during the run: exit 4, said"

# 4. --events files that would leak the viewer's token.
viewer=(--port 0 --bind 127.0.0.1)
printf '' >"$dir/ev.jsonl" && chmod 0644 "$dir/ev.jsonl"
expect 0 ev "$run" "${viewer[@]}" --allow-unwatched --events "$dir/ev.jsonl" -- true
has ev.out "lagscope-run: --events $dir/ev.jsonl was mode 644: made 0600, as it will hold the viewer's token"
[ "$(stat -c %a "$dir/ev.jsonl")" = 600 ] || fail "the events file is mode $(stat -c %a "$dir/ev.jsonl")"
grep -q '"type":"server_started"' "$dir/ev.jsonl" || fail "no server_started line in the events file"
ln -s "$dir/victim.txt" "$dir/ev-link.jsonl"
expect 2 ev-link "$run" "${viewer[@]}" --events "$dir/ev-link.jsonl" -- true
has ev-link.out "lagscope-run: --events $dir/ev-link.jsonl: a symbolic link (refused: give the file itself)"
[ "$(cat "$dir/victim.txt")" = precious ] || fail "the link's target got the events"
if [ "$(id -u)" -eq 0 ]; then
  printf '' >"$dir/ev-other.jsonl" && chown 65534 "$dir/ev-other.jsonl"
  expect 2 ev-other "$run" "${viewer[@]}" --events "$dir/ev-other.jsonl" -- true
  has ev-other.out "it belongs to another user (uid 65534), who could read the viewer's token in it (refused)"
  [ ! -s "$dir/ev-other.jsonl" ] || fail "another user's events file got the token"
  echo "ok   --events: 0644 made 0600 (said); a link and another user's file refused"
else
  echo "ok   --events: 0644 made 0600 (said); a link refused (another user's file: needs root)"
fi

# 5. Result files that would block.
mkfifo "$dir/fifo"
expect 1 junit-fifo "$run" --no-server --junit "$dir/fifo" -- true
has junit-fifo.out "lagscope-run: cannot write --junit $dir/fifo: a FIFO that no one reads"
expect 1 md-fifo "$run" --no-server --allow-unwatched --baseline "$dir/ev.jsonl" --summary-md "$dir/fifo" -- true
has md-fifo.out "lagscope-run: cannot write --summary-md $dir/fifo: a FIFO that no one reads"
timeout "$bound" "$run" --no-server --allow-unwatched --junit /dev/stdout -- true 2>/dev/null | xmllint --noout - ||
  fail "--junit /dev/stdout into a pipe: not XML"
echo "ok   --junit, --summary-md: a FIFO no one reads refused at once; /dev/stdout into a pipe written"
echo "run_channel: every check passed"
