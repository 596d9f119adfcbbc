//! A repository read by hand, without libgit2: its layout (a `.git` folder or a gitfile, a
//! linked worktree's common dir), its config files, its loose and packed refs. Starting
//! libgit2 initialises OpenSSL, which costs a no-op sync more than everything else it does
//! (`ops/sync/fast_noop.rs`); a question these readers can answer needs none of it.
//!
//! Every reader is conservative: what it does not fully understand — an `include`, a URL
//! rewrite (`insteadOf`), a symbolic ref where a direct one is expected, a reftable
//! repository, a repository extension, config or layout from the environment (`GIT_DIR`,
//! `GIT_CONFIG_*`, …), a file owned by someone else — answers `None`, and the caller takes
//! libgit2's path, which stays correct.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Environment variables that change where git finds the repository, its config or its refs.
/// With any of them set, the readers here answer nothing.
const LAYOUT_VARIABLES: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_CONFIG",
    "GIT_CONFIG_COUNT",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
    "GIT_NAMESPACE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_REF_PARANOIA",
    "GIT_DEFAULT_REF_FORMAT",
];

/// A work tree's repository as found on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlainRepo {
    /// The work tree's root.
    pub workdir: PathBuf,
    /// The git folder: `.git`, or a linked worktree's folder under `.git/worktrees/`.
    pub git_dir: PathBuf,
    /// Where refs and the shared config live (the git folder itself unless a linked worktree).
    pub common_dir: PathBuf,
    /// The repository's config (`<common>/config`), parsed.
    pub config: Config,
}

/// One `key = value` of a config file: section and key lowercased, subsection as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigEntry {
    /// `remote` in `[remote "origin"]`.
    pub section: String,
    /// `origin` in `[remote "origin"]`.
    pub subsection: Option<String>,
    /// `url` in `url = …`.
    pub key: String,
    /// The value; `None` for a bare `key` (boolean true).
    pub value: Option<String>,
}

/// The entries of one or more config files, in the order git reads them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Config {
    /// Every entry, in file order.
    pub entries: Vec<ConfigEntry>,
}

impl Config {
    /// Every value of `section.[subsection.]key`, in order (the last one wins in git).
    pub fn values(&self, section: &str, subsection: Option<&str>, key: &str) -> Vec<Option<&str>> {
        self.entries
            .iter()
            .filter(|e| {
                e.section == section && e.subsection.as_deref() == subsection && e.key == key
            })
            .map(|e| e.value.as_deref())
            .collect()
    }

    /// The value git would use: the last one. `None` when unset or a bare key.
    pub fn last(&self, section: &str, subsection: Option<&str>, key: &str) -> Option<&str> {
        self.values(section, subsection, key).pop().flatten()
    }

    /// Whether any entry is in `section` (lowercased).
    /// Whether the repository format is the one these readers know: version 0, no extension
    /// (reftable, another object format, a work tree config).
    pub fn format_understood(&self) -> bool {
        !self.has_section("extensions")
            && self
                .last("core", None, "repositoryformatversion")
                .is_none_or(|v| v == "0")
    }

    pub fn has_section(&self, section: &str) -> bool {
        self.entries.iter().any(|e| e.section == section)
    }
}

/// Whether the environment leaves the repository's layout and config to the files (none of
/// [`LAYOUT_VARIABLES`], and `GIT_CONFIG_GLOBAL`, when set, naming `~/.gitconfig` itself).
pub fn environment_is_plain() -> bool {
    if LAYOUT_VARIABLES
        .iter()
        .any(|v| std::env::var_os(v).is_some())
    {
        return false;
    }
    match std::env::var_os("GIT_CONFIG_GLOBAL") {
        None => true,
        Some(global) => {
            home().is_some_and(|h| same_file(&h.join(".gitconfig"), Path::new(&global)))
        }
    }
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

/// Whether two paths name the same file, or the same missing path.
fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        (Err(_), Err(_)) => a == b,
        _ => false,
    }
}

/// The effective user id.
fn my_uid() -> u32 {
    crate::sys::effective_uid()
}

