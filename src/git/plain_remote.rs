//! One ref of a network remote read by hand, for the fast no-op (issue 11): the v0 ref
//! advertisement of a `git://` daemon or a plain `http://` smart-HTTP server, over a std
//! `TcpStream` with a short deadline, so a no-op sync needs neither libgit2 nor its OpenSSL
//! start. Only the memory branch's tip is wanted.
//!
//! Anything not fully understood is no answer, and the full sync decides as before: https,
//! ssh, a URL with credentials or a query, any proxy (the `*_proxy` variables, `http.*` or
//! `remote.*.proxy` config, `core.gitProxy`, `GIT_PROXY_COMMAND`), `GIT_PROTOCOL`, a redirect
//! or an auth challenge, a dumb HTTP server, a v2-only server, an `ERR` line, a timeout.

use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::git::plain::{self, Config};

/// The longest the fast no-op waits on the network: past it, the full sync takes its turn.
const LONGEST: Duration = Duration::from_secs(2);

/// The largest advertisement read (a remote with that many refs is left to libgit2).
const MAX_ADVERTISEMENT: usize = 16 << 20;

/// A remote this module reads: its transport, host (for the `Host` header or `host=`),
/// socket address text and repository path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NetRemote {
    http: bool,
    host: String,
    port: u16,
    path: String,
}

/// The remote behind `url` when this module can read it in the environment and config git
/// would use: a `git://` or `http://` URL with a plain host and path, no proxy anywhere.
pub(crate) fn net_remote(url: &str, configs: &[&Config]) -> Option<NetRemote> {
    const NETWORK_VARIABLES: [&str; 9] = [
        "http_proxy",
        "HTTP_PROXY",
        "all_proxy",
        "ALL_PROXY",
        "no_proxy",
        "NO_PROXY",
        "GIT_PROXY_COMMAND",
        "GIT_PROTOCOL",
        "GIT_SSL_NO_VERIFY",
    ];
    if NETWORK_VARIABLES
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|x| !x.is_empty()))
    {
        return None;
    }
    let proxied = configs.iter().any(|c| {
        c.entries.iter().any(|e| {
            e.section == "http"
                // `protocol.version`, `protocol.allow`, `protocol.git.allow`: not `file`'s.
                || (e.section == "protocol" && e.subsection.as_deref() != Some("file"))
                || (e.section == "core" && e.key == "gitproxy")
                || (e.section == "remote" && e.key == "proxy")
        })
    });
    if proxied {
        return None;
    }
    let (http, rest) = match (url.strip_prefix("git://"), url.strip_prefix("http://")) {
        (Some(rest), _) => (false, rest),
        (_, Some(rest)) => (true, rest),
        _ => return None,
    };
    let (authority, path) = rest.split_at(rest.find('/')?);
    let plain_path = |p: &str| {
        p.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'-' | b'_' | b'.' | b'~'))
    };
    if !plain_path(path) || path.contains("/../") || path.ends_with("/..") {
        return None;
    }
    let (host, port) = match authority.rsplit_once(':') {
        Some((host, port)) => (host, port.parse().ok()?),
        None => (authority, if http { 80 } else { 9418 }),
    };
    let plain_host = !host.is_empty()
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-'));
    if !plain_host || port == 0 {
        return None;
    }
    Some(NetRemote {
        http,
        host: host.to_string(),
        port,
        path: path.trim_end_matches('/').to_string(),
    })
}

impl NetRemote {
    /// The commit `refname` points at on the remote (`Some(None)` when it advertises no such
    /// ref), read within a fifth of `budget` and never more than two seconds.
    pub(crate) fn read_ref(&self, refname: &str, budget: Duration) -> Option<Option<String>> {
        let deadline = Instant::now() + (budget / 5).min(LONGEST);
        let addrs = resolve(&self.host, self.port, deadline)?;
        let mut stream = connect_any(&addrs, deadline)?;
        if self.http {
            self.read_ref_http(&mut stream, refname, deadline)
        } else {
            self.read_ref_daemon(&mut stream, refname, deadline)
        }
    }

