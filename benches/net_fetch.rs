//! A fetch with nothing new, as every session-start sync does it, over file:// and git://:
//! teammem's built-in transport, its git CLI transport, and plain `git fetch` for reference.
//!
//! Run: `cargo bench --bench net_fetch`

use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use teammem::git::fetch;
use teammem::git::{NetworkOptions, Transport};
use teammem::git::{UpstreamLookup, resolve_upstream};

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("run git");
    assert!(status.success(), "git {args:?}");
}

struct Daemon(Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_daemon(base: &Path) -> (Daemon, u16) {
    for _ in 0..20 {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("free port");
        // The daemon itself, not `git daemon`, whose child would outlive a kill.
        let exec_path = Command::new("git")
            .arg("--exec-path")
            .output()
            .expect("git --exec-path");
        let exec_path = String::from_utf8_lossy(&exec_path.stdout)
            .trim()
            .to_string();
        let mut child = Command::new(Path::new(&exec_path).join("git-daemon"))
            .args(["--reuseaddr", "--export-all", "--listen=127.0.0.1"])
            .arg(format!("--port={port}"))
            .arg(format!("--base-path={}", base.display()))
            .arg(base)
            .stderr(Stdio::null())
            .spawn()
            .expect("git daemon");
        for _ in 0..200 {
            if let Ok(Some(_)) = child.try_wait() {
                break;
            }
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return (Daemon(child), port);
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        let _ = child.kill();
        let _ = child.wait();
    }
    panic!("git daemon did not start");
}

fn bench_noop_fetch(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let srv = dir.path().join("srv");
    std::fs::create_dir_all(&srv).unwrap();
    git(&srv, &["init", "-q", "--bare", "-b", "main", "team.git"]);
    let seed = dir.path().join("seed");
    std::fs::create_dir_all(&seed).unwrap();
    git(&seed, &["init", "-q", "-b", "main"]);
    for i in 0..100 {
        std::fs::write(seed.join(format!("f{i}.txt")), format!("{i}\n")).unwrap();
    }
    git(&seed, &["add", "-A"]);
    git(
        &seed,
        &[
            "-c",
            "user.name=b",
            "-c",
            "user.email=b@b",
            "commit",
            "-q",
            "-m",
            "seed",
        ],
    );
    let bare = srv.join("team.git");
    git(&seed, &["push", "-q", bare.to_str().unwrap(), "main"]);
    git(dir.path(), &["clone", "-q", bare.to_str().unwrap(), "me"]);
    let me = dir.path().join("me");
    let (_daemon, port) = start_daemon(&srv);

    let urls = [
        ("file", format!("file://{}", bare.display())),
        ("git-daemon", format!("git://127.0.0.1:{port}/team.git")),
    ];
    for (name, url) in urls {
        git(&me, &["remote", "set-url", "origin", &url]);
        let repo = git2::Repository::open(&me).unwrap();
        let UpstreamLookup::Found(up) = resolve_upstream(&repo).unwrap() else {
            panic!("no upstream");
        };
        let mut group = c.benchmark_group(format!("noop_fetch/{name}"));
        group.sample_size(30);
        for transport in [Transport::Builtin, Transport::GitCli] {
            group.bench_function(transport.as_str(), |b| {
                b.iter(|| {
                    let options = NetworkOptions::from_process(Duration::from_secs(15), transport);
                    fetch(&repo, &up, &options).expect("fetch")
                })
            });
        }
        group.bench_function("git fetch origin main", |b| {
            b.iter(|| git(&me, &["fetch", "-q", "origin", "main"]))
        });
        group.finish();
    }
}

criterion_group!(benches, bench_noop_fetch);
criterion_main!(benches);
