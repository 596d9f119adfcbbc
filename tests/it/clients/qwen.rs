//! teammem measured against Qwen Code's own code: the pinned `@qwen-code/qwen-code` package
//! (installed by `.ci/install.d/20-qwen-code.sh`) rebuilds `MEMORY.md` and reads frontmatter
//! on generated memory sets, and teammem must give the same bytes and the same fields.

use crate::common;
use crate::common::agents;
use crate::common::clients;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

use common::Sandbox;

/// The Qwen Code these checks compare against: the newest pinned version
/// (`.ci/install.d/20-qwen-code.sh`); `QWEN_CODE_PKG` overrides it.
fn qwen_pkg() -> PathBuf {
    match std::env::var_os("QWEN_CODE_PKG") {
        Some(pkg) => PathBuf::from(pkg),
        None => {
            let qwen = clients::newest("qwen");
            qwen.require();
            qwen.package_dir()
        }
    }
}

/// Runs `tests/clients/qwen_memory.mjs MODE ARGS…` with the sandbox's environment and returns
/// its JSON array.
fn qwen(sb: &Sandbox, mode: &str, args: &[PathBuf]) -> Vec<serde_json::Value> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/qwen_memory.mjs");
    let mut cmd = Command::new("node");
    sb.isolate(&mut cmd)
        .env("QWEN_CODE_PKG", qwen_pkg())
        .arg(script)
        .arg(mode)
        .args(args);
    let out = cmd
        .output()
        .expect("node is required to run Qwen Code's own code");
    assert!(
        out.status.success(),
        "Qwen Code's {mode} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "the script printed no JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// The text the script sent as the hex of its UTF-8 bytes.
fn unhex(value: &serde_json::Value) -> String {
    let hex = value.as_str().expect("hex text");
    let bytes: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect();
    String::from_utf8(bytes).expect("Node writes UTF-8")
}

/// A small deterministic generator, so every run builds the same sets.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

/// Pieces of text that sit on Qwen's rules: cuts in UTF-16 units, surrogate pairs, white space
/// JavaScript and Rust disagree on, controls, hidden marks, link syntax, grouping punctuation.
const PIECES: &[&str] = &[
    "word",
    "Word",
    "WORD",
    " ",
    "  ",
    "\t",
    "測試",
    "使用真实数据库",
    "データベース",
    "😀",
    "🚀",
    "👩‍💻",
    "é",
    "e\u{301}",
    "ß",
    "İ",
    "Σ",
    "[",
    "]",
    "](",
    ")",
    "(",
    "`",
    "\\",
    "'",
    "\"",
    ":",
    ": ",
    ".",
    "!",
    "?",
    ";",
    ",",
    "…",
    "\u{200B}",
    "\u{202E}",
    "\u{2060}",
    "\u{FEFF}",
    "\u{85}",
    "\u{A0}",
    "\u{3000}",
    "\u{2028}",
    "\u{7F}",
    "\u{1}",
    "\r",
    "#",
    "%",
    "&",
    "<b>",
    "a-b",
    "x_y",
    "0",
    "10183",
    "-",
    "—",
];

fn text(rng: &mut Rng, pieces: usize) -> String {
    (0..pieces).map(|_| rng.pick(PIECES)).collect()
}

/// File names Qwen Code reads: slugs, underscores, capitals, spaces, brackets, percent signs,
/// CJK, emoji, hidden files, nested folders.
fn file_name(rng: &mut Rng, i: usize) -> String {
    let folder = rng.pick(&[
        "feedback/",
        "project/",
        "reference/",
        "user/",
        "",
        "notes/deep/",
        ".hidden/",
    ]);
    let stem = match rng.below(9) {
        0 => format!("memory-{i}"),
        1 => format!("build_invariant_{i}"),
        2 => format!("Use Real DB {i}"),
        3 => format!("odd (name) [{i}]"),
        4 => format!("100% sure #{i}"),
        5 => format!("数据库-{i}"),
        6 => format!("rocket 🚀 {i}"),
        7 => format!(".draft-{i}"),
        _ => format!("{}-{i}", "long".repeat(rng.below(40) + 1)),
    };
    format!("{folder}{stem}.md")
}

/// One memory file's text in one of the forms found in the wild.
fn memory(rng: &mut Rng, kind: &str) -> String {
    let (n, d) = (rng.below(30) + 1, rng.below(60));
    let name = text(rng, n);
    let description = text(rng, d);
    let one = |s: &str| s.replace(['\n', '\r', '\u{2028}'], " ");
    match rng.below(10) {
        // teammem's own form.
        0 | 1 => format!(
            "---\nname: {}\ndescription: {}\ntype: {kind}\n---\nBody.\n",
            one(&name),
            one(&description)
        ),
        // Qwen's agent: colons, quotes, title instead of name.
        2 => format!(
            "---\ntitle: {}\ndescription: Tests: {}\ntype: {kind}\n---\nBody\n",
            one(&name),
            one(&description)
        ),
        3 => format!(
            "---\nname: '{}'\ndescription: \"{}\"\ntype: {kind}\nkeywords: [a, b]\n---\n",
            one(&name),
            one(&description)
        ),
        // Claude Code's form (type nested): Qwen leaves it out of the index.
        4 => format!(
            "---\nname: {}\ndescription: {}\nmetadata:\n  type: {kind}\n---\nBody\n",
            one(&name),
            one(&description)
        ),
        // CRLF, raw controls and line separators inside values.
        5 => format!(
            "---\r\nname: {name}\r\ndescription: {description}\r\ntype: {kind}\r\n---\r\nBody\r\n"
        ),
        // Empty and missing values, odd spacing.
        6 => format!("---\nname:   \ndescription:\ntype:\t{kind}  \n---\n"),
        // Types Qwen does not read: quoted, capitalised, commented.
        7 => format!("---\nname: {}\ntype: \"{kind}\"\n---\n", one(&name)),
        8 => format!(
            "---\nname: {}\ndescription: {}\ntype: {kind} # note\n---\n",
            one(&name),
            one(&description)
        ),
        // Duplicate keys and a closing line with text after it.
        _ => format!(
            "---\nname: {}\nname: second\ndescription: {}\ntype: {kind}\n----\nBody\n",
            one(&name),
            one(&description)
        ),
    }
}

/// Writes `files` into `dir`, giving each a modification time: groups share one time (as a
/// fast writer's files do on a coarse clock), the rest get their own.
fn put_all(dir: &Path, files: &[(String, String)], rng: &mut Rng) {
    let start = SystemTime::UNIX_EPOCH + Duration::from_secs(1_750_000_000);
    for (i, (rel, text)) in files.iter().enumerate() {
        let path = dir.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, text).unwrap();
        let tick = match rng.below(3) {
            0 => 7,
            _ => i as u64,
        };
        let when = start + Duration::from_micros(tick * 1_234_567 + rng.below(2) as u64 * 137);
        fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(when)
            .unwrap();
    }
}

