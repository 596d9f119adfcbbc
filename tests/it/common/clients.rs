//! The coding-agent clients the tests run, as `.ci/clients` pins them (oldest supported and
//! newest of each), installed by `.ci/install.d/` into `/opt/teammem-clients/<client>-<version>`.
//! A missing or wrong-version client fails the test with a message naming the client, the
//! version and `.ci/run`.

use std::fs;
use std::path::{Path, PathBuf};

/// One pinned version of one client.
#[derive(Debug, Clone)]
pub struct PinnedClient {
    /// `claude`, `codex` or `qwen` (the name of its binary too).
    pub name: String,
    /// Its npm package.
    pub package: String,
    /// The pinned version.
    pub version: String,
}

impl PinnedClient {
    /// Where `.ci/install.d/` installs this version.
    pub fn prefix(&self) -> PathBuf {
        PathBuf::from(format!(
            "/opt/teammem-clients/{}-{}",
            self.name, self.version
        ))
    }

    /// The package's folder.
    pub fn package_dir(&self) -> PathBuf {
        self.prefix().join("node_modules").join(&self.package)
    }

    /// The client's program, after checking that this exact version is installed.
    pub fn bin(&self) -> PathBuf {
        self.require();
        self.prefix()
            .join("node_modules")
            .join(".bin")
            .join(&self.name)
    }

    /// Panics, naming the client, the version and how to install it, unless this exact version
    /// is installed.
    pub fn require(&self) {
        let manifest = self.package_dir().join("package.json");
        let found = fs::read_to_string(&manifest)
            .ok()
            .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
            .and_then(|v| v["version"].as_str().map(str::to_string));
        assert_eq!(
            found.as_deref(),
            Some(self.version.as_str()),
            "{} {} ({}) is not installed at {} (found: {}): run .ci/run, or as root `bash \
             .ci/install.d/{}`",
            self.name,
            self.version,
            self.package,
            self.prefix().display(),
            found.as_deref().unwrap_or("nothing"),
            install_script(&self.name),
        );
    }
}

fn install_script(name: &str) -> &'static str {
    match name {
        "claude" => "31-claude-code.sh",
        "codex" => "32-codex.sh",
        "qwen" => "20-qwen-code.sh",
        _ => "*.sh",
    }
}

/// Every pinned version of `client`, oldest first, from `.ci/clients`.
pub fn pinned(client: &str) -> Vec<PinnedClient> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/clients");
    let text = fs::read_to_string(&path).unwrap();
    for line in text.lines() {
        let mut words = line.split_whitespace();
        if words.next() != Some(client) {
            continue;
        }
        let package = words.next().unwrap_or_default().to_string();
        let versions: Vec<PinnedClient> = words
            .map(|version| PinnedClient {
                name: client.to_string(),
                package: package.clone(),
                version: version.to_string(),
            })
            .collect();
        assert!(
            !versions.is_empty(),
            "{}: no versions for {client}",
            path.display()
        );
        return versions;
    }
    panic!("{}: no line for {client}", path.display())
}

/// The newest pinned version of `client`.
pub fn newest(client: &str) -> PinnedClient {
    pinned(client).pop().unwrap()
}

/// The oldest supported pinned version of `client`.
pub fn oldest(client: &str) -> PinnedClient {
    pinned(client).remove(0)
}
