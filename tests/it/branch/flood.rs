//! Branch mode against a flood (issue 37): a teammate pushes 20,000 memories onto the memory
//! branch in one commit. Every other teammate's session start still prints its context, the
//! memories past the limit are withheld and named in one line, and the user's own new memory
//! is recorded and pushed (on that run or the next).

use crate::common::branch_team::{BranchTeam, TEAM, write_memory};

#[test]
fn a_flood_of_memories_is_bounded_and_my_own_memory_still_goes_out() {
    let team = BranchTeam::new();
    let me = team.clone_as("me");
    assert!(team.sync(&me)["skipped_reason"].is_null());
    let flooder = team.clone_as("flooder");
    team.push_flood(&flooder, 20_000);
    write_memory(&me, "feedback", "mine-after-flood", "My own memory.\n");
    // The user's own limit (git config), far below the default so the test is quick.
    team.sb.git(&me, ["config", "teammem.maxMemories", "500"]);
    let run = team.sb.teammem(&me, ["session-start", "--hook", "plain"]);
    run.expect_code(0);
    assert!(run.stdout.contains("## Team memory"), "{}", run.stdout);
    assert!(run.stdout.contains("mine-after-flood"), "{}", run.stdout);
    let on_remote = || {
        team.remote_files("team-memory")
            .iter()
            .any(|f| f.contains("mine-after-flood"))
    };
    let mut pushed = on_remote();
    let mut report = team.sync(&me);
    pushed = pushed || on_remote();
    assert!(pushed, "my own memory never reached the remote: {report:#}");
    // The flood is named in one line, not listed (once the time budget let the folder fill).
    for _ in 0..3 {
        if report.get("withheld").is_some() {
            break;
        }
        report = team.sync(&me);
    }
    let too_many: Vec<_> = report["withheld"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w.to_string().contains("too-many"))
        .collect();
    assert_eq!(too_many.len(), 1, "{report:#}");
    let written = std::fs::read_dir(me.join(format!("{TEAM}/project")))
        .unwrap()
        .count();
    assert!(written <= 500, "{written} files written");
    // A later sync of mine still shares: a teammate receives my next memory.
    write_memory(&me, "feedback", "mine-later", "Later.\n");
    assert_eq!(team.sync(&me)["pushed"], true);
    assert!(
        team.remote_files("team-memory")
            .iter()
            .any(|f| f.contains("mine-later"))
    );
}

/// Every file in `dir`, recursively.
fn files_in(dir: &std::path::Path) -> usize {
    let mut count = 0;
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else {
                count += 1;
            }
        }
    }
    count
}