/// The generated sets: each is a list of `(relative path, text)`.
fn sets() -> Vec<(&'static str, Vec<(String, String)>)> {
    let kinds = ["user", "feedback", "project", "reference"];
    let mut out = Vec::new();
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    let random = |rng: &mut Rng, n: usize| -> Vec<(String, String)> {
        (0..n)
            .map(|i| {
                let kind = kinds[rng.below(4)];
                (file_name(rng, i), memory(rng, kind))
            })
            .collect()
    };
    out.push(("random-small", random(&mut rng, 40)));
    out.push(("random-250", random(&mut rng, 250)));
    let cjk = (0..30)
        .map(|i| {
            let name = "使用真实数据库进行集成测试".repeat(i % 7 + 1);
            let description = "集成测试必须连接真实的数据库，绝不使用模拟。".repeat(i % 9 + 1);
            (
                format!("project/数据库-{i}.md"),
                format!("---\nname: {name}\ndescription: {description}\ntype: project\n---\n"),
            )
        })
        .collect();
    out.push(("cjk", cjk));
    let emoji = (0..40)
        .map(|i| {
            // Surrogate pairs land on every cut position (119 and 149 units).
            let name = format!("{}{}", "a".repeat(i % 4), "😀".repeat(60 + i));
            let description = format!("{}{}", "b".repeat(i % 3), "🚀👩‍💻".repeat(20 + i));
            (
                format!("user/emoji-{i}.md"),
                format!("---\nname: {name}\ndescription: {description}\ntype: user\n---\n"),
            )
        })
        .collect();
    out.push(("emoji", emoji));
    let long = (0..60)
        .map(|i| {
            let name = format!("{} end", "Long title ".repeat(i + 1));
            let description = format!("{}.", "and a long description ".repeat(i % 12 + 1));
            let stem = "p".repeat(90 + i);
            (
                format!("reference/{stem}.md"),
                format!("---\nname: {name}\ndescription: {description}\ntype: reference\n---\n"),
            )
        })
        .collect();
    out.push(("long-titles", long));
    let groupable = [
        "Use the real database.",
        "use the real   database",
        "USE THE REAL DATABASE!",
        "Use the real database?)",
        "Use the real database…",
        "Use\tthe real database'",
        "Use the réal database",
        "Use the re\u{301}al database",
        "",
        "",
        "   ",
        "Use the real database \"",
        "Use the real database` ",
        "Use the real database ].",
    ];
    let grouped = groupable
        .iter()
        .enumerate()
        .map(|(i, d)| {
            (
                format!("feedback/g{i:02}.md"),
                format!("---\nname: G {i}\ndescription: {d}\ntype: feedback\n---\n"),
            )
        })
        .collect();
    out.push(("groupable", grouped));
    // Lines long enough that 200 of them pass 25,000 units: Qwen cuts and warns.
    let big = (0..230)
        .map(|i| {
            (
                format!("project/big-{i:03}.md"),
                // Distinct descriptions, or they would all group into one line.
                format!(
                    "---\nname: {}\ndescription: {i:03} {}\ntype: project\n---\n",
                    "N".repeat(70),
                    "D".repeat(90)
                ),
            )
        })
        .collect();
    out.push(("over-25000", big));
    let odd = [
        "feedback/Use Real DB.md",
        "feedback/odd (name).md",
        "feedback/[brackets].md",
        "feedback/100%.md",
        "feedback/tab\there.md",
        "feedback/new\nline.md",
        ".hidden.md",
        ".dir/inside.md",
        "deep/er/x.md",
        "sub/MEMORY.md",
        "notes.txt",
        "UPPER.MD",
        "project/ünïcödé.md",
        "project/🚀.md",
        "a+b=c&d.md",
    ];
    let odd = odd
        .iter()
        .enumerate()
        .map(|(i, rel)| {
            (
                rel.to_string(),
                format!("---\nname: Odd {i}\ndescription: odd name {i}\ntype: project\n---\n"),
            )
        })
        .collect();
    out.push(("odd-names", odd));
    out
}