/// Whether `path` exists, is owned by this user and is a folder.
fn my_dir(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_dir() && m.uid() == my_uid())
}

impl PlainRepo {
    /// The repository whose work tree root is `workdir`: `workdir/.git` a folder, or a gitfile
    /// (`gitdir: …`) naming a linked worktree's folder. `None` for anything else, a config
    /// this module does not fully understand, or files owned by another user.
    pub fn at(workdir: &Path) -> Option<PlainRepo> {
        if !environment_is_plain() || !my_dir(workdir) {
            return None;
        }
        let dot_git = workdir.join(".git");
        let meta = std::fs::symlink_metadata(&dot_git).ok()?;
        let (git_dir, common_dir) = if meta.is_dir() {
            if dot_git.join("commondir").exists() {
                return None;
            }
            (dot_git.clone(), dot_git)
        } else if meta.is_file() {
            let text = std::fs::read_to_string(&dot_git).ok()?;
            let target = text.strip_prefix("gitdir: ")?.strip_suffix('\n')?;
            if target.is_empty() || target.contains('\n') {
                return None;
            }
            let git_dir = workdir.join(target);
            // A linked worktree: its folder names the common dir and points back at us. A
            // submodule's gitfile (no commondir) is left to libgit2.
            let common_dir = linked_common_dir(&git_dir)?;
            let back = std::fs::read_to_string(git_dir.join("gitdir")).ok()?;
            let back = Path::new(back.strip_suffix('\n').unwrap_or(&back));
            if !same_file(back, &dot_git) {
                return None;
            }
            (git_dir, common_dir)
        } else {
            return None;
        };
        PlainRepo::read(workdir, git_dir, common_dir)
    }

    /// The repository [`crate::git::repo::discover`] found, read by hand. With the plain
    /// environment this is [`PlainRepo::at`] (and agrees with what was found); with `GIT_DIR`,
    /// `GIT_WORK_TREE` or a ceiling set, discovery already followed them, and the git folder it
    /// found is read as it is. Any other variable of [`LAYOUT_VARIABLES`] answers `None`.
    pub fn of(paths: &super::repo::RepoPaths) -> Option<PlainRepo> {
        if environment_is_plain() {
            return PlainRepo::at(&paths.workdir).filter(|r| r.git_dir == paths.git_dir);
        }
        let followed = ["GIT_DIR", "GIT_WORK_TREE", "GIT_CEILING_DIRECTORIES"];
        let other_set = LAYOUT_VARIABLES
            .iter()
            .filter(|v| !followed.contains(v))
            .any(|v| std::env::var_os(v).is_some());
        if other_set || std::env::var_os("GIT_CONFIG_GLOBAL").is_some() || !my_dir(&paths.workdir) {
            return None;
        }
        let git_dir = paths.git_dir.clone();
        let common_dir = if git_dir.join("commondir").exists() {
            linked_common_dir(&git_dir)?
        } else {
            git_dir.clone()
        };
        PlainRepo::read(&paths.workdir, git_dir, common_dir)
    }

    /// The repository once its folders are known: `None` unless they are this user's, the
    /// refs are files and the config is fully understood and names no work tree or bareness.
    fn read(workdir: &Path, git_dir: PathBuf, common_dir: PathBuf) -> Option<PlainRepo> {
        if !my_dir(&git_dir)
            || !my_dir(&common_dir)
            || !git_dir.join("HEAD").is_file()
            || common_dir.join("reftable").exists()
        {
            return None;
        }
        let config = parse_config(&std::fs::read(common_dir.join("config")).ok()?)?;
        let bare = config.values("core", None, "bare").pop();
        let unusual = !config.format_understood()
            || bare.is_some_and(|v| !v.is_some_and(|v| v.eq_ignore_ascii_case("false")))
            || !config.values("core", None, "worktree").is_empty();
        if unusual {
            return None;
        }
        Some(PlainRepo {
            workdir: workdir.to_path_buf(),
            git_dir,
            common_dir,
            config,
        })
    }

    /// Whether this is a linked worktree (its git folder is not the common dir).
    pub fn is_linked_worktree(&self) -> bool {
        self.git_dir != self.common_dir
    }

