//! Index rebuild: load every memory file of a scope, render MEMORY.md, write it when it changed.
//!
//! Run with `cargo bench --bench index`. The goal for 10,000 memories is under 100 ms on the
//! 2-core CI machine; `scripts/bench-index.sh` measures the whole command with its peak memory.

use std::fs;
use std::path::Path;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use teammem::{memory_index, scope::INDEX_FILE, store};

const TYPES: [&str; 4] = ["user", "feedback", "project", "reference"];

/// Writes `n` realistic memories (a few hundred bytes each, some sharing a description).
fn generate(dir: &Path, n: usize) {
    for i in 0..n {
        let kind = TYPES[i % 4];
        let folder = dir.join(kind);
        fs::create_dir_all(&folder).unwrap();
        let description = if i % 10 == 0 {
            "Shared convention for the whole team".to_string()
        } else {
            format!("Memory number {i} about the {kind} side of the service")
        };
        let text = format!(
            "---\nname: Memory {i}\ndescription: {description}\ntype: {kind}\nkeywords: [bench, m{i}]\n---\n\
             Integration tests connect to a real Postgres instance (number {i}).\n\n\
             Why: a mocked test passed while the real migration failed.\n\
             How to apply: any test that touches SQL starts the test database.\n"
        );
        fs::write(folder.join(format!("memory-{i:05}.md")), text).unwrap();
    }
}

/// Load + render + write-if-changed, as `teammem index` does.
fn rebuild(dir: &Path) -> bool {
    let (entries, invalid) = store::load_index_entries(dir, "").unwrap();
    assert!(invalid.is_empty());
    store::write_index(dir, &memory_index::render(&entries)).unwrap()
}

fn bench(c: &mut Criterion) {
    for n in [200, 10_000] {
        let dir = tempfile::tempdir().unwrap();
        generate(dir.path(), n);
        let mut group = c.benchmark_group(format!("index rebuild, {n} memories"));
        if n > 1_000 {
            group.sample_size(20);
        }
        group.bench_function("unchanged index", |b| {
            rebuild(dir.path());
            b.iter(|| assert!(!rebuild(dir.path())))
        });
        group.bench_function("index rewritten", |b| {
            b.iter_batched(
                || fs::remove_file(dir.path().join(INDEX_FILE)).unwrap(),
                |()| assert!(rebuild(dir.path())),
                BatchSize::PerIteration,
            )
        });
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
