#!/usr/bin/env bash
# The workloads users wait for, this build side by side with another (the main branch's), in
# one hyperfine run per workload: the pre-commit hook, `check --range`, session start and a
# team folder's scan. Used to judge which speed tricks are worth their unsafe code (issue 42).
#
#   TEAMMEM=/path/new/teammem BEFORE=/path/old/teammem scripts/bench-house.sh
#   WORK=/tmp/house-bench ...   # keep (and reuse) the fixtures
#   RUNS=30 ...                 # runs per command (default 20)
#
# 1. check --staged (what hooks/pre-commit runs): 10 staged memories in a repository whose
#    index holds 100,000 files.
# 2. check --range over 500 commits that each change a team memory.
# 3. session-start --hook claude with 1,000 team memories, no remote (sync stops at
#    `no-upstream` in both builds).
# 4. scan of a team folder of 1,000 memories (scripts/secrets-corpus.py's generated memories,
#    1 to 6 paragraphs, with a few planted secrets), JSON output.
# The 100 MB scan beside betterleaks and gitleaks is scripts/bench-scan.sh (OLD_BIN=...).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
: "${TEAMMEM:?set TEAMMEM to the teammem binary to time}"
: "${BEFORE:?set BEFORE to the teammem binary to compare with (the main branch build)}"
command -v hyperfine >/dev/null || { echo "hyperfine is needed (apt-get install hyperfine)" >&2; exit 2; }
RUNS=${RUNS:-20}
if [ -n "${WORK:-}" ]; then
  mkdir -p "$WORK"
  work=$(cd "$WORK" && pwd)
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL="$work/gitconfig" HOME="$work"
export QWEN_CODE_MEMORY_BASE_DIR="$work/qwen" CLAUDE_CONFIG_DIR="$work/claude"
git config --file "$work/gitconfig" user.name Bench
git config --file "$work/gitconfig" user.email bench@example.com
git config --file "$work/gitconfig" init.defaultBranch main

memory() { # memory N BODY-SUFFIX
  printf -- '---\nname: Memory %s\ndescription: What memory %s records\ntype: project\n---\nThe service %s keeps its queue depth below %s.\nWhy: an incident in week %s.\n%s\n' \
    "$1" "$1" "$1" "$1" "$1" "$2"
}

# --- 1. check --staged in a 100,000-file repository
big="$work/big"
if [ ! -d "$big/.git" ]; then
  git init -q "$big"
  python3 - "$big" <<'PY'