fn team_dir(repo: &Path) -> PathBuf {
    repo.join(".qwen/team-memory")
}

#[test]
fn team_index_is_byte_identical_to_qwen_codes_rebuild() {
    let sb = Sandbox::new();
    let mut repos = Vec::new();
    let mut ours = Vec::new();
    let mut rng = Rng(7);
    for (name, files) in sets() {
        let repo = sb.repo(name);
        put_all(&team_dir(&repo), &files, &mut rng);
        sb.teammem(&repo, ["index", "--scope", "team"])
            .expect_code(0);
        let index = fs::read(team_dir(&repo).join("MEMORY.md")).unwrap();
        assert!(
            index.len() > 200,
            "{name}: a near-empty index tests nothing"
        );
        ours.push(index);
        repos.push(repo);
    }
    let theirs = qwen(&sb, "team", &repos);
    for ((repo, ours), theirs) in repos.iter().zip(&ours).zip(&theirs) {
        assert!(
            !theirs.is_null(),
            "Qwen wrote no team index in {}",
            repo.display()
        );
        let theirs = &unhex(theirs);
        assert_eq!(
            String::from_utf8_lossy(ours),
            theirs.as_str(),
            "set {}: teammem's MEMORY.md differs from Qwen Code's",
            repo.display()
        );
        assert_eq!(ours.as_slice(), theirs.as_bytes());
    }
    // Qwen found nothing to change: `check` agrees that the index is fresh.
    for repo in &repos {
        let run = sb.teammem(repo, ["index", "--scope", "team", "--check"]);
        assert_eq!(
            run.code,
            0,
            "{}: {}{}",
            repo.display(),
            run.stdout,
            run.stderr
        );
    }
}

#[test]
fn private_index_is_byte_identical_to_qwen_codes_rebuild() {
    let sb = Sandbox::new();
    let mut repos = Vec::new();
    let mut ours = Vec::new();
    let mut rng = Rng(11);
    for (name, files) in sets() {
        let repo = sb.repo(name);
        let dir = private_dir(&sb, &repo);
        put_all(&dir, &files, &mut rng);
        sb.teammem(&repo, ["index", "--scope", "private"])
            .expect_code(0);
        let index = fs::read(dir.join("MEMORY.md")).unwrap();
        assert!(
            index.len() > 200,
            "{name}: a near-empty index tests nothing"
        );
        ours.push(index);
        repos.push(repo);
    }
    let theirs = qwen(&sb, "private", &repos);
    for ((repo, ours), theirs) in repos.iter().zip(&ours).zip(&theirs) {
        assert_eq!(
            String::from_utf8_lossy(ours),
            unhex(theirs),
            "set {}: teammem's private MEMORY.md differs from Qwen Code's",
            repo.display()
        );
    }
}

/// `<base>/projects/<sanitized git root>/memory`, as Qwen Code names it.
fn private_dir(sb: &Sandbox, repo: &Path) -> PathBuf {
    let sanitized: String = repo
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    sb.base().join("projects").join(sanitized).join("memory")
}

