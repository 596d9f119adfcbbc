#!/usr/bin/env bash
# Benchmark a no-op `teammem sync` (fetch, nothing to pull, nothing to commit, nothing to push)
# over file:// and over git:// (a local git daemon), against the git CLI sequence doing the
# same job: symbolic-ref, rev-parse @{u}, rev-list, pull --ff-only, status, add, commit (only
# when something is staged), push.
#
# Usage: scripts/bench-sync.sh [WORKDIR]   (needs hyperfine and git; builds the release binary)
# Goal: teammem <= 0.3x the git CLI's time.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$(mktemp -d)}
runs=${RUNS:-30}
mkdir -p "$work"
cargo build --release --quiet --manifest-path "$root/Cargo.toml"
teammem="$root/target/release/teammem"
team=.qwen/team-memory

# Isolated git configuration: nothing from the caller's own config (hooks, fsmonitor, signing).
export HOME="$work/home" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL="$work/home/.gitconfig"
mkdir -p "$HOME"
printf '[user]\n\tname = Bench\n\temail = bench@example.com\n[init]\n\tdefaultBranch = main\n' >"$GIT_CONFIG_GLOBAL"

# A remote with 100 source files and 10 team memories.
rm -rf "$work/srv" "$work/seed" "$work/file-clone" "$work/git-clone"
mkdir -p "$work/srv"
git init -q --bare "$work/srv/team.git"
git init -q "$work/seed"
for i in $(seq 1 100); do mkdir -p "$work/seed/src"; echo "file $i" >"$work/seed/src/f$i.txt"; done
mkdir -p "$work/seed/$team/project"
for i in $(seq 1 10); do
  printf -- '---\nname: Memory %s\ndescription: What memory %s is about\ntype: project\n---\nBody.\n' \
    "$i" "$i" >"$work/seed/$team/project/memory-$i.md"
done
"$teammem" -C "$work/seed" index --scope team >/dev/null
git -C "$work/seed" add -A
git -C "$work/seed" commit -q -m seed
git -C "$work/seed" push -q "$work/srv/team.git" main

port=$((20000 + RANDOM % 20000))
git daemon --reuseaddr --export-all --enable=receive-pack --listen=127.0.0.1 --port="$port" \
  --base-path="$work/srv" "$work/srv" >/dev/null 2>&1 &
daemon=$!
trap 'kill $daemon 2>/dev/null || true' EXIT
for _ in $(seq 1 50); do (echo >/dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.1; done

git clone -q "file://$work/srv/team.git" "$work/file-clone"
git clone -q "git://127.0.0.1:$port/team.git" "$work/git-clone"

cat >"$work/git-sync.sh" <<'SCRIPT'
#!/bin/sh
# The git CLI doing what `teammem sync` does, with nothing to do.
set -e
cd "$1"
git symbolic-ref -q HEAD >/dev/null
git rev-parse -q --verify '@{u}' >/dev/null
git rev-list --count '@{u}..HEAD' >/dev/null
git pull -q --ff-only
git status --porcelain -- .qwen/team-memory >/dev/null
git add -- .qwen/team-memory
git diff --cached --quiet -- .qwen/team-memory || git commit -q -m 'chore(memory): sync team memory' -- .qwen/team-memory
git push -q 2>/dev/null
SCRIPT
chmod +x "$work/git-sync.sh"

for transport in file git; do
  clone="$work/$transport-clone"
  "$teammem" -C "$clone" sync >/dev/null
  hyperfine --warmup 3 --runs "$runs" --export-markdown "$work/$transport.md" \
    -n "teammem sync ($transport://)" "$teammem -C $clone sync" \
    -n "git CLI ($transport://)" "$work/git-sync.sh $clone"
done
cat "$work/file.md" "$work/git.md"
