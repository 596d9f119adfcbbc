#!/usr/bin/env bash
# Benchmarks for the lifecycle commands, whole process (hyperfine):
#   - recall over 10,000 memories (goal: p50 <= 20 ms per query): with a warm index, without
#     the index (--no-index), cold (the run builds the whole index; goal <= 100 ms), and after
#     one memory changed
#   - baseline diff of 10,000 files with 100 changed (goal: <= 200 ms)
# Usage: scripts/bench-lifecycle.sh [N]   (N memories, default 10000)
#        OLD_BIN=path/to/an/older/teammem scripts/bench-lifecycle.sh   (also times that binary,
#          side by side with BIN in the same hyperfine runs, on its own copy of the memories so
#          that the two never rewrite each other's index; and checks both print the same bytes)
#        BIN=path/to/teammem scripts/bench-lifecycle.sh   (times that binary instead of building one)
#        ONLY_RECALL=1 ...   (stop after the recall sections)
# Needs hyperfine (apt-get install -y hyperfine). Builds the release binary once. With valgrind
# installed it also prints instruction counts of one warm recall (independent of the load).
set -euo pipefail

N="${1:-10000}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
if [ -z "${BIN:-}" ]; then
  cargo build --release --quiet --manifest-path "$ROOT/Cargo.toml"
  BIN="${CARGO_TARGET_DIR:-$ROOT/target}/release/teammem"
fi

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
export HOME="$WORK/home" QWEN_CODE_MEMORY_BASE_DIR="$WORK/home/.qwen"
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL="$WORK/home/.gitconfig"
mkdir -p "$HOME"
printf '[user]\n\tname = Bench\n\temail = bench@example.com\n' > "$GIT_CONFIG_GLOBAL"

REPO="$WORK/project"
mkdir -p "$REPO"
git -C "$REPO" init -q -b main
git -C "$REPO" commit -q --allow-empty -m initial
REPO="$(cd "$REPO" && pwd -P)"
SANITIZED="$(printf '%s' "$REPO" | sed 's/[^a-zA-Z0-9]/-/g')"
MEM="$QWEN_CODE_MEMORY_BASE_DIR/projects/$SANITIZED/memory"

echo "Generating $N memories in $MEM"
python3 - "$MEM" "$N" <<'PY'
import os, random, sys
root, n = sys.argv[1], int(sys.argv[2])
random.seed(7)
words = ("build deploy cache index parser server client token schema query "
         "release branch review merge commit config logger metric trace "
         "socket thread buffer stream record bucket shard replica backup").split()
types = ["user", "feedback", "project", "reference"]
for i in range(n):
    t = types[i % 4]
    os.makedirs(os.path.join(root, t), exist_ok=True)
    title = " ".join(random.choice(words) for _ in range(4))
    desc = " ".join(random.choice(words) for _ in range(8))
    body = "\n".join(" ".join(random.choice(words) for _ in range(12)) for _ in range(8))
    if i % 1000 == 0:
        body += "\nThe postgres migration runs before the deploy.\n"
    with open(os.path.join(root, t, f"memory-{i:05d}.md"), "w") as f:
        f.write(f"---\nname: {title} {i}\ndescription: {desc}\ntype: {t}\n---\n{body}\nWhy: measured.\nHow to apply: always.\n")
PY

cd "$REPO"
IDX="$QWEN_CODE_MEMORY_BASE_DIR/projects/$SANITIZED/memory-recall.idx"
CHANGED="$MEM/project/memory-00002.md"
p50() {
  python3 - "$1" <<'PY'
import json, statistics, sys
for r in json.load(open(sys.argv[1]))["results"]:
    t = r["times"]
    print(f"p50 {statistics.median(t)*1000:6.1f} ms  user {r['user']*1000:5.1f} ms  sys {r['system']*1000:5.1f} ms  {r['command']}")
PY
}
# Memories are older than the recall index's 2-second settle window in real life.
sleep 3
Q1='postgres migration'  # selective: 10 matches
Q2='deploy cache schema' # every memory matches
Q3='数据库 迁移'          # CJK, no match

# OLD_BIN gets its own copy of the memories (same project, another base folder).
OLD_BASE="$WORK/old-base"
if [ -n "${OLD_BIN:-}" ]; then
  cp -a "$QWEN_CODE_MEMORY_BASE_DIR" "$OLD_BASE"
  echo
  echo "== output: OLD_BIN and BIN print the same bytes (JSON and text) =="
  for q in "$Q1" "$Q2" "$Q3"; do
    for fmt in --json --format=human; do
      "$OLD_BIN" recall "$fmt" "$q" > "$WORK/old.out"
      "$BIN" recall "$fmt" "$q" > "$WORK/new.out"
      if cmp -s "$WORK/old.out" "$WORK/new.out"; then echo "same: $fmt '$q'"; else echo "DIFFERENT: $fmt '$q'"; fi
    done
  done
fi
new_env="env QWEN_CODE_MEMORY_BASE_DIR=$QWEN_CODE_MEMORY_BASE_DIR"
old_env="env QWEN_CODE_MEMORY_BASE_DIR=$OLD_BASE"

