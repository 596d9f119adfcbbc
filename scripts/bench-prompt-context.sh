#!/usr/bin/env bash
# `teammem prompt-context` (the UserPromptSubmit hook), whole process, at 1,000 and 10,000 team
# memories: p50 and p90 wall time over RUNS runs (default 60), each run a new session and one of
# ten prompts in turn, as a client runs the hook (JSON on stdin, output on stdout). The first
# runs (not counted) build the recall index and the gate's caches, as the first prompt of a
# project does. Goal: p50 <= 20 ms at 10,000.
#
#   scripts/bench-prompt-context.sh                  # builds this branch (release)
#   TEAMMEM=/path/to/teammem scripts/bench-prompt-context.sh
#   BASELINE=/path/to/old/teammem TEAMMEM=... scripts/bench-prompt-context.sh
#       # both builds by turns (old, new, new, old, ...) on the same fixtures
#   MCP=1 ... scripts/bench-prompt-context.sh
#       # each build's own `teammem mcp` runs beside its turns, as in a session whose client
#       # has the MCP server (install-agent sets both up): it can vouch for the recall index
#
# Release builds with fat LTO take long on a small machine; the numbers in the notes were taken
# with CARGO_PROFILE_RELEASE_LTO=thin CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${TEAMMEM:-}" ]; then
  cargo build --release --quiet --manifest-path "$root/Cargo.toml"
  TEAMMEM="$root/target/release/teammem"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL="$work/gitconfig" HOME="$work"
export QWEN_CODE_MEMORY_BASE_DIR="$work/qwen"
git config --file "$work/gitconfig" user.name Bench
git config --file "$work/gitconfig" user.email bench@example.com
git config --file "$work/gitconfig" init.defaultBranch main

for count in ${COUNTS:-1000 10000}; do
  repo="$work/repo-$count"
  git init -q "$repo"
  python3 - "$repo/.qwen/team-memory" "$count" <<'PY'
import os, random, sys
team, count = sys.argv[1], int(sys.argv[2])
random.seed(count)
kinds = ["user", "feedback", "project", "reference"]
topics = ["postgres", "migration", "queue", "billing", "deploy", "release", "cache", "auth",
          "kafka", "frontend", "latency", "backup", "terraform", "oncall", "flaky", "invoice"]
words = ("service keeps its depth below limit see docs ops run the check before merging every "
         "change touches config owner team rotates weekly alert fires when error budget").split()
for n in range(count):
    kind = kinds[n % 4]
    a, b = random.sample(topics, 2)
    os.makedirs(os.path.join(team, kind), exist_ok=True)
    body = " ".join(random.choice(words) for _ in range(60)) + "\n"
    text = ("---\nname: %s and %s note %d\ndescription: What note %d records about %s\n"
            "type: %s\n---\n%s %s %s\n\nWhy: incident %d.\n" % (a, b, n, n, a, kind, body, a, b, n))
    with open(os.path.join(team, kind, "note-%05d.md" % n), "w") as f:
        f.write(text)
PY
  (cd "$repo" && "$TEAMMEM" index --scope team >/dev/null && git add -A && git commit -qm memories)
  python3 - "$TEAMMEM" "$repo" "$count" "${RUNS:-60}" "${BASELINE:-}" <<'PY'
import json, os, resource, subprocess, sys, time
teammem, repo, count, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
builds = [("baseline", sys.argv[5])] if sys.argv[5] else []
builds.append(("this build", teammem))
prompts = [
    "Why did the postgres migration fail in staging?",
    "How do we deploy the billing service?",
    "The kafka queue latency is high again, what do we know?",
    "Where are the terraform backups kept?",
    "Who owns the oncall rotation for auth?",
    "Fix the flaky frontend cache test",
    "What is our release process for invoices?",
    "Is there a runbook for the latency alert?",
    "How does the auth cache get invalidated?",
    "Plan the migration of the invoice queue to kafka",
]
def env_of(teammem):
    # Each build keeps its own state (gate and recall caches, sessions, usage).
    return dict(os.environ, QWEN_CODE_MEMORY_BASE_DIR=os.environ["QWEN_CODE_MEMORY_BASE_DIR"]
                + "-" + str(abs(hash(teammem))))
servers = []
if os.environ.get("MCP") == "1":
    for name, binary in builds:
        servers.append(subprocess.Popen([binary, "mcp"], cwd=repo, env=env_of(binary),
                                        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL))
    time.sleep(1)
def run(i, teammem):
    payload = json.dumps({"session_id": "bench-%d" % i, "hook_event_name": "UserPromptSubmit",
                          "cwd": repo, "prompt": prompts[i % len(prompts)]})
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    env = env_of(teammem)
    out = subprocess.run([teammem, "prompt-context", "--hook", "claude"], cwd=repo,
                         input=payload.encode(), capture_output=True, env=env)
    took = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu.append((after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000)
    if out.returncode != 0:
        sys.exit("prompt-context failed: %s" % out.stderr.decode())
    return took, out.stdout
results = {name: ([], [], [0]) for name, _ in builds}
cpu = []
for name, binary in builds:
    for i in range(5):                  # warm-up: the index and caches are built
        run(10_000 + i, binary)
for i in range(runs):
    for name, binary in builds if i % 2 == 0 else builds[::-1]:
        cpu.clear()
        took, out = run(i, binary)
        times, cpus, delivered = results[name]
        times.append(took)
        cpus.extend(cpu)
        if out:
            ctx = json.loads(out)["hookSpecificOutput"]["additionalContext"]
            delivered[0] += ctx.count("<memory-data")
for server in servers:
    server.kill()
    server.wait()
pick = lambda xs, q: sorted(xs)[min(len(xs) - 1, int(q * len(xs)))]
for name, _ in builds:
    times, cpus, delivered = results[name]
    print("%6s memories%s, %s: wall p50 %.1f ms, p90 %.1f ms, min %.1f ms; CPU (user+sys) p50 %.1f ms, "
          "p90 %.1f ms; %d runs, %.1f memories a turn"
          % (count, " (MCP server running)" if servers else "", name, pick(times, 0.5), pick(times, 0.9), min(times), pick(cpus, 0.5),
             pick(cpus, 0.9), runs, delivered[0] / runs))
PY
done
