use super::*;
use crate::domain::recall::index::{DocState, FileMeta, RecallIndex};
use crate::domain::scope::Environment;
use std::fs;
use std::time::SystemTime;

/// Stamps older than this are trusted in these tests; [`settle`] waits it out, so every
/// edit the test makes lands in a later file-time tick than the stamps it must change.
const TEST_SETTLE: Duration = Duration::from_millis(50);

fn settle() {
    std::thread::sleep(TEST_SETTLE + Duration::from_millis(20));
}

const WORDS: &[&str] = &[
    "postgres",
    "migration",
    "deploy",
    "cache",
    "schema",
    "release",
    "feedback",
    "rule",
    "goal",
    "Postgres",
    "POSTGRESQL",
    "café",
    "résumé",
    "ＡＢＣ",
    "abc",
    "go",
    "x1",
    "数据库",
    "迁移",
    "使用真实数据库",
    "库",
    "数",
    "テスト",
    "ｶﾀｶﾅ",
    "İstanbul",
    "x",
    "42",
    "deploy-cache",
    "tests.",
    "(schema)",
];

/// A small deterministic generator (no test may depend on the clock or on chance).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) as usize) % n
    }

    fn words(&mut self, n: usize) -> String {
        (0..n)
            .map(|_| WORDS[self.next(WORDS.len())])
            .collect::<Vec<_>>()
            .join(" ")
    }
}

const TYPES: [&str; 4] = ["user", "feedback", "project", "reference"];

/// Memory number `i`: mostly valid memories of every type, with keywords now and then,
/// a few written with YAML escapes (fields whose text the raw bytes do not hold), a few
/// with CRLF line ends, and a few invalid files.
fn memory(rng: &mut Lcg, i: usize) -> (String, String) {
    let kind = TYPES[i % 4];
    let rel = format!("{kind}/m{i:04}.md");
    let (title, description, body) = (rng.words(3), rng.words(5), rng.words(30));
    let text = match i % 23 {
        5 => format!("no frontmatter at all {body}\n"),
        7 => {
            format!("---\nname: {title}\ndescription: {description}\ntype: nonsense\n---\n{body}\n")
        }
        11 => format!(
            "---\nname: \"Post\\x67res {i}\"\ndescription: \"caf\\u00e9 {description}\"\ntype: {kind}\n---\n{body}\n"
        ),
        13 => format!(
            "---\r\nname: {title} {i}\r\ndescription: {description}\r\ntype: {kind}\r\n---\r\n{body}\r\nWhy: measured.\r\n"
        ),
        17 => format!(
            "---\nname: {title} {i}\ndescription: {description}\ntype: {kind}\nkeywords: [{}, {}]\n---\n{body}\n",
            rng.words(1),
            rng.words(1)
        ),
        _ => format!(
            "---\nname: {title} {i}\ndescription: {description}\ntype: {kind}\n---\n{body}\n"
        ),
    };
    (rel, text)
}

const QUERIES: &[&str] = &[
    "postgres",
    "postgres migration",
    "deploy cache schema",
    "Postgres feedback rule",
    "cafe resume",
    "abc",
    "数据库 迁移",
    "真实的数据",
    "库",
    "テスト",
    "カタカナ",
    "istanbul stanbul",
    "release goal project",
    "postgresql",
    "zebra",
    "42 x1",
    "when did the postgres migrations deploy",
    "Hey Postgres, deploying migrated caches!",
    "schema cache",
];

struct Fixture {
    _tmp: tempfile::TempDir,
    project: Project,
    dir: PathBuf,
}

fn fixture(n: usize) -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let env = Environment {
        base_dir: Some(tmp.path().join("base")),
        ..Default::default()
    };
    let project = Project::open_with(tmp.path(), env).unwrap();
    let dir = project.scope_dir(ScopeKind::User).unwrap();
    let mut rng = Lcg(7);
    for i in 0..n {
        let (rel, text) = memory(&mut rng, i);
        write(&dir, &rel, &text);
    }
    Fixture {
        _tmp: tmp,
        project,
        dir,
    }
}

