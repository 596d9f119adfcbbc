//! A session start renders each scope's block (the index as the agent sees it, the line on
//! the paths its memories name, what the gate withheld) once, and gives the same block again
//! while nothing it depends on changed — and never an outdated one: an edit in place, a secret
//! added, a stricter rule set and a `HEAD` that deletes a named path each show at the very
//! next start.

use std::path::Path;

use crate::common::{Sandbox, invoke, memory_text, write};

/// Older than the 2-second window within which a file's stamp is not trusted.
fn settle() {
    std::thread::sleep(std::time::Duration::from_millis(2_300));
}

/// What a plain session start gives, without its line on sync — switched off, so that no
/// commit of the memories edited here moves `HEAD` (which alone renders every block again).
fn start(sb: &Sandbox, repo: &Path) -> String {
    let off = [("QWEN_CODE_MEMORY_TEAM_SYNC", Some("0"))];
    let run = invoke::teammem_with(sb, repo, ["session-start", "--hook", "plain"], &off, None);
    run.expect_code(0);
    run.stdout
        .lines()
        .filter(|line| !line.starts_with("Team memory sync:"))
        .map(|line| format!("{line}\n"))
        .collect()
}

fn put(repo: &Path, rel: &str, name: &str, body: &str) {
    let kind = rel.split('/').next().unwrap();
    // Each its own description: Qwen's index lists memories sharing one on a single line.
    write(
        &repo.join(".qwen/team-memory").join(rel),
        &memory_text(name, &format!("About the {name}"), kind, body),
    );
}

fn append(path: &Path, text: &str) {
    let mut file = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    std::io::Write::write_all(&mut file, text.as_bytes()).unwrap();
}

#[test]
fn a_kept_block_is_given_again_only_while_nothing_it_shows_changed() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    write(&repo.join("src/tapir.rs"), "pub fn feed() {}\n");
    put(
        &repo,
        "project/zebra.md",
        "Zebra crossing",
        "Repainted every spring.\n",
    );
    put(
        &repo,
        "user/okapi.md",
        "Okapi enclosure",
        "Closes at dusk.\n",
    );
    put(
        &repo,
        "feedback/tapir.md",
        "Tapir feeding",
        "The feeding code is in `src/tapir.rs`.\n",
    );
    put(
        &repo,
        "reference/heron.md",
        "Heron pond",
        "The pond's map: https://maps.example.net/heron-pond\n",
    );
    sb.git(&repo, ["add", "-A"]);
    sb.git(&repo, ["commit", "-qm", "zoo"]);
    settle();

    let first = start(&sb, &repo);
    for name in [
        "Zebra crossing",
        "Okapi enclosure",
        "Tapir feeding",
        "Heron pond",
    ] {
        assert!(first.contains(name), "{name}: {first}");
    }
    assert!(first.contains("References: 1 path"), "{first}");
    assert!(!first.contains("Withheld"), "{first}");
    assert_eq!(
        start(&sb, &repo),
        first,
        "the kept blocks give the same context"
    );
    let blocks = walkdir(&sb.base())
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with("team-memory-context.json"))
        .count();
    assert_eq!(blocks, 1, "the team block was kept");

    // An edit in place, its folder untouched: at once, and once it settled.
    let team = repo.join(".qwen/team-memory");
    let okapi = std::fs::read_to_string(team.join("user/okapi.md")).unwrap();
    std::fs::write(
        team.join("user/okapi.md"),
        okapi.replace("Okapi enclosure", "Okapi house"),
    )
    .unwrap();
    let edited = start(&sb, &repo);
    assert!(edited.contains("Okapi house"), "{edited}");
    assert!(!edited.contains("Okapi enclosure"), "{edited}");
    settle();
    assert_eq!(start(&sb, &repo), edited);
    assert_eq!(start(&sb, &repo), edited);

    // A secret added in place: withheld at the next start.
    append(
        &team.join("project/zebra.md"),
        "The crossing's token is ghp_aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5.\n",
    );
    let secret = start(&sb, &repo);
    assert!(!secret.contains("Zebra crossing"), "{secret}");
    assert!(
        !secret.contains("aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5"),
        "{secret}"
    );
    assert!(
        secret.contains("Withheld by the memory gate: 1 memory (secret)"),
        "{secret}"
    );
    settle();
    assert_eq!(start(&sb, &repo), secret);

    // A stricter rule set: a link off the allow-list becomes an error.
    write(
        &team.join(".teammem-check.json"),
        r#"{"severity": {"trust-external-link": "error"}}"#,
    );
    let strict = start(&sb, &repo);
    assert!(!strict.contains("Heron pond"), "{strict}");
    assert!(
        strict.contains("Withheld by the memory gate: 2 memories"),
        "{strict}"
    );
    std::fs::remove_file(team.join(".teammem-check.json")).unwrap();
    assert_eq!(start(&sb, &repo), secret, "the old rules, the old block");

    // HEAD deletes the path a memory names.
    sb.git(&repo, ["rm", "-q", "src/tapir.rs"]);
    sb.git(&repo, ["commit", "-qm", "tapir code gone"]);
    let moved = start(&sb, &repo);
    assert!(!moved.contains("References: 1 path"), "{moved}");
    assert!(
        moved.contains("team:feedback/tapir.md: Note: names src/tapir.rs, removed in"),
        "{moved}"
    );
}

