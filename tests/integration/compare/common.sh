# Sourced by the compare tests (compare, run_gate, optimiser, run_channel): `source common.sh
# NAME` makes $dir, a folder of their own removed at exit, and the helpers they share.
# With $bound set (seconds), expect runs each command under `timeout`: a run that hangs fails.
dir=$(mktemp -d "/tmp/lagscope-$1-XXXXXX")
trap 'rm -rf "$dir"' EXIT
quiet=(--no-server --no-hud)

fail() { echo "FAIL $*"; exit 1; }
# expect CODE NAME COMMAND...: runs it, its stderr and stdout in $dir/NAME.out, checks the exit.
expect() {
  local code=$1 name=$2
  shift 2
  ${bound:+timeout "$bound"} "$@" >"$dir/$name.out" 2>&1
  local got=$?
  [ "$got" -eq "$code" ] || { cat "$dir/$name.out"; fail "$name: exit $got, not $code"; }
}
has() { grep -qF -- "$2" "$dir/$1" || { cat "$dir/$1"; fail "$1 lacks: $2"; }; }
lacks() { ! grep -qF -- "$2" "$dir/$1" || { cat "$dir/$1"; fail "$1 has: $2"; }; }