    /// The host as the request names it (`host=` or `Host:`): with its port, unless that is
    /// the transport's default.
    fn authority(&self) -> String {
        match (self.http, self.port) {
            (true, 80) | (false, 9418) => self.host.clone(),
            (_, port) => format!("{}:{port}", self.host),
        }
    }

    fn read_ref_daemon(
        &self,
        stream: &mut TcpStream,
        refname: &str,
        deadline: Instant,
    ) -> Option<Option<String>> {
        let request = format!("git-upload-pack {}\0host={}\0", self.path, self.authority());
        stream.write_all(&pkt_line(request.as_bytes())?).ok()?;
        let mut reader = Deadlined { stream, deadline };
        let found = read_advertisement(&mut reader, refname);
        // A flush ends the exchange cleanly: the daemon sends no pack.
        let _ = reader.stream.write_all(b"0000");
        found
    }

    fn read_ref_http(
        &self,
        stream: &mut TcpStream,
        refname: &str,
        deadline: Instant,
    ) -> Option<Option<String>> {
        let host = self.authority();
        let request = format!(
            "GET {}/info/refs?service=git-upload-pack HTTP/1.1\r\nHost: {host}\r\n\
             User-Agent: git/2.0 (teammem)\r\nAccept: */*\r\nPragma: no-cache\r\n\
             Connection: close\r\n\r\n",
            self.path
        );
        stream.write_all(request.as_bytes()).ok()?;
        let body = read_http_answer(&mut Deadlined { stream, deadline })?;
        let mut body = body.as_slice();
        let first = read_pkt(&mut body)?;
        if first.as_deref() != Some(b"# service=git-upload-pack\n".as_slice()) {
            return None;
        }
        read_pkt(&mut body)?.is_none().then_some(())?;
        read_advertisement(&mut body, refname)
    }
}

/// The addresses of `host`, in the order the system's resolver gives them (the order libgit2
/// tries them in), found before the deadline. An IP literal is no lookup; any other name is
/// looked up on a thread of its own, since `getaddrinfo` takes no deadline: when it has not
/// answered in time it is left behind (it ends with the process), and the full sync, whose
/// transfer runs under the budget, takes its turn.
fn resolve(host: &str, port: u16, deadline: Instant) -> Option<Vec<SocketAddr>> {
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Some(vec![SocketAddr::new(ip, port)]);
    }
    let left = deadline.checked_duration_since(Instant::now())?;
    let (found, answer) = mpsc::channel();
    let name = host.to_string();
    std::thread::Builder::new()
        .name("teammem-resolve".into())
        .spawn(move || {
            let addrs = (name.as_str(), port)
                .to_socket_addrs()
                .map(|a| a.collect::<Vec<_>>());
            let _ = found.send(addrs);
        })
        .ok()?;
    let addrs = answer.recv_timeout(left).ok()?.ok()?;
    (!addrs.is_empty()).then_some(addrs)
}

/// A connection to the first of `addrs` that takes one before the deadline, each tried in
/// turn. Each gets an equal share of the time left, so an address that swallows the
/// handshake leaves the others their turn; one that refuses it passes on at once.
fn connect_any(addrs: &[SocketAddr], deadline: Instant) -> Option<TcpStream> {
    for (i, addr) in addrs.iter().enumerate() {
        let left = deadline.checked_duration_since(Instant::now())?;
        let tries_left = u32::try_from(addrs.len() - i).unwrap_or(u32::MAX);
        let share = left / tries_left;
        if share.is_zero() {
            return None;
        }
        if let Ok(stream) = TcpStream::connect_timeout(addr, share) {
            stream.set_nodelay(true).ok()?;
            return Some(stream);
        }
    }
    None
}

/// A stream whose every read waits no later than the deadline.
struct Deadlined<'a> {
    stream: &'a mut TcpStream,
    deadline: Instant,
}

