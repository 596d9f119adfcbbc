//! What a memory names, checked against the code: at delivery (`context`, `recall`), in the
//! pull request that breaks it (`check --range`, `review`), and by `stale` and `dream`.

use crate::common;
use crate::common::lifecycle;

use std::path::{Path, PathBuf};

use common::invoke::stdout_json;
use common::mcp_sdk::{call, drive, ok_text};
use common::{Sandbox, write};
use lifecycle::{put, team_dir};
use serde_json::{Value, json};

const MEMORY: &str = ".qwen/team-memory/project/migrations.md";

/// Commits everything as `who`.
fn commit_as(sb: &Sandbox, repo: &Path, who: &str, message: &str) {
    let name = format!("user.name={who}");
    let email = format!("user.email={}@example.com", who.to_lowercase());
    sb.git(repo, ["add", "-A"]);
    sb.git(
        repo,
        ["-c", &name, "-c", &email, "commit", "-q", "-m", message],
    );
}

/// A project with `src/old.rs` (long enough for rename detection), a 120-line `src/lib.rs`,
/// and a team memory naming both, committed by Carol.
fn project(sb: &Sandbox, body: &str) -> PathBuf {
    let repo = sb.repo("project");
    sb.teammem(&repo, ["init", "--current-branch"])
        .expect_code(0);
    let old: String = (1..=30)
        .map(|n| format!("pub fn step_{n}() {{}}\n"))
        .collect();
    write(&repo.join("src/old.rs"), &old);
    let lib: String = (1..=120).map(|n| format!("// line {n}\n")).collect();
    write(&repo.join("src/lib.rs"), &lib);
    put(
        &team_dir(&repo),
        "project/migrations.md",
        "Migrations run at startup",
        "Where the migrations live",
        body,
    );
    sb.teammem(&repo, ["index", "--scope", "team"])
        .expect_code(0);
    commit_as(sb, &repo, "Carol", "add the migrations memory");
    repo
}

const BODY: &str = "The migrations live in `src/old.rs`; they start from src/lib.rs:10.\n";

fn head(sb: &Sandbox, repo: &Path) -> String {
    sb.git(repo, ["rev-parse", "--short=7", "HEAD"])
        .trim()
        .to_string()
}

#[test]
fn context_and_recall_name_the_commit_that_deleted_a_path() {
    let sb = Sandbox::new();
    let repo = project(&sb, BODY);
    sb.git(&repo, ["rm", "-q", "src/old.rs"]);
    commit_as(&sb, &repo, "Alice", "drop the old migrations");
    let removed_in = head(&sb, &repo);

    let context = sb.teammem(&repo, ["context", "--query", "migrations"]);
    context.expect_code(0);
    let out = &context.stdout;
    let line = format!("Note: names src/old.rs, removed in {removed_in} by Alice on ");
    assert!(out.contains("### Migrations run at startup"), "{out}");
    assert!(out.contains(&line), "{out}");
    // Session start's index says it too, beside the memory's id.
    assert!(
        out.contains(&format!("- team:project/migrations.md: {line}")),
        "{out}"
    );

    let recall = sb.teammem(&repo, ["recall", "migrations"]);
    recall.expect_code(0);
    assert!(recall.stdout.contains(&line), "{}", recall.stdout);
    let json = stdout_json(&sb.teammem(&repo, ["recall", "migrations", "--json"]));
    let refs = json["hits"][0]["references"].as_str().unwrap();
    assert!(refs.starts_with(&line), "{refs}");

    // The per-turn hook says it beside the memory it delivers.
    let turn = sb.teammem_with_input(
        &repo,
        ["prompt-context", "--hook", "plain", "--timeout-ms", "600000"],
        r#"{"session_id": "s1", "hook_event_name": "UserPromptSubmit", "prompt": "where do the startup migrations run?"}"#,
    );
    turn.expect_code(0);
    assert!(
        turn.stdout.contains("Migrations run at startup"),
        "{}",
        turn.stdout
    );
    assert!(turn.stdout.contains(&line), "{}", turn.stdout);
}

