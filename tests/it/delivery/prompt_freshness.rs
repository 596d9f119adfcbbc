//! `teammem prompt-context` answers from the recall index and the ages kept for `HEAD`, and
//! still never gives a turn a stale or withheld memory: whatever changed in the team folder
//! after the index was built (an edit in place, a rename, a deletion, a new file, a secret
//! added) is in the very next turn, in a folder big enough that other threads take most of the
//! stats that prove the index fresh — and as well when a running `teammem mcp` vouches for the
//! index, so that a turn takes no stats at all.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{Sandbox, hook_context, memory_text, write};

const TOKEN_TAIL: &str = "aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5";

/// The context one new session's turn gets for `prompt`.
fn turn(sb: &Sandbox, repo: &Path, session: &str, prompt: &str) -> String {
    let input = serde_json::json!({
        "session_id": session,
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    })
    .to_string();
    let run = crate::common::prompt_turn(sb, repo, "claude", &input, &[]);
    assert!(!run.stderr.contains(TOKEN_TAIL), "{}", run.stderr);
    hook_context(&run, "UserPromptSubmit")
}

fn put(repo: &Path, rel: &str, name: &str, body: &str) {
    let kind = rel.split('/').next().unwrap();
    write(
        &repo.join(".qwen/team-memory").join(rel),
        &memory_text(name, "Build notes", kind, body),
    );
}

/// A `teammem mcp` server of the session, running until dropped.
struct McpServer(Child);

impl McpServer {
    fn start(sb: &Sandbox, repo: &Path) -> McpServer {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_teammem"));
        sb.isolate(&mut cmd)
            .current_dir(repo)
            .arg("mcp")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        McpServer(cmd.spawn().expect("start teammem mcp"))
    }
}

impl Drop for McpServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Whether the server listening beside the index file `index` vouches for it as it now
/// stands (the question a turn asks, with the checksum in the index's header).
fn vouched(index: &Path) -> bool {
    let bytes = std::fs::read(index).unwrap();
    let sum = u64::from_le_bytes(bytes[16..24].try_into().unwrap());
    let Ok(mut stream) = UnixStream::connect(index.with_extension("watch")) else {
        return false;
    };
    stream
        .set_read_timeout(Some(Duration::from_secs(2)))
        .unwrap();
    stream
        .write_all(format!("{sum:016x}\n").as_bytes())
        .unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer == "yes\n"
}

