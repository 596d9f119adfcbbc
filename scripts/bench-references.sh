#!/usr/bin/env bash
# Session start with 1,000 team memories naming 3,000 paths (issue 39, goal: <= 10 ms added),
# this branch against a build of `main`, run by turns (old, new, new, old, ...) so a changing
# load weighs on both alike; per command the median wall time and the median CPU time
# (user + system, from wait4), which a loaded machine disturbs far less:
#   - "named": every path named exists at HEAD (3,000 lookups in HEAD's tree);
#   - "unnamed": the same memories, each path written as a word of the same length that is no
#     path (`src-module_3-part_3_0-rs`): the same bytes to read and gate, nothing to check.
#     "named" minus "unnamed" of the same build is what references cost;
#   - "gone": "named", after 10 of the named files were deleted 200 commits ago: the first
#     session start walks history for the commit that removed each, later ones (same HEAD)
#     read that from the saved references.json.
# Sync is switched off (QWEN_CODE_MEMORY_TEAM_SYNC=0): what is timed is reading, gating and
# rendering the memories, and now checking what they name.
#
# Usage: scripts/bench-references.sh [N]   (N memories, default 1000; each names 3 paths)
#        RUNS=40 (timed runs per build and fixture, after 3 not timed); KEEP=1 keeps the fixtures
#        BIN=... OLD_BIN=... scripts/bench-references.sh   (time these binaries, build nothing)
#        BASE_REV=<rev> ...   (the base to build, default main)
# Both builds use thin LTO in 16 codegen units (CARGO_PROFILE_RELEASE_LTO=thin,
# CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16) to spare a loaded machine the fat-LTO link; the base is
# `git archive $BASE_REV` in /tmp/refs-base, with a copy of this tree's release target folder so
# only the crate itself is compiled again.
set -euo pipefail

N="${1:-1000}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
export CARGO_PROFILE_RELEASE_LTO=thin CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16
if [ -z "${BIN:-}" ]; then
  cargo build --release --quiet --manifest-path "$ROOT/Cargo.toml"
  BIN="$ROOT/target/release/teammem"
fi
if [ -z "${OLD_BIN:-}" ]; then
  BASE=/tmp/refs-base
  rm -rf "$BASE"
  mkdir -p "$BASE/target"
  git -C "$ROOT" archive "${BASE_REV:-main}" | tar -x -C "$BASE"
  cp -a "$ROOT/target/release" "$BASE/target/"
  cargo build --release --quiet --manifest-path "$BASE/Cargo.toml"
  OLD_BIN="$BASE/target/release/teammem"
fi

WORK="$(mktemp -d)"
trap '[ -n "${KEEP:-}" ] && echo "fixtures kept in $WORK" || rm -rf "$WORK"' EXIT
export HOME="$WORK/home" QWEN_CODE_MEMORY_BASE_DIR="$WORK/home/.qwen"
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL="$WORK/home/.gitconfig"
export QWEN_CODE_MEMORY_TEAM=1 QWEN_CODE_MEMORY_TEAM_SYNC=0
mkdir -p "$HOME"
printf '[user]\n\tname = Bench\n\temail = bench@example.com\n' > "$GIT_CONFIG_GLOBAL"