impl Read for Deadlined<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let left = self
            .deadline
            .checked_duration_since(Instant::now())
            .filter(|d| !d.is_zero())
            .ok_or(std::io::ErrorKind::TimedOut)?;
        self.stream.set_read_timeout(Some(left))?;
        self.stream.read(buf)
    }
}

/// The body of the server's answer, read up to the end its framing gives (its length, or its
/// last chunk), not to the connection's close: a server may keep the connection open long
/// after the answer is complete (Apache's mod_cgi does, tens of milliseconds). `None` unless
/// it is a complete `200` answer carrying a smart upload-pack advertisement.
fn read_http_answer(reader: &mut impl Read) -> Option<Vec<u8>> {
    let mut answer = HttpAnswer::default();
    let mut buf = vec![0; 16 << 10];
    loop {
        let n = reader.read(&mut buf).ok()?;
        answer.bytes.extend_from_slice(&buf[..n]);
        if answer.bytes.len() > MAX_ADVERTISEMENT {
            return None;
        }
        match answer.framed(n == 0) {
            Framed::More => {}
            Framed::Body(body) => return Some(body),
            Framed::Refused => return None,
        }
    }
}

/// How an answer's body ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    Length(usize),
    Chunked,
    Close,
}

/// What an answer read so far amounts to.
#[derive(Debug, PartialEq, Eq)]
enum Framed {
    /// Not complete yet: read on.
    More,
    /// Complete: its body, chunks joined.
    Body(Vec<u8>),
    /// Not an answer read here, or a broken one.
    Refused,
}

/// An HTTP answer as its bytes arrive, its chunks taken apart as each one is complete.
#[derive(Default)]
struct HttpAnswer {
    bytes: Vec<u8>,
    /// Where the body starts and how it ends, once the head is in.
    head: Option<(usize, Framing)>,
    /// Where the next chunk starts, from the body's start.
    next_chunk: usize,
    chunks: Vec<u8>,
}

/// The longest head read, and the longest chunk-size line: past them, no answer of ours.
const MAX_HEAD: usize = 64 << 10;
const MAX_CHUNK_LINE: usize = 1024;

impl HttpAnswer {
    /// The answer so far; `closed` once the server closed the connection.
    fn framed(&mut self, closed: bool) -> Framed {
        let more = if closed {
            Framed::Refused
        } else {
            Framed::More
        };
        let (start, framing) = match self.head {
            Some(head) => head,
            None => match memchr::memmem::find(&self.bytes, b"\r\n\r\n") {
                Some(end) => match framing(&self.bytes[..end]) {
                    Some(framing) => *self.head.insert((end + 4, framing)),
                    None => return Framed::Refused,
                },
                None if self.bytes.len() > MAX_HEAD => return Framed::Refused,
                None => return more,
            },
        };
        let rest = &self.bytes[start..];
        match framing {
            Framing::Length(n) if rest.len() >= n => Framed::Body(rest[..n].to_vec()),
            Framing::Length(_) => more,
            Framing::Close if closed => Framed::Body(rest.to_vec()),
            Framing::Close => Framed::More,
            Framing::Chunked => self.next_chunks(start, closed),
        }
    }

    /// Takes every complete chunk after the last one taken; the body once the last (empty)
    /// chunk is in.
    fn next_chunks(&mut self, start: usize, closed: bool) -> Framed {
        let more = if closed {
            Framed::Refused
        } else {
            Framed::More
        };
        loop {
            let rest = &self.bytes[start + self.next_chunk..];
            let line = &rest[..rest.len().min(MAX_CHUNK_LINE)];
            let Some(eol) = memchr::memmem::find(line, b"\r\n") else {
                return if rest.len() >= MAX_CHUNK_LINE {
                    Framed::Refused
                } else {
                    more
                };
            };
            let Some(size) = std::str::from_utf8(&rest[..eol])
                .ok()
                .and_then(|l| l.split(';').next())
                .and_then(|l| usize::from_str_radix(l.trim(), 16).ok())
            else {
                return Framed::Refused;
            };
            if size == 0 {
                return Framed::Body(std::mem::take(&mut self.chunks));
            }
            let data = eol + 2;
            let Some(end) = size.checked_add(data + 2) else {
                return Framed::Refused;
            };
            if rest.len() < end {
                return more;
            }
            if &rest[end - 2..end] != b"\r\n" {
                return Framed::Refused;
            }
            self.chunks.extend_from_slice(&rest[data..end - 2]);
            self.next_chunk += end;
        }
    }
}