/// The `withheld` lines of a report that name a limit.
fn limit_lines(report: &serde_json::Value) -> Vec<String> {
    report["withheld"]
        .as_array()
        .map(|all| {
            all.iter()
                .map(|w| w.to_string())
                .filter(|w| w.contains("too-many"))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn the_repositorys_check_file_can_lower_the_limit_and_never_raise_it() {
    let team = BranchTeam::new();
    let me = team.clone_as("me");
    assert!(team.sync(&me)["skipped_reason"].is_null());
    // A maintainer edits the memory branch with the git CLI: a check file and ten memories.
    let sb = &team.sb;
    sb.git(
        sb.path(),
        ["clone", "-q", "-b", "team-memory", &team.url, "maint"],
    );
    let maint = sb.path().join("maint");
    let config = maint.join(TEAM).join(".teammem-check.json");
    std::fs::write(&config, "{\"max_memories\": 6}\n").unwrap();
    for i in 0..10 {
        write_memory(&maint, "project", &format!("many-{i}"), "One of many.\n");
    }
    sb.git(&maint, ["add", "-A"]);
    sb.git(&maint, ["commit", "-q", "-m", "limits and memories"]);
    sb.git(&maint, ["push", "-q", "origin", "team-memory"]);

    let report = team.sync(&me);
    let lines = limit_lines(&report);
    assert_eq!(lines.len(), 1, "{report:#}");
    assert!(lines[0].contains("teammem.maxMemories = 6"), "{lines:?}");
    assert!(
        lines[0].contains(".teammem-check.json lowers it"),
        "{lines:?}"
    );
    assert!(files_in(&me.join(TEAM)) <= 6, "{report:#}");

    // A repository file asking for more than the user allows changes nothing.
    std::fs::write(&config, "{\"max_memories\": 100000}\n").unwrap();
    sb.git(&maint, ["commit", "-q", "-am", "more, please"]);
    sb.git(&maint, ["push", "-q", "origin", "team-memory"]);
    sb.git(&me, ["config", "teammem.maxMemories", "8"]);
    let report = team.sync(&me);
    let lines = limit_lines(&report);
    assert_eq!(lines.len(), 1, "{report:#}");
    assert!(lines[0].contains("teammem.maxMemories = 8"), "{lines:?}");
    assert!(lines[0].contains("git config --global"), "{lines:?}");
    assert!(files_in(&me.join(TEAM)) <= 8, "{report:#}");
}

/// A teammate with the git CLI pushes `count` memories onto the memory branch, each in a
/// folder of its own (`project/folder-<n>/memory.md`), in one commit made with
/// `git fast-import`.
fn push_folder_flood(team: &BranchTeam, dir: &std::path::Path, count: usize) {
    team.sb.git(dir, ["fetch", "-q", "origin", "team-memory"]);
    let tip = team.sb.git(dir, ["rev-parse", "FETCH_HEAD"]);
    let message = "a flood of folders\n";
    let mut stream = format!(
        "commit refs/heads/folders\ncommitter Flood <flood@example.com> 0 +0000\n\
         data {}\n{message}from {}\n",
        message.len(),
        tip.trim()
    );
    for n in 0..count {
        let text = crate::common::memory_text(
            &format!("folder {n}"),
            &format!("Folder {n}"),
            "project",
            "In a folder of its own.\n",
        );
        stream.push_str(&format!(
            "M 100644 inline {TEAM}/project/folder-{n:05}/memory.md\ndata {}\n{text}\n",
            text.len()
        ));
    }
    team.git_with_input(dir, &["fast-import", "--quiet"], stream.as_bytes());
    let refspec = "refs/heads/folders:refs/heads/team-memory";
    team.sb.git(dir, ["push", "-q", "origin", refspec]);
}

/// 5,000 memories each in a folder of its own. The fetched commits are checked for oversized
/// files by their diff, whose file modes are read from the trees: read again for every file,
/// the 5,000-entry folder made that check quadratic and session start ran past its budget
/// (`timeout` after 148 s with 10,000 folders); read once, session start finishes, prints the
/// context and publishes the user's memory on that run.
#[test]
fn a_flood_of_folders_is_read_once_and_session_start_publishes_my_memory() {
    let team = BranchTeam::new();
    let me = team.clone_as("me");
    assert!(team.sync(&me)["skipped_reason"].is_null());
    let flooder = team.clone_as("flooder");
    push_folder_flood(&team, &flooder, 5_000);
    write_memory(&me, "feedback", "mine-among-folders", "My own memory.\n");
    team.sb.git(&me, ["config", "teammem.maxMemories", "500"]);
    let run = team.sb.teammem(&me, ["session-start", "--hook", "plain"]);
    run.expect_code(0);
    assert!(run.stdout.contains("## Team memory"), "{}", run.stdout);
    assert!(!run.stdout.contains("timeout"), "{}", run.stdout);
    assert!(
        team.remote_files("team-memory")
            .iter()
            .any(|f| f.ends_with("feedback/mine-among-folders.md")),
        "{}",
        run.stdout
    );
    let report = team.sync(&me);
    assert!(report["skipped_reason"].is_null(), "{report:#}");
    assert_eq!(limit_lines(&report).len(), 1, "{report:#}");
}
