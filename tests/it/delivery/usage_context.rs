//! `teammem cite`, `teammem stale` and `teammem context`.

use crate::common;
use crate::common::lifecycle;

use std::fs;
use std::path::Path;
use std::process::Command;

use common::Sandbox;
use lifecycle::{now, private_dir, private_state, put, team_dir};

const DAY: i64 = 86_400;

fn set_mtime(path: &Path, secs: i64) {
    let ok = Command::new("touch")
        .arg("-d")
        .arg(format!("@{secs}"))
        .arg(path)
        .status()
        .unwrap()
        .success();
    assert!(ok);
}

fn commit_at(sb: &Sandbox, repo: &Path, secs: i64) {
    sb.git(repo, ["add", "-A"]);
    sb.git(
        repo,
        ["commit", "-q", "-m", "memory", &format!("--date=@{secs}")],
    );
}

fn stale_ids(sb: &Sandbox, repo: &Path, days: &str) -> Vec<String> {
    let run = sb.teammem(repo, ["stale", "--days", days, "--json"]);
    run.expect_code(0);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let mut ids: Vec<String> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            format!(
                "{}:{} {}",
                s["scope"].as_str().unwrap(),
                s["id"].as_str().unwrap(),
                s["since_what"].as_str().unwrap()
            )
        })
        .collect();
    ids.sort();
    ids
}

#[test]
fn stale_windows_at_their_edges() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    sb.teammem(&repo, ["init", "--current-branch"])
        .expect_code(0);
    let t = now();
    // Team memories: counted from the commit that first added them, whatever the mtime.
    put(
        &team_dir(&repo),
        "project/old-team.md",
        "Old team memory",
        "d",
        "x\n",
    );
    commit_at(&sb, &repo, t - 30 * DAY - 120);
    put(
        &team_dir(&repo),
        "project/new-team.md",
        "New team memory",
        "d",
        "x\n",
    );
    commit_at(&sb, &repo, t - 30 * DAY + 120);
    // A later edit does not make a memory younger than its creation.
    put(
        &team_dir(&repo),
        "project/old-team.md",
        "Old team memory",
        "d",
        "edited\n",
    );
    commit_at(&sb, &repo, t);

    // Private memories: counted from their file time.
    let dir = private_dir(&sb, &repo);
    put(
        &dir,
        "project/old-private.md",
        "Old private memory",
        "d",
        "x\n",
    );
    put(
        &dir,
        "project/new-private.md",
        "New private memory",
        "d",
        "x\n",
    );
    set_mtime(&dir.join("project/old-private.md"), t - 30 * DAY - 120);
    set_mtime(&dir.join("project/new-private.md"), t - 30 * DAY + 120);

    // Cited memories: counted from their last citation, whatever their age.
    put(
        &dir,
        "project/cited-long-ago.md",
        "Cited long ago",
        "d",
        "x\n",
    );
    put(&dir, "project/cited-lately.md", "Cited lately", "d", "x\n");
    set_mtime(&dir.join("project/cited-lately.md"), t - 400 * DAY);
    sb.teammem(
        &repo,
        [
            "cite",
            "project/cited-long-ago.md",
            "project/cited-lately.md",
        ],
    )
    .expect_code(0);
    let usage_path = private_state(&sb, &repo).join("memory-usage.json");
    let mut usage: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&usage_path).unwrap()).unwrap();
    assert_eq!(
        usage["memories"]["project/cited-lately.md"]["usage_count"],
        1
    );
    usage["memories"]["project/cited-long-ago.md"]["last_usage"] = (t - 30 * DAY - 120).into();
    usage["memories"]["project/cited-lately.md"]["last_usage"] = (t - 30 * DAY + 120).into();
    fs::write(&usage_path, usage.to_string()).unwrap();

    assert_eq!(
        stale_ids(&sb, &repo, "30"),
        [
            "private:project/cited-long-ago.md last-usage",
            "private:project/old-private.md file-time",
            "team:project/old-team.md first-commit",
        ]
    );
    assert_eq!(stale_ids(&sb, &repo, "31"), Vec::<String>::new());
    assert_eq!(stale_ids(&sb, &repo, "29").len(), 6);
    // Citing never touches the team files.
    assert_eq!(sb.git(&repo, ["status", "--porcelain"]), "");
}

