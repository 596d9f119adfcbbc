#!/usr/bin/env bash
# Benchmark a no-op branch-mode `teammem sync` in a reftable clone (a repository libgit2 cannot
# open, so the sync runs through the git CLI: issue 41), with MEMORIES memories on the memory
# branch, for two binaries in one run: OLD_BIN (before) and BIN (after). Each binary gets its
# own reftable clone of one bare remote, synced twice first (the first materialises the folder,
# the second finds nothing to do and may leave a no-op record); then the two take turns, run by
# run, RUNS times each, so a burst of load falls on both. Prints every run's wall time, each
# binary's median and the git processes one no-op spawns (a `git` wrapper first in PATH counts
# them), then the after/before ratio of the medians.
#
# Usage: scripts/bench-git-only-noop.sh [WORKDIR]
#   BIN=path (default: target/release/teammem, in $CARGO_TARGET_DIR when set),
#   OLD_BIN=path (default /tmp/teammem-s19final), RUNS=21, MEMORIES=1000.
# Needs git >= 2.45 (reftable), python3.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$(mktemp -d)}
runs=${RUNS:-21}
memories=${MEMORIES:-1000}
target=${CARGO_TARGET_DIR:-$root/target}
new_bin=${BIN:-$target/release/teammem}
old_bin=${OLD_BIN:-/tmp/teammem-s19final}
for bin in "$new_bin" "$old_bin"; do
  [ -x "$bin" ] || { echo "no binary at $bin" >&2; exit 2; }
done
new_bin=$(cd "$(dirname "$new_bin")" && pwd)/$(basename "$new_bin")
old_bin=$(cd "$(dirname "$old_bin")" && pwd)/$(basename "$old_bin")

mkdir -p "$work"
work=$(cd "$work" && pwd)
export HOME="$work/home" GIT_CONFIG_NOSYSTEM=1 LC_ALL=C
mkdir -p "$HOME"
git config --global user.name "Bench"
git config --global user.email "bench@example.com"
git config --global init.defaultBranch main

# The remote: code on main, MEMORIES memories on team-memory, published by teammem itself (so
# the branch holds the MEMORY.md teammem writes).
rm -rf "$work/remote.git" "$work/seed" "$work/old" "$work/new" "$work/wrap"
git init -q --bare "$work/remote.git"
git clone -q "$work/remote.git" "$work/seed" 2>/dev/null
(
  cd "$work/seed"
  echo "# project" > README.md
  git add README.md && git commit -q -m initial && git push -q origin main
  git config teammem.branch team-memory
  mkdir -p .qwen/team-memory/project
  for i in $(seq 1 "$memories"); do
    printf -- '---\nname: Memory %s\ndescription: What memory %s says\ntype: project\n---\nBody of memory %s.\n' \
      "$i" "$i" "$i" > ".qwen/team-memory/project/memory-$i.md"
  done
  "$new_bin" sync --json --timeout 120 > "$work/seed.json" || true
)
if [ "$(git -C "$work/remote.git" ls-tree -r --name-only team-memory | grep -c '^.qwen/team-memory/project/')" != "$memories" ]; then
  echo "the memory branch was not published:" >&2
  cat "$work/seed.json" >&2
  exit 1
fi

# A git that counts its runs, for the spawn count.
mkdir -p "$work/wrap"
real_git=$(command -v git)
cat > "$work/wrap/git" <<EOF
#!/bin/sh
echo "\$*" >> "\$GIT_RUNS_LOG"
exec "$real_git" "\$@"
EOF
chmod +x "$work/wrap/git"

for which in old new; do
  bin=$old_bin
  [ "$which" = new ] && bin=$new_bin
  git clone -q --ref-format=reftable "$work/remote.git" "$work/$which"
  (cd "$work/$which" && "$bin" sync --json --timeout 120 > /dev/null && sleep 2 \
    && "$bin" sync --json --timeout 120 > /dev/null)
  # Past git's racy window, so the files' stats alone decide (as for any later sync).
  sleep 2
  report=$(cd "$work/$which" && "$bin" sync --json)
  echo "$which: $(echo "$report" | python3 -c 'import json,sys; r=json.load(sys.stdin); print("mode", r["mode"], "reason", r["skipped_reason"], "committed", r["committed"], "pulled", r["pulled"], "pushed", r["pushed"])')"
  : > "$work/$which.runs"
  (cd "$work/$which" && GIT_RUNS_LOG="$work/$which.runs" PATH="$work/wrap:$PATH" "$bin" sync --json > /dev/null)
  echo "$which: $(wc -l < "$work/$which.runs") git processes in one no-op sync"
done

time_one() { # binary, clone: wall milliseconds of one no-op sync
  python3 - "$1" "$2" <<'EOF'
import subprocess, sys, time
start = time.perf_counter()
subprocess.run([sys.argv[1], "sync", "--json"], cwd=sys.argv[2], stdout=subprocess.DEVNULL, check=True)
print(f"{(time.perf_counter() - start) * 1000:.1f}")
EOF
}

: > "$work/old.times"
: > "$work/new.times"
for run in $(seq 1 "$runs"); do
  old=$(time_one "$old_bin" "$work/old")
  new=$(time_one "$new_bin" "$work/new")
  echo "run $run: before ${old} ms, after ${new} ms"
  echo "$old" >> "$work/old.times"
  echo "$new" >> "$work/new.times"
done
median() { sort -n "$1" | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
old_median=$(median "$work/old.times")
new_median=$(median "$work/new.times")
echo "median wall of a no-op branch sync, reftable clone, $memories memories, $runs runs:"
echo "  before ($old_bin): $old_median ms"
echo "  after  ($new_bin): $new_median ms"
echo "  after/before: $(python3 -c "print(f'{$new_median / $old_median:.3f}')")"
