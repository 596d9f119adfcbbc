#!/usr/bin/env bash
# Instruction counts (callgrind, load-independent) of `teammem scan` on the benchmark's team
# folder (1,000 memories, scripts/bench-scan.sh's seed) and on one memory, for a new and an
# old build side by side.
#
#   BIN=/path/new OLD_BIN=/path/old [WORK=/tmp/dir] scripts/callgrind-scan.sh
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:?BIN=path of the teammem build to count}
WORK=${WORK:-$(mktemp -d /tmp/teammem-callgrind.XXXXXX)}
TEAM=$WORK/team
if [ ! -d "$TEAM/.git" ]; then
  git init -q "$TEAM"
  python3 "$REPO/scripts/secrets-corpus.py" bench "$TEAM/.qwen/team-memory" --mb 100 --files 1000 --paras 1-6 --seed 7 >/dev/null
fi
ONE=$(find "$TEAM/.qwen/team-memory" -type f | sort | sed -n 1p)
count() {  # count LABEL ARGS...: total instructions of all threads
  local out=$WORK/cg.$$.out
  valgrind --tool=callgrind --callgrind-out-file="$out" "${@:2}" >/dev/null 2>"$WORK/cg.err" || true
  printf '%-34s %14s\n' "$1" "$(callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ {print $1}')"
  rm -f "$out"
}
for b in "$BIN" ${OLD_BIN:+"$OLD_BIN"}; do
  tag=$([ "$b" = "$BIN" ] && echo new || echo old)
  count "$tag: team folder scan" "$b" -C "$TEAM" scan --format json
  count "$tag: one memory" "$b" scan "$ONE" --format json
done