/// How the body of an answer with this head ends; `None` for any status but `200` (a
/// redirect, an auth challenge), a dumb server, or an encoding not read here.
fn framing(head: &[u8]) -> Option<Framing> {
    let head = std::str::from_utf8(head).ok()?;
    let mut lines = head.split("\r\n");
    let status = lines.next()?;
    let mut words = status.split(' ');
    if !words.next()?.starts_with("HTTP/1.") || words.next()? != "200" {
        return None;
    }
    let (mut length, mut chunked, mut smart) = (None, false, false);
    for line in lines {
        let (name, value) = line.split_once(':')?;
        let value = value.trim();
        match name.trim().to_ascii_lowercase().as_str() {
            "content-type" => smart = value == "application/x-git-upload-pack-advertisement",
            "content-length" => length = Some(value.parse::<usize>().ok()?),
            "transfer-encoding" => {
                if !value.eq_ignore_ascii_case("chunked") {
                    return None;
                }
                chunked = true;
            }
            "content-encoding" => return None,
            _ => {}
        }
    }
    if !smart {
        return None;
    }
    Some(match (chunked, length) {
        (true, _) => Framing::Chunked,
        (false, Some(n)) => Framing::Length(n),
        (false, None) => Framing::Close,
    })
}

/// A pkt-line holding `payload`.
fn pkt_line(payload: &[u8]) -> Option<Vec<u8>> {
    let len = payload.len() + 4;
    if len > 65520 {
        return None;
    }
    let mut out = format!("{len:04x}").into_bytes();
    out.extend_from_slice(payload);
    Some(out)
}

/// The next pkt-line's payload; `Some(None)` for a flush.
fn read_pkt(reader: &mut impl Read) -> Option<Option<Vec<u8>>> {
    let mut len = [0u8; 4];
    reader.read_exact(&mut len).ok()?;
    let len = usize::from_str_radix(std::str::from_utf8(&len).ok()?, 16).ok()?;
    match len {
        0 => Some(None),
        1..=4 => None,
        _ => {
            let mut payload = vec![0; len - 4];
            reader.read_exact(&mut payload).ok()?;
            Some(Some(payload))
        }
    }
}

