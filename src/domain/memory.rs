//! One memory file: YAML frontmatter (`name`, `description`, `type`, optional `keywords`, any
//! other keys kept as they are) and a markdown body kept exactly as written.
//!
//! Parsing is strict and reports every problem it can find with `path:line:col: what — fix`.

use std::fmt;

use serde::Serialize;

use super::frontmatter::{Field, Frontmatter};

/// The largest memory file accepted, in bytes.
pub const MAX_FILE_BYTES: usize = 64 * 1024;

/// The four kinds of memory, as Qwen Code names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MemoryType {
    /// Who the user is and how they like to work.
    User,
    /// Corrections and confirmations from the user.
    Feedback,
    /// Facts about the project that the code does not show.
    Project,
    /// Pointers to where information lives outside the repository.
    Reference,
}

impl MemoryType {
    /// All types, in display order.
    pub const ALL: [MemoryType; 4] = [
        MemoryType::User,
        MemoryType::Feedback,
        MemoryType::Project,
        MemoryType::Reference,
    ];

    /// The lowercase name used in files and folders.
    pub fn as_str(self) -> &'static str {
        match self {
            MemoryType::User => "user",
            MemoryType::Feedback => "feedback",
            MemoryType::Project => "project",
            MemoryType::Reference => "reference",
        }
    }

    /// Parses a type name exactly as written in files (lowercase).
    pub fn parse(text: &str) -> Option<MemoryType> {
        MemoryType::ALL.into_iter().find(|t| t.as_str() == text)
    }
}

impl fmt::Display for MemoryType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A problem found in a memory file, with the place and the fix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Invalid {
    /// The file as the user named it (relative or absolute).
    pub path: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub fix: String,
}

impl Invalid {
    fn new(
        path: &str,
        line: usize,
        column: usize,
        message: String,
        fix: impl Into<String>,
    ) -> Self {
        Invalid {
            path: path.to_string(),
            line,
            column,
            message,
            fix: fix.into(),
        }
    }
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {} — {}",
            self.path, self.line, self.column, self.message, self.fix
        )
    }
}

/// A parsed memory file.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryFile {
    /// The title.
    pub name: String,
    /// One line saying what the memory is for; shown in the index.
    pub description: String,
    /// The memory's type.
    pub kind: MemoryType,
    /// Optional search keywords.
    pub keywords: Option<Vec<String>>,
    /// The markdown after the frontmatter, exactly as written.
    pub body: String,
    frontmatter: Frontmatter,
    crlf: bool,
}

/// One entry of a memory file: the whole file, or one top-level bullet of a legacy file that
/// holds several.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Entry {
    /// 1-based position among the file's entries (`path:index`); `None` for a single-entry file.
    pub index: Option<usize>,
    /// The entry's one-line summary: the bullet text, or the file's name.
    pub summary: String,
    /// The entry's full text.
    pub text: String,
    /// Byte range of the entry within the body.
    #[serde(skip)]
    pub span: (usize, usize),
}

impl MemoryFile {
    /// A new memory with fresh frontmatter in the canonical key order.
    pub fn new(
        name: &str,
        description: &str,
        kind: MemoryType,
        keywords: Option<Vec<String>>,
        body: &str,
    ) -> Self {
        let mut file = MemoryFile {
            name: name.to_string(),
            description: description.to_string(),
            kind,
            keywords,
            body: body.to_string(),
            frontmatter: Frontmatter::new(),
            crlf: false,
        };
        file.sync_frontmatter();
        file
    }

    /// Parses and validates a memory file's bytes. `path` names the file in error messages, and
    /// its folder, when named after a type, must match the memory's `type`.
    /// Returns every problem found, not just the first.
    pub fn parse(path: &str, bytes: &[u8]) -> Result<MemoryFile, Vec<Invalid>> {
        MemoryFile::parse_in(path, path, bytes)
    }

