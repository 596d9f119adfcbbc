#!/usr/bin/env bash
# Session start with 1,000 team memories, side by side in one hyperfine run: this build's
# `session-start` (gate verdicts kept between runs), another build's (BASELINE, e.g. main) and
# this build's no-op `sync` of the same repository — what session start costs beyond syncing.
# Goal: <= 40 ms wall.
#
#   BASELINE=/path/to/main/teammem scripts/bench-session-start.sh
#   TEAMMEM=/path/to/teammem BASELINE=... scripts/bench-session-start.sh
#   HYPERFINE_JSON=/tmp/ss.json BASELINE=... scripts/bench-session-start.sh
#       # also every run's time in that file (for p50/p90; hyperfine prints the mean)
#
# The repository has a bare remote on the local disk and an upstream, so every sync is a no-op
# that still looks at the remote. `--hook claude` is used for both builds (the Qwen hook now
# leaves out the private and user indexes Qwen Code shows itself).
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
git init -q --bare "$work/remote.git"
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
(cd "$repo" && "$TEAMMEM" index --scope team >/dev/null && git add -A && git commit -qm memories \
  && git remote add origin "$work/remote.git" && git push -q -u origin main)
echo "team memories: $(find "$repo/.qwen/team-memory" -name 'memory-*.md' | wc -l)"
cd "$repo"
for bin in "$BASELINE" "$TEAMMEM"; do
  "$bin" session-start --hook claude </dev/null | grep -o 'Team memory sync: [^"]*' | head -1 || true
done

hyperfine -N --warmup 5 --runs "${RUNS:-60}" ${HYPERFINE_JSON:+--export-json "$HYPERFINE_JSON"} \
  -n "baseline session-start" "$BASELINE session-start --hook claude" \
  -n "this session-start" "$TEAMMEM session-start --hook claude" \
  -n "no-op sync" "$TEAMMEM sync"
