//! `teammem sync` over HTTPS: the smart-HTTP test server behind a real TLS terminator
//! (`socat`) with a self-signed certificate for 127.0.0.1. A certificate the user trusts
//! (`SSL_CERT_FILE`) syncs both ways; one nobody vouched for is refused before any credential
//! is sent or anything is pushed.

use crate::common;
use crate::common::netsync;
use crate::common::servers;
use crate::common::syncrun;

use std::time::{Duration, Instant};

use netsync::Team;
use servers::{HttpGit, TlsFront};
use syncrun::{files_at, reason, sync_json, write_memory};

const TOKEN: [(&str, &str); 2] = [
    ("TEAMMEM_GIT_TOKEN", "s3cret-pass"),
    ("TEAMMEM_GIT_USERNAME", "alice"),
];

/// The team's remote served over https://, with the teammate's git trusting the certificate.
fn over_https(team: &Team) -> (HttpGit, TlsFront) {
    let http = HttpGit::start(&team.sb, &team.srv, "alice", "s3cret-pass");
    let tls = TlsFront::start(&team.sb, http.port());
    team.set_origin(&team.me, &tls.url("team.git"));
    (http, tls)
}

#[test]
fn over_https_a_trusted_certificate_and_a_token_pull_and_push() {
    let team = Team::new();
    let (_http, tls) = over_https(&team);
    let mate_memory = team.mate_pushes(
        ".qwen/team-memory/project/from-mate.md",
        &common::memory_text("From mate", "Pushed by the teammate", "project", "Hi.\n"),
    );
    write_memory(&team.me, "project", "over-https", "Smart HTTP over TLS.\n");
    let certificate = tls.certificate.to_str().unwrap();
    let mut env = TOKEN.to_vec();
    env.push(("SSL_CERT_FILE", certificate));

    let report = sync_json(&team.sb, &team.me, &[], &env);
    assert_eq!(reason(&report), "", "{report:#}");
    assert_eq!(report["pulled"], true, "{report:#}");
    assert_eq!(report["pushed"], true, "{report:#}");
    assert!(files_at(&team.sb, &team.bare, "main").contains("over-https.md"));
    assert!(
        team.me
            .join(".qwen/team-memory/project/from-mate.md")
            .exists()
    );
    assert_eq!(team.rev(&team.me, "HEAD~1"), mate_memory);

    // The git CLI transport, with git trusting the same certificate.
    write_memory(&team.me, "project", "over-https-cli", "Through git.\n");
    let mut env = TOKEN.to_vec();
    env.push(("GIT_SSL_CAINFO", certificate));
    let report = sync_json(&team.sb, &team.me, &["--transport", "git-cli"], &env);
    assert_eq!(report["pushed"], true, "{report:#}");
    assert!(files_at(&team.sb, &team.bare, "main").contains("over-https-cli.md"));
}

#[test]
fn over_https_a_certificate_nobody_trusts_is_refused() {
    let team = Team::new();
    let (_http, _tls) = over_https(&team);
    let before = team.rev(&team.bare, "main");
    write_memory(&team.me, "project", "over-https", "Smart HTTP over TLS.\n");
    // The system's trust store, which does not hold the test certificate.
    let started = Instant::now();
    let report = sync_json(&team.sb, &team.me, &[], &TOKEN);
    assert!(started.elapsed() < Duration::from_secs(15));
    assert_eq!(reason(&report), "fetch-failed", "{report:#}");
    assert_eq!(
        report["committed"], true,
        "the memory is committed here all the same"
    );
    let said = report["warnings"].to_string().to_lowercase();
    assert!(
        said.contains("certificate") && said.contains("ssl_cert_file"),
        "{report:#}"
    );
    assert!(!said.contains("s3cret-pass"), "{report:#}");
    assert_eq!(
        team.rev(&team.bare, "main"),
        before,
        "nothing reached the remote"
    );
}

/// Without `SSL_CERT_FILE`, teammem lets OpenSSL look certificates up one by one in a hashed CA
/// folder instead of parsing the whole bundle first: a certificate in that folder is trusted.
#[test]
fn over_https_a_certificate_in_the_hashed_ca_folder_is_trusted() {
    let team = Team::new();
    let (_http, tls) = over_https(&team);
    let folder = team.sb.path().join("ca-folder");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::copy(&tls.certificate, folder.join("test-ca.pem")).unwrap();
    let rehashed = std::process::Command::new("openssl")
        .arg("rehash")
        .arg(&folder)
        .status()
        .unwrap();
    assert!(rehashed.success());
    write_memory(&team.me, "project", "over-https", "Smart HTTP over TLS.\n");
    let folder = folder.to_str().unwrap();
    let mut env = TOKEN.to_vec();
    env.push(("SSL_CERT_DIR", folder));

    let report = sync_json(&team.sb, &team.me, &[], &env);
    assert_eq!(reason(&report), "", "{report:#}");
    assert_eq!(report["pushed"], true, "{report:#}");
    assert!(files_at(&team.sb, &team.bare, "main").contains("over-https.md"));
}