fn write(dir: &Path, rel: &str, text: &str) {
    let path = dir.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// Rewrites a file in place with other words of the same length ("zebra" is queried).
fn edit_keeping_size(path: &Path) {
    let text = fs::read_to_string(path).unwrap();
    let edited = [
        ("postgres", "zebra!!!"),
        ("deploy", "zebra!"),
        ("cache", "zebra"),
        ("schema", "zebra!"),
    ]
    .iter()
    .find(|(from, _)| text.contains(from))
    .map(|(from, to)| text.replacen(from, to, 1))
    .unwrap_or_else(|| text.replacen("name:", "Name:", 1));
    assert_eq!(edited.len(), text.len());
    assert_ne!(edited, text);
    fs::write(path, edited).unwrap();
}

fn set_mtime(path: &Path, time: SystemTime) {
    fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(time)
        .unwrap();
}

fn index_path(f: &Fixture) -> PathBuf {
    index_file(&f.project, ScopeKind::User, &f.dir).unwrap()
}

/// Runs every query with and without the index, over the whole ranking, and checks that
/// both print the same; returns what the index did, summed over the queries.
fn same_as_reference(f: &Fixture) -> RecallIndexReport {
    same_as_reference_with(f, INDEX_BUDGET)
}

/// [`same_as_reference`], indexing at most `budget` files per query.
fn same_as_reference_with(f: &Fixture, budget: usize) -> RecallIndexReport {
    let mut report = RecallIndexReport::default();
    // The whole ranking, then the top 3 (the index keeps only each scope's best).
    for (query, max) in QUERIES.iter().flat_map(|q| [(q, 100_000), (q, 3)]) {
        let run =
            |index| recall_with(&f.project, &[ScopeKind::User], query, max, 80, index).unwrap();
        let reference = run(RecallIndexUse::Off);
        let indexed = run(RecallIndexUse::On {
            settle: TEST_SETTLE,
            budget,
        });
        let ranking = |r: &Recalled| -> Vec<String> {
            r.hits
                .iter()
                .map(|h| format!("{}:{} {}", h.scope, h.id, h.score))
                .collect()
        };
        assert_eq!(ranking(&indexed), ranking(&reference), "query {query:?}");
        assert!(
            serde_json::to_value(&indexed).unwrap() == serde_json::to_value(&reference).unwrap(),
            "query {query:?}: same ranking, different output"
        );
        if max > 3 {
            report.from_index += indexed.index.from_index;
            report.files_read += indexed.index.files_read;
            report.written += indexed.index.written;
        }
    }
    report
}

/// The queries that have tokens (a query without any reads nothing).
fn searching() -> usize {
    QUERIES
        .iter()
        .filter(|q| !Query::new(q).tokens().is_empty())
        .count()
}

#[test]
fn the_index_ranks_exactly_as_reading_every_file_through_edits_and_damage() {
    let f = fixture(200);
    settle();
    // Cold: the first query builds the index.
    let cold = same_as_reference(&f);
    assert_eq!(cold.written, 1);
    // Warm: nothing read, YAML-escaped fields included (the index holds parsed fields).
    let warm = same_as_reference(&f);
    assert_eq!(warm.written, 0);
    assert_eq!(warm.files_read, 0);
    assert_eq!(warm.from_index, 200 * searching());

    // Edits that change the size, additions (one in a new folder), deletions, renames.
    let mut rng = Lcg(99);
    for i in [1, 2, 3, 50, 51] {
        let (rel, _) = memory(&mut rng, i);
        let path = f.dir.join(&rel);
        let text = fs::read_to_string(&path).unwrap();
        fs::write(
            &path,
            text.replace("---\n", "---\n\n")
                .replacen("\n\n", "\npostgres migration 数据库\n", 1),
        )
        .unwrap();
    }
    for i in 200..203 {
        let (rel, text) = memory(&mut rng, i);
        write(&f.dir, &rel, &text);
    }
    write(
        &f.dir,
        "project/deeper/nested.md",
        "---\nname: Nested postgres\ndescription: deploy\ntype: project\n---\ncache\n",
    );
    for rel in ["user/m0000.md", "feedback/m0009.md", "project/m0010.md"] {
        fs::remove_file(f.dir.join(rel)).unwrap();
    }
    fs::rename(f.dir.join("user/m0004.md"), f.dir.join("user/a-first.md")).unwrap();
    fs::rename(
        f.dir.join("reference/m0003.md"),
        f.dir.join("feedback/m0003.md"),
    )
    .unwrap();
    // Same size, and the mtime kept to the second (only its nanoseconds and ctime move).
    let same_size = f.dir.join("project/m0006.md");
    let modified = fs::metadata(&same_size).unwrap().modified().unwrap();
    let since = modified.duration_since(SystemTime::UNIX_EPOCH).unwrap();
    edit_keeping_size(&same_size);
    let nanos = if since.subsec_nanos() == 123 {
        456
    } else {
        123
    };
    set_mtime(
        &same_size,
        SystemTime::UNIX_EPOCH + Duration::new(since.as_secs(), nanos),
    );
    // Same size and the very same mtime: only ctime tells (a CRLF file, too).
    for rel in ["feedback/m0021.md", "feedback/m0013.md"] {
        let put_back = f.dir.join(rel);
        let modified = fs::metadata(&put_back).unwrap().modified().unwrap();
        edit_keeping_size(&put_back);
        set_mtime(&put_back, modified);
        assert_eq!(
            fs::metadata(&put_back).unwrap().modified().unwrap(),
            modified
        );
    }

    // The same-size edits wrote "zebra": only a reader that saw them finds it.
    let zebra = recall_with(
        &f.project,
        &[ScopeKind::User],
        "zebra",
        100,
        80,
        RecallIndexUse::Off,
    )
    .unwrap()
    .hits
    .into_iter()
    .map(|h| h.id)
    .collect::<Vec<_>>();
    assert_eq!(
        zebra,
        ["feedback/m0013.md", "feedback/m0021.md", "project/m0006.md"]
    );

    // Right after the edits (stamps too young to trust) and once they settled.
    let fresh = same_as_reference(&f);
    assert!(fresh.files_read > 0);
    settle();
    same_as_reference(&f);
    let warm = same_as_reference(&f);
    assert_eq!(warm.written, 0);
    assert_eq!(warm.files_read, 0);

    // A damaged index is never trusted: it is rebuilt, and the answers stay right.
    let path = index_path(&f);
    let good = fs::read(&path).unwrap();
    let mut flipped = good.clone();
    let middle = flipped.len() / 2;
    flipped[middle] ^= 0x01;
    let damaged: Vec<Vec<u8>> = vec![
        flipped,
        good[..good.len() / 2].to_vec(),
        good[..good.len() - 1].to_vec(),
        good[..8].to_vec(),
        Vec::new(),
        b"not an index at all".to_vec(),
        [&good[..], b"trailing"].concat(),
    ];
    for bad in damaged {
        fs::write(&path, &bad).unwrap();
        let report = same_as_reference(&f);
        assert!(report.written >= 1);
        assert!(RecallIndex::decode(&fs::read(&path).unwrap()).is_some());
    }
    // An index that cannot be written (a folder in its place) costs speed, not answers.
    fs::remove_file(&path).unwrap();
    fs::create_dir(&path).unwrap();
    let report = same_as_reference(&f);
    assert_eq!(report.written, 0);
}

/// A warm answer comes from the index while other threads stat the memories; an edit in
/// place they find sends the query (and the work done on its answer) round once more,
/// and the answer is the one the files give.
#[test]
fn an_edit_found_by_the_stats_beside_a_warm_answer_is_answered_again() {
    // More memories than one part of stats, so that worker threads take some.
    let f = fixture(900);
    settle();
    let standard = RecallIndexUse::On {
        settle: TEST_SETTLE,
        budget: INDEX_BUDGET,
    };
    let run = |query: &str, index| {
        let mut rounds = 0;
        let (found, seen) = recall_then(
            &f.project,
            &[ScopeKind::User],
            query,
            (100, 80),
            index,
            |found| {
                rounds += 1;
                found.hits.len()
            },
        )
        .unwrap();
        assert_eq!(seen, found.hits.len());
        (found, rounds)
    };
    run("zebra", standard);
    let (warm, rounds) = run("zebra", standard);
    assert_eq!((warm.index.files_read, rounds), (0, 1));
    assert!(warm.hits.is_empty());

    // Same size and the same mtime: only ctime tells. Near the end, in a worker's part.
    let late = f.dir.join("reference/m0891.md");
    let modified = fs::metadata(&late).unwrap().modified().unwrap();
    edit_keeping_size(&late);
    set_mtime(&late, modified);
    let (seen, rounds) = run("zebra", standard);
    assert_eq!(rounds, 2);
    let ids: Vec<&str> = seen.hits.iter().map(|h| h.id.as_str()).collect();
    assert_eq!(ids, ["reference/m0891.md"]);
    let (reference, _) = run("zebra", RecallIndexUse::Off);
    assert_eq!(
        serde_json::to_value(&seen).unwrap(),
        serde_json::to_value(&reference).unwrap()
    );
    // Once the edit settled, one more query rewrites the index; the next trusts it.
    settle();
    run("zebra", standard);
    let (again, rounds) = run("zebra", standard);
    assert_eq!((again.index.files_read, rounds), (0, 1));
    assert_eq!(
        serde_json::to_value(&again).unwrap(),
        serde_json::to_value(&reference).unwrap()
    );
}

#[test]
fn a_large_scope_is_indexed_over_several_queries_with_the_same_answers() {
    let f = fixture(120);
    settle();
    // Queries indexing at most 25 files each: the first few fill the index.
    let first = same_as_reference_with(&f, 25);
    assert!(first.written >= 2);
    let bytes = fs::read(index_path(&f)).unwrap();
    let view = RecallIndex::decode(&bytes).unwrap();
    assert!(
        view.files
            .iter()
            .all(|m| m.settled || m.state == DocState::Skipped)
    );
    let warm = same_as_reference_with(&f, 25);
    assert_eq!(warm.written, 0);
    assert_eq!(warm.files_read, 0);
}

#[test]
fn recalls_racing_to_write_the_index_all_answer_right_and_leave_it_whole() {
    let f = fixture(150);
    settle();
    let reference: Vec<serde_json::Value> = QUERIES
        .iter()
        .map(|q| {
            let r = recall_with(
                &f.project,
                &[ScopeKind::User],
                q,
                50,
                80,
                RecallIndexUse::Off,
            );
            serde_json::to_value(r.unwrap()).unwrap()
        })
        .collect();
    for round in 0..3 {
        // Each round starts without an index (or with one about to change), and four
        // recalls build and rewrite it at once.
        if round == 1 {
            fs::remove_file(index_path(&f)).unwrap();
        }
        if round == 2 {
            fs::remove_file(f.dir.join("user/m0000.md")).unwrap();
        }
        let expected: Vec<serde_json::Value> = if round == 2 {
            QUERIES
                .iter()
                .map(|q| {
                    let r = recall_with(
                        &f.project,
                        &[ScopeKind::User],
                        q,
                        50,
                        80,
                        RecallIndexUse::Off,
                    );
                    serde_json::to_value(r.unwrap()).unwrap()
                })
                .collect()
        } else {
            reference.clone()
        };
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for (q, want) in QUERIES.iter().zip(&expected) {
                        let index = RecallIndexUse::On {
                            settle: TEST_SETTLE,
                            budget: 40,
                        };
                        let r = recall_with(&f.project, &[ScopeKind::User], q, 50, 80, index);
                        assert_eq!(&serde_json::to_value(r.unwrap()).unwrap(), want);
                    }
                });
            }
        });
        assert!(RecallIndex::decode(&fs::read(index_path(&f)).unwrap()).is_some());
    }
}

