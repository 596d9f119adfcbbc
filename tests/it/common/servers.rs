//! Git servers on loopback for network tests: a real `git daemon` (git://), a smart-HTTP
//! server that runs `git http-backend` behind basic auth, and a black hole that accepts
//! connections and never answers. Every server stops (and its processes die) on drop.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::common::Sandbox;

/// A port nobody listens on right now (the OS picks it; git daemon cannot take port 0).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("bind a loopback port")
}

/// Waits up to 5 s for `child` to listen on `port`; false if it exited or never listened.
fn listening(child: &mut Child, port: u16) -> bool {
    for _ in 0..200 {
        if let Ok(Some(_)) = child.try_wait() {
            return false;
        }
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    false
}

/// Where git keeps its own programs (`git --exec-path`).
pub fn git_exec_path() -> PathBuf {
    let out = Command::new("git")
        .arg("--exec-path")
        .output()
        .expect("git --exec-path");
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

/// `git daemon` serving every repository below a folder, push enabled.
pub struct GitDaemon {
    child: Child,
    /// The port it listens on.
    pub port: u16,
}

impl GitDaemon {
    /// Starts a daemon for the repositories below `base`, retrying on a port collision.
    pub fn start(sb: &Sandbox, base: &Path) -> GitDaemon {
        for _ in 0..20 {
            let port = free_port();
            // `git daemon` runs `git-daemon` as a child; killing `git` would orphan the
            // daemon, so the daemon itself is started, from git's exec path.
            let mut cmd = Command::new(git_exec_path().join("git-daemon"));
            sb.isolate(&mut cmd)
                .args([
                    "--reuseaddr",
                    "--export-all",
                    "--enable=receive-pack",
                    "--informative-errors",
                    "--listen=127.0.0.1",
                ])
                .arg(format!("--port={port}"))
                .arg(format!("--base-path={}", base.display()))
                .arg(base)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            let mut child = cmd.spawn().expect("start git daemon");
            let mut daemon = None;
            for _ in 0..200 {
                if let Ok(Some(_)) = child.try_wait() {
                    break;
                }
                if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    std::thread::sleep(Duration::from_millis(20));
                    if let Ok(None) = child.try_wait() {
                        daemon = Some(port);
                    }
                    break;
                }
                std::thread::sleep(Duration::from_millis(25));
            }
            match daemon {
                Some(port) => return GitDaemon { child, port },
                None => {
                    let _ = child.kill();
                    let _ = child.wait();
                }
            }
        }
        panic!("git daemon did not start on any port");
    }

    /// The git:// URL of a repository below the base folder.
    pub fn url(&self, name: &str) -> String {
        format!("git://127.0.0.1:{}/{name}", self.port)
    }
}

impl Drop for GitDaemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A loopback TCP server run by a thread, stopped on drop.
struct Listening {
    port: u16,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Listening {
    fn start(handle: impl Fn(TcpStream) + Send + Sync + 'static) -> Listening {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let port = listener.local_addr().unwrap().port();
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let handle = Arc::new(handle);
        let thread = std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stopping.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let handle = handle.clone();
                std::thread::spawn(move || handle(stream));
            }
        });
        Listening {
            port,
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// A server that accepts connections and never says a word.
pub struct BlackHole {
    server: Listening,
    held: Arc<Mutex<Vec<TcpStream>>>,
}

impl BlackHole {
    /// Starts listening.
    pub fn start() -> BlackHole {
        let held = Arc::new(Mutex::new(Vec::new()));
        let keep = held.clone();
        let server = Listening::start(move |stream| keep.lock().unwrap().push(stream));
        BlackHole { server, held }
    }

    /// Its port.
    pub fn port(&self) -> u16 {
        self.server.port
    }
}

impl Drop for BlackHole {
    fn drop(&mut self) {
        for stream in self.held.lock().unwrap().drain(..) {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }
}

/// Smart HTTP: `git http-backend` as CGI behind HTTP/1.1 basic auth.
pub struct HttpGit {
    server: Listening,
}

impl HttpGit {
    /// Serves the repositories below `base` to `user` / `password` only.
    pub fn start(sb: &Sandbox, base: &Path, user: &str, password: &str) -> HttpGit {
        let expected = format!("Basic {}", base64(format!("{user}:{password}").as_bytes()));
        HttpGit::serve(sb, base, Some(expected), user)
    }

    /// Serves the repositories below `base` to anyone, no credentials asked.
    pub fn open(sb: &Sandbox, base: &Path) -> HttpGit {
        HttpGit::serve(sb, base, None, "anonymous")
    }

    fn serve(sb: &Sandbox, base: &Path, expected: Option<String>, user: &str) -> HttpGit {
        let base = base.to_path_buf();
        let user = user.to_string();
        let env = CgiEnv::of(sb);
        let server = Listening::start(move |stream| {
            let _ = serve(stream, &base, expected.as_deref(), &user, &env);
        });
        HttpGit { server }
    }

    /// The http:// URL of a repository below the base folder.
    pub fn url(&self, name: &str) -> String {
        format!("http://127.0.0.1:{}/{name}", self.server.port)
    }

    /// Its port.
    pub fn port(&self) -> u16 {
        self.server.port
    }
}

/// The sandbox's environment for the CGI program.
#[derive(Clone)]
struct CgiEnv {
    vars: Vec<(String, String)>,
}

impl CgiEnv {
    fn of(sb: &Sandbox) -> CgiEnv {
        let mut cmd = Command::new("true");
        sb.isolate(&mut cmd);
        let vars = cmd
            .get_envs()
            .filter_map(|(k, v)| {
                Some((
                    k.to_string_lossy().into_owned(),
                    v?.to_string_lossy().into_owned(),
                ))
            })
            .collect();
        CgiEnv { vars }
    }
}

fn serve(
    stream: TcpStream,
    base: &PathBuf,
    expected_auth: Option<&str>,
    user: &str,
    env: &CgiEnv,
) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut writer = stream;
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    let mut parts = request_line.split_whitespace();
    let method = parts.next().unwrap_or("GET").to_string();
    let target = parts.next().unwrap_or("/").to_string();
    let mut headers = HashMap::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            break;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    if expected_auth.is_some() && headers.get("authorization").map(String::as_str) != expected_auth
    {
        writer.write_all(
            b"HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"git\"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        )?;
        return Ok(());
    }
    if headers
        .get("expect")
        .is_some_and(|e| e.eq_ignore_ascii_case("100-continue"))
    {
        writer.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
    }
    let mut body = Vec::new();
    if headers
        .get("transfer-encoding")
        .is_some_and(|t| t.eq_ignore_ascii_case("chunked"))
    {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size)?;
            let size = usize::from_str_radix(size.trim().split(';').next().unwrap_or("0"), 16)
                .unwrap_or(0);
            let mut chunk = vec![0; size + 2];
            reader.read_exact(&mut chunk)?;
            if size == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..size]);
        }
    } else if let Some(len) = headers.get("content-length") {
        let mut chunk = vec![0; len.parse().unwrap_or(0)];
        reader.read_exact(&mut chunk)?;
        body = chunk;
    }
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    let mut cgi = Command::new("git");
    cgi.env_clear();
    for (k, v) in &env.vars {
        cgi.env(k, v);
    }
    cgi.arg("http-backend")
        .env("GIT_PROJECT_ROOT", base)
        .env("GIT_HTTP_EXPORT_ALL", "1")
        .env("REQUEST_METHOD", &method)
        .env("PATH_INFO", path)
        .env("QUERY_STRING", query)
        .env("CONTENT_LENGTH", body.len().to_string())
        .env("REMOTE_USER", user)
        .env("REMOTE_ADDR", "127.0.0.1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if let Some(t) = headers.get("content-type") {
        cgi.env("CONTENT_TYPE", t);
    }
    if let Some(p) = headers.get("git-protocol") {
        cgi.env("GIT_PROTOCOL", p);
    }
    if let Some(e) = headers.get("content-encoding") {
        cgi.env("HTTP_CONTENT_ENCODING", e);
    }
    let mut child = cgi.spawn()?;
    let mut stdin = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || {
        let _ = stdin.write_all(&body);
    });
    let out = child.wait_with_output()?;
    let _ = feeder.join();
    let output = out.stdout;
    let split = output
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| (i, 4))
        .or_else(|| output.windows(2).position(|w| w == b"\n\n").map(|i| (i, 2)))
        .unwrap_or((output.len(), 0));
    let head = String::from_utf8_lossy(&output[..split.0]).into_owned();
    let content = &output[(split.0 + split.1).min(output.len())..];
    let mut status = "200 OK".to_string();
    let mut response = String::new();
    for line in head.lines() {
        if let Some(s) = line.strip_prefix("Status:") {
            status = s.trim().to_string();
        } else if !line.is_empty() {
            response.push_str(line);
            response.push_str("\r\n");
        }
    }
    writer.write_all(
        format!(
            "HTTP/1.1 {status}\r\n{response}Content-Length: {}\r\nConnection: close\r\n\r\n",
            content.len()
        )
        .as_bytes(),
    )?;
    writer.write_all(content)?;
    writer.flush()
}

