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
#
# Issue #40 (neutralise, then detect): one memory in ten links an unknown host, an image and a
# reference definition, one in twenty is written in another language, so the link transform and
# the normalised second pass run as they would on a real folder; `context --query` adds the
# recall door. The size of what each build delivers is printed too (goal: no more than the
# baseline's time plus 10%). A baseline of the branch point without a release build of its own:
#
#   git archive <base> | tar -x -C /tmp/gate-base
#   cp -a target/debug /tmp/gate-base-target/   # its own copied target dir: only teammem rebuilds
#   (cd /tmp/gate-base && CARGO_TARGET_DIR=/tmp/gate-base-target cargo build --bin teammem)
#   TEAMMEM=target/debug/teammem BASELINE=/tmp/gate-base-target/debug/teammem scripts/bench-gate.sh
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
    if n % 10 == 3:
        body += ("The dashboard ![status](https://grafana.internal.example/d/%d.png?panel=2) and "
                 "[runbook][rb%d].\n[rb%d]: https://wiki.internal.example/ops/%d?tab=steps\n" % (n, n, n, n))
    if n % 20 == 7:
        body += "Дашборд очереди в вики; 队列深度保持在 %d 以下。\n" % (n * 7)
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
query="queue depth dashboard runbook service incident"
for bin in "$BASELINE" "$TEAMMEM"; do
  echo "$bin: session-start $("$bin" session-start --hook qwen | wc -c) bytes," \
    "context --query $("$bin" context --query "$query" | wc -c) bytes"
done
hyperfine -N --warmup 3 --runs "${RUNS:-40}" \
  -n main-session-start "$BASELINE session-start --hook qwen" \
  -n gate-session-start "$TEAMMEM session-start --hook qwen" \
  -n main-context "$BASELINE context" \
  -n gate-context "$TEAMMEM context" \
  -n main-context-query "$BASELINE context --query '$query'" \
  -n gate-context-query "$TEAMMEM context --query '$query'"
