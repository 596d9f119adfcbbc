//! `teammem recall`: ranking, Unicode matching, ties, freshness and usage.

use crate::common;
use crate::common::lifecycle;

use common::Sandbox;
use lifecycle::{private_dir, put, team_dir};

fn ids(stdout: &str) -> Vec<String> {
    let v: serde_json::Value = serde_json::from_str(stdout).unwrap();
    v["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            format!(
                "{}:{}",
                h["scope"].as_str().unwrap(),
                h["id"].as_str().unwrap()
            )
        })
        .collect()
}

fn recall(sb: &Sandbox, repo: &std::path::Path, query: &str) -> Vec<String> {
    let run = sb.teammem(repo, ["recall", query, "--json"]);
    run.expect_code(0);
    ids(&run.stdout)
}

#[test]
fn title_beats_body_and_body_alone_or_type_words_give_nothing() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    let dir = private_dir(&sb, &repo);
    put(
        &dir,
        "project/testing.md",
        "Testing",
        "How we test",
        "Every test starts postgres first.\n",
    );
    put(
        &dir,
        "project/postgres.md",
        "Postgres migrations",
        "Run them in order",
        "Nothing else.\n",
    );
    put(
        &dir,
        "feedback/style.md",
        "Style",
        "Short answers",
        "Keep it short.\n",
    );
    assert_eq!(
        recall(&sb, &repo, "postgres"),
        ["private:project/postgres.md", "private:project/testing.md"]
    );
    // "feedback" and "rules" are type keywords: they lift a match but never make one.
    assert!(recall(&sb, &repo, "feedback rules").is_empty());
    assert_eq!(
        recall(&sb, &repo, "short feedback"),
        ["private:feedback/style.md"]
    );
    // Every memory has a body; that alone scores nothing.
    assert!(recall(&sb, &repo, "zebra").is_empty());
    let none = sb.teammem(&repo, ["recall", "zebra"]);
    assert_eq!(none.stdout, "No memory matches \"zebra\".\n");
}

#[test]
fn cjk_and_accented_queries_match() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    let dir = private_dir(&sb, &repo);
    put(
        &dir,
        "project/db.md",
        "使用真实数据库",
        "集成测试",
        "不要模拟。\n",
    );
    put(
        &dir,
        "project/cafe.md",
        "Café opening hours",
        "When the café opens",
        "Eight.\n",
    );
    put(
        &dir,
        "project/resume.md",
        "Resume parser",
        "Parses CVs",
        "Plain ASCII.\n",
    );
    put(
        &dir,
        "project/width.md",
        "ＡＢＣ widths",
        "Full-width letters",
        "Folded.\n",
    );
    assert_eq!(recall(&sb, &repo, "数据库"), ["private:project/db.md"]);
    assert_eq!(recall(&sb, &repo, "真实的数据"), ["private:project/db.md"]);
    assert!(recall(&sb, &repo, "苹果").is_empty());
    assert_eq!(recall(&sb, &repo, "CAFE"), ["private:project/cafe.md"]);
    assert_eq!(recall(&sb, &repo, "résumé"), ["private:project/resume.md"]);
    assert_eq!(recall(&sb, &repo, "abc"), ["private:project/width.md"]);
    // One-letter words are not tokens, and a term matches whole terms ("cv" is not "cvs").
    assert!(recall(&sb, &repo, "c").is_empty());
    assert!(recall(&sb, &repo, "cv").is_empty());
}

#[test]
fn ties_are_broken_by_scope_then_path() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    sb.teammem(&repo, ["init", "--current-branch"])
        .expect_code(0);
    let dir = private_dir(&sb, &repo);
    put(&dir, "project/b-deploy.md", "Deploy steps", "d", "x\n");
    put(&dir, "project/a-deploy.md", "Deploy steps", "d", "x\n");
    put(
        &team_dir(&repo),
        "project/deploy.md",
        "Deploy steps",
        "d",
        "x\n",
    );
    put(
        &sb.base().join("memories"),
        "project/deploy.md",
        "Deploy steps",
        "d",
        "x\n",
    );
    let expected = [
        "user:project/deploy.md",
        "private:project/a-deploy.md",
        "private:project/b-deploy.md",
        "team:project/deploy.md",
    ];
    for _ in 0..3 {
        assert_eq!(recall(&sb, &repo, "deploy"), expected);
    }
    let run = sb.teammem(&repo, ["recall", "deploy", "--max", "2", "--json"]);
    assert_eq!(ids(&run.stdout), expected[..2]);
}