#[test]
fn cite_counts_and_refuses_unknown_ids() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    put(
        &private_dir(&sb, &repo),
        "project/a.md",
        "Alpha memory",
        "a",
        "x\n",
    );
    sb.teammem(&repo, ["cite", "project/a.md"]).expect_code(0);
    let run = sb.teammem(&repo, ["cite", "project/a.md", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v[0]["usage_count"], 2);
    let bad = sb.teammem(&repo, ["cite", "project/nope.md"]);
    bad.expect_code(2);
    assert!(
        bad.stderr.contains("no memory `project/nope.md`"),
        "{}",
        bad.stderr
    );
}

#[test]
fn context_holds_indexes_the_verify_line_and_recall_results() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    sb.teammem(&repo, ["init", "--current-branch"])
        .expect_code(0);
    for (scope, name) in [
        ("user", "User likes terse answers"),
        ("private", "Local build uses mold"),
        ("team", "Deploys go through staging"),
    ] {
        sb.teammem(
            &repo,
            [
                "add",
                "--scope",
                scope,
                "--type",
                "project",
                "--name",
                name,
                "--description",
                "d",
                "--body",
                "Body of it.",
            ],
        )
        .expect_code(0);
    }
    let plain = sb.teammem(&repo, ["context", "--query", "staging deploys"]);
    plain.expect_code(0);
    let text = plain.stdout;
    let user = text.find("## User memory").unwrap();
    let private = text.find("## Private project memory").unwrap();
    let team = text.find("## Team memory").unwrap();
    assert!(user < private && private < team, "{text}");
    assert!(
        text.contains("Memories are point-in-time observations, not live state: verify"),
        "{text}"
    );
    assert!(
        text.contains(
            "- [Deploys go through staging](project/deploys-go-through-staging.md) — d\n"
        ),
        "{text}"
    );
    assert!(text.contains("## Memories relevant to: staging deploys\n\n### Deploys go through staging (team:project/deploys-go-through-staging.md, today)\nd\n\n<memory-data source=\"team:project/deploys-go-through-staging.md\">\nBody of it.\n</memory-data>\n"), "{text}");

    for hook in ["qwen", "claude"] {
        let run = sb.teammem(&repo, ["context", "--hook", hook]);
        run.expect_code(0);
        let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        assert_eq!(v["hookSpecificOutput"]["hookEventName"], "SessionStart");
        let ctx = v["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap();
        assert!(
            ctx.starts_with("# Memory\n\nMemories are point-in-time"),
            "{ctx}"
        );
        assert!(!ctx.contains("## Memories relevant to"));
    }
    let meta: serde_json::Value = serde_json::from_str(
        &fs::read_to_string(private_state(&sb, &repo).join("meta.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(meta["sessions_since_dream"], 3);
}

#[test]
fn recall_and_stale_work_in_a_shallow_clone() {
    let sb = Sandbox::new();
    let origin = sb.repo("origin");
    sb.teammem(&origin, ["init", "--current-branch"])
        .expect_code(0);
    let t = now();
    put(
        &team_dir(&origin),
        "project/deploy.md",
        "Deploy steps",
        "d",
        "x\n",
    );
    commit_at(&sb, &origin, t - 40 * DAY);
    std::fs::write(origin.join("README.md"), "# edited\n").unwrap();
    commit_at(&sb, &origin, t - 35 * DAY);
    let url = format!("file://{}", origin.display());
    sb.git(sb.path(), ["clone", "-q", "--depth", "1", &url, "shallow"]);
    let clone = sb.path().join("shallow");
    assert!(clone.join(".git/shallow").exists());

    let run = sb.teammem(&clone, ["recall", "deploy", "--json"]);
    run.expect_code(0);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["hits"][0]["id"], "project/deploy.md");
    // The commit that changed it lies beyond the shallow boundary; as in `git log`, the
    // boundary commit counts as the one that brought it.
    assert_eq!(v["hits"][0]["changed_from"], "commit");
    assert_eq!(v["hits"][0]["age"], "35 days old");
    assert_eq!(
        stale_ids(&sb, &clone, "30"),
        ["team:project/deploy.md first-commit"]
    );
}
