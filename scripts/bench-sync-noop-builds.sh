#!/usr/bin/env bash
# Two builds of teammem side by side on a no-op sync in a 100,000-file repository: to show a
# change did not slow the libgit2 fast paths. Current-branch mode, a file:// remote the clone
# is up to date with; measured with the network (`sync`: fetch, nothing to pull, commit or
# push) and without (`sync --no-pull --no-push`).
#
# Usage: scripts/bench-sync-noop-builds.sh BASE_BINARY NEW_BINARY [WORKDIR]   (needs hyperfine)
# Goal: NEW's medians within the machine's noise of BASE's.
set -euo pipefail

base=$(realpath "$1")
new=$(realpath "$2")
work=${3:-$(mktemp -d)}
runs=${RUNS:-20}
files=${FILES:-100000}
mkdir -p "$work"
team=.qwen/team-memory

# Isolated git configuration: nothing from the caller's own config (hooks, fsmonitor, signing).
export HOME="$work/home" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL="$work/home/.gitconfig"
mkdir -p "$HOME"
printf '[user]\n\tname = Bench\n\temail = bench@example.com\n[init]\n\tdefaultBranch = main\n' >"$GIT_CONFIG_GLOBAL"

# FILES source files in folders of 1000 and 10 team memories, pushed to a bare remote.
rm -rf "$work/team.git" "$work/repo"
git init -q --bare "$work/team.git"
git init -q "$work/repo"
{
  echo "commit refs/heads/main"
  echo "committer Bench <bench@example.com> 0 +0000"
  echo "data 9"
  echo "generated"
  for ((i = 0; i < files; i++)); do
    body="file $i"
    echo "M 100644 inline src/d$((i / 1000))/f$i.txt"
    echo "data ${#body}"
    echo "$body"
  done
} | git -C "$work/repo" fast-import --quiet
git -C "$work/repo" reset -q --hard main
mkdir -p "$work/repo/$team/project"
for i in $(seq 1 10); do
  printf -- '---\nname: Memory %s\ndescription: What memory %s is about\ntype: project\n---\nBody %s.\n' \
    "$i" "$i" "$i" >"$work/repo/$team/project/memory-$i.md"
done
git -C "$work/repo" remote add origin "file://$work/team.git"
git -C "$work/repo" push -q -u origin main
"$base" -C "$work/repo" init --current-branch >/dev/null
"$base" -C "$work/repo" sync >/dev/null
test -z "$(git -C "$work/repo" status --porcelain)"

hyperfine -N --warmup 3 --runs "$runs" --export-json "$work/noop.json" \
  -n "base: sync ($files files)" "$base -C $work/repo sync" \
  -n "new: sync ($files files)" "$new -C $work/repo sync" \
  -n "base: sync --no-pull --no-push ($files files)" "$base -C $work/repo sync --no-pull --no-push" \
  -n "new: sync --no-pull --no-push ($files files)" "$new -C $work/repo sync --no-pull --no-push"
git -C "$work/repo" fsck --no-progress
test -z "$(git -C "$work/repo" status --porcelain)"

# Medians resist the load spikes of a shared machine better than means.
python3 - "$work/noop.json" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))["results"]
print("\n| command | median | min | max |")
print("|---|---:|---:|---:|")
for r in results:
    print(f"| {r['command']} | {r['median'] * 1000:.1f} ms | {r['min'] * 1000:.1f} ms | {r['max'] * 1000:.1f} ms |")
PY