    /// Like [`MemoryFile::parse`], for a file read from a scope folder: `shown` names it in
    /// messages, `rel` (relative to the scope folder) decides the type-folder check, so the name
    /// of the folder holding the scope never counts as a type.
    pub fn parse_in(shown: &str, rel: &str, bytes: &[u8]) -> Result<MemoryFile, Vec<Invalid>> {
        let path = shown;
        if bytes.len() > MAX_FILE_BYTES {
            return Err(vec![Invalid::new(
                path,
                1,
                1,
                format!(
                    "file is {} bytes, over the {} byte limit",
                    bytes.len(),
                    MAX_FILE_BYTES
                ),
                "split it into smaller memories or move the detail into the repository's docs",
            )]);
        }
        let text = match std::str::from_utf8(bytes) {
            Ok(text) => text,
            Err(err) => {
                let (line, column) = line_col(bytes, err.valid_up_to());
                return Err(vec![Invalid::new(
                    path,
                    line,
                    column,
                    "file is not valid UTF-8".into(),
                    "save it as UTF-8",
                )]);
            }
        };
        if text.starts_with('\u{feff}') {
            return Err(vec![Invalid::new(
                path,
                1,
                1,
                "file starts with a byte-order mark".into(),
                "save it as UTF-8 without BOM",
            )]);
        }
        let split = split_frontmatter(path, text).map_err(|e| vec![e])?;
        let frontmatter = Frontmatter::parse(split.yaml).map_err(|err| {
            vec![Invalid::new(
                path,
                err.line + 1,
                err.column,
                format!(
                    "invalid YAML in frontmatter: {}",
                    file_lines(first_line(&err.message))
                ),
                "fix the YAML syntax (quote values that contain ': ' or start with a special character)",
            )]
        })?;

        let mut problems = Vec::new();
        let at = |key: &str| {
            frontmatter
                .locate(key)
                .map(|(l, c)| (l + 1, c))
                .unwrap_or((1, 1))
        };
        let text_field = |key: &str, problems: &mut Vec<Invalid>| -> Option<String> {
            match frontmatter.text(key) {
                Field::Present(v) if v.trim().is_empty() => {
                    let (l, c) = at(key);
                    problems.push(Invalid::new(
                        path,
                        l,
                        c,
                        format!("`{key}` is empty"),
                        format!("write a one-line {key}"),
                    ));
                    None
                }
                Field::Present(v) => Some(v),
                Field::Missing => {
                    problems.push(Invalid::new(
                        path,
                        1,
                        1,
                        format!("missing required field `{key}`"),
                        format!("add `{key}: …` to the frontmatter"),
                    ));
                    None
                }
                Field::WrongKind(kind) => {
                    let (l, c) = at(key);
                    problems.push(Invalid::new(
                        path,
                        l,
                        c,
                        format!("`{key}` is a {kind}, not text"),
                        format!("write `{key}` as a single line of text"),
                    ));
                    None
                }
            }
        };
        let name = text_field("name", &mut problems);
        let description = text_field("description", &mut problems);
        if let Some(d) = &description {
            if d.trim_end().contains(['\n', '\r']) || frontmatter.spans_lines("description") {
                let (l, c) = at("description");
                problems.push(Invalid::new(
                    path,
                    l,
                    c,
                    "`description` spans several lines".into(),
                    "keep the description on one line and move detail into the body",
                ));
            }
        }
        let kind = match frontmatter.strict_text("type") {
            Field::Present(t) => match MemoryType::parse(&t) {
                Some(kind) => Some(kind),
                None => {
                    let (l, c) = at("type");
                    problems.push(Invalid::new(
                        path,
                        l,
                        c,
                        format!("unknown type `{t}`"),
                        "use one of: user, feedback, project, reference",
                    ));
                    None
                }
            },
            Field::Missing => {
                problems.push(Invalid::new(
                    path,
                    1,
                    1,
                    "missing required field `type`".into(),
                    "add `type: user|feedback|project|reference` to the frontmatter",
                ));
                None
            }
            Field::WrongKind(kind) => {
                let (l, c) = at("type");
                problems.push(Invalid::new(
                    path,
                    l,
                    c,
                    format!("`type` is a {kind}, not text"),
                    "use one of: user, feedback, project, reference",
                ));
                None
            }
        };
        let keywords = match frontmatter.text_list("keywords") {
            Field::Present(k) => Some(k),
            Field::Missing => None,
            Field::WrongKind(kind) => {
                let (l, c) = at("keywords");
                problems.push(Invalid::new(
                    path,
                    l,
                    c,
                    format!("`keywords` is a {kind}, not a list of words"),
                    "write `keywords: [word, word]`",
                ));
                None
            }
        };
        if let Some(problem) = check_type_folder(path, rel, kind) {
            problems.push(problem);
        }
        match (name, description, kind) {
            (Some(name), Some(description), Some(kind)) if problems.is_empty() => Ok(MemoryFile {
                name,
                description: description.trim_end().to_string(),
                kind,
                keywords,
                body: split.body.to_string(),
                frontmatter,
                crlf: split.crlf,
            }),
            _ => Err(problems),
        }
    }

