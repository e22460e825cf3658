#!/usr/bin/env bash
# Issue 44, item 6: signatures survive the optimiser (docs/hang-report.md, "The signature").
# 1. optimiser_stall built at -O0 and at -O2 (settle inlined, nap's tail call to g_usleep):
#    one stall, one signature, the same frames (nap, settle, on_timeout, main).
# 2. A program the project did not write: zstd's example simple_compression.c (Debian's
#    libzstd-dev) at -O0 and -O2 ($LAGSCOPE_ZSTD_O0, $LAGSCOPE_ZSTD_O2: optimiser_zstd), stalled
#    opening its output, a FIFO no one reads until the hang's report is on disk: one signature,
#    its static helpers named (inlined into its main at -O2).
# 3. A fingerprint rules file (--rules) honoured by lagscope-compare and lagscope-run
#    --baseline: a baseline whose stall had another signature (an older build's) merged with
#    this run's is compared as one; an accepted signature never fails the gate; a bad file is
#    refused with its line (exit 2).
# Usage: optimiser.test.sh LAGSCOPE-RUN LAGSCOPE-COMPARE OPTIMISER_STALL_O0 OPTIMISER_STALL_O2
set -uo pipefail
run=$1 compare=$2 o0=$3 o2=$4
source "$(dirname "$0")/common.sh" optimiser

# stall NAME LAGSCOPE-RUN-OPTION... -- PROGRAM...: the program under lagscope-run, its events in
# NAME.jsonl; prints its first hang's signature and frames ("id frame,frame,...").
stall() {
  local name=$1 code
  shift
  "$run" "${quiet[@]}" --events "$dir/$name.jsonl" "$@" >"$dir/$name.out" 2>&1
  code=$?
  [ "$code" -eq 0 ] || { cat "$dir/$name.out"; fail "$name: lagscope-run exit $code"; }
  grep '"type":"hang_ended"' "$dir/$name.jsonl" | head -1 |
    grep -o '"signature":"[0-9a-f]*","signature_frames":\[[^]]*\]' |
    sed 's/"signature":"\([0-9a-f]*\)","signature_frames":\[\(.*\)\]/\1 \2/; s/"//g'
}

# one_signature WHAT FRAMES -O0'S -O2'S: both stall's line, the same, with FRAMES (a,b,...).
one_signature() {
  local what=$1 frames=$2 a=$3 b=$4
  [ -n "$a" ] && [ -n "$b" ] || fail "$what: no hang with a signature (-O0: '$a', -O2: '$b')"
  [ "$a" = "$b" ] || fail "$what: -O0 and -O2 differ: -O0 $a; -O2 $b"
  case "$a" in
    *" $frames"*) ;;
    *) fail "$what: frames are not $frames: $a" ;;
  esac
  echo "ok   $what: -O0 and -O2 give one signature ($a)"
}

# ---- 1. the project's program, -O0 and -O2 --------------------------------------------------
a=$(stall own-O0 -- "$o0") b=$(stall own-O2 -- "$o2")
one_signature optimiser_stall nap,settle,on_timeout,main "$a" "$b"