#[test]
fn mcp_read_and_search_carry_the_line_in_the_memory_tag() {
    let sb = Sandbox::new();
    let repo = project(&sb, BODY);
    sb.git(&repo, ["rm", "-q", "src/old.rs"]);
    commit_as(&sb, &repo, "Alice", "drop the old migrations");
    let removed_in = head(&sb, &repo);
    let out = drive(
        &sb,
        &repo,
        json!([
            call("memory_read", json!({"id": "team:project/migrations.md"})),
            call("memory_search", json!({"query": "migrations"})),
        ]),
    );
    let attribute =
        format!("references=\"Note: names src/old.rs, removed in {removed_in} by Alice on ");
    for step in out["steps"].as_array().unwrap() {
        let text = ok_text(step);
        let tag = text
            .lines()
            .find(|l| l.starts_with("<memory id=\"team:project/migrations.md\""))
            .unwrap_or_else(|| panic!("{text}"));
        assert!(tag.contains(&attribute), "{tag}");
    }
}

#[test]
fn a_rename_gives_the_new_name_and_dream_rewrites_it() {
    let sb = Sandbox::new();
    let repo = project(&sb, BODY);
    sb.git(&repo, ["mv", "src/old.rs", "src/new.rs"]);
    commit_as(&sb, &repo, "Bob", "rename the migrations");
    let renamed_in = head(&sb, &repo);

    let recall = sb.teammem(&repo, ["recall", "migrations"]);
    recall.expect_code(0);
    let line = format!("Note: names src/old.rs, renamed to src/new.rs in {renamed_in} by Bob on ");
    assert!(recall.stdout.contains(&line), "{}", recall.stdout);

    let stale = stdout_json(&sb.teammem(&repo, ["stale", "--json"]));
    let listed = stale
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == "project/migrations.md")
        .expect("stale lists the memory");
    assert!(
        listed["broken_references"][0]
            .as_str()
            .unwrap()
            .starts_with("names src/old.rs, renamed to src/new.rs"),
        "{listed}"
    );

    let dream = sb.teammem(
        &repo,
        ["dream", "--force", "--scope", "team", "--format", "json"],
    );
    dream.expect_code(0);
    let report = &stdout_json(&dream)[0];
    assert_eq!(
        report["rewritten_paths"],
        serde_json::json!(["project/migrations.md: src/old.rs -> src/new.rs"]),
        "{report}"
    );
    let text = std::fs::read_to_string(repo.join(MEMORY)).unwrap();
    assert!(
        text.contains("The migrations live in `src/new.rs`; they start from src/lib.rs:10."),
        "{text}"
    );
    let recall = sb.teammem(&repo, ["recall", "migrations"]);
    assert!(
        recall.stdout.contains("References checked: 2 paths exist."),
        "{}",
        recall.stdout
    );
}

#[test]
fn a_line_past_the_end_is_flagged_and_holding_references_say_so() {
    let sb = Sandbox::new();
    let repo = project(
        &sb,
        "Entry point: src/lib.rs:900, helpers in `src/old.rs`.\n",
    );
    let recall = sb.teammem(&repo, ["recall", "entry"]);
    recall.expect_code(0);
    assert!(
        recall
            .stdout
            .contains("Note: src/lib.rs:900 is past the file's end (120 lines)."),
        "{}",
        recall.stdout
    );
}

#[test]
fn urls_outside_paths_and_prose_are_not_references() {
    let sb = Sandbox::new();
    let repo = project(
        &sb,
        "See https://github.com/acme/shop/blob/main/src/gone.rs#L10 and /etc/nginx/gone.conf,\n\
         ~/.config/gone.toml and ../other/src/gone.rs. Read and/or write, I/O, TCP/IP, 1/2,\n\
         2026/11/02, 90 km/h. Tests in src/lib.rs.\n",
    );
    let recall = sb.teammem(&repo, ["recall", "nginx"]);
    recall.expect_code(0);
    assert!(
        recall.stdout.contains("References checked: 1 path exists."),
        "{}",
        recall.stdout
    );
    assert!(!recall.stdout.contains("Note:"), "{}", recall.stdout);
}

