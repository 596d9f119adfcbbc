//! Branch mode through git with `commit.gpgSign` on (issue 41): in a reftable and a SHA-256
//! clone, every commit my sync publishes on `team-memory` — the record re-created on a
//! teammate's tip included — is signed with my SSH key, as `git verify-commit` on the remote
//! shows; a key that cannot sign records nothing, or combines nothing, and says why.

use super::git_only_branch::World;
use crate::common::syncrun::{files_at, reason, sync_json, write_memory};

/// The commits on the remote's `team-memory` that `since` does not hold, each checked with
/// `git verify-commit` against the allowed-signers file.
fn assert_all_signed(world: &World, since: &str) {
    let (sb, remote) = (&world.sb, &world.remote);
    let mine = sb.git(
        remote,
        ["rev-list", &format!("{}..team-memory", since.trim())],
    );
    assert!(!mine.trim().is_empty(), "nothing of mine on the remote");
    for commit in mine.lines() {
        let verified = sb.git_output(remote, ["verify-commit", commit]);
        let said = String::from_utf8_lossy(&verified.stderr);
        assert!(
            verified.status.success()
                && said.contains("Good \"git\" signature for test@example.com"),
            "{commit}: {said}"
        );
    }
}

fn signs_the_memory_branch(remote_args: &[&str], my_args: &[&str]) {
    let Some(world) = World::new(remote_args, my_args, true) else {
        return;
    };
    let (sb, me) = (&world.sb, &world.me);
    let Some(key) = sb.ssh_signing_key() else {
        return;
    };
    let global = |k: &str, v: &str| sb.git(sb.path(), ["config", "--global", k, v]);
    sb.git(me, ["config", "commit.gpgSign", "true"]);

    // A teammate pushed meanwhile: my record is re-created on their tip, and signed there.
    world.mate_pushes("mate: from-mate", |mate| {
        write_memory(mate, "project", "from-mate", "From the teammate.\n");
    });
    let mate_tip = sb.git(&world.remote, ["rev-parse", "team-memory"]);
    write_memory(me, "feedback", "signed", "Signed.\n");
    let report = sync_json(sb, me, &[], &[]);
    assert_eq!(reason(&report), "", "{report:#}");
    assert_eq!(report["committed"], true, "{report:#}");
    assert_eq!(report["pushed"], true, "{report:#}");
    assert!(world.mate_sees("feedback/signed.md").is_some());
    assert!(me.join(".qwen/team-memory/project/from-mate.md").is_file());
    assert_all_signed(&world, &mate_tip);
    world.fsck_clean(me);

    // A key that cannot sign: nothing recorded, the reason and the fix said, the memory
    // stays in the folder.
    global("user.signingkey", "/nowhere/key");
    let local_tip = sb.git(me, ["rev-parse", "team-memory"]);
    let remote_tip = sb.git(&world.remote, ["rev-parse", "team-memory"]);
    write_memory(me, "feedback", "unsigned", "Not signed.\n");
    let run = sb.teammem(me, ["sync", "--json"]);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(run.code, 1, "{report:#}");
    assert_eq!(report["committed"], false, "{report:#}");
    assert_eq!(report["pushed"], false, "{report:#}");
    let said = report["warnings"].to_string();
    assert!(
        said.contains("could not be signed")
            && said.contains("nothing was recorded")
            && said.contains("git config commit.gpgsign false"),
        "{said}"
    );
    assert_eq!(sb.git(me, ["rev-parse", "team-memory"]), local_tip);
    assert_eq!(
        sb.git(&world.remote, ["rev-parse", "team-memory"]),
        remote_tip
    );
    assert!(me.join(".qwen/team-memory/feedback/unsigned.md").is_file());

    // Recorded (signed) while the remote was away; then the key breaks and a teammate
    // pushes: the record cannot be re-created on their tip, so nothing is combined or pushed.
    global("user.signingkey", key.to_str().unwrap());
    world.mate_pushes("mate: second", |mate| {
        write_memory(mate, "project", "second", "Second from the teammate.\n");
    });
    let away = sb.path().join("remote-away.git");
    std::fs::rename(&world.remote, &away).unwrap();
    let report = sync_json(sb, me, &[], &[]);
    assert_eq!(reason(&report), "fetch-failed", "{report:#}");
    assert_eq!(report["committed"], true, "{report:#}");
    std::fs::rename(&away, &world.remote).unwrap();
    let recorded = sb.git(me, ["rev-parse", "team-memory"]);
    global("user.signingkey", "/nowhere/key");
    let remote_tip = sb.git(&world.remote, ["rev-parse", "team-memory"]);
    let run = sb.teammem(me, ["sync", "--json"]);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(run.code, 1, "{report:#}");
    assert_eq!(report["pushed"], false, "{report:#}");
    let said = report["warnings"].to_string();
    assert!(
        said.contains("could not be signed") && said.contains("nothing was combined"),
        "{said}"
    );
    assert_eq!(sb.git(me, ["rev-parse", "team-memory"]), recorded);
    assert_eq!(
        sb.git(&world.remote, ["rev-parse", "team-memory"]),
        remote_tip
    );
    assert!(!files_at(sb, &world.remote, "team-memory").contains("unsigned.md"));

    // The key fixed: the next sync publishes it all, signed.
    global("user.signingkey", key.to_str().unwrap());
    let report = sync_json(sb, me, &[], &[]);
    assert_eq!(reason(&report), "", "{report:#}");
    assert_eq!(report["pushed"], true, "{report:#}");
    assert!(world.mate_sees("feedback/unsigned.md").is_some());
    assert!(me.join(".qwen/team-memory/project/second.md").is_file());
    assert_all_signed(&world, &remote_tip);
    assert_eq!(
        sb.git(
            &world.remote,
            ["log", "--merges", "--format=%h", "team-memory"]
        ),
        ""
    );
    world.fsck_clean(me);
    world.fsck_clean(&world.remote);
}

#[test]
fn a_reftable_clone_signs_its_memory_branch_commits() {
    signs_the_memory_branch(&[], &["--ref-format=reftable"]);
}

#[test]
fn a_sha256_clone_signs_its_memory_branch_commits() {
    signs_the_memory_branch(&["--object-format=sha256"], &[]);
}