#[test]
fn results_carry_freshness_author_cut_bodies_and_usage() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    sb.teammem(&repo, ["init", "--current-branch"])
        .expect_code(0);
    let body = "Rollback: ".to_string() + &"step ".repeat(100) + "\n";
    put(
        &team_dir(&repo),
        "project/rollback.md",
        "Rollback plan",
        "How to roll back",
        &body,
    );
    sb.git(&repo, ["add", "-A"]);
    let ten_days_ago = lifecycle::now() - 10 * 86_400 - 60;
    sb.git(
        &repo,
        [
            "-c",
            "user.name=Alice",
            "-c",
            "user.email=alice@example.com",
            "commit",
            "-q",
            "-m",
            "team memory",
            &format!("--date=@{ten_days_ago}"),
        ],
    );
    // A later commit by someone else that does not touch the memory changes nothing.
    std::fs::write(repo.join("README.md"), "# project, edited\n").unwrap();
    sb.git(
        &repo,
        [
            "-c",
            "user.name=Bob",
            "-c",
            "user.email=bob@example.com",
            "commit",
            "-qam",
            "readme",
        ],
    );
    sb.teammem(&repo, ["cite", "team:project/rollback.md"])
        .expect_code(0);
    sb.teammem(&repo, ["cite", "project/rollback.md"])
        .expect_code(0);
    let run = sb.teammem(&repo, ["recall", "rollback", "--chars", "40", "--json"]);
    run.expect_code(0);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let hit = &v["hits"][0];
    assert_eq!(hit["age"], "10 days old");
    assert_eq!(hit["changed_from"], "commit");
    assert_eq!(hit["changed_by"], "Alice");
    assert_eq!(hit["usage_count"], 2);
    assert!(hit["last_usage"].as_i64().unwrap() >= lifecycle::now() - 60);
    assert_eq!(hit["body_cut"], true);
    let text = hit["body"].as_str().unwrap();
    assert!(text.starts_with("Rollback: step step"), "{text}");
    assert!(
        text.ends_with("more characters — run `teammem show team:project/rollback.md`]"),
        "{text}"
    );
    // Usage lives in private state, never in the team file.
    assert_eq!(sb.git(&repo, ["status", "--porcelain"]), "");

    // An uncommitted edit is as fresh as its file, and has no author yet.
    put(
        &team_dir(&repo),
        "project/rollback.md",
        "Rollback plan",
        "How to roll back",
        "Changed.\n",
    );
    let run = sb.teammem(&repo, ["recall", "rollback", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["hits"][0]["age"], "today");
    assert_eq!(v["hits"][0]["changed_from"], "file-time");
    assert!(v["hits"][0]["changed_by"].is_null());
}

#[test]
fn the_recall_index_stays_out_of_the_work_tree_and_changes_no_answer() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    sb.teammem(&repo, ["init", "--current-branch"])
        .expect_code(0);
    put(
        &team_dir(&repo),
        "project/postgres.md",
        "Postgres migrations",
        "Run them in order",
        "Before the deploy.\n",
    );
    sb.git(&repo, ["add", "-A"]);
    sb.git(&repo, ["commit", "-qm", "team memory"]);
    // Private memory inside the work tree (QWEN_CODE_MEMORY_LOCAL=1).
    put(
        &repo.join(".qwen/memory"),
        "feedback/tests.md",
        "Tests hit postgres",
        "Never a mock",
        "Start the database first.\n",
    );
    let recall = |args: &[&str]| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_teammem"));
        let out = sb
            .isolate(&mut cmd)
            .env("QWEN_CODE_MEMORY_LOCAL", "1")
            .current_dir(&repo)
            .arg("recall")
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let status = sb.git(&repo, ["status", "--porcelain", "--untracked-files=all"]);
    let reference = recall(&["postgres", "--no-index"]);
    assert!(
        reference.contains("team:project/postgres.md"),
        "{reference}"
    );
    assert!(
        reference.contains("private:feedback/tests.md"),
        "{reference}"
    );
    // The first run builds the indexes, the second reads them: the same answer each time.
    assert_eq!(recall(&["postgres"]), reference);
    assert_eq!(recall(&["postgres"]), reference);
    let state = lifecycle::private_state(&sb, &repo);
    assert!(state.join("team/team-memory-recall.idx").is_file());
    assert!(state.join("local-memory-recall.idx").is_file());
    assert_eq!(
        sb.git(&repo, ["status", "--porcelain", "--untracked-files=all"]),
        status
    );
}