import sys, subprocess
repo = sys.argv[1]
blob = b"generated file\n"
out = [b"blob\nmark :1\ndata %d\n%s\n" % (len(blob), blob)]
out.append(b"commit refs/heads/main\ncommitter Bench <bench@example.com> 1767225600 +0000\ndata 4\nbig\n")
for i in range(100_000):
    out.append(b"M 100644 :1 src/d%03d/f%05d.txt\n" % (i // 1000, i))
out.append(b"\n")
subprocess.run(["git", "-C", repo, "fast-import", "--quiet"], input=b"".join(out), check=True)
PY
  git -C "$big" read-tree HEAD
  mkdir -p "$big/.qwen/team-memory/project"
  for n in $(seq 1 10); do memory "$n" "" > "$big/.qwen/team-memory/project/memory-$n.md"; done
  (cd "$big" && "$TEAMMEM" index --scope team >/dev/null && git add .qwen)
fi
echo "index entries: $(git -C "$big" ls-files | wc -l)"

# --- 2. check --range over 500 commits
hist="$work/history"
if [ ! -d "$hist/.git" ]; then
  git init -q "$hist"
  python3 - "$hist" <<'PY'
import sys, subprocess
repo = sys.argv[1]
def memory(n, extra):
    return ("---\nname: Memory %d\ndescription: What memory %d records\ntype: project\n---\n"
            "The service %d keeps its queue depth below %d.\nWhy: an incident in week %d.\n%s\n"
            % (n, n, n, n, n, extra)).encode()
out = []
t = 1767225600
out.append(b"commit refs/heads/main\ncommitter Bench <bench@example.com> %d +0000\ndata 4\nbase\n" % t)
for n in range(100):
    data = memory(n, "")
    out.append(b"M 100644 inline .qwen/team-memory/project/memory-%d.md\ndata %d\n%s\n" % (n, len(data), data))
out.append(b"\n")
for c in range(500):
    n = c % 100
    data = memory(n, "Revision %d of this memory." % c)
    out.append(b"commit refs/heads/main\ncommitter Bench <bench@example.com> %d +0000\ndata 7\nchange\n"
               % (t + c + 1))
    out.append(b"M 100644 inline .qwen/team-memory/project/memory-%d.md\ndata %d\n%s\n\n" % (n, len(data), data))
subprocess.run(["git", "-C", repo, "fast-import", "--quiet"], input=b"".join(out), check=True)
PY
  git -C "$hist" tag base main~500
  git -C "$hist" checkout -q main
  (cd "$hist" && "$TEAMMEM" index --scope team >/dev/null && git add .qwen && git commit -q -m index)
fi
echo "commits in range: $(git -C "$hist" rev-list --count base..main) (the last one adds MEMORY.md)"

# --- 3. session start with 1,000 team memories
repo="$work/session"
if [ ! -d "$repo/.git" ]; then
  git init -q "$repo"
  python3 - "$repo/.qwen/team-memory" <<'PY'
import os, sys
team = sys.argv[1]
kinds = ["user", "feedback", "project", "reference"]
for n in range(1000):
    kind = kinds[n % 4]
    os.makedirs(os.path.join(team, kind), exist_ok=True)
    body = "".join(
        "Line %d of memory %d: the service keeps its queue depth below %d; see docs/ops.md.\n" % (i, n, n * 7 + i)
        for i in range(8)
    )
    text = ("---\nname: Memory %d about service %d\ndescription: What memory %d records about the queue\n"
            "type: %s\nkeywords: [queue, service-%d]\n---\n%s\nWhy: an incident in week %d.\n"
            "How to apply: check https://github.com/org/repo/issues/%d first.\n" % (n, n, n, kind, n, body, n % 52, n))
    with open(os.path.join(team, kind, "memory-%04d.md" % n), "w") as f:
        f.write(text)
PY
  (cd "$repo" && "$TEAMMEM" index --scope team >/dev/null && git add -A && git commit -qm memories)
fi
echo "team memories: $(find "$repo/.qwen/team-memory" -name 'memory-*.md' | wc -l)"

# --- 4. a team folder of 1,000 memories
team="$work/team"
if [ ! -d "$team/.git" ]; then
  git init -q "$team"
  python3 "$root/scripts/secrets-corpus.py" bench "$team/.qwen/team-memory" --mb 100 --files 1000 --paras 1-6 --seed 7 >/dev/null
fi
echo "team folder: $(find "$team/.qwen/team-memory" -type f | wc -l) files"

# Same output from both builds, or the timing compares different work.
for args in "-C $big check --staged" "-C $hist check --range base..main" "-C $team scan --format json"; do
  # shellcheck disable=SC2086
  if ! cmp -s <("$BEFORE" $args 2>&1) <("$TEAMMEM" $args 2>&1); then
    echo "DIFFERENT OUTPUT: teammem $args" >&2
  fi
done

bench() { # NAME ARGS...
  local name=$1; shift
  hyperfine -N -i --warmup 3 --runs "$RUNS" --export-json "$work/$name.json" \
    -n "before: $name" "$BEFORE $*" -n "after: $name" "$TEAMMEM $*"
}
bench check-staged -C "$big" check --staged
bench check-range -C "$hist" check --range base..main
bench session-start -C "$repo" session-start --hook claude
bench scan-team -C "$team" scan --format json

# Medians (wall) and mean CPU (user + system), after / before.
python3 - "$work" <<'PY'
import json, statistics, sys, os
work = sys.argv[1]
print(f"{'workload':<16} {'before ms':>10} {'after ms':>10} {'ratio':>6}   {'cpu before':>10} {'cpu after':>10} {'ratio':>6}")
for name in ["check-staged", "check-range", "session-start", "scan-team"]:
    results = json.load(open(os.path.join(work, name + ".json")))["results"]
    before, after = results
    wall = lambda r: statistics.median(r["times"]) * 1000
    cpu = lambda r: (r["user"] + r["system"]) * 1000
    print(f"{name:<16} {wall(before):>10.1f} {wall(after):>10.1f} {wall(after) / wall(before):>6.2f}"
          f"   {cpu(before):>10.1f} {cpu(after):>10.1f} {cpu(after) / cpu(before):>6.2f}")
PY
