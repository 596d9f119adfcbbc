//! Memory files on disk: every validation error and lint with its exact
//! `path:line:col: what — fix` message, as `teammem validate` prints it, what a file means
//! (Qwen Code's line rule for scalar keys, YAML for the rest, Claude Code's `metadata: type:`),
//! and what survives a read and a rewrite.

use crate::common;

use std::fs;
use std::time::{Duration, Instant};

use common::{Sandbox, memory_text, write};
use teammem::memory::{MAX_FILE_BYTES, MemoryFile, MemoryType};

/// Writes `bytes` as `name` in a fresh folder and returns what `teammem validate` printed.
fn validate_one(sb: &Sandbox, rel: &str, bytes: &[u8]) -> common::Run {
    let dir = sb.path().join("notes");
    let path = dir.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(&path, bytes).unwrap();
    let run = sb.teammem(&dir, ["validate", rel]);
    fs::remove_file(&path).unwrap();
    run
}

/// Asserts that validating `bytes` fails with exactly the problem lines given.
fn assert_problems(rel: &str, bytes: &[u8], expected: &[&str]) {
    let sb = Sandbox::new();
    let run = validate_one(&sb, rel, bytes);
    run.expect_code(1);
    let mut lines: Vec<&str> = run.stdout.lines().collect();
    let summary = lines.pop().unwrap();
    assert_eq!(lines, expected, "stdout:\n{}", run.stdout);
    assert_eq!(
        summary,
        format!("1 file(s) checked, {} problem(s)", expected.len())
    );
}

#[test]
fn a_valid_file_passes() {
    let sb = Sandbox::new();
    let text = memory_text(
        "Use the real database",
        "Tests hit Postgres",
        "feedback",
        "Why.\n",
    );
    let run = validate_one(&sb, "feedback/use-the-real-database.md", text.as_bytes());
    run.expect_code(0);
    assert_eq!(run.stdout, "1 file(s) checked, 0 problem(s)\n");
}

#[test]
fn no_frontmatter() {
    assert_problems(
        "x.md",
        b"Just some notes.\n",
        &[
            "x.md:1:1: no frontmatter: the file must start with a `---` line — start the file with `---`, then `name:`, `description:` and `type:` lines, then `---`",
        ],
    );
}

#[test]
fn unterminated_frontmatter() {
    assert_problems(
        "x.md",
        b"---\nname: a\ndescription: d\ntype: user\nbody without the closing line\n",
        &[
            "x.md:1:1: unterminated frontmatter: no closing `---` line — add a line holding only `---` after the last frontmatter key",
        ],
    );
}

#[test]
fn byte_order_mark() {
    let mut bytes = b"\xEF\xBB\xBF".to_vec();
    bytes.extend_from_slice(memory_text("a", "d", "user", "").as_bytes());
    assert_problems(
        "x.md",
        &bytes,
        &["x.md:1:1: file starts with a byte-order mark — save it as UTF-8 without BOM"],
    );
}

#[test]
fn invalid_yaml_is_located_in_the_file() {
    assert_problems(
        "x.md",
        b"---\nname: a\ndescription: d\nkeywords: [unclosed\ntype: user\n---\n",
        &[
            "x.md:5:1: invalid YAML in frontmatter: did not find expected ',' or ']' at line 5 column 1, while parsing a flow sequence at line 4 column 11; name, description and type still read — fix the YAML syntax of the other keys (lists, nested keys)",
        ],
    );
}

#[test]
fn a_field_of_the_wrong_kind() {
    assert_problems(
        "x.md",
        b"---\nname: a\ndescription: d\ntype: 1\n---\n",
        &[
            "x.md:4:7: unknown type `1` — use one of: user, feedback, project, reference, written plain on the `type:` line",
        ],
    );
    assert_problems(
        "x.md",
        b"---\nname: a\ndescription: d\ntype: user\nkeywords: {a: b}\n---\n",
        &[
            "x.md:5:11: `keywords` is a mapping, not a list of words — write `keywords: [word, word]`",
        ],
    );
}

#[test]
fn a_missing_field() {
    assert_problems(
        "x.md",
        b"---\nname: a\ntype: user\n---\n",
        &[
            "x.md:1:1: missing `description`: the index shows the type instead — add `description: …` (one line saying what the memory is for)",
        ],
    );
}