/// `refname`'s commit in a v0 advertisement read through to its flush. `None` for an `ERR`
/// line, a v2 answer or any line not in the v0 shape.
fn read_advertisement(reader: &mut impl Read, refname: &str) -> Option<Option<String>> {
    let mut found = None;
    let mut first = true;
    while let Some(line) = read_pkt(reader)? {
        let line = std::str::from_utf8(&line).ok()?;
        let line = line.strip_suffix('\n').unwrap_or(line);
        if first && line == "version 1" {
            continue;
        }
        let line = match first {
            true => line.split('\0').next()?,
            false if line.contains('\0') => return None,
            false => line,
        };
        first = false;
        let (id, name) = line.split_once(' ')?;
        if !plain::is_hex_id(id) || id.len() != 40 {
            return None;
        }
        if name == refname {
            found = Some(id.to_string());
        }
    }
    Some(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkts(lines: &[&str]) -> Vec<u8> {
        let mut out = Vec::new();
        for line in lines {
            match *line {
                "" => out.extend_from_slice(b"0000"),
                l => out.extend(pkt_line(l.as_bytes()).unwrap()),
            }
        }
        out
    }

    /// The body of a whole answer, the connection closed after it.
    fn http_body(response: &[u8]) -> Option<Vec<u8>> {
        read_http_answer(&mut &response[..])
    }

    const A: &str = "1111111111111111111111111111111111111111";
    const B: &str = "2222222222222222222222222222222222222222";

    #[test]
    fn the_advertisement_gives_the_ref_asked_for_and_nothing_else_is_understood() {
        let ad = pkts(&[
            &format!("{A} HEAD\0multi_ack side-band-64k\n"),
            &format!("{B} refs/heads/team-memory\n"),
            "",
        ]);
        let tip = read_advertisement(&mut ad.as_slice(), "refs/heads/team-memory");
        assert_eq!(tip, Some(Some(B.to_string())));
        assert_eq!(
            read_advertisement(&mut ad.as_slice(), "refs/heads/other"),
            Some(None)
        );
        let err = pkts(&["ERR access denied", ""]);
        assert_eq!(
            read_advertisement(&mut err.as_slice(), "refs/heads/x"),
            None
        );
        let v2 = pkts(&["version 2\n", "ls-refs\n", ""]);
        assert_eq!(read_advertisement(&mut v2.as_slice(), "refs/heads/x"), None);
        let torn = &ad[..ad.len() - 4];
        assert_eq!(read_advertisement(&mut &torn[..], "refs/heads/x"), None);
    }

    #[test]
    fn only_a_smart_200_body_is_read_chunked_or_not() {
        let head = "HTTP/1.1 200 OK\r\nContent-Type: application/x-git-upload-pack-advertisement";
        let plain = format!("{head}\r\nContent-Length: 5\r\n\r\nhello");
        assert_eq!(http_body(plain.as_bytes()), Some(b"hello".to_vec()));
        let chunked =
            format!("{head}\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhel\r\n2\r\nlo\r\n0\r\n\r\n");
        assert_eq!(http_body(chunked.as_bytes()), Some(b"hello".to_vec()));
        // The largest chunk size there is: no overflow, just a body not fully received.
        let huge =
            format!("{head}\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\nhi\r\n");
        assert_eq!(http_body(huge.as_bytes()), None);
        let torn = format!("{head}\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhel\r\n");
        assert_eq!(http_body(torn.as_bytes()), None);
        let dumb = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nx";
        assert_eq!(http_body(dumb.as_bytes()), None);
        let redirect = "HTTP/1.1 301 Moved\r\nLocation: http://x/\r\n\r\n";
        assert_eq!(http_body(redirect.as_bytes()), None);
        let challenge = "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic\r\n\r\n";
        assert_eq!(http_body(challenge.as_bytes()), None);
    }

    /// A server that sends `bytes` a few at a time, then holds the connection open past the
    /// deadline (its reads then fail, as `Deadlined`'s do).
    struct Lingering<'a> {
        bytes: &'a [u8],
        step: usize,
    }

    impl Read for Lingering<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.bytes.is_empty() {
                return Err(std::io::ErrorKind::TimedOut.into());
            }
            let n = self.step.min(self.bytes.len()).min(buf.len());
            buf[..n].copy_from_slice(&self.bytes[..n]);
            self.bytes = &self.bytes[n..];
            Ok(n)
        }
    }

    #[test]
    fn an_answer_ends_where_its_framing_says_not_where_the_server_closes() {
        let head = "HTTP/1.1 200 OK\r\nContent-Type: application/x-git-upload-pack-advertisement";
        let chunked = format!(
            "{head}\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhel\r\n2;x=y\r\nlo\r\n0\r\n\r\n"
        );
        let sized = format!("{head}\r\nContent-Length: 5\r\n\r\nhello");
        let to_close = format!("{head}\r\n\r\nhello");
        let torn = format!("{head}\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhel\r\n2\r\nl");
        for step in [1, 2, 3, 5, 7, 64, 4096] {
            let read = |text: &str| {
                read_http_answer(&mut Lingering {
                    bytes: text.as_bytes(),
                    step,
                })
            };
            assert_eq!(read(&chunked), Some(b"hello".to_vec()), "step {step}");
            assert_eq!(read(&sized), Some(b"hello".to_vec()), "step {step}");
            // Only the close ends a body with neither: a server that holds on is no answer.
            assert_eq!(read(&to_close), None, "step {step}");
            assert_eq!(read(&torn), None, "step {step}");
        }
        assert_eq!(http_body(to_close.as_bytes()), Some(b"hello".to_vec()));
    }

    #[test]
    fn only_plain_git_and_http_urls_are_read_by_hand() {
        let none = Config::default();
        let r = net_remote("git://127.0.0.1:9999/team.git", &[&none]).unwrap();
        assert_eq!(
            (r.http, r.port, r.path.as_str()),
            (false, 9999, "/team.git")
        );
        let r = net_remote("http://localhost/srv/team", &[&none]).unwrap();
        assert_eq!((r.http, r.port), (true, 80));
        for not in [
            "https://example.com/team.git",
            "ssh://host/team.git",
            "http://user:pw@host/team.git",
            "http://host/team.git?x=1",
            "http://[::1]/team.git",
            "git://host/a/../b",
            "/srv/team.git",
        ] {
            assert_eq!(net_remote(not, &[&none]), None, "{not}");
        }
        let proxied = plain::parse_config(b"[http]\n\tproxy = http://p:3128\n").unwrap();
        assert_eq!(net_remote("http://host/team.git", &[&proxied]), None);
    }

    #[test]
    fn every_address_is_tried_in_turn_until_one_takes_the_connection() {
        let listening = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let open = listening.local_addr().unwrap();
        // A port just freed: nobody listens there, so it refuses at once.
        let refused = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        let soon = Instant::now() + Duration::from_secs(2);
        let stream = connect_any(&[refused, open], soon).expect("the second address answers");
        assert_eq!(stream.peer_addr().unwrap(), open);
        assert!(connect_any(&[refused], soon).is_none());
        assert!(connect_any(&[], soon).is_none());
        // Past the deadline nothing is tried.
        assert!(connect_any(&[open], Instant::now()).is_none());
    }

    #[test]
    fn an_ip_literal_is_no_lookup_and_a_name_is_looked_up_within_the_deadline() {
        let soon = Instant::now() + Duration::from_secs(2);
        let literal = resolve("127.0.0.1", 9418, soon).unwrap();
        assert_eq!(literal, ["127.0.0.1:9418".parse::<SocketAddr>().unwrap()]);
        // A literal needs no time at all; a name gets none once the deadline is past.
        assert_eq!(resolve("127.0.0.1", 80, Instant::now()).unwrap().len(), 1);
        assert_eq!(resolve("localhost", 80, Instant::now()), None);
        let local = resolve("localhost", 8080, soon).expect("localhost resolves");
        assert!(
            local
                .iter()
                .all(|a| a.ip().is_loopback() && a.port() == 8080),
            "{local:?}"
        );
    }

    proptest::proptest! {
        /// Whatever a server sends, the readers answer or give up: no panic, no overflow (a
        /// chunk size of `ffffffffffffffff` once overflowed).
        #[test]
        fn no_answer_from_a_server_panics(
            bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..400),
            size in "[0-9a-fA-F]{1,20}",
        ) {
            let _ = read_advertisement(&mut bytes.as_slice(), "refs/heads/team-memory");
            let _ = http_body(&bytes);
            let mut chunked = format!("{size}\r\n").into_bytes();
            chunked.extend_from_slice(&bytes);
            let mut head = b"HTTP/1.1 200 OK\r\nContent-Type: \
                application/x-git-upload-pack-advertisement\r\nTransfer-Encoding: chunked\r\n\r\n"
                .to_vec();
            head.extend_from_slice(&chunked);
            let _ = http_body(&head);
            let _ = read_http_answer(&mut Lingering { bytes: &head, step: 3 });
        }
    }
}
