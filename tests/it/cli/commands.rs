//! The commands as a user runs them: init and .gitignore, add, list, show, validate, their
//! JSON field names and exit statuses.

use crate::common;

use std::fs;
use std::path::Path;

use common::{Sandbox, memory_text, write};

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

fn keys(value: &serde_json::Value) -> Vec<&str> {
    let mut keys: Vec<&str> = value
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort();
    keys
}

fn ignored(sb: &Sandbox, repo: &Path, path: &str) -> bool {
    let out = sb.git_output(repo, ["check-ignore", "-q", path]);
    match out.status.code() {
        Some(0) => true,
        Some(1) => false,
        other => panic!("git check-ignore failed: {other:?}"),
    }
}

#[test]
fn init_creates_the_team_folder_and_its_index() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    let run = sb.teammem(&repo, ["init", "--current-branch"]);
    run.expect_code(0);
    let team = repo.join(".qwen/team-memory");
    assert_eq!(run.stdout, format!("Created {}\n", team.display()));
    assert_eq!(fs::read(team.join("MEMORY.md")).unwrap(), b"");
    let run = sb.teammem(&repo, ["init", "--current-branch"]);
    run.expect_code(0);
    assert_eq!(
        run.stdout,
        format!("Team memory already at {}\n", team.display())
    );
    assert_eq!(
        sb.git(&repo, ["status", "--porcelain", "-uall"]),
        "?? .qwen/team-memory/MEMORY.md\n"
    );
}

#[test]
fn init_outside_a_repository_is_a_usage_error() {
    let sb = Sandbox::new();
    let run = sb.teammem(sb.path(), ["init"]);
    run.expect_code(2);
    assert_eq!(
        run.stderr,
        "teammem: not inside a git repository — run this in your project's work tree (or pass -C DIR)\n"
    );
}

const FIX_QWEN_IGNORED: &str = "  # teammem: share team memory through git\n  !/.qwen/\n  /.qwen/*\n  !/.qwen/team-memory/\n  !/.qwen/team-memory/**";

#[test]
fn init_shows_the_gitignore_lines_and_fix_gitignore_applies_them() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    fs::write(repo.join(".gitignore"), "target/\n.qwen/\n").unwrap();
    write(&repo.join(".qwen/settings.json"), "{}\n");

    let run = sb.teammem(&repo, ["init", "--current-branch"]);
    run.expect_code(1);
    assert_eq!(
        run.stderr,
        format!(
            "teammem: git ignores .qwen/team-memory/, so team memories would never be shared.\nAdd these lines to .gitignore (or run `teammem init --fix-gitignore`):\n{FIX_QWEN_IGNORED}\n"
        )
    );
    assert_eq!(
        fs::read_to_string(repo.join(".gitignore")).unwrap(),
        "target/\n.qwen/\n"
    );

    let run = sb.teammem(&repo, ["init", "--current-branch", "--fix-gitignore"]);
    run.expect_code(0);
    assert!(
        run.stdout
            .ends_with(&format!("Added to .gitignore:\n{FIX_QWEN_IGNORED}\n")),
        "{}",
        run.stdout
    );
    assert_eq!(
        fs::read_to_string(repo.join(".gitignore")).unwrap(),
        "target/\n.qwen/\n# teammem: share team memory through git\n!/.qwen/\n/.qwen/*\n!/.qwen/team-memory/\n!/.qwen/team-memory/**\n"
    );
    // git agrees: the team folder is seen, the rest of .qwen/ stays private.
    write(
        &repo.join(".qwen/team-memory/feedback/real-db.md"),
        &memory_text(
            "Use the real database",
            "Tests hit Postgres",
            "feedback",
            "",
        ),
    );
    assert!(!ignored(&sb, &repo, ".qwen/team-memory/MEMORY.md"));
    assert!(!ignored(
        &sb,
        &repo,
        ".qwen/team-memory/feedback/real-db.md"
    ));
    assert!(ignored(&sb, &repo, ".qwen/settings.json"));
    assert!(ignored(&sb, &repo, ".qwen/memory/user/x.md"));
    assert_eq!(
        sb.git(&repo, ["status", "--porcelain", "-uall"]),
        "?? .gitignore\n?? .qwen/team-memory/MEMORY.md\n?? .qwen/team-memory/feedback/real-db.md\n"
    );
    // Running it again changes nothing.
    sb.teammem(&repo, ["init", "--current-branch", "--fix-gitignore"])
        .expect_code(0);
    assert_eq!(
        fs::read_to_string(repo.join(".gitignore"))
            .unwrap()
            .matches("teammem")
            .count(),
        1
    );
}