    /// The file's bytes: frontmatter in its original key order (unknown keys kept), then the body
    /// exactly as it was. A file read with CRLF line endings keeps them in the frontmatter.
    pub fn render(&self) -> String {
        let mut fm = self.frontmatter.clone();
        fill_frontmatter(&mut fm, self);
        let yaml = fm.render();
        let head = format!("---\n{yaml}---\n");
        let head = if self.crlf {
            head.replace('\n', "\r\n")
        } else {
            head
        };
        head + &self.body
    }

    /// [`render`](Self::render), read back as the memory file `rel`: what is written must parse,
    /// so a field that would not survive the round trip is the first problem found, as text.
    pub fn render_checked(&self, rel: &str) -> Result<String, String> {
        let text = self.render();
        match MemoryFile::parse(rel, text.as_bytes()) {
            Ok(_) => Ok(text),
            Err(problems) => Err(problems
                .first()
                .map(ToString::to_string)
                .unwrap_or_default()),
        }
    }

    /// Re-applies the typed fields onto the kept frontmatter (for a freshly built file).
    fn sync_frontmatter(&mut self) {
        let mut fm = Frontmatter::new();
        fill_frontmatter(&mut fm, self);
        self.frontmatter = fm;
    }

    /// The file's entries: one per top-level bullet when the body holds two or more of them (a
    /// legacy topic file), otherwise the whole file as one entry.
    pub fn entries(&self) -> Vec<Entry> {
        let bullets = bullet_spans(&self.body);
        if bullets.len() < 2 {
            return vec![Entry {
                index: None,
                summary: self.name.clone(),
                text: self.body.clone(),
                span: (0, self.body.len()),
            }];
        }
        bullets
            .into_iter()
            .enumerate()
            .map(|(i, (start, end))| {
                let text = &self.body[start..end];
                let summary = text
                    .lines()
                    .next()
                    .unwrap_or("")
                    .trim_start_matches(['-', '*'])
                    .trim()
                    .to_string();
                Entry {
                    index: Some(i + 1),
                    summary,
                    text: text.to_string(),
                    span: (start, end),
                }
            })
            .collect()
    }
}

fn fill_frontmatter(fm: &mut Frontmatter, file: &MemoryFile) {
    fm.set_text("name", &file.name);
    fm.set_text("description", &file.description);
    fm.set_text("type", file.kind.as_str());
    match &file.keywords {
        Some(k) => fm.set_text_list("keywords", k),
        None => fm.remove("keywords"),
    }
}

/// The byte ranges of top-level bullets (`- ` or `* ` at column 0) and everything indented or
/// blank beneath each, up to the next top-level line.
fn bullet_spans(body: &str) -> Vec<(usize, usize)> {
    let mut spans: Vec<(usize, usize)> = Vec::new();
    let mut open: Option<usize> = None;
    let mut offset = 0;
    for line in body.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let is_bullet = line.starts_with("- ") || line.starts_with("* ");
        let continues = line.starts_with([' ', '\t']) || line.trim().is_empty();
        if is_bullet {
            if let Some(s) = open.take() {
                spans.push((s, trim_trailing_blank(body, s, start)));
            }
            open = Some(start);
        } else if !continues {
            if let Some(s) = open.take() {
                spans.push((s, trim_trailing_blank(body, s, start)));
            }
        }
    }
    if let Some(s) = open {
        spans.push((s, trim_trailing_blank(body, s, body.len())));
    }
    spans
}