    /// The branch HEAD names (`Some(Some("main"))`), `Some(None)` when detached, `None` when
    /// HEAD is neither.
    pub fn head_branch(&self) -> Option<Option<String>> {
        let text = std::fs::read_to_string(self.git_dir.join("HEAD")).ok()?;
        let text = text.strip_suffix('\n')?;
        if let Some(target) = text.strip_prefix("ref: ") {
            return target
                .strip_prefix("refs/heads/")
                .filter(|b| !b.is_empty() && !b.contains(char::is_whitespace))
                .map(|b| Some(b.to_string()));
        }
        is_hex_id(text).then_some(None)
    }

    /// The id a ref of the common dir holds (`Some(None)`: no such ref), read as git reads it:
    /// the loose file, else `packed-refs`. `None` when it is symbolic or cannot be read.
    pub fn read_ref(&self, refname: &str) -> Option<Option<String>> {
        read_ref_in(&self.common_dir, refname)
    }
}

/// The common dir a linked worktree's git folder names in its `commondir` file.
fn linked_common_dir(git_dir: &Path) -> Option<PathBuf> {
    let common = std::fs::read_to_string(git_dir.join("commondir")).ok()?;
    let common = common.strip_suffix('\n').unwrap_or(&common);
    if common.is_empty() || common.contains('\n') {
        return None;
    }
    Some(git_dir.join(common))
}

/// A ref of the repository at `git_dir` (see [`PlainRepo::read_ref`]).
pub fn read_ref_in(git_dir: &Path, refname: &str) -> Option<Option<String>> {
    if !refname.starts_with("refs/") || refname.contains("..") || refname.ends_with('/') {
        return None;
    }
    match std::fs::read_to_string(git_dir.join(refname)) {
        Ok(text) => {
            let id = text.strip_suffix('\n').unwrap_or(&text);
            return is_hex_id(id).then(|| Some(id.to_string()));
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        // A folder of that name (`refs/heads/team-memory/x`) or an unreadable file.
        Err(_) => return None,
    }
    let packed = match std::fs::read_to_string(git_dir.join("packed-refs")) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Some(None),
        Err(_) => return None,
    };
    for line in packed.lines() {
        if line.starts_with('#') || line.starts_with('^') {
            continue;
        }
        let (id, name) = line.split_once(' ')?;
        if name == refname {
            return is_hex_id(id).then(|| Some(id.to_string()));
        }
    }
    Some(None)
}

/// What a git folder's `HEAD` is, read by hand ([`head_commit`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlainHead {
    /// The object id `HEAD` resolves to (40 lowercase hex digits).
    At(String),
    /// `HEAD` names a branch with no commit yet.
    Unborn,
}