#[test]
fn a_path_staged_or_unstaged_shows_at_the_next_start_though_the_block_was_kept() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    write(&repo.join("src/tapir.rs"), "pub fn feed() {}\n");
    put(
        &repo,
        "feedback/tapir.md",
        "Tapir feeding",
        "The feeding code is in `src/tapir.rs`.\n",
    );
    sb.git(&repo, ["add", "-A"]);
    sb.git(&repo, ["commit", "-qm", "zoo"]);
    sb.git(&repo, ["rm", "-q", "src/tapir.rs"]);
    sb.git(&repo, ["commit", "-qm", "tapir code gone"]);
    settle();
    let note = "team:feedback/tapir.md: Note: names src/tapir.rs, removed in";
    let gone = start(&sb, &repo);
    assert!(gone.contains(note), "{gone}");
    assert_eq!(start(&sb, &repo), gone, "the kept block");

    // Staged again: the path holds, at once and once the staging index settled.
    write(&repo.join("src/tapir.rs"), "pub fn feed() {}\n");
    sb.git(&repo, ["add", "src/tapir.rs"]);
    let staged = start(&sb, &repo);
    assert!(!staged.contains(note), "{staged}");
    settle();
    assert!(!start(&sb, &repo).contains(note));
    assert!(!start(&sb, &repo).contains(note));

    // Unstaged: the note is back.
    sb.git(&repo, ["rm", "-q", "--cached", "src/tapir.rs"]);
    std::fs::remove_file(repo.join("src/tapir.rs")).unwrap();
    settle();
    assert_eq!(start(&sb, &repo), gone);
}

/// The withheld line of a Qwen Code session start, with Qwen Code's own team memory on (so the
/// team index is Qwen's, and teammem only says what its gate withholds from it).
fn qwen_withheld_line(sb: &Sandbox, repo: &Path) -> String {
    let off = [("QWEN_CODE_MEMORY_TEAM_SYNC", Some("0"))];
    let run = invoke::teammem_with(sb, repo, ["session-start", "--hook", "qwen"], &off, None);
    run.expect_code(0);
    crate::common::hook_context(&run, "SessionStart")
        .lines()
        .find(|line| line.starts_with("Withheld by the memory gate"))
        .unwrap_or("")
        .to_string()
}

#[test]
fn qwen_code_s_withheld_line_is_kept_with_the_team_block_and_changes_at_the_next_start() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    write(
        &repo.join(".qwen/settings.json"),
        r#"{"memory": {"enableTeamMemory": true}}"#,
    );
    put(
        &repo,
        "project/zebra.md",
        "Zebra crossing",
        "Repainted every spring.\n",
    );
    put(
        &repo,
        "reference/heron.md",
        "Heron pond",
        "The pond's token is ghp_aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5.\n",
    );
    sb.git(&repo, ["add", "-A"]);
    sb.git(&repo, ["commit", "-qm", "zoo"]);
    settle();

    let first = qwen_withheld_line(&sb, &repo);
    assert!(
        first.starts_with("Withheld by the memory gate: 1 memory (secret)"),
        "{first}"
    );
    let blocks: Vec<_> = walkdir(&sb.base())
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with("team-memory-context.json"))
        .collect();
    assert_eq!(blocks.len(), 1, "the team block was kept: {blocks:?}");
    let written = |path: &Path| {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(path).unwrap();
        (meta.ino(), meta.mtime(), meta.mtime_nsec())
    };
    let kept = written(&blocks[0]);
    assert_eq!(qwen_withheld_line(&sb, &repo), first);
    assert_eq!(
        written(&blocks[0]),
        kept,
        "the next start used the kept block, without rendering it again"
    );

    // A secret added in place: counted at the very next start, and once it settled.
    let team = repo.join(".qwen/team-memory");
    append(
        &team.join("project/zebra.md"),
        "The crossing's token is ghp_zY9xW7vU5tS3rQ1pO9nM7lK5jI3hG1fE9dC7.\n",
    );
    let two = qwen_withheld_line(&sb, &repo);
    assert!(
        two.starts_with("Withheld by the memory gate: 2 memories (secret)"),
        "{two}"
    );
    settle();
    assert_eq!(qwen_withheld_line(&sb, &repo), two);

    // A new file breaking another rule, and a stricter rule set.
    put(
        &repo,
        "user/okapi.md",
        "Okapi enclosure",
        "The keeper's notes: https://maps.example.net/okapi\n",
    );
    write(
        &team.join(".teammem-check.json"),
        r#"{"severity": {"trust-external-link": "error"}}"#,
    );
    let three = qwen_withheld_line(&sb, &repo);
    assert!(
        three.starts_with("Withheld by the memory gate: 3 memories"),
        "{three}"
    );
    assert!(three.contains("trust-external-link"), "{three}");
    std::fs::remove_file(team.join(".teammem-check.json")).unwrap();
    std::fs::remove_file(team.join("reference/heron.md")).unwrap();
    let back = qwen_withheld_line(&sb, &repo);
    assert!(
        back.starts_with("Withheld by the memory gate: 1 memory (secret)"),
        "{back}"
    );
}

/// Every file below `dir`.
fn walkdir(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walkdir(&path));
        } else {
            out.push(path);
        }
    }
    out
}
