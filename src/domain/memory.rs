//! One memory file: frontmatter (`name`, `description`, `type`, optional `keywords`, any other
//! keys kept as they are) and a markdown body kept exactly as written.
//!
//! A file reads the way the clients read it (see [`super::frontmatter`]): Qwen Code's line rule
//! for the scalar keys, YAML for the rest, Claude Code's `metadata: type:` when there is no
//! top-level `type`. Only what no client can read is an error (no frontmatter, no known type,
//! not UTF-8, over the size limit); style — slug file names, quoting, folder = type, one-line
//! descriptions — is lint, each with its fix, reported by `validate`.

use std::fmt;

use serde::Serialize;

use crate::domain::frontmatter::{self, Field, Frontmatter};
use crate::domain::memory_index::IndexLine;
use crate::domain::scope::INDEX_FILE;

mod file_name;

pub use file_name::{check_file_name, lint_file_name, slugify};

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
    /// A problem at `path:line:column`: what is wrong, and the fix.
    pub(crate) fn new(
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
        // A person reads this line: a name's secret is redacted and its control characters
        // escaped, whichever door found the problem.
        let shown = super::gate::redact_path;
        write!(
            f,
            "{}:{}:{}: {} — {}",
            shown(&self.path),
            self.line,
            self.column,
            shown(&self.message),
            shown(&self.fix)
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
    /// The type is a top-level `type:` line, so Qwen Code lists the file in its index.
    qwen_indexed: bool,
    lints: Vec<Invalid>,
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
    /// A new memory with fresh frontmatter in the canonical key order. Line breaks in the name
    /// or description become spaces: each is one line of the file.
    pub fn new(
        name: &str,
        description: &str,
        kind: MemoryType,
        keywords: Option<Vec<String>>,
        body: &str,
    ) -> Self {
        let mut file = MemoryFile {
            name: one_line(name),
            description: one_line(description),
            kind,
            keywords,
            body: body.to_string(),
            frontmatter: Frontmatter::new(),
            crlf: false,
            qwen_indexed: true,
            lints: Vec::new(),
        };
        file.sync_frontmatter();
        file
    }

    /// Parses a memory file's bytes. `path` names the file in messages, and its folder, when
    /// named after a type, is checked against the memory's `type` (as lint).
    /// Returns every error found, not just the first.
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
        let Some((yaml, body)) = frontmatter::split_like_qwen(text) else {
            let opened = text.starts_with("---\n") || text.starts_with("---\r\n");
            return Err(vec![if opened {
                Invalid::new(
                    path,
                    1,
                    1,
                    "unterminated frontmatter: no closing `---` line".into(),
                    "add a line holding only `---` after the last frontmatter key",
                )
            } else {
                Invalid::new(
                    path,
                    1,
                    1,
                    "no frontmatter: the file must start with a `---` line".into(),
                    "start the file with `---`, then `name:`, `description:` and `type:` lines, then `---`",
                )
            }]);
        };
        let fm = Frontmatter::read(yaml);
        let crlf = text.starts_with("---\r\n");
        let at = |key: &str| fm.locate(key).map(|(l, c)| (l + 1, c)).unwrap_or((1, 1));
        let mut lints = Vec::new();
        let mut lint = |key: &str, message: String, fix: String| {
            let (l, c) = at(key);
            lints.push(Invalid::new(path, l, c, message, fix));
        };

        // The type decides whether any client reads the file at all.
        let line_type = fm.line_value("type");
        let (kind, qwen_indexed) = match line_type.as_deref().and_then(MemoryType::parse) {
            Some(kind) => (kind, true),
            None => match fm.nested_text("metadata", "type") {
                Field::Present(t) if MemoryType::parse(&t).is_some() => {
                    let kind = MemoryType::parse(&t).unwrap_or(MemoryType::Project);
                    if line_type.is_none() {
                        lint(
                            "metadata",
                            "`type` is nested under `metadata:` (Claude Code's form), so Qwen Code leaves the file out of its index".into(),
                            format!("add a top-level line `type: {kind}`"),
                        );
                    }
                    (kind, false)
                }
                _ => {
                    let (l, c) = at("type");
                    let problem = match line_type {
                        Some(t) if t.is_empty() => Invalid::new(
                            path,
                            l,
                            c,
                            "`type` is empty".into(),
                            "use one of: user, feedback, project, reference",
                        ),
                        Some(t) => Invalid::new(
                            path,
                            l,
                            c,
                            format!("unknown type `{t}`"),
                            "use one of: user, feedback, project, reference, written plain on the `type:` line",
                        ),
                        None => Invalid::new(
                            path,
                            1,
                            1,
                            "missing required field `type`".into(),
                            "add `type: user|feedback|project|reference` to the frontmatter",
                        ),
                    };
                    return Err(vec![problem]);
                }
            },
        };

        let nested = |key: &str| match fm.nested_text("metadata", key) {
            Field::Present(v) => Some(v),
            _ => None,
        };
        let name = match fm.line_value("name").or_else(|| fm.line_value("title")) {
            Some(name) => name,
            None => match nested("name") {
                Some(name) => name,
                None => {
                    lint(
                        "name",
                        "missing `name`: Qwen Code shows the type in its place".into(),
                        "add `name: …` (a one-line title) to the frontmatter".into(),
                    );
                    kind.as_str().to_string()
                }
            },
        };
        let description = match fm.line_value("description") {
            Some(d) => d,
            None => match nested("description") {
                Some(d) => one_line(&d),
                None => {
                    lint(
                        "description",
                        "missing `description`: the index shows the type instead".into(),
                        "add `description: …` (one line saying what the memory is for)".into(),
                    );
                    String::new()
                }
            },
        };
        for key in ["name", "description"] {
            let Some(value) = fm.line_value(key) else {
                continue;
            };
            if value.is_empty() {
                lint(
                    key,
                    format!("`{key}` is empty"),
                    format!("write a one-line {key}"),
                );
            } else if is_quoted(&value) {
                lint(
                    key,
                    format!("`{key}` is quoted, and Qwen Code shows the quotes"),
                    format!("write it unquoted: `{key}: {}`", &value[1..value.len() - 1]),
                );
            }
            if fm.spans_lines(key) {
                lint(
                    key,
                    format!("`{key}` spans several lines; Qwen Code reads only its first line"),
                    "keep it on one line and move detail into the body".into(),
                );
            }
        }
        for key in frontmatter::LINE_KEYS {
            if fm.count(key) > 1 {
                lint(
                    key,
                    format!("`{key}` is written more than once; the first one counts"),
                    format!("keep one `{key}:` line"),
                );
            }
        }
        let keywords = match fm.text_list("keywords") {
            Field::Present(k) => Some(k),
            Field::Missing => None,
            Field::WrongKind(what) => {
                lint(
                    "keywords",
                    format!("`keywords` is a {what}, not a list of words"),
                    "write `keywords: [word, word]`".into(),
                );
                None
            }
        };
        if let Some(err) = fm.structured_error() {
            lints.push(Invalid::new(
                path,
                err.line + 1,
                err.column,
                format!(
                    "invalid YAML in frontmatter: {}; name, description and type still read",
                    file_lines(first_line(&err.message))
                ),
                "fix the YAML syntax of the other keys (lists, nested keys)",
            ));
        }
        if let Some(problem) = check_type_folder(path, rel, Some(kind)) {
            lints.push(problem);
        }
        if let Some(problem) = lint_file_name(path) {
            lints.push(problem);
        }
        Ok(MemoryFile {
            name,
            description,
            kind,
            keywords,
            body: body.to_string(),
            frontmatter: fm,
            crlf,
            qwen_indexed,
            lints,
        })
    }

    /// Style problems of the file as read, each with its fix: what `validate` reports beyond
    /// errors. A file with lint is still read, synced and indexed.
    pub fn lints(&self) -> &[Invalid] {
        &self.lints
    }

    /// The file's line in the index as Qwen Code reads it, or `None` when Qwen Code leaves it
    /// out (its type is only nested under `metadata:`, or its path holds a `\`).
    pub fn index_entry(&self, rel: &str) -> Option<IndexLine> {
        if !self.qwen_indexed || !qwen_reads_path(rel) {
            return None;
        }
        let (title, description) =
            qwen_title_description(|key| self.frontmatter.line_value(key), self.kind);
        Some(IndexLine {
            path: rel.to_string(),
            title,
            description,
            kind: self.kind,
        })
    }

    /// Whether Qwen Code lists this file in its `MEMORY.md` (its type is a top-level line).
    pub fn in_qwen_index(&self) -> bool {
        self.qwen_indexed
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

/// Whether the file at `rel` (relative to its scope folder, `/`-separated) is a memory file —
/// the one rule the store, `check`, `review`, sync's gate and replay's index share, Qwen Code's
/// (its scan lists every `*.md` of the folder, recursively): every `*.md` at any depth, hidden
/// files and folders included, except a file named `MEMORY.md` (an index at any depth) and
/// anything inside a `.git` folder, which is git's own.
pub fn is_memory_path(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    name.ends_with(".md") && name != INDEX_FILE && !rel.split('/').any(|part| part == ".git")
}

/// The index line of the file at `rel` holding `bytes`, as Qwen Code lists it: `None` when it is
/// no memory file ([`is_memory_path`]), its name is refused, or it does not parse. `shown`
/// names it in messages.
pub fn index_entry_of(shown: &str, rel: &str, bytes: &[u8]) -> Option<IndexLine> {
    if !is_memory_path(rel) || check_file_name(shown).is_some() {
        return None;
    }
    MemoryFile::parse_in(shown, rel, bytes)
        .ok()?
        .index_entry(rel)
}

/// Whether Qwen Code finds the file at `rel` (relative to its scope folder): it turns every
/// `\` of a listed path into `/` and then opens that path, so a name holding a backslash is
/// never read from its own file.
pub fn qwen_reads_path(rel: &str) -> bool {
    !rel.contains('\\')
}

/// Reads a file's text (decoded as Node decodes UTF-8, bad bytes as U+FFFD) exactly as Qwen
/// Code does for its index: `(title, description, type)`, or `None` when Qwen Code leaves the
/// file out (no frontmatter, a byte-order mark, no top-level known `type`). No size limit.
pub fn qwen_index_fields(text: &str) -> Option<(String, String, MemoryType)> {
    let (yaml, _) = frontmatter::split_like_qwen(text)?;
    let yaml = yaml.replace("\r\n", "\n");
    let kind = MemoryType::parse(&frontmatter::line_value(&yaml, "type")?)?;
    let (title, description) =
        qwen_title_description(|key| frontmatter::line_value(&yaml, key), kind);
    Some((title, description, kind))
}

/// `name ?? title ?? type` and `description ?? ""`, as Qwen Code fills an index line.
fn qwen_title_description(
    line: impl Fn(&str) -> Option<String>,
    kind: MemoryType,
) -> (String, String) {
    let title = line("name")
        .or_else(|| line("title"))
        .unwrap_or_else(|| kind.as_str().to_string());
    (title, line("description").unwrap_or_default())
}

fn fill_frontmatter(fm: &mut Frontmatter, file: &MemoryFile) {
    // A name or description the file already spells this way keeps its spelling (quotes too).
    for (key, value) in [("name", &file.name), ("description", &file.description)] {
        if fm.line_value(key).as_deref() != Some(value.as_str()) {
            fm.set_line(key, &one_line(value));
        }
    }
    if fm.line_value("type").as_deref() != Some(file.kind.as_str()) {
        fm.set_line("type", file.kind.as_str());
    }
    match &file.keywords {
        Some(k) => {
            if fm.text_list("keywords") != Field::Present(k.clone()) {
                fm.set_list("keywords", k);
            }
        }
        None => {
            if !matches!(fm.text_list("keywords"), Field::Missing) {
                fm.remove("keywords");
            }
        }
    }
}

/// One line of text as the line rule reads it back: line breaks become spaces, and the ends
/// are trimmed as JavaScript trims.
fn one_line(text: &str) -> String {
    let flat: String = text
        .chars()
        .map(|c| {
            if matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}') {
                ' '
            } else {
                c
            }
        })
        .collect();
    frontmatter::js_trim(&flat).to_string()
}

/// `'text'` or `"text"`: YAML quoting, which Qwen Code's line rule keeps as part of the value.
fn is_quoted(value: &str) -> bool {
    value.len() >= 2
        && ((value.starts_with('\'') && value.ends_with('\''))
            || (value.starts_with('"') && value.ends_with('"')))
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

#[cfg(test)]
mod tests;