/// The commit `HEAD` of the git folder `git_dir` names: a detached id, or a branch's ref,
/// loose or in `packed-refs` (unborn when neither holds it). `None` for any other layout —
/// a linked worktree's folder, a ref to a ref, reftable, a repository extension or a config
/// this module does not fully understand —: then libgit2 must be asked.
pub fn head_commit(git_dir: &Path) -> Option<PlainHead> {
    if git_dir.join("commondir").exists() || git_dir.join("reftable").exists() {
        return None;
    }
    match std::fs::read(git_dir.join("config")) {
        Ok(bytes) => {
            let config = parse_config(&bytes)?;
            if !config.format_understood() {
                return None;
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(_) => return None,
    }
    let head = std::fs::read_to_string(git_dir.join("HEAD")).ok()?;
    let head = head.trim_end();
    if is_hex_id(head) {
        return Some(PlainHead::At(head.to_string()));
    }
    let name = head.strip_prefix("ref: ")?.trim();
    if name.contains(['\\', '\0', ' ', ':']) || name.split('/').any(|p| p.starts_with('.')) {
        return None;
    }
    Some(match read_ref_in(git_dir, name)? {
        Some(id) => PlainHead::At(id),
        None => PlainHead::Unborn,
    })
}

/// Whether `text` is a full SHA-1 object id in lowercase hex.
pub fn is_hex_id(text: &str) -> bool {
    text.len() == 40 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The id git gives `bytes` as a blob (SHA-1 of `blob <len>\0` and the bytes).
pub fn blob_sha1(bytes: &[u8]) -> [u8; 20] {
    use sha1::{Digest, Sha1};
    let mut hash = Sha1::new();
    hash.update(format!("blob {}\0", bytes.len()).as_bytes());
    hash.update(bytes);
    hash.finalize().into()
}

/// `bytes` in lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    out
}

/// The 20 bytes of a SHA-1 object id written in lowercase hex; `None` for anything else.
pub fn object_id(text: &str) -> Option<[u8; 20]> {
    let digits = text.as_bytes();
    if digits.len() != 40 {
        return None;
    }
    let value = |d: u8| match d {
        b'0'..=b'9' => Some(d - b'0'),
        b'a'..=b'f' => Some(d - b'a' + 10),
        _ => None,
    };
    let mut out = [0u8; 20];
    for (at, byte) in out.iter_mut().enumerate() {
        *byte = value(digits[2 * at])? << 4 | value(digits[2 * at + 1])?;
    }
    Some(out)
}

/// The git folder of a local remote (a bare repository, or a work tree's `.git` folder), when
/// `url` is an absolute path or a `file://` URL of one and its layout is the plain one (no
/// reftable, no extension, owned by this user). `None` for any other remote.
pub fn local_remote(url: &str) -> Option<PathBuf> {
    let path = match url.strip_prefix("file://") {
        Some(rest) => rest,
        None => url,
    };
    if !path.starts_with('/') || path.contains(['%', '\n']) || path.contains("/../") {
        return None;
    }
    let path = Path::new(path);
    let git_dir = if path.join("HEAD").is_file() && path.join("objects").is_dir() {
        path.to_path_buf()
    } else if std::fs::symlink_metadata(path.join(".git")).is_ok_and(|m| m.is_dir()) {
        path.join(".git")
    } else {
        return None;
    };
    if !my_dir(&git_dir) || git_dir.join("reftable").exists() || git_dir.join("commondir").exists()
    {
        return None;
    }
    let config = parse_config(&std::fs::read(git_dir.join("config")).ok()?)?;
    if !config.format_understood() {
        return None;
    }
    Some(git_dir)
}

/// The user-level config files git may read, in git's order (system, XDG, global), each with
/// whether libgit2 surely reads it too. A file that is missing is left out; one that cannot
/// be read or parsed answers `None`.
pub fn user_configs() -> Option<Vec<(Config, bool)>> {
    let mut files: Vec<(PathBuf, bool)> = vec![(PathBuf::from("/etc/gitconfig"), false)];
    match std::env::var_os("XDG_CONFIG_HOME").filter(|x| !x.is_empty()) {
        Some(xdg) => files.push((PathBuf::from(xdg).join("git/config"), false)),
        None => {
            if let Some(h) = home() {
                files.push((h.join(".config/git/config"), true));
            }
        }
    }
    if let Some(h) = home() {
        files.push((h.join(".gitconfig"), true));
    }
    let mut configs = Vec::new();
    for (file, sure) in files {
        match std::fs::read(&file) {
            Ok(bytes) => configs.push((parse_config(&bytes)?, sure)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(_) => return None,
        }
    }
    Some(configs)
}

/// Parses a git config file. `None` for anything not fully understood: an `include` or
/// `includeIf` section, a URL rewrite (`url.*.insteadOf`, `pushInsteadOf`), a line
/// continuation, text that is not UTF-8 or not git's syntax.
pub fn parse_config(bytes: &[u8]) -> Option<Config> {
    let text = std::str::from_utf8(bytes).ok()?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut entries = Vec::new();
    let mut section: Option<(String, Option<String>)> = None;
    for line in text.lines() {
        let line = line.trim_start();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(rest) = line.strip_prefix('[') {
            let (header, after) = parse_header(rest)?;
            let after = after.trim_start();
            if !(after.is_empty() || after.starts_with('#') || after.starts_with(';')) {
                return None;
            }
            if matches!(header.0.as_str(), "include" | "includeif") {
                return None;
            }
            section = Some(header);
            continue;
        }
        let (name, sub) = section.clone()?;
        let key_len = line
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || *b == b'-')
            .count();
        if key_len == 0 || !line.as_bytes()[0].is_ascii_alphabetic() {
            return None;
        }
        let key = line[..key_len].to_ascii_lowercase();
        let rest = line[key_len..].trim_start();
        let value = if rest.is_empty() || rest.starts_with('#') || rest.starts_with(';') {
            None
        } else {
            Some(parse_value(rest.strip_prefix('=')?)?)
        };
        if name == "url" && matches!(key.as_str(), "insteadof" | "pushinsteadof") {
            return None;
        }
        entries.push(ConfigEntry {
            section: name,
            subsection: sub,
            key,
            value,
        });
    }
    Some(Config { entries })
}

/// `name]`, `name "sub"]` or the old `name.sub]` (after the `[`); returns the rest of the line.
fn parse_header(rest: &str) -> Option<((String, Option<String>), &str)> {
    let name_len = rest
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.'))
        .count();
    let name = &rest[..name_len];
    let after = &rest[name_len..];
    if name.is_empty() {
        return None;
    }
    if let Some(after) = after.strip_prefix(']') {
        return Some(match name.split_once('.') {
            // `[branch.main]`: the old form, subsection lowercased as git does.
            Some((n, sub)) => (
                (n.to_ascii_lowercase(), Some(sub.to_ascii_lowercase())),
                after,
            ),
            None => ((name.to_ascii_lowercase(), None), after),
        });
    }
    let quoted = after.strip_prefix(" \"")?;
    if name.contains('.') {
        return None;
    }
    let mut sub = String::new();
    let mut chars = quoted.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => {
                let after = quoted[i + 1..].strip_prefix(']')?;
                return Some(((name.to_ascii_lowercase(), Some(sub)), after));
            }
            '\\' => sub.push(chars.next()?.1),
            '\n' => return None,
            c => sub.push(c),
        }
    }
    None
}