/// A pull request branch `pr` off `main` that deletes `src/old.rs` and touches no memory.
fn code_only_pr(sb: &Sandbox, repo: &Path) -> String {
    sb.git(repo, ["checkout", "-q", "-b", "pr"]);
    sb.git(repo, ["rm", "-q", "src/old.rs"]);
    commit_as(sb, repo, "Alice", "drop the old migrations");
    sb.git(repo, ["rev-parse", "HEAD"]).trim().to_string()
}

#[test]
fn a_code_only_pull_request_deleting_a_path_warns_with_sarif() {
    let sb = Sandbox::new();
    let repo = project(&sb, BODY);
    let removed_in = code_only_pr(&sb, &repo);

    let human = sb.teammem(&repo, ["check", "--range", "main..pr"]);
    human.expect_code(0);
    assert!(human.stdout.contains(MEMORY), "{}", human.stdout);
    assert!(
        human.stdout.contains("warning memory-reference"),
        "{}",
        human.stdout
    );
    assert!(
        human
            .stdout
            .contains("update or forget: `teammem forget team:project/migrations.md`"),
        "{}",
        human.stdout
    );

    let sarif = sb.teammem(&repo, ["check", "--range", "main..pr", "--format", "sarif"]);
    sarif.expect_code(0);
    let doc: Value = serde_json::from_str(&sarif.stdout).unwrap();
    assert_eq!(doc["version"], "2.1.0");
    let run = &doc["runs"][0];
    let ids: Vec<&str> = run["tool"]["driver"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{}", sarif.stdout);
    let result = &results[0];
    assert_eq!(result["ruleId"], "memory-reference");
    assert_eq!(
        ids[result["ruleIndex"].as_u64().unwrap() as usize],
        "memory-reference"
    );
    assert_eq!(result["level"], "warning");
    let location = &result["locations"][0]["physicalLocation"];
    assert_eq!(location["artifactLocation"]["uri"], MEMORY);
    // The body's first line is the memory's sixth (five frontmatter lines before it).
    assert_eq!(location["region"]["startLine"], 6);
    assert_eq!(result["properties"]["commit"], removed_in.as_str());
    let message = result["message"]["text"].as_str().unwrap();
    assert!(
        message.contains("names `src/old.rs`, which this change deletes in commit"),
        "{message}"
    );

    // A repository configuration can make it an error.
    sb.git(&repo, ["checkout", "-q", "main"]);
    write(
        &repo.join(".qwen/team-memory/.teammem-check.json"),
        r#"{"severity": {"memory-reference": "error"}}"#,
    );
    commit_as(&sb, &repo, "Carol", "memory references are errors here");
    sb.git(&repo, ["checkout", "-q", "pr"]);
    sb.git(&repo, ["rebase", "-q", "main"]);
    let strict = sb.teammem(&repo, ["check", "--range", "main..pr"]);
    strict.expect_code(1);
    assert!(
        strict.stdout.contains("error   memory-reference"),
        "{}",
        strict.stdout
    );

    // Configured, the pre-commit hook's check reports it as well.
    sb.git(&repo, ["checkout", "-q", "main"]);
    sb.git(&repo, ["rm", "-q", "src/old.rs"]);
    let staged = sb.teammem(&repo, ["check", "--staged"]);
    staged.expect_code(1);
    assert!(
        staged.stdout.contains("memory-reference"),
        "{}",
        staged.stdout
    );
}

#[test]
fn review_lists_the_memory_and_the_hook_stays_quiet() {
    let sb = Sandbox::new();
    let repo = project(&sb, BODY);
    sb.git(&repo, ["checkout", "-q", "-b", "pr"]);
    sb.git(&repo, ["rm", "-q", "src/old.rs"]);
    // The pre-commit hook's check does not hold up a commit that deletes a file.
    let staged = sb.teammem(&repo, ["check", "--staged"]);
    staged.expect_code(0);
    assert!(
        !staged.stdout.contains("memory-reference"),
        "{}",
        staged.stdout
    );
    commit_as(&sb, &repo, "Alice", "drop the old migrations");

    let review = sb.teammem(&repo, ["review", "main..pr"]);
    review.expect_code(0);
    let md = &review.stdout;
    assert!(
        md.contains("### Team memories this change makes out of date"),
        "{md}"
    );
    assert!(md.contains(&format!("`{MEMORY}:6`")), "{md}");
    assert!(md.contains("src/old.rs"), "{md}");
}

#[test]
fn a_rename_in_a_pull_request_names_the_new_path() {
    let sb = Sandbox::new();
    let repo = project(&sb, BODY);
    sb.git(&repo, ["checkout", "-q", "-b", "pr"]);
    sb.git(&repo, ["mv", "src/old.rs", "src/new.rs"]);
    commit_as(&sb, &repo, "Bob", "rename");
    let json =
        stdout_json(&sb.teammem(&repo, ["check", "--range", "main..pr", "--format", "json"]));
    let message = json["findings"][0]["message"].as_str().unwrap();
    assert!(
        message.contains("names `src/old.rs`, which this change renames to `src/new.rs`"),
        "{message}"
    );
}

/// The one file under `dir` named `name`, wherever below it lies.
fn find_file(dir: &Path, name: &str) -> Option<PathBuf> {
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if let Some(found) = find_file(&path, name) {
                return Some(found);
            }
        } else if path.file_name().is_some_and(|n| n == name) {
            return Some(path);
        }
    }
    None
}