fn base64(bytes: &[u8]) -> String {
    const TABLE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(TABLE[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[test]
fn base64_matches_the_rfc_examples() {
    assert_eq!(base64(b"foob"), "Zm9vYg==");
    assert_eq!(base64(b"fooba"), "Zm9vYmE=");
    assert_eq!(base64(b"foobar"), "Zm9vYmFy");
}

/// A real OpenSSH server on 127.0.0.1, run as the current user with its own host key and
/// config, letting in one client key. The client side lives in the sandbox's `$HOME/.ssh`
/// (libgit2 reads it); [`Sshd::ssh_command`] is the same for the `ssh` program, which takes
/// its home from the password database, not `$HOME`.
pub struct Sshd {
    child: Child,
    /// The port it listens on.
    pub port: u16,
    /// The account the client logs in as.
    pub user: String,
    /// The client's private key, `$HOME/.ssh/id_ed25519`.
    pub client_key: PathBuf,
    /// `$HOME/.ssh/known_hosts`, holding this server's host key.
    pub known_hosts: PathBuf,
}

/// Where Debian's openssh-server puts the daemon (sshd insists on an absolute path).
const SSHD: &str = "/usr/sbin/sshd";

fn keygen(path: &Path) {
    let status = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "teammem-test", "-f"])
        .arg(path)
        .stdin(Stdio::null())
        .status()
        .expect("run ssh-keygen (apt-get install -y openssh-client)");
    assert!(status.success(), "ssh-keygen failed");
}

impl Sshd {
    /// Starts sshd for the sandbox, with a fresh host key and client key.
    pub fn start(sb: &Sandbox) -> Sshd {
        assert!(
            Path::new(SSHD).exists(),
            "{SSHD} is missing: the SSH tests need a real OpenSSH server \
             (apt-get install -y openssh-server; .ci/run installs it)"
        );
        let dir = sb.path().join("sshd");
        let ssh_dir = sb.home().join(".ssh");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::create_dir_all(&ssh_dir).unwrap();
        let host_key = dir.join("host_key");
        keygen(&host_key);
        let client_key = ssh_dir.join("id_ed25519");
        keygen(&client_key);
        let authorized = dir.join("authorized_keys");
        std::fs::copy(client_key.with_extension("pub"), &authorized).unwrap();
        let user = String::from_utf8(
            Command::new("id")
                .arg("-un")
                .output()
                .expect("run id")
                .stdout,
        )
        .unwrap()
        .trim()
        .to_string();
        let host_public = std::fs::read_to_string(host_key.with_extension("pub")).unwrap();
        let host_public: Vec<&str> = host_public.split_whitespace().take(2).collect();
        let known_hosts = ssh_dir.join("known_hosts");
        for _ in 0..20 {
            let port = free_port();
            let config = dir.join("sshd_config");
            std::fs::write(
                &config,
                format!(
                    "ListenAddress 127.0.0.1\nPort {port}\nHostKey {}\nAuthorizedKeysFile {}\n\
                     PidFile {}\nPubkeyAuthentication yes\nPasswordAuthentication no\n\
                     KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n\
                     PermitRootLogin prohibit-password\nLogLevel ERROR\n",
                    host_key.display(),
                    authorized.display(),
                    dir.join("sshd.pid").display()
                ),
            )
            .unwrap();
            let mut child = Command::new(SSHD)
                .arg("-D")
                .arg("-e")
                .arg("-f")
                .arg(&config)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("start sshd");
            if listening(&mut child, port) {
                std::fs::write(
                    &known_hosts,
                    format!("[127.0.0.1]:{port} {} {}\n", host_public[0], host_public[1]),
                )
                .unwrap();
                return Sshd {
                    child,
                    port,
                    user,
                    client_key,
                    known_hosts,
                };
            }
            let _ = child.kill();
            let mut why = String::new();
            if let Some(mut err) = child.stderr.take() {
                let _ = err.read_to_string(&mut why);
            }
            let _ = child.wait();
            assert!(
                !why.contains("privilege separation"),
                "sshd: {why} (as root, sshd needs the folder: mkdir -p /run/sshd)"
            );
        }
        panic!("sshd did not start on any port");
    }

    /// The ssh:// URL of a repository on this machine.
    pub fn url(&self, repo: &Path) -> String {
        format!(
            "ssh://{}@127.0.0.1:{}{}",
            self.user,
            self.port,
            repo.display()
        )
    }

    /// An `ssh` command line that uses the sandbox's key and known hosts and nothing of the
    /// real home's, for `core.sshCommand` or `GIT_SSH_COMMAND`.
    pub fn ssh_command(&self) -> String {
        format!(
            "ssh -F /dev/null -i {} -o IdentitiesOnly=yes -o UserKnownHostsFile={} \
             -o StrictHostKeyChecking=yes -o BatchMode=yes",
            self.client_key.display(),
            self.known_hosts.display()
        )
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// TLS in front of a loopback server: `socat` terminating TLS with a fresh self-signed
/// certificate for 127.0.0.1 and passing the bytes on, so an http:// test server is also
/// reachable as https://.
pub struct TlsFront {
    child: Child,
    /// The port TLS is served on.
    pub port: u16,
    /// The certificate (its own CA): trust it with `SSL_CERT_FILE` or `http.sslCAInfo`.
    pub certificate: PathBuf,
}

impl TlsFront {
    /// Terminates TLS for the server on `backend`.
    pub fn start(sb: &Sandbox, backend: u16) -> TlsFront {
        let dir = sb.path().join("tls");
        std::fs::create_dir_all(&dir).unwrap();
        let (certificate, key) = (dir.join("cert.pem"), dir.join("key.pem"));
        let made = Command::new("openssl")
            .args([
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
            ])
            .args([
                "-subj",
                "/CN=127.0.0.1",
                "-addext",
                "subjectAltName=IP:127.0.0.1",
            ])
            .arg("-keyout")
            .arg(&key)
            .arg("-out")
            .arg(&certificate)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("run openssl (apt-get install -y openssl)");
        assert!(made.success(), "openssl could not make a certificate");
        for _ in 0..20 {
            let port = free_port();
            let mut child = Command::new("socat")
                .arg(format!(
                    "OPENSSL-LISTEN:{port},bind=127.0.0.1,reuseaddr,fork,verify=0,cert={},key={}",
                    certificate.display(),
                    key.display()
                ))
                .arg(format!("TCP:127.0.0.1:{backend}"))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("run socat (apt-get install -y socat; .ci/run installs it)");
            if listening(&mut child, port) {
                return TlsFront {
                    child,
                    port,
                    certificate,
                };
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        panic!("socat did not start on any port");
    }

    /// The https:// URL of a repository below the backend's base folder.
    pub fn url(&self, name: &str) -> String {
        format!("https://127.0.0.1:{}/{name}", self.port)
    }
}

impl Drop for TlsFront {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A loopback proxy in front of a real server that passes the first `fast` bytes of every
/// answer at once, then one byte every `every`: a server that trickles its headers
/// (`fast` = 0) or stalls in the middle of a pack. What the client sends passes at once.
pub struct Trickle {
    server: Listening,
}

impl Trickle {
    /// Proxies to `127.0.0.1:backend`.
    pub fn start(backend: u16, fast: usize, every: Duration) -> Trickle {
        let server = Listening::start(move |client| {
            let Ok(upstream) = TcpStream::connect(("127.0.0.1", backend)) else {
                return;
            };
            let (Ok(mut client_in), Ok(mut upstream_out)) =
                (client.try_clone(), upstream.try_clone())
            else {
                return;
            };
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut client_in, &mut upstream_out);
            });
            let mut upstream = upstream;
            let mut client = client;
            let mut sent = 0usize;
            let mut buf = [0u8; 8192];
            loop {
                let n = match upstream.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                let at_once = n.min(fast.saturating_sub(sent));
                if client.write_all(&buf[..at_once]).is_err() {
                    return;
                }
                sent += at_once;
                for byte in &buf[at_once..n] {
                    std::thread::sleep(every);
                    if client.write_all(std::slice::from_ref(byte)).is_err() {
                        return;
                    }
                    sent += 1;
                }
            }
            let _ = client.shutdown(Shutdown::Both);
        });
        Trickle { server }
    }

    /// Its port.
    pub fn port(&self) -> u16 {
        self.server.port
    }
}

/// An HTTP server that answers every request with headers one byte every `every`, forever.
pub struct TrickleHttp {
    server: Listening,
}

impl TrickleHttp {
    /// Starts listening.
    pub fn start(every: Duration) -> TrickleHttp {
        let server = Listening::start(move |mut stream| {
            let mut request = [0u8; 4096];
            let _ = stream.read(&mut request);
            let headers =
                "HTTP/1.1 200 OK\r\nContent-Type: application/x-git-upload-pack-advertisement\r\n";
            for byte in headers.bytes().cycle() {
                std::thread::sleep(every);
                if stream.write_all(&[byte]).is_err() {
                    return;
                }
            }
        });
        TrickleHttp { server }
    }

    /// The URL of a repository on it.
    pub fn url(&self, name: &str) -> String {
        format!("http://127.0.0.1:{}/{name}", self.server.port)
    }
}
