#!/usr/bin/env bash
# Times `teammem index --scope team` on a generated repository of N memories (default 10,000)
# with hyperfine, and reports the peak resident memory with /usr/bin/time -v.
#   scripts/bench-index.sh [N]
# Needs hyperfine (apt-get install -y hyperfine) and GNU time (apt-get install -y time).
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-10000}"
cargo build --release --quiet
bin="$PWD/target/release/teammem"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
repo="$work/repo"
mkdir -p "$repo" "$work/base"
git -C "$repo" init -q -b main
export QWEN_CODE_MEMORY_BASE_DIR="$work/base"

# Same memories as benches/index.rs: a few hundred bytes each, one in ten sharing a description.
awk -v n="$n" -v dir="$repo/.qwen/team-memory" 'BEGIN {
  split("user feedback project reference", types, " ")
  for (t in types) system("mkdir -p " dir "/" types[t])
  for (i = 0; i < n; i++) {
    kind = types[i % 4 + 1]
    desc = (i % 10 == 0) ? "Shared convention for the whole team" : sprintf("Memory number %d about the %s side of the service", i, kind)
    f = sprintf("%s/%s/memory-%05d.md", dir, kind, i)
    printf "---\nname: Memory %d\ndescription: %s\ntype: %s\nkeywords: [bench, m%d]\n---\n", i, desc, kind, i > f
    printf "Integration tests connect to a real Postgres instance (number %d).\n\n", i > f
    printf "Why: a mocked test passed while the real migration failed.\n" > f
    printf "How to apply: any test that touches SQL starts the test database.\n" > f
    close(f)
  }
}'
cd "$repo"
echo "== $n memories in $repo/.qwen/team-memory"
"$bin" index --scope team >/dev/null

hyperfine --warmup 3 --runs 20 --export-markdown "$work/unchanged.md" \
  --command-name "index, unchanged MEMORY.md" "$bin index --scope team"
hyperfine --warmup 3 --runs 20 --prepare "rm -f .qwen/team-memory/MEMORY.md" \
  --command-name "index, MEMORY.md rewritten" "$bin index --scope team"

rm -f .qwen/team-memory/MEMORY.md
/usr/bin/time -v "$bin" index --scope team 2>"$work/time.txt" >/dev/null
grep -E "Maximum resident set size|Elapsed \(wall clock\)" "$work/time.txt"
