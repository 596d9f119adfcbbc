#!/usr/bin/env bash
# The cost of teammem's reference-transaction hook in a repository of 100,000 files.
#
#   scripts/bench-reference-transaction.sh          # builds target/release/teammem first
#   TEAMMEM=/path/to/teammem scripts/bench-reference-transaction.sh
#
# Git runs the hook for every ref transaction. Measured side by side (hyperfine), each against
# the same command with only the pre-commit and pre-merge-commit hooks installed:
# 1. `git commit` of one code file (pre-commit runs in both; the hook adds one check of the new
#    commit against its parent).
# 2. `git cherry-pick` of a commit that changes a team memory (no commit hook runs at all without
#    the reference-transaction hook).
# 3. `git update-ref` of a remote-tracking ref (what a fetch does): the hook's shell filter only.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${TEAMMEM:-}" ]; then
  cargo build --release --quiet --manifest-path "$root/Cargo.toml"
  TEAMMEM="$root/target/release/teammem"
fi
command -v hyperfine >/dev/null || { echo "hyperfine is needed (apt-get install hyperfine)" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL="$work/gitconfig" HOME="$work"
export QWEN_CODE_MEMORY_BASE_DIR="$work/qwen"
git config --file "$work/gitconfig" user.name Bench
git config --file "$work/gitconfig" user.email bench@example.com
git config --file "$work/gitconfig" init.defaultBranch main

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
git -C "$big" reset -q --hard
mkdir -p "$big/.qwen/team-memory/project"
for n in $(seq 1 10); do
  printf -- '---\nname: Memory %s\ndescription: What memory %s records\ntype: project\n---\nBody %s.\n' \
    "$n" "$n" "$n" > "$big/.qwen/team-memory/project/memory-$n.md"
done
(cd "$big" && "$TEAMMEM" index --scope team >/dev/null && git add .qwen && git commit -qm team)
echo "files in HEAD: $(git -C "$big" ls-files | wc -l)"

# A branch whose commit changes a memory, to cherry-pick.
git -C "$big" checkout -q -b side
printf 'More.\n' >> "$big/.qwen/team-memory/project/memory-1.md"
(cd "$big" && "$TEAMMEM" index --scope team >/dev/null && git commit -qam "edit memory 1")
git -C "$big" checkout -q main

# Two hook folders: teammem's three hooks, and the same without reference-transaction.
(cd "$big" && "$TEAMMEM" install-hooks >/dev/null)
with="$big/.git/hooks"
without="$work/hooks-without"
mkdir -p "$without"
cp "$with/pre-commit" "$with/pre-merge-commit" "$without/"
base=$(git -C "$big" rev-parse HEAD)

cd "$big"
hyperfine --warmup 2 --runs "${RUNS:-20}" \
  --prepare "git -c core.hooksPath=$without reset -q --hard $base" \
  -n "commit, without reference-transaction" "git -c core.hooksPath=$without commit -q --allow-empty -m x" \
  -n "commit, with reference-transaction" "git -c core.hooksPath=$with commit -q --allow-empty -m x" \
  -n "cherry-pick, without reference-transaction" "git -c core.hooksPath=$without cherry-pick side" \
  -n "cherry-pick, with reference-transaction" "git -c core.hooksPath=$with cherry-pick side" \
  -n "update-ref refs/remotes, without" "git -c core.hooksPath=$without update-ref refs/remotes/origin/main $base" \
  -n "update-ref refs/remotes, with" "git -c core.hooksPath=$with update-ref refs/remotes/origin/main $base"