#[test]
fn fields_read_the_same_as_qwen_codes_frontmatter_reader() {
    let sb = Sandbox::new();
    let repo = sb.repo("fields");
    let mut rng = Rng(99);
    let files: Vec<(String, String)> = (0..120)
        .map(|i| {
            (
                format!("project/f{i:03}.md"),
                memory(
                    &mut rng,
                    ["user", "feedback", "project", "reference"][i % 4],
                ),
            )
        })
        .collect();
    put_all(&team_dir(&repo), &files, &mut rng);
    let list = sb.teammem(&repo, ["list", "--scope", "team", "--json"]);
    let listed: serde_json::Value = serde_json::from_str(&list.stdout).unwrap();
    let paths: Vec<PathBuf> = files
        .iter()
        .map(|(rel, _)| team_dir(&repo).join(rel))
        .collect();
    let docs = qwen(&sb, "parse", &paths);
    let mut compared = 0;
    for ((rel, _), doc) in files.iter().zip(&docs) {
        let ours = listed["memories"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["id"] == rel.as_str());
        if doc.is_null() {
            // Qwen reads no memory here; teammem reads it only in Claude Code's form.
            if let Some(ours) = ours {
                let text = fs::read_to_string(team_dir(&repo).join(rel)).unwrap();
                assert!(
                    text.contains("metadata:\n  type:"),
                    "{rel}: teammem reads a file Qwen does not: {ours}"
                );
            }
            continue;
        }
        let ours = ours.unwrap_or_else(|| panic!("{rel}: Qwen reads it, teammem does not: {doc}"));
        assert_eq!(ours["type"], doc["type"], "{rel}");
        assert_eq!(
            ours["description"].as_str(),
            Some(unhex(&doc["description"]).as_str()),
            "{rel}"
        );
        if fs::read_to_string(team_dir(&repo).join(rel))
            .unwrap()
            .contains("\nname:")
        {
            assert_eq!(
                ours["name"].as_str(),
                Some(unhex(&doc["title"]).as_str()),
                "{rel}"
            );
        }
        compared += 1;
    }
    assert!(compared > 60, "only {compared} files compared");
}

// ---- headless Qwen Code sessions against a mock model on 127.0.0.1 ------------------------

/// An OpenAI-compatible chat endpoint on 127.0.0.1 that answers every request with "OK" and
/// keeps the request bodies, so a test sees exactly what the client sent.
struct MockModel {
    port: u16,
    bodies: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl MockModel {
    fn start() -> MockModel {
        use std::io::{BufRead, BufReader, Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let bodies = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let kept = bodies.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let kept = kept.clone();
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(stream.try_clone().unwrap());
                    let mut request_line = String::new();
                    if reader.read_line(&mut request_line).is_err() {
                        return;
                    }
                    let (mut length, mut chunked) = (0usize, false);
                    loop {
                        let mut header = String::new();
                        if reader.read_line(&mut header).unwrap_or(0) == 0 || header == "\r\n" {
                            break;
                        }
                        let lower = header.to_ascii_lowercase();
                        if let Some(v) = lower.strip_prefix("content-length:") {
                            length = v.trim().parse().unwrap_or(0);
                        }
                        if lower.starts_with("transfer-encoding:") && lower.contains("chunked") {
                            chunked = true;
                        }
                    }
                    let mut body = Vec::new();
                    if chunked {
                        loop {
                            let mut size = String::new();
                            reader.read_line(&mut size).unwrap_or(0);
                            let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
                            let mut chunk = vec![0; n + 2];
                            if reader.read_exact(&mut chunk).is_err() || n == 0 {
                                break;
                            }
                            body.extend_from_slice(&chunk[..n]);
                        }
                    } else {
                        body.resize(length, 0);
                        let _ = reader.read_exact(&mut body);
                    }
                    let body = String::from_utf8_lossy(&body).into_owned();
                    let streaming = body.contains("\"stream\":true");
                    // Usage as a real model reports it (about 4 bytes a token): Qwen Code's
                    // `/compress` compares it with the summary's size.
                    let usage = format!(
                        "{{\"prompt_tokens\":{},\"completion_tokens\":1,\"total_tokens\":{}}}",
                        body.len() / 4,
                        body.len() / 4 + 1
                    );
                    if request_line.starts_with("POST") {
                        kept.lock().unwrap().push(body);
                    }
                    let chunk = |delta: &str, finish: &str| {
                        format!(
                            "data: {{\"id\":\"m\",\"object\":\"chat.completion.chunk\",\"created\":0,\"model\":\"mock\",\"choices\":[{{\"index\":0,\"delta\":{delta},\"finish_reason\":{finish}}}],\"usage\":{usage}}}\n\n"
                        )
                    };
                    let response = if !request_line.starts_with("POST") {
                        "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                            .to_string()
                    } else if streaming {
                        let events = chunk("{\"role\":\"assistant\",\"content\":\"OK\"}", "null")
                            + &chunk("{}", "\"stop\"")
                            + "data: [DONE]\n\n";
                        format!(
                            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{events}",
                            events.len()
                        )
                    } else {
                        let json = format!(
                            "{{\"id\":\"m\",\"object\":\"chat.completion\",\"created\":0,\"model\":\"mock\",\"choices\":[{{\"index\":0,\"message\":{{\"role\":\"assistant\",\"content\":\"OK\"}},\"finish_reason\":\"stop\"}}],\"usage\":{usage}}}"
                        );
                        format!(
                            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{json}",
                            json.len()
                        )
                    };
                    let _ = stream.write_all(response.as_bytes());
                });
            }
        });
        MockModel { port, bodies }
    }

    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.bodies.lock().unwrap())
    }
}