#[test]
fn an_unknown_type() {
    assert_problems(
        "x.md",
        b"---\nname: a\ndescription: d\ntype: idea\n---\n",
        &[
            "x.md:4:7: unknown type `idea` — use one of: user, feedback, project, reference, written plain on the `type:` line",
        ],
    );
}

#[test]
fn a_multi_line_description_in_every_spelling() {
    let fix = "keep it on one line and move detail into the body";
    for (yaml, col) in [
        ("description: |\n  one\n  two\n", 14),
        ("description: >\n  one\n  two\n", 14),
        ("description: one\n  two\n", 14),
        ("description: \"one\n  two\"\n", 14),
    ] {
        let text = format!("---\nname: a\n{yaml}type: user\n---\n");
        assert_problems(
            "x.md",
            text.as_bytes(),
            &[&format!(
                "x.md:3:{col}: `description` spans several lines; Qwen Code reads only its first line — {fix}"
            )],
        );
    }
}

#[test]
fn invalid_utf8_is_located() {
    assert_problems(
        "x.md",
        b"---\nname: a\ndescription: d\ntype: user\n---\nok\nab\xFFcd\n",
        &["x.md:7:3: file is not valid UTF-8 — save it as UTF-8"],
    );
}

#[test]
fn a_file_over_64_kib() {
    let mut text = memory_text("a", "d", "user", "");
    text.push_str(&"x".repeat(MAX_FILE_BYTES + 1 - text.len()));
    assert_problems(
        "x.md",
        text.as_bytes(),
        &[
            "x.md:1:1: file is 65537 bytes, over the 65536 byte limit — split it into smaller memories or move the detail into the repository's docs",
        ],
    );
    // Exactly at the limit is fine.
    text.pop();
    let sb = Sandbox::new();
    validate_one(&sb, "x.md", text.as_bytes()).expect_code(0);
}

#[test]
fn a_file_name_that_is_not_a_slug() {
    assert_problems(
        "feedback/Use Real DB.md",
        memory_text("a", "d", "feedback", "").as_bytes(),
        &[
            "feedback/Use Real DB.md:1:1: file name `Use Real DB.md` is not a slug — rename it to `use-real-db.md` (lowercase letters, digits and hyphens)",
        ],
    );
}

#[test]
fn a_type_that_does_not_match_its_folder() {
    assert_problems(
        "project/x.md",
        memory_text("a", "d", "feedback", "").as_bytes(),
        &[
            "project/x.md:1:1: type `feedback` does not match its folder `project/` — move the file to `feedback/` or set `type: project`",
        ],
    );
}

#[test]
fn a_folder_named_like_a_type_that_holds_the_files_is_not_a_type_folder() {
    let sb = Sandbox::new();
    let dir = sb.path().join("project");
    write(&dir.join("a.md"), &memory_text("a", "d", "feedback", ""));
    let run = sb.teammem(sb.path(), ["validate", "project"]);
    run.expect_code(0);
}