#[test]
fn an_index_built_for_another_folder_is_not_used() {
    let f = fixture(40);
    settle();
    same_as_reference(&f);
    let path = index_path(&f);
    let bytes = fs::read(&path).unwrap();
    let view = RecallIndex::decode(&bytes).unwrap();
    assert_eq!(view.dir, f.dir.to_string_lossy());
    // Same files, another folder name recorded: rebuilt, not trusted.
    let files: Vec<FileMeta<'_>> = view.files.clone();
    let other = index::encode("/elsewhere", false, &view.folders, &files, Vec::new());
    fs::write(&path, other).unwrap();
    let report = same_as_reference(&f);
    assert!(report.written >= 1);
}

/// Every query through the live handle answers as [`recall_unaged`] does (the whole ranking
/// and the top 3, compared as the JSON a client gets).
fn live_same_as_unaged(f: &Fixture, live: &mut LiveRecall) {
    for (query, max) in QUERIES.iter().flat_map(|q| [(q, 100_000), (q, 3)]) {
        let scopes = [ScopeKind::User];
        let want = recall_unaged(&f.project, &scopes, query, max, 80).unwrap();
        let got = recall_live(&f.project, live, &scopes, query, max, 80).unwrap();
        assert_eq!(
            serde_json::to_value(&got).unwrap(),
            serde_json::to_value(&want).unwrap(),
            "query {query:?}, max {max}"
        );
    }
}

