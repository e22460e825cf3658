#!/usr/bin/env bash
# Issue 44, item 6: signatures survive the optimiser (docs/hang-report.md, "The signature").
# 1. optimiser_stall built at -O0 and at -O2 (settle inlined, nap's tail call to g_usleep):
#    one stall, one signature, the same frames (nap, settle, on_timeout, main).
# Usage: optimiser.test.sh LAGSCOPE-RUN LAGSCOPE-COMPARE OPTIMISER_STALL_O0 OPTIMISER_STALL_O2
set -uo pipefail
run=$1 compare=$2 o0=$3 o2=$4
dir=$(mktemp -d /tmp/lagscope-optimiser-XXXXXX)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL $*"; exit 1; }
quiet=(--no-server --no-hud)

# stall NAME PROGRAM...: the program under lagscope-run, its events in NAME.jsonl; prints its
# first hang's signature and frames ("id frame,frame,...").
stall() {
  local name=$1
  shift
  "$run" "${quiet[@]}" --events "$dir/$name.jsonl" -- "$@" >"$dir/$name.out" 2>&1 ||
    { cat "$dir/$name.out"; fail "$name: lagscope-run exit $?"; }
  grep '"type":"hang_ended"' "$dir/$name.jsonl" | head -1 |
    grep -o '"signature":"[0-9a-f]*","signature_frames":\[[^]]*\]' |
    sed 's/"signature":"\([0-9a-f]*\)","signature_frames":\[\(.*\)\]/\1 \2/; s/"//g'
}

# ---- 1. the project's program, -O0 and -O2 --------------------------------------------------
a=$(stall own-O0 "$o0") b=$(stall own-O2 "$o2")
[ -n "$a" ] && [ -n "$b" ] || fail "optimiser_stall: no hang with a signature (-O0: '$a', -O2: '$b')"
[ "$a" = "$b" ] || fail "optimiser_stall: -O0 and -O2 differ: -O0 $a; -O2 $b"
case "$a" in
  *" nap,settle,on_timeout,main"*) ;;
  *) fail "optimiser_stall: frames are not nap, settle, on_timeout, main: $a" ;;
esac
echo "ok   optimiser_stall: -O0 and -O2 give one signature ($a)"
echo "optimiser: every check passed"
