//! Partial and shallow clones in branch mode, through libgit2 (issue 37): `--filter=tree:0`
//! leaves out the memory branch's trees as well as its blobs, `--filter=blob:limit=1k` the
//! larger memories only, `--depth 1` all history. Each clone's first sync publishes its own
//! memory and writes the teammates' (a tree:0 clone failed with `object not found` on every
//! sync); with the promisor remote offline the first sync stops with one line, keeps the
//! memory, and the next one completes.

use crate::common::branch_team::{BranchTeam, TEAM, has_memory, write_memory};

#[test]
fn partial_and_shallow_clones_sync_the_memory_branch() {
    let team = BranchTeam::new();
    team.sb
        .git(&team.remote, ["config", "uploadpack.allowFilter", "true"]);
    let seed = team.sb.path().join("seed");
    write_memory(
        &seed,
        "project",
        "large",
        &"A long memory line.\n".repeat(100),
    );
    assert_eq!(team.sync(&seed)["pushed"], true);

    for (name, how) in [
        ("tree0", "--filter=tree:0"),
        ("limit", "--filter=blob:limit=1k"),
        ("shallow", "--depth=1"),
    ] {
        team.sb
            .git(team.sb.path(), ["clone", "-q", how, &team.url, name]);
        let me = team.sb.path().join(name);
        team.sb.git(
            &me,
            ["config", "user.email", &format!("{name}@example.com")],
        );
        write_memory(&me, "project", name, "My memory.\n");
        let away = team.sb.path().join("remote.away");
        std::fs::rename(&team.remote, &away).unwrap();
        let offline = team.sync(&me);
        std::fs::rename(&away, &team.remote).unwrap();
        assert!(has_memory(&me, "project", name), "{how}");
        let report = team.sync(&me);
        assert_eq!(
            report["skipped_reason"],
            serde_json::Value::Null,
            "{how}: {offline:#}\n{report:#}"
        );
        assert_eq!(report["pushed"], true, "{how}: {report:#}");
        assert!(has_memory(&me, "project", "seeded"), "{how}");
        assert!(has_memory(&me, "project", "large"), "{how}");
        let remote = team.remote_files("team-memory");
        assert!(
            remote.contains(&format!("{TEAM}/project/{name}.md")),
            "{how}: {remote:?}"
        );
        assert_eq!(team.sb.git(&me, ["status", "--porcelain"]), "", "{how}");
        let fsck = team.sb.git_output(&me, ["fsck", "--no-progress"]);
        assert!(
            fsck.status.success(),
            "{how}: {}",
            String::from_utf8_lossy(&fsck.stderr)
        );
    }
}

/// A `--filter=blob:none` clone of a memory branch holding 300 memories, over `git daemon`
/// behind a connection-counting proxy: the first sync fetches the 300 missing blobs in one
/// request, not one connection each (`git cat-file --batch` fetched them one by one; 1,000
/// memories ran past the 15 s budget and the sync never completed).
#[test]
fn a_partial_clone_fetches_its_missing_memories_in_one_request() {
    let team = BranchTeam::new();
    team.sb
        .git(&team.remote, ["config", "uploadpack.allowFilter", "true"]);
    let seed = team.sb.path().join("seed");
    team.push_flood(&seed, 300);
    let daemon = crate::common::servers::GitDaemon::start(&team.sb, team.sb.path());
    let proxy = crate::common::count_proxy::CountProxy::start(daemon.port);
    let url = proxy.url("remote.git");
    team.sb.git(
        team.sb.path(),
        ["clone", "-q", "--filter=blob:none", &url, "partial"],
    );
    let me = team.sb.path().join("partial");
    team.sb
        .git(&me, ["config", "user.email", "partial@example.com"]);
    write_memory(&me, "feedback", "mine", "My memory.\n");
    proxy.take();
    let report = team.sync(&me);
    let connections = proxy.take();
    assert!(report["skipped_reason"].is_null(), "{report:#}");
    assert_eq!(report["pushed"], true, "{report:#}");
    assert!(has_memory(&me, "feedback", "mine"));
    let written = std::fs::read_dir(me.join(TEAM).join("project"))
        .unwrap()
        .count();
    assert!(written >= 300, "{written} memories written");
    assert!(connections <= 6, "{connections} connections for one sync");
}