/// The recommended `.qwen/settings.json` (`.qwen-example/settings.json`) with the hook calling
/// the teammem binary under test; `qwen_sync` switches Qwen Code's own sync on.
fn settings(qwen_sync: bool) -> String {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join(".qwen-example/settings.json");
    let text = fs::read_to_string(example).unwrap();
    let text = text.replace(
        "\"teammem session-start",
        &format!("\"{} session-start", env!("CARGO_BIN_EXE_teammem")),
    );
    if qwen_sync {
        text.replace(
            "\"enableTeamMemorySync\": false",
            "\"enableTeamMemorySync\": true",
        )
    } else {
        text
    }
}

/// A clone of a bare remote holding the example's team memory and settings, pushed.
fn project_with_remote(sb: &Sandbox, qwen_sync: bool) -> PathBuf {
    let remote = sb.bare("remote.git");
    let repo = sb.path().join("project");
    sb.git(
        sb.path(),
        ["clone", "-q", remote.to_str().unwrap(), "project"],
    );
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join(".qwen-example/team-memory");
    for rel in walk(&example) {
        let to = team_dir(&repo).join(&rel);
        fs::create_dir_all(to.parent().unwrap()).unwrap();
        fs::copy(example.join(&rel), to).unwrap();
    }
    common::write(&repo.join(".qwen/settings.json"), &settings(qwen_sync));
    // Qwen Code's own user settings: no update checks or telemetry (nothing leaves loopback).
    common::write(
        &sb.home().join(".qwen/settings.json"),
        "{\"general\": {\"enableAutoUpdate\": false}, \"privacy\": {\"usageStatisticsEnabled\": false}, \"telemetry\": {\"enabled\": false}}\n",
    );
    sb.git(&repo, ["add", "-A"]);
    sb.git(&repo, ["commit", "-q", "-m", "team memory"]);
    sb.git(&repo, ["push", "-q", "origin", "HEAD:main"]);
    sb.git(&repo, ["branch", "-q", "--set-upstream-to=origin/main"]);
    repo
}

fn walk(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type().unwrap().is_dir() {
            out.extend(
                walk(&entry.path())
                    .into_iter()
                    .map(|r| format!("{name}/{r}")),
            );
        } else {
            out.push(name);
        }
    }
    out
}

/// One headless Qwen Code session (`qwen -p`) in `repo` against the mock model.
fn qwen_session(sb: &Sandbox, repo: &Path, model: &MockModel) -> common::Run {
    let mut cmd = Command::new("node");
    sb.isolate(&mut cmd)
        .current_dir(repo)
        .env("OPENAI_API_KEY", "test-key")
        .env(
            "OPENAI_BASE_URL",
            format!("http://127.0.0.1:{}/v1", model.port),
        )
        .env("OPENAI_MODEL", "mock-model")
        .arg(qwen_pkg().join("cli-entry.js"))
        .args(["--auth-type", "openai", "-p", "Say OK."])
        .stdin(std::process::Stdio::null());
    let run = common::Run::from(cmd.output().expect("run Qwen Code"));
    assert_eq!(
        run.code, 0,
        "Qwen Code failed:\n{}\n{}",
        run.stdout, run.stderr
    );
    run
}