#[test]
fn init_notices_memory_files_ignored_by_a_pattern() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    fs::write(repo.join(".gitignore"), "feedback/\n").unwrap();
    let run = sb.teammem(&repo, ["init", "--current-branch"]);
    run.expect_code(1);
    assert!(
        run.stderr.contains("  !/.qwen/team-memory/**"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("/.qwen/*"), "{}", run.stderr);
    sb.teammem(&repo, ["init", "--current-branch", "--fix-gitignore"])
        .expect_code(0);
    assert!(!ignored(&sb, &repo, ".qwen/team-memory/feedback/x.md"));
    assert!(ignored(&sb, &repo, "src/feedback/x.md"));
}

fn add(sb: &Sandbox, repo: &Path, extra: &[&str]) -> common::Run {
    let mut args = vec!["add", "--scope", "team"];
    args.extend_from_slice(extra);
    sb.teammem(repo, &args)
}

#[test]
fn add_writes_a_slug_file_and_rebuilds_the_index() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    sb.teammem(&repo, ["init", "--current-branch"])
        .expect_code(0);
    let run = sb.teammem_with_input(
        &repo,
        [
            "add",
            "--scope",
            "team",
            "--type",
            "reference",
            "--name",
            "Where the runbooks live!",
            "--description",
            "On-call runbooks are in the ops wiki",
            "--keywords",
            "oncall, runbook",
        ],
        "See https://wiki.example.com/ops/runbooks.\n",
    );
    run.expect_code(0);
    let path = repo.join(".qwen/team-memory/reference/where-the-runbooks-live.md");
    assert_eq!(
        run.stdout,
        format!(
            "Added team:reference/where-the-runbooks-live.md ({})\n",
            path.display()
        )
    );
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        "---\nname: Where the runbooks live!\ndescription: On-call runbooks are in the ops wiki\ntype: reference\nkeywords: [oncall, runbook]\n---\nSee https://wiki.example.com/ops/runbooks.\n"
    );
    assert_eq!(
        fs::read_to_string(repo.join(".qwen/team-memory/MEMORY.md")).unwrap(),
        "- [Where the runbooks live!](reference/where-the-runbooks-live.md) — On-call runbooks are in the ops wiki"
    );

    let run = add(
        &sb,
        &repo,
        &[
            "--type",
            "project",
            "--name",
            "10183",
            "--description",
            "Ticket",
            "--body",
            "b",
            "--json",
        ],
    );
    run.expect_code(0);
    let out = json(&run.stdout);
    assert_eq!(
        keys(&out),
        ["id", "index_written", "path", "scope", "warnings"]
    );
    assert_eq!(out["id"], "project/10183.md");
    assert_eq!(out["scope"], "team");
    assert_eq!(out["index_written"], true);
    let show = sb.teammem(&repo, ["show", "project/10183.md", "--json"]);
    show.expect_code(0);
    let shown = json(&show.stdout);
    assert_eq!(
        keys(&shown),
        [
            "description",
            "id",
            "keywords",
            "name",
            "path",
            "scope",
            "text",
            "type"
        ]
    );
    assert_eq!(shown["name"], "10183");
}

#[test]
fn add_refuses_a_duplicate_name_and_bad_fields() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    add(
        &sb,
        &repo,
        &[
            "--type",
            "feedback",
            "--name",
            "Use the real DB",
            "--description",
            "d",
            "--body",
            "",
        ],
    )
    .expect_code(0);
    let before = fs::read(repo.join(".qwen/team-memory/MEMORY.md")).unwrap();

    let run = add(
        &sb,
        &repo,
        &[
            "--type",
            "project",
            "--name",
            " use the real db ",
            "--description",
            "x",
            "--body",
            "",
        ],
    );
    run.expect_code(1);
    assert_eq!(
        run.stderr,
        "teammem: the team scope already has a memory named `Use the real DB`: feedback/use-the-real-db.md — edit that file, or choose another name\n"
    );
    // Another name with the same slug in the same type folder.
    let run = add(
        &sb,
        &repo,
        &[
            "--type",
            "feedback",
            "--name",
            "Use the real DB!",
            "--description",
            "x",
            "--body",
            "",
        ],
    );
    run.expect_code(1);
    assert!(
        run.stderr
            .contains("already exists (a file with the same slug)"),
        "{}",
        run.stderr
    );

    let run = add(
        &sb,
        &repo,
        &[
            "--type",
            "feedback",
            "--name",
            "n",
            "--description",
            "two\nlines",
            "--body",
            "",
        ],
    );
    run.expect_code(2);
    assert_eq!(
        run.stderr,
        "teammem: --description spans several lines — keep it on one line and put detail in the body\n"
    );
    add(
        &sb,
        &repo,
        &[
            "--type",
            "feedback",
            "--name",
            " ",
            "--description",
            "d",
            "--body",
            "",
        ],
    )
    .expect_code(2);
    let run = add(
        &sb,
        &repo,
        &[
            "--type",
            "idea",
            "--name",
            "n",
            "--description",
            "d",
            "--body",
            "",
        ],
    );
    run.expect_code(2);
    assert!(
        run.stderr
            .contains("invalid value 'idea' for '--type <KIND>'"),
        "{}",
        run.stderr
    );
    assert_eq!(
        fs::read(repo.join(".qwen/team-memory/MEMORY.md")).unwrap(),
        before
    );
}