REPO="$WORK/project"
mkdir -p "$REPO"
git -C "$REPO" init -q -b main
echo "Generating $N team memories naming $((3 * N)) paths of $((3 * N)) source files"
python3 - "$REPO" "$N" <<'PY'
import os, sys
repo, n = sys.argv[1], int(sys.argv[2])
def write(rel, text):
    path = os.path.join(repo, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
source = "".join(f"// line {k}\n" for k in range(1, 61))
unnamed = repo + "-unnamed"
for i in range(n):
    a, b, c = (f"src/module_{i % 40}/part_{i}_{k}.rs" for k in range(3))
    for p in (a, b, c):
        write(p, source)
    word = lambda p: p.replace("/", "-").replace(".", "-")
    a2, b2, c2 = (word(p) for p in (a, b, c))
    path = os.path.join(unnamed, f".qwen/team-memory/project/memory-{i:05d}.md")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(
            f"---\nname: Memory {i} about the ingest pipeline\n"
            f"description: How stage {i} of the ingest pipeline is wired\ntype: project\n---\n"
            f"Stage {i} reads its settings in `{a2}` and validates them in {b2}:12.\n\n"
            f"Why: the parser in {c2} rejects empty batches, see "
            f"https://github.com/acme/ingest/blob/main/{a2}#L3 and and/or I/O notes.\n"
            f"How to apply: run the stage tests before touching `{a2}`.\n"
        )
    write(
        f".qwen/team-memory/project/memory-{i:05d}.md",
        f"---\nname: Memory {i} about the ingest pipeline\n"
        f"description: How stage {i} of the ingest pipeline is wired\ntype: project\n---\n"
        f"Stage {i} reads its settings in `{a}` and validates them in {b}:12.\n\n"
        f"Why: the parser in {c} rejects empty batches, see "
        f"https://github.com/acme/ingest/blob/main/{a}#L3 and and/or I/O notes.\n"
        f"How to apply: run the stage tests before touching `{a}`.\n",
    )
PY
git -C "$REPO" add -A
git -C "$REPO" commit -q -m "memories and code"
(cd "$REPO" && "$BIN" index --scope team >/dev/null)
git -C "$REPO" add -A
git -C "$REPO" commit -q -m index

# The same repository with the memories that name nothing.
UNNAMED="$WORK/unnamed"
git clone -q "$REPO" "$UNNAMED"
rm -rf "$UNNAMED/.qwen/team-memory/project"
cp -r "$REPO-unnamed/.qwen/team-memory/project" "$UNNAMED/.qwen/team-memory/"
(cd "$UNNAMED" && "$BIN" index --scope team >/dev/null)
git -C "$UNNAMED" add -A
git -C "$UNNAMED" commit -q -m "memories that name nothing"

GONE="$WORK/gone"
git clone -q "$REPO" "$GONE"
for i in $(seq 0 9); do git -C "$GONE" rm -q "src/module_$((i % 40))/part_${i}_0.rs"; done
git -C "$GONE" commit -q -m "drop ten parts"
for i in $(seq 1 200); do git -C "$GONE" commit -q --allow-empty -m "filler $i"; done

# The new build must say what it checked; the old one says nothing of it.
(cd "$REPO" && "$BIN" session-start) > "$WORK/holding.txt"
(cd "$GONE" && "$BIN" session-start) > "$WORK/gone.txt"
(cd "$UNNAMED" && "$BIN" session-start) > "$WORK/unnamed.txt"
grep '^References:' "$WORK/holding.txt" || {
  echo "the new build printed no References line" >&2
  exit 1
}
grep -A2 '^References:' "$WORK/gone.txt" || true
if grep -q '^References:' "$WORK/unnamed.txt"; then
  echo "the unnamed memories name paths" >&2
  exit 1
fi

python3 - "$OLD_BIN" "$BIN" "$REPO" "$UNNAMED" "$GONE" "${RUNS:-40}" <<'PY'
import os, statistics, subprocess, sys, time
old, new, named, unnamed, gone, runs = sys.argv[1:7]
runs = int(runs)

def run(binary, cwd):
    # Each build keeps its own state: the gate's cache is for one binary, and alternating
    # builds over one cache would judge every memory again at every run.
    env = dict(os.environ, QWEN_CODE_MEMORY_BASE_DIR=os.environ["QWEN_CODE_MEMORY_BASE_DIR"]
               + ("-main" if binary == old else "-branch"))
    start = time.perf_counter()
    child = subprocess.Popen([binary, "session-start"], cwd=cwd, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, env=env)
    _, _, usage = os.wait4(child.pid, 0)
    child.returncode = 0
    return (time.perf_counter() - start) * 1000, (usage.ru_utime + usage.ru_stime) * 1000

print(f"load average at start: {os.getloadavg()}")
results = {}
for label, cwd in (("named", named), ("unnamed", unnamed), ("gone", gone)):
    sides = [("main", old), ("branch", new)]
    wall = {s: [] for s, _ in sides}
    cpu = {s: [] for s, _ in sides}
    for turn in range(runs + 3):
        for side, binary in sides if turn % 2 == 0 else sides[::-1]:
            w, c = run(binary, cwd)
            if turn >= 3:
                wall[side].append(w)
                cpu[side].append(c)
    for side, _ in sides:
        results[(label, side)] = (statistics.median(wall[side]), statistics.median(cpu[side]))
        w, c = results[(label, side)]
        print(f"session-start {label:<8} {side:<6}  wall median {w:6.1f} ms   CPU median {c:6.1f} ms",
              flush=True)
for side in ("main", "branch"):
    nw, nc = results[("named", side)]
    uw, uc = results[("unnamed", side)]
    print(f"references cost ({side}, named - unnamed): wall {nw - uw:+.1f} ms, CPU {nc - uc:+.1f} ms")
print(f"load average at end: {os.getloadavg()}")
PY