#[test]
fn what_history_said_is_kept_between_runs_and_holds_when_head_moves_or_the_file_breaks() {
    let sb = Sandbox::new();
    let repo = project(&sb, BODY);
    sb.git(&repo, ["rm", "-q", "src/old.rs"]);
    commit_as(&sb, &repo, "Alice", "drop the old migrations");
    let removed_in = head(&sb, &repo);
    let line = format!(
        "- team:project/migrations.md: Note: names src/old.rs, removed in {removed_in} by Alice on "
    );
    let says_it = |why: &str| {
        let run = sb.teammem(&repo, ["session-start"]);
        run.expect_code(0);
        assert!(run.stdout.contains(&line), "{why}:\n{}", run.stdout);
    };

    says_it("first run, nothing saved");
    let saved = find_file(&sb.base(), "references.json").expect("the walk's answers are saved");
    assert!(
        !saved.starts_with(&repo),
        "kept outside the work tree: {saved:?}"
    );
    assert!(
        std::fs::read_to_string(&saved)
            .unwrap()
            .contains("src/old.rs"),
        "the saved file holds the gone path"
    );
    says_it("answered from the saved file");

    // HEAD moves on: a walk from the new HEAD reaches the old one and takes its answer.
    write(&repo.join("notes.txt"), "later\n");
    commit_as(&sb, &repo, "Bob", "later work");
    says_it("after HEAD moved");
    // A path that comes back holds again.
    write(&repo.join("src/old.rs"), "pub fn back() {}\n");
    sb.git(&repo, ["add", "src/old.rs"]);
    let staged = sb.teammem(&repo, ["session-start"]);
    assert!(
        !staged.stdout.contains("names src/old.rs"),
        "a staged file holds: {}",
        staged.stdout
    );
    sb.git(&repo, ["rm", "-q", "--cached", "src/old.rs"]);
    std::fs::remove_file(repo.join("src/old.rs")).unwrap();

    // A damaged file counts as none: the walk runs again and says the same.
    std::fs::write(&saved, b"{ torn").unwrap();
    says_it("after the saved file broke");
    assert!(
        std::fs::read_to_string(&saved).unwrap().starts_with('{')
            && serde_json::from_str::<Value>(&std::fs::read_to_string(&saved).unwrap()).is_ok(),
        "the saved file is written again whole"
    );
}
