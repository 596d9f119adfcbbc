#!/usr/bin/env bash
# Benchmarks of `teammem check` and `teammem review` on generated repositories (hyperfine).
#
#   scripts/bench-check.sh            # builds target/release/teammem, then runs all three
#   TEAMMEM=/path/to/teammem scripts/bench-check.sh
#   BENCH_DIR=/tmp/fixtures scripts/bench-check.sh   # keep the generated repositories
#   BEFORE=/path/to/old/teammem scripts/bench-check.sh  # also time an older build's check
#                                                     # --range, --staged and --all, side by side
#
# 1. check --staged: 10 staged memories in a repository whose index holds 100,000 files
#    (goal: <= 100 ms).
# 2. check --range over 1,000 commits that each change a team memory (goal: <= 2 s).
# 3. review of 1,000 changed memories (goal: <= 1 s).
# 4. check --all of the same 1,000 memories (HEAD's tree, every file checked on every core).
# Fixtures are built with `git fast-import` in a temp folder that is removed afterwards.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${TEAMMEM:-}" ]; then
  cargo build --release --quiet --manifest-path "$root/Cargo.toml"
  TEAMMEM="$root/target/release/teammem"
fi
command -v hyperfine >/dev/null || { echo "hyperfine is needed (apt-get install hyperfine)" >&2; exit 2; }

# BENCH_DIR=DIR keeps the fixtures in DIR (it must not exist yet) for profiling.
if [ -n "${BENCH_DIR:-}" ]; then
  mkdir "$BENCH_DIR"
  work=$(cd "$BENCH_DIR" && pwd)
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL="$work/gitconfig" HOME="$work"
export QWEN_CODE_MEMORY_BASE_DIR="$work/qwen"
git config --file "$work/gitconfig" user.name Bench
git config --file "$work/gitconfig" user.email bench@example.com
git config --file "$work/gitconfig" init.defaultBranch main

memory() { # memory NAME N BODY-SUFFIX
  printf -- '---\nname: Memory %s\ndescription: What memory %s records\ntype: project\n---\nThe service %s keeps its queue depth below %s.\nWhy: an incident in week %s.\n%s\n' \
    "$2" "$2" "$2" "$2" "$2" "$3"
}

# --- 1. check --staged in a 100,000-file repository -------------------------------------------
big="$work/big"
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
for n in $(seq 1 10); do memory "$n" "$n" "" > "$big/.qwen/team-memory/project/memory-$n.md"; done
(cd "$big" && "$TEAMMEM" index --scope team >/dev/null && git add .qwen)
echo "index entries: $(git -C "$big" ls-files | wc -l)"
(cd "$big" && "$TEAMMEM" check --staged)

# --- 2. check --range over 1,000 commits --------------------------------------------------------
hist="$work/history"
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
for c in range(1000):
    n = c % 100
    data = memory(n, "Revision %d of this memory." % c)
    out.append(b"commit refs/heads/main\ncommitter Bench <bench@example.com> %d +0000\ndata 7\nchange\n"
               % (t + c + 1))
    out.append(b"M 100644 inline .qwen/team-memory/project/memory-%d.md\ndata %d\n%s\n\n" % (n, len(data), data))
subprocess.run(["git", "-C", repo, "fast-import", "--quiet"], input=b"".join(out), check=True)
PY
git -C "$hist" tag base main~1000
git -C "$hist" checkout -q main
(cd "$hist" && "$TEAMMEM" index --scope team >/dev/null && git add .qwen && git commit -q -m index)
echo "commits in range: $(git -C "$hist" rev-list --count base..main)"
(cd "$hist" && "$TEAMMEM" check --range base..main | tail -1)

# --- 3. review of 1,000 changed memories ---------------------------------------------------------
rev="$work/review"
git init -q "$rev"
mkdir -p "$rev/.qwen/team-memory/project"
for n in $(seq 1 1000); do memory "$n" "$n" "" > "$rev/.qwen/team-memory/project/memory-$n.md"; done
(cd "$rev" && "$TEAMMEM" index --scope team >/dev/null && git add -A && git commit -q -m base && git tag base)
for n in $(seq 1 1000); do memory "$n" "$n" "Reviewed again in the spring." > "$rev/.qwen/team-memory/project/memory-$n.md"; done
(cd "$rev" && "$TEAMMEM" index --scope team >/dev/null && git add -A && git commit -q -m "change all")
(cd "$rev" && "$TEAMMEM" review base..main | sed -n 3p)

runs=(
  -n "check --staged (10 memories, 100,000-file index)" "$TEAMMEM -C $big check --staged"
  -n "check --range (1,000 commits)" "$TEAMMEM -C $hist check --range base..main"
  -n "review (1,000 changed memories)" "$TEAMMEM -C $rev review base..main"
  -n "check --all (1,000 memories)" "$TEAMMEM -C $rev check --all"
)
if [ -n "${BEFORE:-}" ]; then
  runs+=(
    -n "BEFORE check --staged" "$BEFORE -C $big check --staged"
    -n "BEFORE check --range" "$BEFORE -C $hist check --range base..main"
    -n "BEFORE check --all" "$BEFORE -C $rev check --all"
  )
fi
hyperfine -N -i --warmup 3 --min-runs 20 "${runs[@]}"
# libgit2 loads the whole CA bundle when it initialises OpenSSL (tens of milliseconds with
# OpenSSL 3), whatever the command does. These runs point OpenSSL at an empty bundle to show
# what the checks themselves cost.
echo "--- the same without libgit2's CA-bundle load (SSL_CERT_FILE=/dev/null)"
SSL_CERT_FILE=/dev/null SSL_CERT_DIR=/nonexistent hyperfine -N -i --warmup 3 --min-runs 20 "${runs[@]}"
