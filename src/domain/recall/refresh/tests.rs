use super::*;
use crate::domain::recall::scoring::points;
use proptest::prelude::*;

const WORDS: [&str; 8] = [
    "deploy",
    "cache",
    "schema",
    "postgres",
    "migration",
    "release",
    "the",
    "feedback",
];
const TYPES: [&str; 4] = ["user", "feedback", "project", "reference"];

/// One memory: type, title words, body words, and its age in days.
type Memory = (usize, Vec<usize>, Vec<usize>, u64);

#[test]
fn equal_scores_prefer_the_memory_read_or_cited_lately_then_often() {
    let stamp = Stamp {
        size: 1,
        mtime_ns: 0,
        ctime_ns: 0,
        ino: 1,
    };
    let candidate = |rel: &str, used: Used| {
        let mut c = Candidate::from_index(
            rel,
            (MemoryType::Project, stamp, [1; FIELDS]),
            Vec::new(),
            (0, ScopeKind::Team),
        );
        c.points = 150;
        c.used = used;
        c
    };
    let used = |day: i64, times: u64| Used {
        day: Some(day),
        times,
    };
    let mut candidates = vec![
        candidate("a-never-used.md", Used::default()),
        candidate("b-used-long-ago.md", used(19_000, 9)),
        candidate("c-used-today-once.md", used(20_000, 1)),
        candidate("d-used-today-often.md", used(20_000, 4)),
    ];
    // A higher score still wins over any use.
    let mut better = candidate("e-scores-higher.md", Used::default());
    better.points = 151;
    candidates.push(better);
    keep_best(&mut candidates, 4);
    let order: Vec<&str> = candidates.iter().map(|c| c.rel.as_str()).collect();
    assert_eq!(
        order,
        [
            "e-scores-higher.md",
            "d-used-today-often.md",
            "c-used-today-once.md",
            "b-used-long-ago.md"
        ]
    );
    // Surfaced only (never read or cited) counts as unused.
    let surfaced = crate::domain::recall::usage::Usage {
        surfaced_count: 5,
        last_surfaced: Some(1_700_000_000),
        ..Default::default()
    };
    assert_eq!(Used::of(&surfaced), Used::default());
}

fn memory() -> impl Strategy<Value = Memory> {
    (
        0usize..4,
        prop::collection::vec(0usize..WORDS.len(), 1..4),
        prop::collection::vec(0usize..WORDS.len(), 0..12),
        0u64..3,
    )
}

/// A gather through the index, its proof checked (and the gather done again when it fails).
fn scan_indexed(
    dir: &Path,
    index_path: &Path,
    query: &Query,
    at: (usize, ScopeKind),
    settle: (Duration, usize),
) -> Result<Found, StoreError> {
    let (found, proof) =
        scan_indexed_unproven(dir, index_path, query, at, settle, None, &|_| false)?;
    match proof.map(StampProof::check) {
        None | Some(Ok(_)) => Ok(found),
        Some(Err(known)) => {
            scan_indexed_unproven(dir, index_path, query, at, settle, Some(known), &|_| false)
                .map(|f| f.0)
        }
    }
}

fn write(dir: &Path, memories: &[Memory]) {
    for (i, (kind, title, body, days)) in memories.iter().enumerate() {
        let words = |ws: &[usize]| ws.iter().map(|&w| WORDS[w]).collect::<Vec<_>>().join(" ");
        let folder = dir.join(TYPES[*kind]);
        std::fs::create_dir_all(&folder).unwrap();
        let path = folder.join(format!("m{i:03}.md"));
        let text = format!(
            "---\nname: {} {i}\ndescription: d\ntype: {}\n---\n{}\n",
            words(title),
            TYPES[*kind],
            words(body)
        );
        std::fs::write(&path, text).unwrap();
        let when = std::time::SystemTime::now() - Duration::from_secs(86_400 * days + 60);
        let file = std::fs::File::options().write(true).open(&path).unwrap();
        file.set_modified(when).unwrap();
    }
}

/// The ranking before [`Ranking`]: every memory a full candidate, scored, and the best
/// kept with [`keep_best`].
fn reference(query: &Query, founds: Vec<Found>, max: usize) -> Vec<Candidate> {
    let mut collection = Collection::default();
    let mut df = vec![0; query.tokens().len()];
    let mut candidates = Vec::new();
    for found in founds {
        assert!(found.indexed.is_none());
        collection.merge(&found.collection);
        for (sum, n) in df.iter_mut().zip(&found.df) {
            *sum += n;
        }
        candidates.extend(found.candidates);
    }
    let stats = query.stats(&collection, &df);
    for c in &mut candidates {
        c.score = query.score(&stats, c.lengths, &c.units);
        c.points = points(c.score);
        c.affinity = query.type_affinity(c.kind);
    }
    candidates.retain(|c| c.points > 0);
    keep_best(&mut candidates, max);
    candidates
}

fn shown(candidates: &[Candidate]) -> Vec<(usize, String, u32, u32, u64, Vec<FieldUnits>)> {
    candidates
        .iter()
        .map(|c| {
            let bits = c.score.to_bits();
            (
                c.order,
                c.rel.clone(),
                c.points,
                c.affinity,
                bits,
                c.units.clone(),
            )
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// Ranking the matches of an index without building their candidates keeps the same
    /// memories in the same order with the same scores as building every candidate.
    #[test]
    fn ranking_from_index_matches_equals_ranking_every_candidate(
        scopes in prop::collection::vec(prop::collection::vec(memory(), 0..40), 1..3),
        query in prop::collection::vec(0usize..WORDS.len(), 1..4),
        max in 0usize..45,
    ) {
        let tmp = tempfile::tempdir().unwrap();
        let query = Query::new(&query.iter().map(|&w| WORDS[w]).collect::<Vec<_>>().join(" "));
        let mut files = Vec::new();
        let mut indexed = Vec::new();
        let settle = (Duration::ZERO, usize::MAX);
        for (order, memories) in scopes.iter().enumerate() {
            let dir = tmp.path().join(format!("scope{order}"));
            write(&dir, memories);
            let index = tmp.path().join(format!("scope{order}.idx"));
            let at = (order, ScopeKind::Private);
            files.push(scan_files(&dir, &query, order, ScopeKind::Private).unwrap());
            scan_indexed(&dir, &index, &query, at, settle).unwrap();
            let found = scan_indexed(&dir, &index, &query, at, settle).unwrap();
            prop_assert_eq!(found.report.from_index, memories.len());
            indexed.push(found);
        }
        let expected = shown(&reference(&query, files, max));
        let mut ranking = Ranking::new(&query);
        for found in indexed {
            ranking.add(found);
        }
        let (_, best) = ranking.best(&query, max, &|_, _| Used::default());
        prop_assert_eq!(shown(&best), expected);
    }
}