#[test]
fn every_problem_of_every_file_is_reported() {
    let sb = Sandbox::new();
    let dir = sb.path().join("mem");
    write(
        &dir.join("user/two-problems.md"),
        "---\nname: a\ntype: idea\n---\n",
    );
    write(&dir.join("user/Bad.md"), "no frontmatter\n");
    write(
        &dir.join("user/fine.md"),
        &memory_text("a", "d", "user", ""),
    );
    write(&dir.join("MEMORY.md"), "not a memory, skipped\n");
    let run = sb.teammem(sb.path(), ["validate", "mem", "--json"]);
    run.expect_code(1);
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(json["files_checked"], 3);
    let problems: Vec<String> = json["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            format!(
                "{}:{}:{}: {}",
                p["path"].as_str().unwrap(),
                p["line"],
                p["column"],
                p["message"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        problems,
        [
            "mem/user/Bad.md:1:1: file name `Bad.md` is not a slug",
            "mem/user/Bad.md:1:1: no frontmatter: the file must start with a `---` line",
            "mem/user/two-problems.md:3:7: unknown type `idea`",
        ]
    );
}

#[test]
fn a_number_name_stays_the_string_written() {
    let sb = Sandbox::new();
    write(
        &sb.base().join("memories/user/ticket.md"),
        "---\nname: 10183\ndescription: 1.50\ntype: user\n---\nbody\n",
    );
    let run = sb.teammem(sb.path(), ["list", "--scope", "user", "--json"]);
    run.expect_code(0);
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(json["memories"][0]["name"], serde_json::json!("10183"));
    assert_eq!(
        json["memories"][0]["description"],
        serde_json::json!("1.50")
    );

    let file = MemoryFile::parse(
        "user/ticket.md",
        b"---\nname: 10183\ndescription: d\ntype: user\n---\n",
    )
    .unwrap();
    assert_eq!(file.name, "10183");
    let again = MemoryFile::parse("user/ticket.md", file.render().as_bytes()).unwrap();
    assert_eq!(again.name, "10183");
}

#[test]
fn yaml_alias_bombs_are_refused_fast() {
    let mut yaml = String::from(
        "name: a\ndescription: d\ntype: user\nl0: &l0 [x, x, x, x, x, x, x, x, x, x]\n",
    );
    for i in 1..10 {
        let p = i - 1;
        yaml.push_str(&format!(
            "l{i}: &l{i} [*l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}]\n"
        ));
    }
    let text = format!("---\n{yaml}---\n");
    let started = Instant::now();
    // The scalar keys still read; the bomb is lint, and never expanded.
    let file = MemoryFile::parse("x.md", text.as_bytes()).unwrap();
    // Not a timing assertion on speed, a bound on blowing up: 10^10 nodes would never finish.
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(file.name, "a");
    let problems = file.lints();
    assert_eq!(problems.len(), 1);
    assert!(
        problems[0]
            .message
            .starts_with("invalid YAML in frontmatter"),
        "{}",
        problems[0]
    );
}

#[test]
fn deep_nesting_and_huge_files_are_refused_without_reading_them_whole() {
    let deep = format!(
        "---\nname: a\ndescription: d\ntype: user\nkeywords: {}\n---\n",
        "[".repeat(60_000)
    );
    let file = MemoryFile::parse("x.md", deep.as_bytes()).unwrap();
    assert_eq!(
        file.lints()[0].to_string(),
        "x.md:5:75: invalid YAML in frontmatter: brackets nest deeper than 64 levels; name, description and type still read — fix the YAML syntax of the other keys (lists, nested keys)"
    );

    // A 50 MB file: validate reads at most one byte past the limit and refuses it.
    let sb = Sandbox::new();
    let dir = sb.path().join("big");
    fs::create_dir_all(&dir).unwrap();
    let file = fs::File::create(dir.join("huge.md")).unwrap();
    file.set_len(50 * 1024 * 1024).unwrap();
    let run = sb.teammem(&dir, ["validate", "huge.md"]);
    run.expect_code(1);
    assert!(
        run.stdout
            .starts_with("huge.md:1:1: file is 65537 bytes, over the 65536 byte limit"),
        "{}",
        run.stdout
    );
}

#[test]
fn unknown_keys_survive_a_rewrite() {
    let text = "---\nname: Deploys\nowner: platform-team\ndescription: Deploys go through the release train\ntype: project\nreview:\n  by: 2027-01-01\n  who: [ana, bo]\n---\nBody stays.\n";
    let mut file = MemoryFile::parse("project/deploys.md", text.as_bytes()).unwrap();
    file.description = "Deploys go out on Tuesdays".into();
    let rewritten = file.render();
    assert_eq!(
        rewritten,
        "---\nname: Deploys\nowner: platform-team\ndescription: Deploys go out on Tuesdays\ntype: project\nreview:\n  by: 2027-01-01\n  who: [ana, bo]\n---\nBody stays.\n"
    );
    let again = MemoryFile::parse("project/deploys.md", rewritten.as_bytes()).unwrap();
    assert_eq!(again.render(), rewritten);
}

#[test]
fn crlf_files_read_like_lf_and_keep_their_line_endings() {
    let lf = memory_text(
        "Use the real database",
        "Tests hit Postgres",
        "feedback",
        "Why: mocks lied.\n",
    );
    let crlf = lf.replace('\n', "\r\n");
    let a = MemoryFile::parse("feedback/a.md", lf.as_bytes()).unwrap();
    let b = MemoryFile::parse("feedback/a.md", crlf.as_bytes()).unwrap();
    assert_eq!(
        (&a.name, &a.description, a.kind),
        (&b.name, &b.description, b.kind)
    );
    assert_eq!(b.kind, MemoryType::Feedback);
    assert_eq!(b.body, "Why: mocks lied.\r\n");
    assert_eq!(b.render(), crlf);

    // Through the command line: a CRLF memory is listed and indexed like any other.
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    sb.teammem(&repo, ["init", "--current-branch"])
        .expect_code(0);
    write(&repo.join(".qwen/team-memory/feedback/a.md"), &crlf);
    sb.teammem(&repo, ["index", "--scope", "team"])
        .expect_code(0);
    assert_eq!(
        fs::read_to_string(repo.join(".qwen/team-memory/MEMORY.md")).unwrap(),
        "- [Use the real database](feedback/a.md) — Tests hit Postgres"
    );
}

#[test]
fn legacy_multi_bullet_files_have_path_index_ids() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    let text = "---\nname: Feedback\ndescription: Collected feedback\ntype: feedback\n---\n- Run the linter before pushing\n  - Why: CI is slow.\n- Never force-push main\n  - How to apply: use --force-with-lease on your own branches.\n";
    write(&sb.base().join("memories/feedback.md"), text);

    let show = sb.teammem(&repo, ["show", "feedback.md:2"]);
    show.expect_code(0);
    assert_eq!(
        show.stdout,
        "- Never force-push main\n  - How to apply: use --force-with-lease on your own branches.\n"
    );
    let show = sb.teammem(&repo, ["show", "user:feedback.md:1"]);
    show.expect_code(0);
    assert_eq!(
        show.stdout,
        "- Run the linter before pushing\n  - Why: CI is slow.\n"
    );
    // The whole file is shown byte for byte.
    let show = sb.teammem(&repo, ["show", "feedback.md"]);
    show.expect_code(0);
    assert_eq!(show.stdout, text);

    let missing = sb.teammem(&repo, ["show", "feedback.md:3"]);
    missing.expect_code(2);
    assert!(
        missing
            .stderr
            .contains("has no entry 3 — it holds 2 entries"),
        "{}",
        missing.stderr
    );

    let list = sb.teammem(&repo, ["list", "--scope", "user", "--json"]);
    list.expect_code(0);
    let json: serde_json::Value = serde_json::from_str(&list.stdout).unwrap();
    let m = &json["memories"][0];
    assert_eq!(m["id"], "feedback.md");
    assert_eq!(m["entries"], 2);
    assert_eq!(m["entry_ids"][0]["id"], "feedback.md:1");
    assert_eq!(m["entry_ids"][1]["id"], "feedback.md:2");
    assert_eq!(m["entry_ids"][1]["summary"], "Never force-push main");
}