# ---- 2. zstd's example, -O0 and -O2 ----------------------------------------------------------
# zstd_stall NAME PROGRAM: as stall, the output FIFO read once a report of the hang is on disk.
zstd_stall() {
  local name=$1 program=$2 i
  mkdir -p "$dir/$name-reports"
  printf 'lagscope %.0s' {1..2000} >"$dir/$name-in"
  mkfifo "$dir/$name-in.zst"
  (for ((i = 0; i < 600; i++)); do # 60 s at most
    ls "$dir/$name-reports"/*.json >/dev/null 2>&1 && break
    sleep 0.1
  done; cat "$dir/$name-in.zst" >/dev/null) &
  local reader=$!
  stall "$name" --report-dir "$dir/$name-reports" -- "$program" "$dir/$name-in"
  wait "$reader"
}
if [ -n "${LAGSCOPE_ZSTD_O0:-}" ]; then
  a=$(zstd_stall zstd-O0 "$LAGSCOPE_ZSTD_O0") z=$(zstd_stall zstd-O2 "$LAGSCOPE_ZSTD_O2")
  one_signature "zstd's simple_compression.c" \
    fopen_orDie,saveFile_orDie,compress_orDie,zstd_example_main,compress,main "$a" "$z"
else
  echo "skip zstd's example (libzstd-dev's examples not found at configure time)"
fi

# ---- 3. fingerprint rules ------------------------------------------------------------------
sig=${b%% *}
old=a615571d531536b7 # the stall's signature at -O2 before signatures survived the optimiser
{
  echo '{"type":"run_started","run_id":"older-build"}'
  echo "{\"type\":\"hang_ended\",\"signature\":\"$old\",\"duration_ms\":520,\"cause\":{\"kind\":\"sleep\",\"label\":\"sleep · on_timeout\"}}"
} >"$dir/older.jsonl"
expect 3 plain "$compare" "$dir/older.jsonl" "$dir/own-O2.jsonl"
has plain.out "1 new, 0 regressed, 1 fixed, 0 unchanged"
printf '# the same stall, before and after issue 44 item 6\nmerge %s %s  # older build\n\n' "$sig" "$old" >"$dir/merge.rules"
expect 0 merged "$compare" --rules "$dir/merge.rules" "$dir/older.jsonl" "$dir/own-O2.jsonl"
has merged.out "0 new, 0 regressed, 0 fixed, 1 unchanged"
has merged.out "unchanged       $sig"
expect 0 run-merged "$run" "${quiet[@]}" --baseline "$dir/older.jsonl" --rules "$dir/merge.rules" -- "$o2"
has run-merged.out "0 new, 0 regressed, 0 fixed, 1 unchanged"
echo "ok   merge: an older build's signature and this one's compared as one (lagscope-compare, --baseline)"
printf 'accept %s\n' "$sig" >"$dir/accept.rules"
expect 0 accepted "$compare" --rules "$dir/accept.rules" --junit "$dir/accepted.xml" \
  --json "$dir/accepted.json" "$dir/older.jsonl" "$dir/own-O2.jsonl"
grep -qF "{\"signature\":\"$sig\",\"status\":\"new\",\"failing\":false,\"accepted\":true" "$dir/accepted.json" ||
  { cat "$dir/accepted.json"; fail "accepted: --json does not say so"; }
has accepted.out "1 new, 0 regressed, 1 fixed, 0 unchanged"
has accepted.out "new accepted    $sig"
grep -q 'failures="0"' "$dir/accepted.xml" || { cat "$dir/accepted.xml"; fail "accepted: the JUnit has a failure"; }
expect 0 run-accepted "$run" "${quiet[@]}" --baseline "$dir/older.jsonl" --rules "$dir/accept.rules" -- "$o2"
has run-accepted.out "new accepted    $sig"
echo "ok   accept: a new signature accepted never fails the gate (lagscope-compare, --baseline)"
# bad FILE EXPECTED-MESSAGE: the rules file's text refused, by both tools, exit 2.
bad() {
  printf '%b' "$1" >"$dir/bad.rules"
  expect 2 bad-cmp "$compare" --rules "$dir/bad.rules" "$dir/older.jsonl" "$dir/own-O2.jsonl"
  has bad-cmp.out "lagscope-compare: bad --rules file: $dir/bad.rules:$2"
  expect 2 bad-run "$run" "${quiet[@]}" --baseline "$dir/older.jsonl" --rules "$dir/bad.rules" -- "$o2"
  has bad-run.out "lagscope-run: cannot compare: $dir/bad.rules:$2"
}
bad '# ok\nmerg a b\n' "2: unknown rule 'merg' (merge SIG SIG... or accept SIG...)"
bad "accept $sig 12345\n" "1: '12345' is not a signature (16 lowercase hex digits)"
bad "merge $sig\n" "1: merge needs two signatures or more"
bad "accept\n" "1: accept needs one signature or more"
bad "merge $sig $old\nmerge $old 00000000000000aa\n" "2: $old is merged already, at line 1"
expect 2 missing "$compare" --rules "$dir/none.rules" "$dir/older.jsonl" "$dir/own-O2.jsonl"
has missing.out "bad --rules file: $dir/none.rules: No such file or directory"
expect 2 run-no-baseline "$run" "${quiet[@]}" --rules "$dir/merge.rules" -- "$o2"
has run-no-baseline.out "needs --baseline"
echo "ok   a bad rules file refused with its line, exit 2 (lagscope-compare, --baseline)"
echo "optimiser: every check passed"
