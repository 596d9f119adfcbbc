//! Unit tests of the server's cache: ages come from the commit until the file or HEAD changes,
//! kept ages are never stale, and one walk finds the last change `git log` finds.

use super::*;
use crate::git::history;

/// Commits `path` holding `text` with `time` as author and committer time.
fn commit(repo: &Repository, path: &str, text: &str, author: &str, time: i64) {
    let root = repo.workdir().unwrap().to_path_buf();
    let file = root.join(path);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, text).unwrap();
    let mut index = repo.index().unwrap();
    index.add_path(Path::new(path)).unwrap();
    index.write().unwrap();
    let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    let sig = git2::Signature::new(author, "a@example.com", &git2::Time::new(time, 0)).unwrap();
    let parent = repo.head().ok().and_then(|h| h.peel_to_commit().ok());
    let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
    repo.commit(Some("HEAD"), &sig, &sig, "change", &tree, &parents)
        .unwrap();
}

#[test]
fn ages_come_from_the_commit_until_the_file_or_head_changes() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let repo = Repository::init(&root).unwrap();
    let rel = ".qwen/team-memory/project/a.md";
    commit(&repo, rel, "first\n", "Alice", 1_000_000);
    let path = root.join(rel);
    let paths = RepoPaths {
        workdir: root.clone(),
        git_dir: root.join(".git"),
    };
    let book = FreshnessBook::new(Some(paths), &[root.join(".qwen/team-memory")]);
    let first = book.of(&[(path.as_path(), b"first\n".as_slice())]);
    assert_eq!(
        first[0],
        Freshness {
            time: 1_000_000,
            from: "commit",
            by: Some("Alice".into()),
        }
    );
    // Edited in the work tree: git does not know this version.
    let edited = book.of(&[(path.as_path(), b"edited\n".as_slice())]);
    assert_eq!(edited[0].from, "file-time");
    // A commit moves HEAD: what was remembered for the old HEAD is not used.
    commit(&repo, rel, "second\n", "Bob", 2_000_000);
    let second = book.of(&[(path.as_path(), b"second\n".as_slice())]);
    assert_eq!(
        (second[0].time, second[0].by.as_deref()),
        (2_000_000, Some("Bob"))
    );
    // A file git does not track, and a server outside any repository.
    let loose = root.join(".qwen/team-memory/project/b.md");
    std::fs::write(&loose, "b\n").unwrap();
    assert_eq!(
        book.of(&[(loose.as_path(), b"b\n".as_slice())])[0].from,
        "file-time"
    );
    let outside = FreshnessBook::new(None, &[]);
    assert_eq!(
        outside.of(&[(path.as_path(), b"second\n".as_slice())])[0].from,
        "file-time"
    );
}

/// Runs git in `dir` as a teammate would, with the commit times given.
fn git(dir: &Path, args: &[&str], time: i64) {
    let date = format!("@{time} +0000");
    let out = std::process::Command::new("git")
        .args(["-c", "user.name=Teammate", "-c", "user.email=t@example.com"])
        .args([
            "-c",
            "core.hooksPath=/dev/null",
            "-c",
            "commit.gpgSign=false",
        ])
        .args(args)
        .env("GIT_AUTHOR_DATE", &date)
        .env("GIT_COMMITTER_DATE", &date)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A fresh book, as a newly started server has.
fn fresh_book(root: &Path) -> FreshnessBook {
    let paths = RepoPaths {
        workdir: root.to_path_buf(),
        git_dir: root.join(".git"),
    };
    FreshnessBook::new(Some(paths), &[root.join(".qwen/team-memory")])
}

fn age_of(book: &FreshnessBook, path: &Path) -> (i64, &'static str, Option<String>) {
    let bytes = std::fs::read(path).unwrap();
    let found = book.of(&[(path, bytes.as_slice())]).remove(0);
    (found.time, found.from, found.by)
}

/// The next server at the same `HEAD` reads the ages the first one kept: a kept file whose
/// author is not in the history shows through, which a walk would never give.
#[test]
fn a_server_at_the_same_head_reads_the_kept_ages() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let team = root.join(".qwen/team-memory");
    std::fs::create_dir_all(team.join("project")).unwrap();
    std::fs::write(team.join("project/a.md"), "a\n").unwrap();
    git(&root, &["init", "-q", "-b", "main"], 0);
    git(&root, &["add", "-A"], 1_000);
    git(&root, &["commit", "-qm", "a"], 1_000);
    let a = team.join("project/a.md");
    let git_dir = root.join(".git");
    assert!(!git_dir.join(crate::git::recovery::MCP_AGES).exists());
    assert_eq!(
        age_of(&fresh_book(&root), &a),
        (1_000, "commit", Some("Teammate".into()))
    );
    assert!(git_dir.join(crate::git::recovery::MCP_AGES).exists());
    assert_eq!(
        age_of(&fresh_book(&root), &a),
        (1_000, "commit", Some("Teammate".into()))
    );

    let Some(PlainHead::At(head)) = plain::head_commit(&git_dir) else {
        panic!("a plain repository");
    };
    let key = ages_file::key(&git_dir, &[".qwen/team-memory".to_string()]);
    let kept = Arc::new(CacheChange {
        commit: [7; 20],
        time: 42,
        author: "Kept Author".into(),
    });
    let changes: CacheChanges = HashMap::from([(
        ".qwen/team-memory/project/a.md".to_string(),
        (plain::blob_sha1(b"a\n"), kept),
    )]);
    ages_file::store(&git_dir, &head, &key, &changes);
    assert_eq!(
        age_of(&fresh_book(&root), &a),
        (42, "commit", Some("Kept Author".into()))
    );
}