#[test]
fn the_memory_that_answers_beats_the_ones_that_only_name_the_subject() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    let dir = private_dir(&sb, &repo);
    // The subject's name in a title, in a memory that speaks to her, and in the answer.
    put(
        &dir,
        "project/melanie-profile.md",
        "Melanie",
        "Melanie, a friend from the climbing club",
        "Met at the club.\n",
    );
    put(
        &dir,
        "project/turn-1.md",
        "Caroline, 3 May",
        "Caroline asks about the week",
        "Caroline: Hey Melanie! How was your week? Did you go anywhere nice?\n",
    );
    put(
        &dir,
        "project/turn-2.md",
        "Melanie, 3 May",
        "Melanie on her weekend",
        "Melanie: I went to the natural history museum on Saturday, researching dinosaurs with the kids.\n",
    );
    for n in 0..5 {
        put(
            &dir,
            &format!("project/filler-{n}.md"),
            "Weekly notes",
            "What happened this week",
            "A week of meetings and reviews.\n",
        );
    }
    // Stop words ("when", "did", "the") score nothing, "research" finds "researching", and the
    // turn in which Melanie speaks of the museum beats the one that speaks to her.
    let found = recall(&sb, &repo, "When did Melanie go to the museum to research?");
    assert_eq!(found[0], "private:project/turn-2.md", "{found:?}");
    let run = sb.teammem(&repo, ["recall", "When did Melanie research", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["tokens"], serde_json::json!(["melani", "research"]));
    // A query of stop words only has no terms and no results.
    assert!(recall(&sb, &repo, "what did they have").is_empty());
}

/// A warm recall answers from its index while the stats that confirm it run beside it: an
/// edit of a memory in place (same inode, same folder times) and one by rename, made after
/// the index was built, are both in the next answer, in a scope big enough that other threads
/// take most of the stats.
#[test]
fn edits_in_place_and_by_rename_are_seen_by_the_next_warm_recall() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    let dir = private_dir(&sb, &repo);
    for i in 0..1200 {
        let kind = ["user", "feedback", "project", "reference"][i % 4];
        put(
            &dir,
            &format!("{kind}/note-{i:04}.md"),
            &format!("Note {i}"),
            "Build notes",
            "The cache is warmed before the deploy.\n",
        );
    }
    // Older than the index's 2-second window, so that it trusts their stamps.
    std::thread::sleep(std::time::Duration::from_millis(2_300));
    // The first recall builds the index, the second answers from it.
    assert!(recall(&sb, &repo, "zebra").is_empty());
    assert!(recall(&sb, &repo, "quagga").is_empty());

    // In place: the file is opened and appended to, its folder is not touched.
    let late = dir.join("reference/note-1199.md");
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&late)
        .unwrap();
    std::io::Write::write_all(&mut file, b"A zebra crossed the deploy.\n").unwrap();
    drop(file);
    // By rename over the old file, as editors save.
    let early = dir.join("user/note-0000.md");
    let tmp = dir.join("user/.note-0000.md.swp");
    let text = std::fs::read_to_string(&early).unwrap();
    std::fs::write(&tmp, text.replace("Note 0", "Note 0 quagga")).unwrap();
    std::fs::rename(&tmp, &early).unwrap();

    assert_eq!(
        recall(&sb, &repo, "zebra"),
        ["private:reference/note-1199.md"]
    );
    assert_eq!(recall(&sb, &repo, "quagga"), ["private:user/note-0000.md"]);
    // And once more, through the index rewritten with them.
    std::thread::sleep(std::time::Duration::from_millis(2_300));
    assert_eq!(
        recall(&sb, &repo, "zebra"),
        ["private:reference/note-1199.md"]
    );
    let run = sb.teammem(&repo, ["recall", "zebra", "--no-index", "--json"]);
    assert_eq!(ids(&run.stdout), ["private:reference/note-1199.md"]);
}
