#!/usr/bin/env bash
# The agent's loop (docs/agents.md): run the benchmark through bench-normalize, store dstack's
# `benchmark` object only when it is fit to store, and say what to do on every other outcome.
#
#   examples/agent_loop.sh OUT.json -- vllm bench serve --model M --max-concurrency 8 ...
#
# OUT.json is written only on exit 0 (written whole: a temporary file renamed into place); the
# diagnostics alone (JSON Lines, one per failed check or error) are in OUT.json.diagnostics.jsonl
# whatever the outcome. The exit code is bench-normalize's.
set -u
if [ $# -lt 3 ] || [ "$2" != "--" ]; then
  echo "usage: $0 OUT.json -- <client command...>" >&2
  exit 2
fi
out=$1
shift 2
diagnostics="$out.diagnostics.jsonl"
tmp=$(mktemp "$out.XXXXXX") || exit 4
bench-normalize run --format dstack --error-format json --diagnostics-file "$diagnostics" -- "$@" > "$tmp"
code=$?
case $code in
  0) mv "$tmp" "$out"; echo "stored: $out (accepted; TPOT derived, never an ITL row)" ;;
  1) echo "not stored: the figures contradict each other; read $diagnostics for the rule and the numbers" ;;
  2) echo "not stored: a flag of bench-normalize is wrong (see $diagnostics)" ;;
  3) echo "not stored: no result found, or nothing usable; do not fill figures in by hand" ;;
  4) echo "not stored: a file could not be read or written" ;;
  5) echo "not stored: a figure dstack needs is missing; $diagnostics says which and how to get it" ;;
  6) echo "not stored: the client failed or was interrupted; its result file, if any, is kept (stderr says where); rerun" ;;
  7) echo "not stored: an objective (--slo) was not met" ;;
  *) echo "not stored: exit $code" ;;
esac
[ -e "$tmp" ] && rm -f "$tmp"
exit $code
