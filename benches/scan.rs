//! Scanner speed: `scan_text` throughput on memory-like markdown with few secrets, and a scan of
//! a team folder of 1,000 memories (library call, after the process has started).
//!
//! `cargo bench --bench scan`

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use teammem::ops::Project;
use teammem::secrets;

const WORDS: &[&str] = &[
    "the",
    "team",
    "agreed",
    "to",
    "run",
    "integration",
    "tests",
    "against",
    "a",
    "real",
    "database",
    "because",
    "mocked",
    "passed",
    "while",
    "migration",
    "failed",
    "deploy",
    "pipeline",
    "staging",
    "cluster",
    "review",
    "release",
    "branch",
    "token",
    "refresh",
    "session",
    "secret",
    "manager",
    "password",
    "policy",
    "rotation",
    "key",
    "config:",
    "see",
    "https://docs.example.com/runbook",
    "cache",
    "queue",
    "retry",
    "worker",
    "index",
    "query",
];

/// A deterministic generator of memory-like prose.
struct Prose(u64);

impl Prose {
    fn word(&mut self) -> &'static str {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        WORDS[(self.0 >> 33) as usize % WORDS.len()]
    }

    fn paragraph(&mut self) -> String {
        let n = 40 + (self.0 >> 40) as usize % 60;
        (0..n).map(|_| self.word()).collect::<Vec<_>>().join(" ") + ".\n\n"
    }

    fn memory(&mut self, i: usize) -> String {
        let mut text = format!(
            "---\nname: Memory {i}\ndescription: What the team learned, number {i}\ntype: project\n---\n"
        );
        for _ in 0..1 + i % 3 {
            text.push_str(&self.paragraph());
        }
        text
    }
}

fn bench_scan_text(c: &mut Criterion) {
    let mut prose = Prose(7);
    let mut text = String::new();
    let mut i = 0;
    while text.len() < 4_000_000 {
        text.push_str(&prose.memory(i));
        if i % 500 == 0 {
            text.push_str("Deploy key: AKIAQ3RZ7XJ2LMNPK4ST\n");
        }
        i += 1;
    }
    let mut group = c.benchmark_group("scan_text");
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("4MB memory markdown", |b| {
        b.iter(|| secrets::scan_text(black_box(&text)))
    });
    group.finish();
}

fn bench_team_folder(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let team: PathBuf = dir.path().join("team-memory");
    let mut prose = Prose(11);
    for i in 0..1000 {
        let folder = team.join(["user", "feedback", "project", "reference"][i % 4]);
        std::fs::create_dir_all(&folder).expect("folder");
        std::fs::write(folder.join(format!("memory-{i}.md")), prose.memory(i)).expect("write");
    }
    let project = Project::open(dir.path()).expect("project");
    c.bench_function("scan team folder of 1,000 memories", |b| {
        b.iter(|| {
            teammem::ops::scan(&project, dir.path(), std::slice::from_ref(&team)).expect("scan")
        })
    });
}

criterion_group!(benches, bench_scan_text, bench_team_folder);
criterion_main!(benches);