fn trim_trailing_blank(body: &str, start: usize, end: usize) -> usize {
    let text = &body[start..end];
    let trimmed = text.trim_end_matches(['\n', '\r', ' ', '\t']);
    // Keep the bullet's own line ending.
    let rest = &text[trimmed.len()..];
    let keep = if rest.starts_with("\r\n") {
        2
    } else if rest.starts_with('\n') {
        1
    } else {
        0
    };
    start + trimmed.len() + keep
}

struct Split<'a> {
    yaml: &'a str,
    body: &'a str,
    crlf: bool,
}

fn split_frontmatter<'a>(path: &str, text: &'a str) -> Result<Split<'a>, Invalid> {
    let (first, crlf) = if let Some(rest) = text.strip_prefix("---\r\n") {
        (rest, true)
    } else if let Some(rest) = text.strip_prefix("---\n") {
        (rest, false)
    } else {
        return Err(Invalid::new(
            path,
            1,
            1,
            "no frontmatter: the file must start with a `---` line".into(),
            "start the file with `---`, then `name:`, `description:` and `type:` lines, then `---`",
        ));
    };
    let mut offset = 0;
    for line in first.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        if bare == "---" {
            let yaml = &first[..offset];
            let body = &first[offset + line.len()..];
            return Ok(Split { yaml, body, crlf });
        }
        offset += line.len();
    }
    Err(Invalid::new(
        path,
        1,
        1,
        "unterminated frontmatter: no closing `---` line".into(),
        "add a line holding only `---` after the last frontmatter key",
    ))
}