echo
echo "== recall over $N memories (whole process): warm index, and without the index =="
# Warm: the first query builds the whole index; a few more make sure it is written (an older
# binary may index a twentieth of the memories per query).
for run in $(seq 1 3); do "$BIN" recall "$Q1" >/dev/null; done
args=(-n "warm: $Q1" "$new_env $BIN recall '$Q1'"
      -n "warm: $Q2" "$new_env $BIN recall '$Q2'"
      -n "warm: $Q3" "$new_env $BIN recall '$Q3'")
if [ -n "${OLD_BIN:-}" ]; then
  for run in $(seq 1 25); do $old_env "$OLD_BIN" recall "$Q1" >/dev/null; done
  args+=(-n "old warm: $Q1" "$old_env $OLD_BIN recall '$Q1'"
         -n "old warm: $Q2" "$old_env $OLD_BIN recall '$Q2'"
         -n "old warm: $Q3" "$old_env $OLD_BIN recall '$Q3'")
fi
hyperfine -N --warmup 3 --runs 30 --export-json "$WORK/recall-warm.json" "${args[@]}"
p50 "$WORK/recall-warm.json"
if command -v valgrind >/dev/null; then
  echo
  echo "== instructions of one warm recall '$Q1' (callgrind, all threads) =="
  for b in "$BIN" ${OLD_BIN:+"$OLD_BIN"}; do
    e="$new_env"; [ "$b" = "${OLD_BIN:-}" ] && e="$old_env"
    $e valgrind --tool=callgrind --callgrind-out-file="$WORK/cg.out" "$b" recall "$Q1" 2>&1 >/dev/null \
      | awk -v b="$b" '/Collected/ {print $4 " instructions  " b}'
  done
fi
hyperfine -N --warmup 3 --runs 20 --export-json "$WORK/recall-noindex.json" \
  -n "no index: $Q1" "$BIN recall --no-index '$Q1'" \
  -n "no index: $Q2" "$BIN recall --no-index '$Q2'" \
  -n "no index: $Q3" "$BIN recall --no-index '$Q3'"
p50 "$WORK/recall-noindex.json"

echo
echo "== recall, cold: no index yet (the run builds it) =="
OLD_IDX="$OLD_BASE/projects/$SANITIZED/memory-recall.idx"
args=(-n "cold: $Q1" --prepare "rm -f '$IDX'" "$BIN recall '$Q1'"
      -n "cold: $Q2" --prepare "rm -f '$IDX'" "$BIN recall '$Q2'")
if [ -n "${OLD_BIN:-}" ]; then
  args+=(-n "old cold: $Q1" --prepare "rm -f '$OLD_IDX'" "$old_env $OLD_BIN recall '$Q1'"
         -n "old cold: $Q2" --prepare "rm -f '$OLD_IDX'" "$old_env $OLD_BIN recall '$Q2'")
fi
hyperfine --runs 15 --export-json "$WORK/recall-cold.json" "${args[@]}"
p50 "$WORK/recall-cold.json"

echo
echo "== recall right after the index was removed, run by run =="
rm -f "$IDX"
for run in $(seq 1 4); do
  start=$EPOCHREALTIME
  "$BIN" recall "$Q1" >/dev/null
  end=$EPOCHREALTIME
  python3 -c "print(f'run $run: {($end - $start) * 1000:.1f} ms')"
done

[ -n "${ONLY_RECALL:-}" ] && exit 0

echo
echo "== recall right after one memory changed (it is read again) =="
for run in $(seq 1 3); do "$BIN" recall "$Q1" >/dev/null; done
hyperfine --runs 20 --prepare "printf 'One more line.\n' >> '$CHANGED'" \
  --export-json "$WORK/recall-changed.json" \
  -n "one changed: $Q1" "$BIN recall '$Q1'" \
  -n "one changed: $Q2" "$BIN recall '$Q2'"
p50 "$WORK/recall-changed.json"

echo
echo "== recall after one memory changed and settled (read again, index rewritten) =="
hyperfine --runs 10 --prepare "printf 'One more line.\n' >> '$CHANGED'; sleep 2.2" \
  --export-json "$WORK/recall-settled.json" \
  -n "one changed, settled: $Q1" "$BIN recall '$Q1'"
p50 "$WORK/recall-settled.json"
ls -l "$IDX" | awk '{print "index size: " $5 " bytes"}'

echo
echo "== floor: stat, list and read the same files with findutils and coreutils =="
hyperfine --warmup 3 --runs 20 \
  "find '$MEM' -name '*.md' -printf '%s %T@ %C@ %i\\n' >/dev/null" \
  "ls -lR '$MEM' >/dev/null" \
  "find '$MEM' -name '*.md' -print0 | xargs -0 cat >/dev/null"

echo
echo "== baseline diff of $N files with 100 changed (whole process) =="
"$BIN" baseline commit >/dev/null
for i in $(seq 0 99); do
  f="$MEM/project/memory-$(printf '%05d' $((i * 40 + 2))).md"
  [ -f "$f" ] && printf 'Changed line %d.\n' "$i" >> "$f"
done
hyperfine --warmup 3 --runs 20 --export-json "$WORK/diff.json" "$BIN baseline diff"
python3 - "$WORK/diff.json" <<'PY'
import json, statistics, sys
for r in json.load(open(sys.argv[1]))["results"]:
    print(f"p50 {statistics.median(r['times'])*1000:.1f} ms  {r['command']}")
PY
"$BIN" baseline diff | grep -c '^- M ' | sed 's/^/changed files in report: /'