#[test]
fn a_cjk_name_gets_a_stable_slug() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    let run = add(
        &sb,
        &repo,
        &[
            "--type",
            "project",
            "--name",
            "使用真实数据库",
            "--description",
            "集成测试连接真实的数据库",
            "--body",
            "",
            "--json",
        ],
    );
    run.expect_code(0);
    let id = json(&run.stdout)["id"].as_str().unwrap().to_string();
    assert!(
        id.starts_with("project/memory-") && id.ends_with(".md"),
        "{id}"
    );
    assert_eq!(
        fs::read_to_string(repo.join(".qwen/team-memory/MEMORY.md")).unwrap(),
        format!("- [使用真实数据库]({id}) — 集成测试连接真实的数据库")
    );
}

#[test]
fn list_prints_every_scope_and_its_json_has_stable_fields() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    add(
        &sb,
        &repo,
        &[
            "--type",
            "feedback",
            "--name",
            "Real DB",
            "--description",
            "Tests hit Postgres",
            "--keywords",
            "postgres",
            "--body",
            "",
        ],
    )
    .expect_code(0);
    sb.teammem(
        &repo,
        [
            "add",
            "--scope",
            "user",
            "--type",
            "user",
            "--name",
            "Prefers short answers",
            "--description",
            "Keep replies brief",
            "--body",
            "",
        ],
    )
    .expect_code(0);

    let run = sb.teammem(&repo, ["list"]);
    run.expect_code(0);
    assert_eq!(
        run.stdout,
        "SCOPE  ID                             TYPE       NAME — DESCRIPTION\n\
         user   user/prefers-short-answers.md  user       Prefers short answers — Keep replies brief\n\
         team   feedback/real-db.md            feedback   Real DB — Tests hit Postgres\n"
    );

    let run = sb.teammem(&repo, ["list", "--scope", "team", "--json"]);
    run.expect_code(0);
    let out = json(&run.stdout);
    assert_eq!(keys(&out), ["invalid", "memories"]);
    let m = &out["memories"][0];
    assert_eq!(
        keys(m),
        [
            "description",
            "entries",
            "entry_ids",
            "id",
            "keywords",
            "name",
            "path",
            "scope",
            "type"
        ]
    );
    assert_eq!(m["type"], "feedback");
    assert_eq!(m["keywords"], serde_json::json!(["postgres"]));
    assert_eq!(
        m["path"],
        repo.join(".qwen/team-memory/feedback/real-db.md")
            .display()
            .to_string()
    );
}

#[test]
fn list_reports_invalid_files_with_exit_status_1() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    write(
        &repo.join(".qwen/team-memory/project/broken.md"),
        "---\nname: x\n",
    );
    let run = sb.teammem(&repo, ["list", "--scope", "team"]);
    run.expect_code(1);
    assert_eq!(run.stdout, "No memories.\n");
    assert_eq!(
        run.stderr,
        "invalid: .qwen/team-memory/project/broken.md:1:1: unterminated frontmatter: no closing `---` line — add a line holding only `---` after the last frontmatter key\n"
    );
    let run = sb.teammem(&repo, ["list", "--scope", "team", "--json"]);
    run.expect_code(1);
    let out = json(&run.stdout);
    assert_eq!(
        keys(&out["invalid"][0]),
        ["column", "fix", "line", "message", "path"]
    );
}