#[test]
fn a_symlinked_memory_whose_target_changes_unnoted_is_seen_by_the_next_live_query() {
    let f = fixture(40);
    // A link to another memory of the scope (one pointing outside is refused).
    let target = f.dir.join("reference/target.md");
    let linked = |body: &str| {
        fs::write(
            &target,
            format!("---\nname: linked\ndescription: a linked note\ntype: user\n---\n{body}\n"),
        )
        .unwrap();
    };
    linked("postgres once");
    std::os::unix::fs::symlink(&target, f.dir.join("user/linked.md")).unwrap();
    settle();
    let mut live = LiveRecall::open_with(&f.project, &[ScopeKind::User], TEST_SETTLE).unwrap();
    live_same_as_unaged(&f, &mut live);
    // The target changes and nothing is noted (a watcher would name the target, never the
    // link); settled, so only the symlink rule sends the handle to look again.
    linked("zebra postgres migration deploy cache schema, a longer body than before");
    settle();
    live_same_as_unaged(&f, &mut live);
    let found = recall_live(&f.project, &mut live, &[ScopeKind::User], "zebra", 5, 80).unwrap();
    let found = serde_json::to_string(&found).unwrap();
    assert!(found.contains("linked.md"), "{found}");
}

#[test]
fn a_live_handle_answers_as_the_files_do_through_noted_edits_and_touches_nothing_else() {
    let f = fixture(200);
    settle();
    let mut live = LiveRecall::open_with(&f.project, &[ScopeKind::User], TEST_SETTLE).unwrap();
    let opened = live.report();
    assert_eq!(opened.stats + opened.reads, 200, "{opened:?}");
    live_same_as_unaged(&f, &mut live);
    // Warm, nothing noted: no memory statted, listed or read (the shown ones are cached).
    let before = live.report();
    live_same_as_unaged(&f, &mut live);
    let after = live.report();
    assert_eq!(after, before);

    // Edits that change the size, additions (one in a new folder), deletions, renames,
    // each noted as a watcher reports it.
    let mut changed: Vec<PathBuf> = Vec::new();
    let mut rng = Lcg(99);
    for i in [1, 2, 3, 50, 51] {
        let (rel, _) = memory(&mut rng, i);
        let path = f.dir.join(&rel);
        let text = fs::read_to_string(&path).unwrap();
        fs::write(
            &path,
            text.replacen("\n\n", "\npostgres migration 数据库\n", 1),
        )
        .unwrap();
        changed.push(path);
    }
    for i in 200..203 {
        let (rel, text) = memory(&mut rng, i);
        write(&f.dir, &rel, &text);
        changed.push(f.dir.join(rel));
    }
    write(
        &f.dir,
        "project/deeper/nested.md",
        "---\nname: Nested postgres\ndescription: deploy\ntype: project\n---\ncache\n",
    );
    changed.push(f.dir.join("project/deeper"));
    for rel in ["user/m0000.md", "feedback/m0009.md", "project/m0010.md"] {
        fs::remove_file(f.dir.join(rel)).unwrap();
        changed.push(f.dir.join(rel));
    }
    fs::rename(f.dir.join("user/m0004.md"), f.dir.join("user/a-first.md")).unwrap();
    changed.extend([f.dir.join("user/m0004.md"), f.dir.join("user/a-first.md")]);
    fs::rename(
        f.dir.join("reference/m0003.md"),
        f.dir.join("feedback/m0003.md"),
    )
    .unwrap();
    changed.extend([
        f.dir.join("reference/m0003.md"),
        f.dir.join("feedback/m0003.md"),
    ]);
    // Same size and the very same mtime: the watcher still reports it.
    let put_back = f.dir.join("feedback/m0021.md");
    let modified = fs::metadata(&put_back).unwrap().modified().unwrap();
    edit_keeping_size(&put_back);
    set_mtime(&put_back, modified);
    changed.push(put_back);
    for path in &changed {
        assert!(live.note_changed(path), "{}", path.display());
    }
    assert!(!live.note_changed(Path::new("/somewhere/else.md")));
    live_same_as_unaged(&f, &mut live);
    let noted = live.report();
    assert!(noted.stats - after.stats <= changed.len(), "{noted:?}");
    settle();
    live_same_as_unaged(&f, &mut live);

    // A folder renamed away and another put in its place: noted as the folders.
    fs::rename(f.dir.join("project"), f.dir.join("old-project")).unwrap();
    fs::create_dir(f.dir.join("project")).unwrap();
    write(
        &f.dir,
        "project/m0006.md",
        "---\nname: Replaced postgres\ndescription: deploy cache\ntype: project\n---\nzebra\n",
    );
    live.note_changed(&f.dir.join("project"));
    live.note_changed(&f.dir.join("old-project"));
    live_same_as_unaged(&f, &mut live);

    // Changes nobody reported, then the watcher overflowed: everything is looked at.
    fs::remove_file(f.dir.join("user/m0008.md")).unwrap();
    write(
        &f.dir,
        "feedback/unreported.md",
        "---\nname: Unreported postgres\ndescription: zebra\ntype: feedback\n---\ncache\n",
    );
    edit_keeping_size(&f.dir.join("feedback/m0013.md"));
    settle();
    live.note_all_changed();
    live_same_as_unaged(&f, &mut live);
    live_same_as_unaged(&f, &mut live);

    // A new process opens what the handle wrote back, and answers the same.
    let mut again = LiveRecall::open_with(&f.project, &[ScopeKind::User], TEST_SETTLE).unwrap();
    live_same_as_unaged(&f, &mut again);
}

#[test]
fn a_live_handle_can_be_shared_by_a_server_s_threads() {
    // The MCP server keeps it behind a lock that its tasks take from any thread.
    fn shareable<T: Send + Sync + 'static>() {}
    shareable::<LiveRecall>();
    shareable::<std::sync::Mutex<LiveRecall>>();
}

#[test]
fn a_live_handle_over_a_scope_without_memories_sees_its_first_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let env = Environment {
        base_dir: Some(tmp.path().join("base")),
        ..Default::default()
    };
    let project = Project::open_with(tmp.path(), env).unwrap();
    let dir = project.scope_dir(ScopeKind::User).unwrap();
    let f = Fixture {
        _tmp: tmp,
        project,
        dir: dir.clone(),
    };
    let mut live = LiveRecall::open_with(&f.project, &[ScopeKind::User], TEST_SETTLE).unwrap();
    live_same_as_unaged(&f, &mut live);
    // The scope folder itself appears, with a memory in a folder of its own.
    let mut rng = Lcg(3);
    for i in 0..30 {
        let (rel, text) = memory(&mut rng, i);
        write(&dir, &rel, &text);
    }
    live.note_changed(&dir);
    live_same_as_unaged(&f, &mut live);
}