/// What a kept file says is never taken for another `HEAD`: after a teammate's commit is
/// pulled, after a checkout of an older commit, and for an edit git does not know (its
/// modification time put back), every fresh server says what `git log` says.
#[test]
fn kept_ages_are_never_stale() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let remote = root.join("remote.git");
    let mine = root.join("mine");
    let theirs = root.join("theirs");
    git(
        &root,
        &[
            "init",
            "-q",
            "--bare",
            "-b",
            "main",
            remote.to_str().unwrap(),
        ],
        0,
    );
    git(
        &root,
        &[
            "clone",
            "-q",
            remote.to_str().unwrap(),
            mine.to_str().unwrap(),
        ],
        0,
    );
    let a_in = |clone: &Path| clone.join(".qwen/team-memory/project/a.md");
    std::fs::create_dir_all(a_in(&mine).parent().unwrap()).unwrap();
    std::fs::write(a_in(&mine), "first\n").unwrap();
    git(&mine, &["add", "-A"], 1_000);
    git(&mine, &["commit", "-qm", "first"], 1_000);
    git(&mine, &["push", "-q", "origin", "main"], 1_000);
    let first = git_out(&mine, &["rev-parse", "HEAD"]);
    assert_eq!(age_of(&fresh_book(&mine), &a_in(&mine)).0, 1_000);

    git(
        &root,
        &[
            "clone",
            "-q",
            remote.to_str().unwrap(),
            theirs.to_str().unwrap(),
        ],
        0,
    );
    std::fs::write(a_in(&theirs), "second\n").unwrap();
    git(
        &theirs,
        &["-c", "user.name=Other", "commit", "-qam", "second"],
        2_000,
    );
    git(&theirs, &["push", "-q", "origin", "main"], 2_000);
    git(&mine, &["pull", "-q", "--ff-only"], 2_500);
    assert_eq!(age_of(&fresh_book(&mine), &a_in(&mine)).0, 2_000);

    git(&mine, &["checkout", "-q", "--detach", &first], 3_000);
    assert_eq!(age_of(&fresh_book(&mine), &a_in(&mine)).0, 1_000);

    // An edit with the file's times put back: its bytes are not the commit's.
    let times = std::fs::metadata(a_in(&mine)).unwrap().modified().unwrap();
    std::fs::write(a_in(&mine), "edited\n").unwrap();
    std::fs::File::options()
        .write(true)
        .open(a_in(&mine))
        .unwrap()
        .set_modified(times)
        .unwrap();
    assert_eq!(age_of(&fresh_book(&mine), &a_in(&mine)).1, "file-time");
    git(&mine, &["checkout", "-q", "--", "."], 3_000);
    git(&mine, &["checkout", "-q", "main"], 3_000);
    assert_eq!(age_of(&fresh_book(&mine), &a_in(&mine)).0, 2_000);
    // A long-lived book follows HEAD too.
    let book = fresh_book(&mine);
    assert_eq!(age_of(&book, &a_in(&mine)).0, 2_000);
    git(&mine, &["checkout", "-q", "--detach", &first], 3_000);
    assert_eq!(age_of(&book, &a_in(&mine)).0, 1_000);
}