#[test]
fn show_names_what_it_cannot_find() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    let run = sb.teammem(&repo, ["show", "feedback/nothing.md"]);
    run.expect_code(2);
    assert_eq!(
        run.stderr,
        "teammem: no memory `feedback/nothing.md` — see `teammem list` for ids\n"
    );
    let run = sb.teammem(&repo, ["show", "../../etc/passwd"]);
    run.expect_code(2);
    assert!(run.stderr.contains("is not a memory id"), "{}", run.stderr);

    // The same path in two scopes must be named with its scope.
    let text = memory_text("Same", "d", "user", "");
    write(&sb.base().join("memories/user/same.md"), &text);
    write(&repo.join(".qwen/team-memory/user/same.md"), &text);
    let run = sb.teammem(&repo, ["show", "user/same.md"]);
    run.expect_code(2);
    assert_eq!(
        run.stderr,
        "teammem: `user/same.md` exists in several scopes — name one: user:user/same.md, team:user/same.md\n"
    );
    sb.teammem(&repo, ["show", "team:user/same.md"])
        .expect_code(0);
}

#[test]
fn validate_without_paths_checks_every_scope_in_use() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    write(
        &repo.join(".qwen/team-memory/project/ok.md"),
        &memory_text("Ok", "d", "project", ""),
    );
    write(
        &sb.base().join("memories/user/Bad.md"),
        &memory_text("Bad", "d", "user", ""),
    );
    let run = sb.teammem(&repo, ["validate"]);
    run.expect_code(1);
    assert_eq!(
        run.stdout,
        format!(
            "{}/memories/user/Bad.md:1:1: file name `Bad.md` is not a slug — rename it to `bad.md` (lowercase letters, digits and hyphens)\n2 file(s) checked, 1 problem(s)\n",
            sb.base().display()
        )
    );
}

#[test]
fn validate_takes_a_relative_path_from_dash_c_like_scan() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    write(
        &repo.join(".qwen/team-memory/project/Bad.md"),
        &memory_text("Bad", "d", "project", ""),
    );
    let dash_c = repo.to_str().unwrap();
    let run = sb.teammem(sb.path(), ["-C", dash_c, "validate", ".qwen/team-memory"]);
    run.expect_code(1);
    assert_eq!(
        run.stdout,
        ".qwen/team-memory/project/Bad.md:1:1: file name `Bad.md` is not a slug — rename it to `bad.md` (lowercase letters, digits and hyphens)\n1 file(s) checked, 1 problem(s)\n"
    );
    let file = ".qwen/team-memory/project/Bad.md";
    sb.teammem(sb.path(), ["-C", dash_c, "validate", file])
        .expect_code(1);
    sb.teammem(sb.path(), ["-C", dash_c, "scan", file])
        .expect_code(0);
}

#[test]
fn validate_through_a_relative_dash_c_still_refuses_a_symlinked_team_folder() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    let outside = sb.path().join("outside");
    write(
        &outside.join("project/ok.md"),
        &memory_text("Ok", "d", "project", ""),
    );
    fs::create_dir_all(repo.join(".qwen")).unwrap();
    std::os::unix::fs::symlink(&outside, repo.join(".qwen/team-memory")).unwrap();
    let run = sb.teammem(
        sb.path(),
        ["-C", "project", "validate", ".qwen/team-memory"],
    );
    run.expect_code(1);
    assert!(run.stderr.contains("is a symlink"), "{}", run.stderr);
}

#[test]
fn index_without_a_scope_covers_every_scope_in_use() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    let run = sb.teammem(&repo, ["index"]);
    run.expect_code(0);
    assert!(
        run.stdout.starts_with("user: no memories yet"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("private: no memories yet"),
        "{}",
        run.stdout
    );
    sb.teammem(&repo, ["index", "--check"]).expect_code(0);
}

#[test]
fn exit_statuses_are_documented_and_kept() {
    let sb = Sandbox::new();
    let help = sb.teammem(sb.path(), ["--help"]);
    help.expect_code(0);
    assert!(
        help.stdout.contains("Exit status:\n  0    success, nothing to report\n  1    findings: invalid memories, a stale index, a secret, or a refused write\n  2    usage error, or an I/O or git error\n  141  the reader closed standard output early (teammem list | head -1)"),
        "{}",
        help.stdout
    );
    sb.teammem(sb.path(), ["no-such-command"]).expect_code(2);
    sb.teammem(sb.path(), ["list", "--scope", "everywhere"])
        .expect_code(2);
    sb.teammem(sb.path(), ["list"]).expect_code(0);
    let repo = sb.repo("project");
    sb.teammem(&repo, ["-C", sb.path().to_str().unwrap(), "init"])
        .expect_code(2);
    sb.teammem(sb.path(), ["-C", repo.to_str().unwrap(), "init"])
        .expect_code(0);
}