/// A value after the `=`: quotes removed, escapes read, a trailing comment and the
/// whitespace around it dropped.
fn parse_value(raw: &str) -> Option<String> {
    let mut value = String::new();
    let mut quoted = false;
    // Whitespace outside quotes is kept only between words.
    let mut pending_space = String::new();
    let mut chars = raw.trim_start().chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                value.push_str(&pending_space);
                pending_space.clear();
                quoted = !quoted;
            }
            '\\' => {
                let escaped = match chars.next()? {
                    'n' => '\n',
                    't' => '\t',
                    'b' => '\u{8}',
                    '\\' => '\\',
                    '"' => '"',
                    _ => return None,
                };
                value.push_str(&pending_space);
                pending_space.clear();
                value.push(escaped);
            }
            '#' | ';' if !quoted => break,
            c if c.is_whitespace() && !quoted => pending_space.push(c),
            c => {
                value.push_str(&pending_space);
                pending_space.clear();
                value.push(c);
            }
        }
    }
    (!quoted).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(config: &Config, section: &str, sub: Option<&str>, key: &str) -> Option<String> {
        config.last(section, sub, key).map(str::to_string)
    }

    #[test]
    fn config_files_are_read_as_git_reads_them() {
        let text = "# a comment\n[core]\n\tbare = false\n\tfilemode\n[remote \"origin\"]\n\
                    \turl = /srv/team.git ; the remote\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n\
                    [branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n\
                    [Teammem]\n\tBranch = \"team memory\"  \n[branch.Old]\n\tremote = up\n\
                    [user]\n\tname = Ada \\\"the\\\" Lovelace # x\n";
        let config = parse_config(text.as_bytes()).unwrap();
        assert_eq!(
            entry(&config, "remote", Some("origin"), "url").as_deref(),
            Some("/srv/team.git")
        );
        assert_eq!(
            entry(&config, "teammem", None, "branch").as_deref(),
            Some("team memory")
        );
        assert_eq!(
            entry(&config, "branch", Some("old"), "remote").as_deref(),
            Some("up")
        );
        assert_eq!(
            entry(&config, "user", None, "name").as_deref(),
            Some("Ada \"the\" Lovelace")
        );
        assert_eq!(config.values("core", None, "filemode"), [None]);
    }

    #[test]
    fn what_is_not_fully_understood_is_no_answer() {
        for text in [
            "[include]\n\tpath = other\n",
            "[includeIf \"gitdir:~/w/\"]\n\tpath = other\n",
            "[url \"https://x/\"]\n\tinsteadOf = /srv/\n",
            "[url \"https://x/\"]\n\tPushInsteadOf = /srv/\n",
            "[core]\n\tbare = fal\\\nse\n",
            "[core]\n\tname = \"open\n",
            "key = outside a section\n",
            "[core] junk\n",
        ] {
            assert_eq!(parse_config(text.as_bytes()), None, "{text}");
        }
    }

    #[test]
    fn refs_are_read_loose_then_packed() {
        let dir = tempfile::tempdir().unwrap();
        let a = "a".repeat(40);
        let b = "b".repeat(40);
        std::fs::create_dir_all(dir.path().join("refs/heads")).unwrap();
        std::fs::write(
            dir.path().join("packed-refs"),
            format!(
                "# pack-refs with: peeled fully-peeled sorted \n{a} refs/heads/one\n{a} refs/tags/v1\n^{b}\n"
            ),
        )
        .unwrap();
        assert_eq!(
            read_ref_in(dir.path(), "refs/heads/one"),
            Some(Some(a.clone()))
        );
        assert_eq!(read_ref_in(dir.path(), "refs/heads/two"), Some(None));
        std::fs::write(dir.path().join("refs/heads/one"), format!("{b}\n")).unwrap();
        assert_eq!(read_ref_in(dir.path(), "refs/heads/one"), Some(Some(b)));
        std::fs::write(dir.path().join("refs/heads/one"), "ref: refs/heads/x\n").unwrap();
        assert_eq!(read_ref_in(dir.path(), "refs/heads/one"), None);
    }

    #[test]
    fn only_absolute_local_remotes_are_read_by_hand() {
        for url in [
            "git://127.0.0.1/x.git",
            "https://example.com/x.git",
            "host:x.git",
            "../x.git",
            "file:///srv/a%20b.git",
        ] {
            assert_eq!(local_remote(url), None, "{url}");
        }
    }

    fn git(dir: &Path, args: &[&str]) -> String {
        let out = std::process::Command::new("git")
            .args(["-c", "user.name=T", "-c", "user.email=t@example.com"])
            .args([
                "-c",
                "core.hooksPath=/dev/null",
                "-c",
                "commit.gpgSign=false",
            ])
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }

    /// What `git rev-parse HEAD` says, through a loose ref, `packed-refs`, a detached `HEAD`
    /// and an unborn branch; a linked worktree is left to libgit2.
    #[test]
    fn head_is_what_git_says_or_unknown() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        git(root, &["init", "-q", "-b", "main"]);
        let dot_git = root.join(".git");
        assert_eq!(head_commit(&dot_git), Some(PlainHead::Unborn));
        git(root, &["commit", "-q", "--allow-empty", "-m", "one"]);
        let one = git(root, &["rev-parse", "HEAD"]);
        assert_eq!(head_commit(&dot_git), Some(PlainHead::At(one.clone())));
        git(root, &["pack-refs", "--all"]);
        assert!(!dot_git.join("refs/heads/main").exists());
        assert_eq!(head_commit(&dot_git), Some(PlainHead::At(one.clone())));
        git(root, &["commit", "-q", "--allow-empty", "-m", "two"]);
        let two = git(root, &["rev-parse", "HEAD"]);
        assert_ne!(one, two);
        assert_eq!(head_commit(&dot_git), Some(PlainHead::At(two)));
        git(root, &["checkout", "-q", "--detach", &one]);
        assert_eq!(head_commit(&dot_git), Some(PlainHead::At(one)));
        let linked = root.join("linked");
        git(root, &["worktree", "add", "-q", "linked", "main"]);
        let linked_git = git(&linked, &["rev-parse", "--absolute-git-dir"]);
        assert_eq!(head_commit(Path::new(&linked_git)), None);
    }
}
