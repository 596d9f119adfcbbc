#!/usr/bin/env bash
# Gate cost at session start: `teammem session-start --hook qwen` (and `context`) in a repository
# with 1,000 team memories, this build side by side with another binary (the main branch's).
#
#   BASELINE=/path/to/main/teammem scripts/bench-gate.sh
#   TEAMMEM=/path/to/teammem BASELINE=... scripts/bench-gate.sh
#
# The main branch injects MEMORY.md as it is; this build renders the team index from the 1,000
# memories after the gate (each file read, parsed, scanned for secrets and trust risks). The
# difference of the two means is the gate's cost (goal: <= 30 ms). Sync runs in both and stops
# at `no-upstream` (the fixture has no remote), so it costs both the same.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${TEAMMEM:-}" ]; then
  cargo build --release --quiet --manifest-path "$root/Cargo.toml"
  TEAMMEM="$root/target/release/teammem"
fi
: "${BASELINE:?set BASELINE to the teammem binary to compare with (the main branch build)}"
command -v hyperfine >/dev/null || { echo "hyperfine is needed (apt-get install hyperfine)" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL="$work/gitconfig" HOME="$work"
export QWEN_CODE_MEMORY_BASE_DIR="$work/qwen"
git config --file "$work/gitconfig" user.name Bench
git config --file "$work/gitconfig" user.email bench@example.com
git config --file "$work/gitconfig" init.defaultBranch main

repo="$work/repo"
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
echo "team memories: $(find "$repo/.qwen/team-memory" -name 'memory-*.md' | wc -l)"
(cd "$repo" && "$TEAMMEM" context | grep -c '^- \[' | sed 's/^/index lines in the context: /')

cd "$repo"
hyperfine -N --warmup 3 --runs "${RUNS:-40}" \
  -n main-session-start "$BASELINE session-start --hook qwen" \
  -n gate-session-start "$TEAMMEM session-start --hook qwen" \
  -n main-context "$BASELINE context" \
  -n gate-context "$TEAMMEM context"