#[test]
fn show_prints_the_file_as_written() {
    let sb = Sandbox::new();
    let text = "---\n# a comment the author keeps\nname: 10183\ndescription: 'quoted'\ntype: user\nkeywords: [a, b]\n---\nBody.\n";
    write(&sb.base().join("memories/user/ticket.md"), text);
    let show = sb.teammem(sb.path(), ["show", "user/ticket.md"]);
    show.expect_code(0);
    assert_eq!(show.stdout, text);
}

#[test]
fn a_non_utf8_file_name_is_reported_not_skipped() {
    use std::os::unix::ffi::OsStrExt;
    let sb = Sandbox::new();
    let dir = sb.path().join("mem");
    fs::create_dir_all(&dir).unwrap();
    let name = std::ffi::OsStr::from_bytes(b"bad\xFFname.md");
    fs::write(dir.join(name), memory_text("a", "d", "user", "")).unwrap();
    let run = sb.teammem(sb.path(), ["validate", "mem"]);
    run.expect_code(1);
    assert!(
        run.stdout.starts_with(
            "mem/bad\u{FFFD}name.md:1:1: file name `bad\u{FFFD}name.md` is not valid UTF-8"
        ),
        "{}",
        run.stdout
    );
}

#[test]
fn validate_of_a_missing_path_is_an_error() {
    let sb = Sandbox::new();
    let run = sb.teammem(sb.path(), ["validate", "nowhere.md"]);
    run.expect_code(2);
    assert!(run.stderr.contains("nowhere.md"), "{}", run.stderr);
}

#[test]
fn files_outside_utf8_frontmatter_limits_never_panic() {
    // A few hand-picked nasties; the property tests cover arbitrary bytes.
    for bytes in [
        &b""[..],
        b"---",
        b"---\n",
        b"---\n---\n",
        b"---\r\n---\r\n",
        b"---\n: \n---\n",
        b"---\n- a\n---\n",
        b"---\n'x'\n---\n",
        b"---\n? [a]\n: b\n---\n",
    ] {
        assert!(
            MemoryFile::parse("x.md", bytes).is_err(),
            "{:?}",
            String::from_utf8_lossy(bytes)
        );
    }
}