/// The system prompt of the session's main request (the first one Qwen Code sends).
fn system_prompt(bodies: &[String]) -> String {
    let main = bodies.first().expect("Qwen Code sent no request");
    let json: serde_json::Value = serde_json::from_str(main).unwrap();
    json["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "system")
        .map(|m| {
            m["content"]
                .as_str()
                .map(String::from)
                .unwrap_or_else(|| m["content"].to_string())
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn five_headless_qwen_sessions_show_the_team_memory_once_and_leave_git_clean() {
    qwen_pkg();
    let sb = Sandbox::new();
    let repo = project_with_remote(&sb, false);
    // A memory as Qwen Code's own agent writes it: a colon in the description, an
    // underscore in the name. teammem shares it through the gate instead of quarantining it.
    common::write(
        &team_dir(&repo).join("feedback/build_invariant.md"),
        "---\nname: Build invariant\ndescription: Tests: always hit the real DB\ntype: feedback\n---\nRun the database before the tests.\n",
    );
    let start = sb.git(&repo, ["rev-parse", "HEAD"]).trim().to_string();
    let model = MockModel::start();
    for session in 1..=5 {
        qwen_session(&sb, &repo, &model);
        let prompt = system_prompt(&model.take());
        // The team memory reaches the model once: Qwen's own index, not repeated by the hook.
        assert_eq!(
            prompt.matches("[Never force-push shared branches]").count(),
            1,
            "session {session}:\n{prompt}"
        );
        assert!(prompt.contains("[Build invariant](feedback/build_invariant.md) \u{2014} Tests: always hit the real DB"), "{prompt}");
        assert!(
            prompt.contains("Team memory: Qwen Code shows the team index"),
            "{prompt}"
        );
        assert!(prompt.contains("teammem share PATH-OR-ID"), "{prompt}");
        assert!(prompt.contains("Team memory sync: "), "{prompt}");
        assert!(
            !prompt.contains("Qwen Code's own team memory sync is on"),
            "{prompt}"
        );
        let status = sb.git(&repo, ["status", "--porcelain", "--untracked-files=all"]);
        assert_eq!(status, "", "session {session} left the work tree dirty");
    }
    // The Qwen-style memory was committed and pushed by teammem's sync, and no commit touches
    // MEMORY.md alone (the two tools never rewrite each other's index).
    let log = sb.git(&repo, ["log", "--format=%H", &format!("{start}..HEAD")]);
    let commits: Vec<&str> = log.lines().collect();
    assert!(
        !commits.is_empty(),
        "the Qwen-style memory was never committed"
    );
    for commit in commits {
        let files = sb.git(&repo, ["show", "--name-only", "--format=", commit]);
        let files: Vec<&str> = files.lines().filter(|l| !l.is_empty()).collect();
        assert_ne!(
            files,
            [".qwen/team-memory/MEMORY.md"],
            "commit {commit} touches only MEMORY.md"
        );
    }
    let shown = sb.git(&repo, ["ls-tree", "-r", "--name-only", "origin/main"]);
    assert!(
        shown.contains(".qwen/team-memory/feedback/build_invariant.md"),
        "{shown}"
    );
}

#[test]
fn with_qwens_own_sync_on_the_context_warns_and_the_pre_commit_hook_stops_a_secret() {
    qwen_pkg();
    let sb = Sandbox::new();
    let repo = project_with_remote(&sb, true);
    sb.teammem(&repo, ["install-hooks"]).expect_code(0);
    let token = format!("ghp_{}", "I9wOi9OvJcNDmFJJONko0LifpTe9NdaYVQyF");
    common::write(
        &team_dir(&repo).join("reference/ci-token.md"),
        &format!(
            "---\nname: CI token\ndescription: The token CI uses\ntype: reference\n---\nIt is {token}.\n"
        ),
    );
    let pushed = sb.git(&repo, ["rev-parse", "origin/main"]);
    let model = MockModel::start();
    qwen_session(&sb, &repo, &model);
    let prompt = system_prompt(&model.take());
    assert!(
        prompt.contains("Qwen Code's own team memory sync is on"),
        "{prompt}"
    );
    // Neither tool committed or pushed the secret: teammem quarantined it, and Qwen's own
    // commit was refused by teammem's pre-commit hook.
    let remote = sb.path().join("remote.git");
    let log = sb.git(&remote, ["log", "-p", "--all"]);
    assert!(!log.contains(&token), "the secret reached the remote");
    let local = sb.git(&repo, ["log", "-p", "--all"]);
    assert!(!local.contains(&token), "the secret was committed");
    assert!(!prompt.contains(&token), "the secret reached the model");
    assert_eq!(sb.git(&repo, ["rev-parse", "origin/main"]), pushed);
}

#[test]
fn what_teammem_add_writes_reads_the_same_in_qwen_code() {
    let sb = Sandbox::new();
    let repo = sb.repo("written");
    let cases = [
        ("Staging: how to reach it", "VPN: first, then 'the bastion'"),
        ("'Quoted' on purpose", "\"double\" and # hash"),
        ("使用真实数据库 😀", "集成测试: 必须连接真实的数据库"),
        ("10183", "true"),
        ("- starts like a list", "[looks, like, a, list]"),
    ];
    let mut paths = Vec::new();
    for (name, description) in cases {
        let run = sb.teammem(
            &repo,
            [
                "add",
                "--scope",
                "team",
                "--type",
                "project",
                &format!("--name={name}"),
                &format!("--description={description}"),
                "--body=b",
                "--json",
            ],
        );
        run.expect_code(0);
        let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        paths.push(PathBuf::from(json["path"].as_str().unwrap()));
    }
    let docs = qwen(&sb, "parse", &paths);
    for ((name, description), doc) in cases.iter().zip(&docs) {
        assert_eq!(doc["type"], "project");
        assert_eq!(unhex(&doc["title"]), *name);
        assert_eq!(unhex(&doc["description"]), *description);
    }
}

#[test]
fn equal_times_are_ordered_by_file_name_as_nodes_locale_compare_orders_them() {
    let sb = Sandbox::new();
    let mut rng = Rng(2024);
    let names: Vec<String> = (0..400)
        .map(|i| {
            let n = rng.below(6) + 1;
            let stem: String = (0..n).map(|_| rng.pick(PIECES)).collect();
            format!("{stem}{i}.md")
        })
        .collect();
    let hex: Vec<PathBuf> = names
        .iter()
        .map(|n| PathBuf::from(n.bytes().map(|b| format!("{b:02x}")).collect::<String>()))
        .collect();
    let theirs: Vec<String> = qwen(&sb, "sort", &hex).iter().map(unhex).collect();
    let mut ours = names.clone();
    ours.sort_by(|a, b| teammem::memory_index::locale_cmp(a, b));
    let same = ours.iter().zip(&theirs).filter(|(a, b)| a == b).count();
    eprintln!(
        "{same} of {} names in the place Node gives them",
        names.len()
    );
    // ICU's collation is approximated: exact for ASCII, close for the rest. Most names of this
    // deliberately odd mix must land where Node puts them.
    assert!(
        same * 10 >= names.len() * 9,
        "only {same} of {} in Node's place",
        names.len()
    );
    let ascii: Vec<String> = names.iter().filter(|n| n.is_ascii()).cloned().collect();
    let ascii_hex: Vec<PathBuf> = ascii
        .iter()
        .map(|n| PathBuf::from(n.bytes().map(|b| format!("{b:02x}")).collect::<String>()))
        .collect();
    let theirs: Vec<String> = qwen(&sb, "sort", &ascii_hex).iter().map(unhex).collect();
    let mut ours = ascii.clone();
    ours.sort_by(|a, b| teammem::memory_index::locale_cmp(a, b));
    assert_eq!(ours, theirs);
}

#[test]
fn a_client_version_that_is_not_installed_fails_naming_the_client_the_version_and_ci_run() {
    let missing = clients::PinnedClient {
        name: "qwen".into(),
        package: "@qwen-code/qwen-code".into(),
        version: "0.0.0-not-installed".into(),
    };
    let message = std::panic::catch_unwind(|| missing.require())
        .expect_err("a missing version must fail the test");
    let message = message
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(
        message.contains("qwen 0.0.0-not-installed (@qwen-code/qwen-code) is not installed at /opt/teammem-clients/qwen-0.0.0-not-installed"),
        "{message}"
    );
    assert!(message.contains("run .ci/run"), "{message}");
    assert!(
        message.contains(".ci/install.d/20-qwen-code.sh"),
        "{message}"
    );
}

// ---- Qwen Code wired by `teammem install-agent --client qwen` ------------------------------

/// One headless `qwen ARGS` in `dir` of `version` against the mock model; asserts it succeeded.
fn qwen_run(
    sb: &Sandbox,
    dir: &Path,
    version: &clients::PinnedClient,
    model: &MockModel,
    args: &[&str],
) -> common::Run {
    let mut cmd = agents::bounded(240, Path::new("node"));
    sb.isolate(&mut cmd)
        .current_dir(dir)
        .env("OPENAI_API_KEY", "test-key")
        .env(
            "OPENAI_BASE_URL",
            format!("http://127.0.0.1:{}/v1", model.port),
        )
        .env("OPENAI_MODEL", "mock-model")
        .arg(version.package_dir().join("cli-entry.js"))
        .args(args);
    version.require();
    let run = common::Run::from(cmd.output().expect("run Qwen Code"));
    assert_eq!(
        run.code, 0,
        "Qwen Code {} {args:?} failed:\n{}\n{}",
        version.version, run.stdout, run.stderr
    );
    run
}

/// The main turn's request for `prompt`, as sent: the first that carried it (Qwen Code's
/// memory extraction and other side requests follow it, quoting the conversation).
fn request_with<'a>(bodies: &'a [String], prompt: &str) -> &'a str {
    bodies
        .iter()
        .find(|b| b.contains(prompt))
        .unwrap_or_else(|| panic!("no request carried {prompt:?}: {bodies:?}"))
}

fn qwen_gets_each_memory_once_per_context(version: clients::PinnedClient) {
    let team = agents::agent_team();
    let sb = &team.sb;
    // Qwen Code's own user settings: no update checks or telemetry (nothing leaves loopback).
    common::write(
        &sb.home().join(".qwen/settings.json"),
        "{\"general\": {\"enableAutoUpdate\": false}, \"privacy\": {\"usageStatisticsEnabled\": false}, \"telemetry\": {\"enabled\": false}}\n",
    );
    let out = agents::install_agent(&team, "qwen", &[], &[]);
    let step = format!(
        "Next: run `qwen mcp approve teammem` in {}.",
        team.me.display()
    );
    assert!(out.contains(&step), "{out}");
    let model = MockModel::start();
    // The step install-agent printed, as the user runs it.
    let approved = qwen_run(
        sb,
        &team.me,
        &version,
        &model,
        &["mcp", "approve", "teammem"],
    );
    assert!(
        approved.stdout.contains("Approved MCP server \"teammem\""),
        "{approved:?}"
    );

    let mut everything = String::new();
    // One headless `qwen --auth-type openai ARGS` against the mock: the request bodies it sent,
    // every one of them also kept in `everything`.
    let mut turn = |args: &[&str]| -> Vec<String> {
        let args: Vec<&str> = ["--auth-type", "openai"]
            .iter()
            .chain(args)
            .copied()
            .collect();
        qwen_run(sb, &team.me, &version, &model, &args);
        let bodies = model.take();
        everything.push_str(&bodies.concat());
        bodies
    };

    let bodies = turn(&["-p", agents::UNRELATED_PROMPT]);
    let start = request_with(&bodies, agents::UNRELATED_PROMPT);
    for (what, times) in [
        (agents::DEPLOY_INDEX_LINE, 1),
        (agents::ONCALL_DESCRIPTION, 1),
        (agents::DEPLOY_BODY_MARKER, 0),
    ] {
        assert_eq!(agents::count(start, what), times, "startup: {start}");
    }

    for round in ["resume", "repeat"] {
        let bodies = turn(&["--continue", "-p", agents::DEPLOY_PROMPT]);
        let resumed = request_with(&bodies, agents::DEPLOY_PROMPT);
        // The resumed conversation is there (the first prompt once) ...
        assert_eq!(
            agents::count(resumed, agents::UNRELATED_PROMPT),
            1,
            "{round}: {resumed}"
        );
        // ... and session start's index once: Qwen Code keeps a SessionStart hook's context
        // out of the saved conversation, so `session-start --hook qwen` gives it again on
        // resume ...
        assert_eq!(
            agents::count(resumed, agents::DEPLOY_INDEX_LINE),
            1,
            "{round}: {resumed}"
        );
        // ... and the body prompt-context added to the first resumed turn once.
        assert_eq!(
            agents::count(resumed, agents::DEPLOY_BODY_MARKER),
            1,
            "{round}: {:#?}",
            agents::places(resumed, agents::DEPLOY_BODY_MARKER)
        );
    }
    // `/compress` replaces the saved conversation with the model's summary; the next resumed
    // turn has the team index once (not once from the summary and once from the hook).
    let summary = turn(&["--continue", "-p", "/compress"]);
    assert!(!summary.is_empty(), "/compress asked the model nothing");
    let bodies = turn(&["--continue", "-p", agents::UNRELATED_PROMPT]);
    let compacted = request_with(&bodies, agents::UNRELATED_PROMPT);
    assert_eq!(
        agents::count(compacted, agents::DEPLOY_INDEX_LINE),
        1,
        "compact: {compacted}"
    );

    let token = agents::withheld_token();
    assert_eq!(agents::count(&everything, agents::WITHHELD_DESCRIPTION), 0);
    assert_eq!(agents::count(&everything, &token[4..]), 0);
}

#[test]
fn qwen_code_newest_wired_by_install_agent_gets_the_index_at_start_and_each_recalled_memory_once() {
    qwen_gets_each_memory_once_per_context(clients::newest("qwen"));
}

#[test]
fn qwen_code_oldest_wired_by_install_agent_gets_the_index_at_start_and_each_recalled_memory_once() {
    qwen_gets_each_memory_once_per_context(clients::oldest("qwen"));
}