/// Asks until the server vouches for the index (it proves an index when first asked).
fn wait_until_vouched(index: &Path) {
    let until = Instant::now() + Duration::from_secs(20);
    while !vouched(index) {
        assert!(
            Instant::now() < until,
            "the MCP server never vouched for the index"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn every_change_after_the_index_was_built_is_in_the_next_turn() {
    changes_after_the_index_reach_the_next_turn(false);
}

#[test]
fn with_the_mcp_server_vouching_every_change_is_in_the_next_turn_too() {
    changes_after_the_index_reach_the_next_turn(true);
}

fn changes_after_the_index_reach_the_next_turn(with_server: bool) {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    for i in 0..1200 {
        let kind = ["user", "feedback", "project", "reference"][i % 4];
        put(
            &repo,
            &format!("{kind}/note-{i:04}.md"),
            &format!("Note {i}"),
            "The cache is warmed before the deploy.\n",
        );
    }
    put(
        &repo,
        "project/zebra.md",
        "Zebra crossing",
        "The zebra crossing by the office is repainted every spring.\n",
    );
    put(
        &repo,
        "user/okapi.md",
        "Okapi enclosure",
        "The okapi enclosure closes at dusk, never later.\n",
    );
    put(
        &repo,
        "feedback/tapir.md",
        "Tapir keeper",
        "The tapir keeper rotates weekly; ask the tapir keeper first.\n",
    );
    sb.git(&repo, ["add", "-A"]);
    sb.git(&repo, ["commit", "-qm", "team memory"]);
    // Older than the index's 2-second window, so that it trusts their stamps.
    std::thread::sleep(std::time::Duration::from_millis(2_300));

    // The first turn builds the index; the next ones answer from it, with the ages of `HEAD`.
    let zebra = turn(&sb, &repo, "a", "When is the zebra crossing repainted?");
    assert!(zebra.contains("team:project/zebra.md"), "{zebra}");
    assert!(zebra.contains("last changed by Test User"), "{zebra}");
    let index = sb
        .base()
        .join("projects")
        .read_dir()
        .unwrap()
        .map(|e| e.unwrap().path().join("team/team-memory-recall.idx"))
        .find(|p| p.exists());
    let index: PathBuf = index.expect("the first turn built the recall index");
    let _server = with_server.then(|| {
        let server = McpServer::start(&sb, &repo);
        wait_until_vouched(&index);
        server
    });
    let okapi = turn(&sb, &repo, "b", "When does the okapi enclosure close?");
    assert!(okapi.contains("team:user/okapi.md"), "{okapi}");
    let tapir = turn(&sb, &repo, "c", "Who is the tapir keeper this week?");
    assert!(tapir.contains("team:feedback/tapir.md"), "{tapir}");
    assert_eq!(turn(&sb, &repo, "d", "Where does the quagga graze?"), "");
    assert_eq!(turn(&sb, &repo, "e", "Who feeds the narwhal pool?"), "");

    if with_server {
        // The turns since took no stats: the server still vouches for the index they read.
        assert!(vouched(&index));
    }

    let team = repo.join(".qwen/team-memory");
    // Each change alone, so that a folder's changed times never tell it; with the server,
    // each comes while the server vouches for the index as it stood before it.
    let vouching = |step: &str| {
        if with_server {
            // The last change settles, a turn writes the index anew, the server proves it.
            std::thread::sleep(std::time::Duration::from_millis(2_300));
            turn(
                &sb,
                &repo,
                &format!("settle-{step}"),
                "Where does the quagga graze?",
            );
            wait_until_vouched(&index);
        }
    };

    // In place: opened and appended to, its folder untouched.
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(team.join("reference/note-1199.md"))
        .unwrap();
    std::io::Write::write_all(&mut file, b"The quagga grazes by the river.\n").unwrap();
    drop(file);
    let quagga = turn(&sb, &repo, "f", "Where does the quagga graze?");
    assert!(quagga.contains("team:reference/note-1199.md"), "{quagga}");
    assert!(quagga.contains("grazes by the river"), "{quagga}");
    // Edited since `HEAD`: its age is its file time, with no author.
    assert!(!quagga.contains("last changed by"), "{quagga}");

    // A secret added in place: the memory is withheld from now on.
    vouching("secret");
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(team.join("feedback/tapir.md"))
        .unwrap();
    let secret = format!("The tapir keeper's token is ghp_{TOKEN_TAIL}.\n");
    std::io::Write::write_all(&mut file, secret.as_bytes()).unwrap();
    drop(file);
    let tapir = turn(&sb, &repo, "j", "Who is the tapir keeper this week?");
    assert!(!tapir.contains("tapir.md"), "{tapir}");
    assert!(!tapir.contains(TOKEN_TAIL), "{tapir}");

    // Renamed.
    vouching("rename");
    std::fs::rename(
        team.join("project/zebra.md"),
        team.join("project/zebra-crossing.md"),
    )
    .unwrap();
    let zebra = turn(&sb, &repo, "g", "When is the zebra crossing repainted?");
    assert!(zebra.contains("team:project/zebra-crossing.md"), "{zebra}");
    assert!(!zebra.contains("team:project/zebra.md"), "{zebra}");

    // Deleted.
    vouching("delete");
    std::fs::remove_file(team.join("user/okapi.md")).unwrap();
    assert_eq!(
        turn(&sb, &repo, "h", "When does the okapi enclosure close?"),
        ""
    );

    // New.
    vouching("new");
    put(
        &repo,
        "feedback/narwhal.md",
        "Narwhal pool",
        "The narwhal pool is fed by the night shift.\n",
    );
    let narwhal = turn(&sb, &repo, "i", "Who feeds the narwhal pool?");
    assert!(narwhal.contains("team:feedback/narwhal.md"), "{narwhal}");

    // Committed, the edited memory has its commit's author again.
    sb.git(&repo, ["add", "-A"]);
    sb.git(&repo, ["commit", "-qm", "edits"]);
    let quagga = turn(&sb, &repo, "k", "Where does the quagga graze?");
    assert!(quagga.contains("last changed by Test User"), "{quagga}");
}
