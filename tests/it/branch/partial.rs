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