fn git_out(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[test]
fn one_walk_finds_the_last_change_git_log_finds_through_merges_removals_and_readds() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let team = root.join(".qwen/team-memory");
    let write = |rel: &str, text: &str| {
        let path = team.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    git(&root, &["init", "-q", "-b", "main"], 0);
    for (n, rel) in [
        "project/a.md",
        "project/b.md",
        "user/deep/c.md",
        "feedback/d.md",
    ]
    .iter()
    .enumerate()
    {
        write(rel, &format!("first {n}\n"));
    }
    std::fs::write(root.join("code.txt"), "code\n").unwrap();
    git(&root, &["add", "-A"], 1_000);
    git(&root, &["commit", "-qm", "memories"], 1_000);
    // Code commits that never touch the memory folder.
    for t in 0..5 {
        std::fs::write(root.join("code.txt"), format!("code {t}\n")).unwrap();
        git(&root, &["commit", "-qam", "code"], 2_000 + t);
    }
    // A side branch changes b, main changes a; the merge takes both.
    git(&root, &["checkout", "-qb", "side"], 3_000);
    write("project/b.md", "side\n");
    git(&root, &["commit", "-qam", "side b"], 3_100);
    git(&root, &["checkout", "-q", "main"], 3_200);
    write("project/a.md", "main\n");
    git(&root, &["commit", "-qam", "main a"], 3_300);
    git(
        &root,
        &["merge", "-q", "--no-ff", "-m", "merge", "side"],
        3_400,
    );
    // Removed, then added again with other content; a removed file stays out.
    git(
        &root,
        &["rm", "-q", ".qwen/team-memory/user/deep/c.md"],
        4_000,
    );
    git(&root, &["commit", "-qm", "rm c"], 4_000);
    write("user/deep/c.md", "again\n");
    git(&root, &["add", "-A"], 5_000);
    git(&root, &["commit", "-qm", "c again"], 5_000);
    git(
        &root,
        &["rm", "-q", ".qwen/team-memory/feedback/d.md"],
        6_000,
    );
    git(&root, &["commit", "-qm", "rm d"], 6_000);
    // A merge that changes nothing in the memory folder for either side.
    git(&root, &["checkout", "-qb", "code-only"], 7_000);
    std::fs::write(root.join("code.txt"), "side code\n").unwrap();
    git(&root, &["commit", "-qam", "side code"], 7_100);
    git(&root, &["checkout", "-q", "main"], 7_200);
    git(
        &root,
        &["merge", "-q", "--no-ff", "-m", "merge code", "code-only"],
        7_300,
    );

    let repo = Repository::open(&root).unwrap();
    let head = repo.head().unwrap().peel_to_commit().unwrap().id();
    let walked = history_below(&repo, head, ".qwen/team-memory", None).unwrap();
    // A walk past its deadline gives nothing rather than a part of the answer.
    let past = std::time::Instant::now()
        .checked_sub(std::time::Duration::from_secs(1))
        .unwrap();
    let limit = |until, commits| Some(WalkLimit { until, commits });
    assert_eq!(
        history_below(&repo, head, ".qwen/team-memory", limit(past, None)),
        None
    );
    // So does a walk that may read fewer commits than it needs, however long it may take.
    let later = std::time::Instant::now() + std::time::Duration::from_secs(600);
    assert_eq!(
        history_below(&repo, head, ".qwen/team-memory", limit(later, Some(1))),
        None
    );
    assert_eq!(
        history_below(&repo, head, ".qwen/team-memory", limit(later, Some(1_000))).as_ref(),
        Some(&walked)
    );
    let paths: Vec<String> = [
        "project/a.md",
        "project/b.md",
        "user/deep/c.md",
        "feedback/d.md",
    ]
    .iter()
    .map(|rel| format!(".qwen/team-memory/{rel}"))
    .collect();
    let reference = history::file::last_changes_until(&repo, &paths, None).unwrap();
    let heads = history::file::head_blobs(&repo, &paths).unwrap();
    let expected: HashMap<String, (Oid, Arc<LastChange>)> = reference
        .into_iter()
        .map(|(path, change)| (path.clone(), (heads[&path], Arc::new(change))))
        .collect();
    assert_eq!(walked, expected);
    let times: Vec<(String, i64)> = {
        let mut t: Vec<(String, i64)> = walked
            .iter()
            .map(|(p, (_, c))| (p.clone(), c.time))
            .collect();
        t.sort();
        t
    };
    assert_eq!(
        times,
        vec![
            (".qwen/team-memory/project/a.md".to_string(), 3_300),
            (".qwen/team-memory/project/b.md".to_string(), 3_100),
            (".qwen/team-memory/user/deep/c.md".to_string(), 5_000),
        ]
    );
}