/// The 1-based line and character column of a byte offset. Works on bytes, so an offset inside
/// a character, or in text that is not UTF-8, cannot panic.
pub fn line_col(bytes: &[u8], offset: usize) -> (usize, usize) {
    let before = &bytes[..offset.min(bytes.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1);
    let column = String::from_utf8_lossy(&before[line_start..])
        .chars()
        .count()
        + 1;
    (line, column)
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or(text)
}

/// The parser's message speaks of lines within the YAML text; the file has the `---` line above
/// it, so every `line N` it mentions is one more in the file.
fn file_lines(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(at) = rest.find("line ") {
        let (before, after) = rest.split_at(at + "line ".len());
        out.push_str(before);
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        match after[..digits].parse::<usize>() {
            Ok(n) => out.push_str(&(n + 1).to_string()),
            Err(_) => out.push_str(&after[..digits]),
        }
        rest = &after[digits..];
    }
    out.push_str(rest);
    out
}

/// When a memory sits in a folder named after a type, its `type` must match that folder.
/// `rel` is the path that decides the folder; `path` names the file in the message.
fn check_type_folder(path: &str, rel: &str, kind: Option<MemoryType>) -> Option<Invalid> {
    let kind = kind?;
    let mut parts = rel.rsplit(['/', '\\']);
    parts.next()?;
    let folder = parts.next()?;
    let folder_type = MemoryType::parse(folder)?;
    (folder_type != kind).then(|| {
        Invalid::new(
            path,
            1,
            1,
            format!("type `{kind}` does not match its folder `{folder}/`"),
            format!("move the file to `{kind}/` or set `type: {folder}`"),
        )
    })
}

/// Checks that a memory file's name is a slug: lowercase ASCII letters and digits joined by
/// single hyphens, ending in `.md` (a kept conflict copy of a slug file is fine too, see
/// [`super::conflict`]).
pub fn check_file_name(path: &str) -> Option<Invalid> {
    let file = path.rsplit(['/', '\\']).next().unwrap_or(path);
    if is_slug_file_name(file) {
        return None;
    }
    let stem = file.strip_suffix(".md").unwrap_or(file);
    Some(Invalid::new(
        path,
        1,
        1,
        format!("file name `{file}` is not a slug"),
        format!(
            "rename it to `{}.md` (lowercase letters, digits and hyphens)",
            slugify(stem)
        ),
    ))
}

fn is_slug_file_name(file: &str) -> bool {
    let original = super::conflict::parse_copy(file).map(|copy| copy.original);
    let file = original.as_deref().unwrap_or(file);
    let Some(stem) = file.strip_suffix(".md") else {
        return false;
    };
    is_slug(stem)
}

/// True for `[a-z0-9]+(-[a-z0-9]+)*`.
pub fn is_slug(text: &str) -> bool {
    !text.is_empty()
        && !text.starts_with('-')
        && !text.ends_with('-')
        && !text.contains("--")
        && text
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// Turns a title into a slug of at most 64 characters. A title with no ASCII letters or digits
/// (for example one written in Chinese) gets `memory-` and a short stable hash.
pub fn slugify(title: &str) -> String {
    let mut slug = String::new();
    for c in title.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.ends_with('-') && !slug.is_empty() {
            slug.push('-');
        }
    }
    let mut slug = slug.trim_end_matches('-').to_string();
    if slug.len() > 64 {
        slug.truncate(64);
        slug = slug.trim_end_matches('-').to_string();
    }
    if slug.is_empty() {
        use sha2::{Digest, Sha256};
        let digest = Sha256::digest(title.as_bytes());
        let hex: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
        slug = format!("memory-{hex}");
    }
    slug
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "---\nname: Use the real database\ndescription: Tests hit a real Postgres\ntype: feedback\nkeywords: [postgres, tests]\nowner: data-team\n---\nBody line.\n\nWhy: mocks lied.\n";

    #[test]
    fn parses_and_round_trips_bytes() {
        let m = MemoryFile::parse("feedback/x.md", GOOD.as_bytes()).unwrap();
        assert_eq!(m.name, "Use the real database");
        assert_eq!(m.kind, MemoryType::Feedback);
        assert_eq!(
            m.keywords.as_deref(),
            Some(&["postgres".to_string(), "tests".to_string()][..])
        );
        assert_eq!(m.body, "Body line.\n\nWhy: mocks lied.\n");
        assert_eq!(
            m.render(),
            "---\nname: Use the real database\ndescription: Tests hit a real Postgres\ntype: feedback\nkeywords: [postgres, tests]\nowner: data-team\n---\nBody line.\n\nWhy: mocks lied.\n"
        );
    }

    #[test]
    fn crlf_reads_like_lf() {
        let crlf = GOOD.replace('\n', "\r\n");
        let m = MemoryFile::parse("x.md", crlf.as_bytes()).unwrap();
        assert_eq!(m.name, "Use the real database");
        assert!(m.render().starts_with("---\r\nname:"));
    }

    #[test]
    fn slugs() {
        assert!(check_file_name("feedback/use-real-db.md").is_none());
        assert!(check_file_name("feedback/use-real-db.conflict-abc1234.md").is_none());
        let bad = check_file_name("feedback/Use Real DB.md").unwrap();
        assert!(bad.fix.contains("use-real-db.md"), "{bad}");
        assert_eq!(slugify("Use the REAL database!"), "use-the-real-database");
        assert!(slugify("使用真实数据库").starts_with("memory-"));
    }

    #[test]
    fn legacy_bullets_are_entries() {
        let text = "---\nname: Feedback\ndescription: d\ntype: feedback\n---\n- First thing\n  - Why: a\n- Second thing\n  - How to apply: b\n";
        let m = MemoryFile::parse("feedback.md", text.as_bytes()).unwrap();
        let entries = m.entries();
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].summary, "First thing");
        assert_eq!(entries[1].text, "- Second thing\n  - How to apply: b\n");
        assert_eq!(entries[1].index, Some(2));
    }
}
