#!/usr/bin/env bash
# Benchmark the local half of sync (`teammem sync --no-pull --no-push`) against the git CLI
# doing the same job (`git status --porcelain -- DIR`, then `git add -- DIR` and
# `git commit -- DIR` when something changed), in a 100-file and a 100,000-file repository.
#
# Usage: scripts/bench-sync-local.sh [WORKDIR]   (needs hyperfine; builds the release binary)
# Goals: teammem <= 0.3x the CLI's time; the 100,000-file repository <= 2x the 100-file one.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$(mktemp -d)}
runs=${RUNS:-20}
mkdir -p "$work"
cargo build --release --quiet --manifest-path "$root/Cargo.toml"
teammem="$root/target/release/teammem"
team=.qwen/team-memory

# Isolated git configuration: nothing from the caller's own config (hooks, fsmonitor, signing).
export HOME="$work/home" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL="$work/home/.gitconfig"
mkdir -p "$HOME"
printf '[user]\n\tname = Bench\n\temail = bench@example.com\n[init]\n\tdefaultBranch = main\n' >"$GIT_CONFIG_GLOBAL"

memory() { # memory FILE N: a valid project memory
  printf -- '---\nname: Memory %s\ndescription: What memory %s is about\ntype: project\n---\nBody %s.\n' "$2" "$2" "$2" >"$1"
}

# make_repo DIR FILES: FILES source files in folders of 1000, plus 10 team memories, committed.
make_repo() {
  local dir=$1 files=$2
  rm -rf "$dir"
  git init -q "$dir"
  {
    echo "commit refs/heads/main"
    echo "committer Bench <bench@example.com> 0 +0000"
    echo "data 9"
    echo "generated"
    for ((i = 0; i < files; i++)); do
      local body="file $i"
      echo "M 100644 inline src/d$((i / 1000))/f$i.txt"
      echo "data ${#body}"
      echo "$body"
    done
  } | git -C "$dir" fast-import --quiet
  git -C "$dir" reset -q --hard main
  mkdir -p "$dir/$team/project"
  for i in $(seq 1 10); do memory "$dir/$team/project/memory-$i.md" "$i"; done
  "$teammem" -C "$dir" sync --no-pull --no-push >/dev/null
  echo 0 >"$dir.counter"
}

# The prepare step for "one new memory": a memory with a new name each run.
cat >"$work/new-memory.sh" <<'SCRIPT'
#!/bin/sh
n=$(($(cat "$1.counter") + 1))
echo "$n" >"$1.counter"
printf -- '---\nname: New %s\ndescription: What new memory %s is about\ntype: project\n---\nBody.\n' \
  "$n" "$n" >"$1/.qwen/team-memory/project/new-$n.md"
SCRIPT
chmod +x "$work/new-memory.sh"

# What a script would run with the git CLI. Both sides run without hyperfine's shell (-N):
# hyperfine's subtraction of its shell's start time is noisier than a 2 ms command on a busy
# machine. So the CLI's time includes the start of the /bin/sh that chains its commands.
cat >"$work/cli-sync.sh" <<SCRIPT
#!/bin/sh
if [ -n "\$(git -C "\$1" status --porcelain -- $team)" ]; then
  git -C "\$1" add -- $team && git -C "\$1" commit -q -m 'chore(memory): sync team memory' -- $team
fi
SCRIPT
chmod +x "$work/cli-sync.sh"

for size in 100 100000; do
  repo="$work/repo-$size"
  echo "== generating $size files in $repo"
  make_repo "$repo" "$size"
  hyperfine -N --warmup 3 --runs "$runs" --export-markdown "$work/nothing-$size.md" \
    --export-json "$work/nothing-$size.json" \
    -n "teammem nothing to do ($size files)" "$teammem -C $repo sync --no-pull --no-push" \
    -n "git CLI nothing to do ($size files)" "$work/cli-sync.sh $repo"
  hyperfine -N --warmup 3 --runs "$runs" --export-markdown "$work/one-new-$size.md" \
    --export-json "$work/one-new-$size.json" \
    --prepare "$work/new-memory.sh $repo" \
    -n "teammem one new memory ($size files)" "$teammem -C $repo sync --no-pull --no-push" \
    -n "git CLI one new memory ($size files)" "$work/cli-sync.sh $repo"
  git -C "$repo" fsck --no-progress
  test -z "$(git -C "$repo" status --porcelain -- $team)"
done
cat "$work"/nothing-*.md "$work"/one-new-*.md

# Medians resist the load spikes of a shared machine better than means.
python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
median = {}
print("\n| scenario | teammem median | git CLI median | teammem / git |")
print("|---|---:|---:|---:|")
for case, label in (("nothing", "nothing to do"), ("one-new", "one new memory")):
    for size in ("100", "100000"):
        results = json.load(open(f"{work}/{case}-{size}.json"))["results"]
        ours, theirs = (r["median"] * 1000 for r in results)
        median[case, size] = ours
        ratio = f"{ours / theirs:.2f}x" if theirs > 0 else "n/a"
        print(f"| {label}, {int(size):,} files | {ours:.1f} ms | {theirs:.1f} ms | {ratio} |")
for case, label in (("nothing", "nothing to do"), ("one-new", "one new memory")):
    ratio = median[case, "100000"] / median[case, "100"]
    print(f"teammem {label}: 100,000 files / 100 files = {ratio:.2f}x")
PY
