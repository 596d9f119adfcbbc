//! Recall over 10,000 memories in a long-lived process: a query on the live handle
//! (`ops::LiveRecall`, nothing noted, and after one memory was noted as changed) beside
//! `recall_unaged`, which reads the index file and stats every memory per query.
//!
//! Run with `cargo bench --bench recall_live`. The MCP server's goal for a warm
//! `memory_search` is 5 ms per call, of which this is the recall part.

use std::fs;
use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use teammem::ops::{LiveRecall, Project, recall_live, recall_unaged};
use teammem::scope::{Environment, ScopeKind};

const TYPES: [&str; 4] = ["user", "feedback", "project", "reference"];
const WORDS: [&str; 12] = [
    "build", "deploy", "cache", "index", "parser", "server", "client", "token", "schema", "query",
    "release", "branch",
];

/// Writes `n` memories of about a kilobyte, one in a thousand about a postgres migration.
fn generate(dir: &Path, n: usize) {
    let word = |i: usize, k: usize| WORDS[(i * 7 + k * 13) % WORDS.len()];
    for i in 0..n {
        let kind = TYPES[i % 4];
        fs::create_dir_all(dir.join(kind)).unwrap();
        let body: Vec<String> = (0..8)
            .map(|line| {
                (0..12)
                    .map(|k| word(i, line * 12 + k))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        let extra = if i % 1000 == 0 {
            "\nThe postgres migration runs before the deploy.\n"
        } else {
            ""
        };
        let text = format!(
            "---\nname: {} {} {i}\ndescription: {} {} {}\ntype: {kind}\n---\n{}{extra}\nWhy: measured.\n",
            word(i, 1),
            word(i, 2),
            word(i, 3),
            word(i, 4),
            word(i, 5),
            body.join("\n")
        );
        fs::write(dir.join(kind).join(format!("memory-{i:05}.md")), text).unwrap();
    }
}

fn bench(c: &mut Criterion) {
    let tmp = tempfile::tempdir().unwrap();
    let env = Environment {
        base_dir: Some(tmp.path().join("base")),
        ..Default::default()
    };
    let project = Project::open_with(tmp.path(), env).unwrap();
    let scopes = [ScopeKind::User];
    let dir = tmp.path().join("base/memories");
    generate(&dir, 10_000);
    // Older than the recall index's settle window, as memories are in real life.
    std::thread::sleep(std::time::Duration::from_millis(2_100));
    let mut live = LiveRecall::open(&project, &scopes).unwrap();
    let mut group = c.benchmark_group("recall over 10,000 memories");
    group.sample_size(20);
    for query in ["postgres migration", "deploy cache schema"] {
        group.bench_function(format!("live, nothing noted: {query}"), |b| {
            b.iter(|| recall_live(&project, &mut live, &scopes, query, 5, 1200).unwrap())
        });
        group.bench_function(format!("live, one memory noted: {query}"), |b| {
            let changed = dir.join("project/memory-00002.md");
            b.iter(|| {
                live.note_changed(&changed);
                recall_live(&project, &mut live, &scopes, query, 5, 1200).unwrap()
            })
        });
        group.bench_function(format!("recall_unaged: {query}"), |b| {
            b.iter(|| recall_unaged(&project, &scopes, query, 5, 1200).unwrap())
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
