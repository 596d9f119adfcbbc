//! References: the repository paths a memory names, which can be checked mechanically against
//! the code ("the migrations live in `db/migrate.rs`").
//!
//! One rule set, conservative on purpose: a reference that is not one costs a false alarm in
//! every session, a missed one only a missed warning. What counts:
//! - a relative path with a slash whose last part has a file extension (`src/lib.rs`,
//!   `./app/models/user.rb`), with an optional line or range (`:12`, `:12-20`, `:12:5`,
//!   `#L12`, `#L12-L20`) or a test id after it (`tests/test_x.py::test_save`); in a code span
//!   any short extension with a letter, elsewhere (prose, fenced blocks) a well-known one;
//! - a dotfile (`.gitignore`, `.github/workflows/ci.yml`);
//! - in a code span, a folder written with its trailing slash (`db/migrations/`) and a bare file
//!   name with a well-known extension (`Cargo.toml`), which only says something about the
//!   repository's root ([`Form::Bare`]).
//!
//! What never counts: a URL or anything host-like (`github.com/o/r/x.rs`), an absolute path or
//! one leaving the repository (`/etc/hosts`, `~/.ssh/config`, `../x.rs`, `C:\x`), a glob
//! (`src/*.rs`, `src/{a,b}.rs`), a placeholder (`<path>`, `path/to/file.rs`, `$HOME/x.rs`),
//! prose that only looks like a path (`and/or`, `I/O`, `TCP/IP`, `1/2`, `2026/11/02`, `km/h`,
//! `React/Next.js`), and paths of build output and dependencies (`target/`, `node_modules/`).

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

/// How a reference was written, which decides what its absence means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Form {
    /// A path with a slash (or a dotfile path): it should exist as written.
    Path,
    /// A folder written with a trailing slash.
    Folder,
    /// A bare file name (`Cargo.toml`, `.gitignore`): it may live in any folder, so only its
    /// disappearance from the root, seen in history, says the memory is out of date.
    Bare,
}

/// Lines a reference points at, 1-based and inclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Lines {
    /// The first line.
    pub start: u32,
    /// The last line (equal to `start` for one line).
    pub end: u32,
}

/// One reference, where it was found in the memory's text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reference {
    /// The path relative to the repository root: no `./`, no trailing slash.
    pub path: String,
    /// How it was written.
    pub form: Form,
    /// The lines it points at, if it names any.
    pub lines: Option<Lines>,
    /// 1-based line of the memory's text it is on.
    pub line: usize,
    /// 1-based column (in characters) where the path starts.
    pub column: usize,
    /// Byte range of the path as written (after any `./`, before any line suffix), for a
    /// rewrite that replaces it.
    pub span: (usize, usize),
}

/// Extensions a path in prose may end with: source, configuration and documentation files of
/// the common ecosystems. Outside code, an extension not listed here makes a slash a word
/// separator, as in "React/Next.js" (listed in [`PROSE_LIBRARIES`]) or "e.g./i.e.".
const KNOWN_EXTENSIONS: &[&str] = &[
    "asm",
    "bash",
    "bat",
    "bzl",
    "c",
    "cc",
    "cfg",
    "cjs",
    "clj",
    "cljs",
    "cmake",
    "conf",
    "cpp",
    "cs",
    "csproj",
    "css",
    "csv",
    "cts",
    "cxx",
    "dart",
    "dockerfile",
    "el",
    "env",
    "erb",
    "erl",
    "ex",
    "exs",
    "fish",
    "fs",
    "go",
    "gradle",
    "graphql",
    "groovy",
    "h",
    "haml",
    "hbs",
    "hcl",
    "hh",
    "hpp",
    "hrl",
    "hs",
    "html",
    "hxx",
    "ini",
    "ipynb",
    "java",
    "jl",
    "js",
    "json",
    "json5",
    "jsonc",
    "jsx",
    "kt",
    "kts",
    "less",
    "lock",
    "lua",
    "m",
    "md",
    "mdx",
    "mjs",
    "mk",
    "ml",
    "mli",
    "mm",
    "mod",
    "mts",
    "nix",
    "php",
    "pl",
    "pm",
    "properties",
    "proto",
    "ps1",
    "py",
    "pyi",
    "r",
    "rake",
    "rb",
    "rs",
    "rst",
    "s",
    "sass",
    "scala",
    "scss",
    "sh",
    "sql",
    "sum",
    "svelte",
    "swift",
    "tf",
    "tfvars",
    "toml",
    "ts",
    "tsx",
    "txt",
    "vue",
    "xml",
    "yaml",
    "yml",
    "zig",
    "zsh",
];

/// Library names written with `.js` in prose ("Node.js"), never files of the repository.
const PROSE_LIBRARIES: &[&str] = &[
    "angular", "backbone", "chart", "d3", "deno", "ember", "express", "moment", "next", "node",
    "nuxt", "react", "socket", "three", "vue",
];

/// Leading folders of build output, dependencies and git's own files: not in the tree.
const UNTRACKED_ROOTS: &[&str] = &[
    ".git",
    ".venv",
    "__pycache__",
    "node_modules",
    "target",
    "venv",
];

/// Dotfiles recognised by name outside code spans (in a span any `.name` counts).
const KNOWN_DOTFILES: &[&str] = &[
    ".babelrc",
    ".clang-format",
    ".dockerignore",
    ".editorconfig",
    ".env.example",
    ".eslintrc",
    ".gitattributes",
    ".gitignore",
    ".gitlab-ci.yml",
    ".gitmodules",
    ".nvmrc",
    ".npmrc",
    ".prettierrc",
    ".pre-commit-config.yaml",
    ".python-version",
    ".rubocop.yml",
    ".rustfmt.toml",
    ".tool-versions",
];

/// The last dot-parts of host names: a first folder ending in one is a host (`github.com/…`).
const HOST_SUFFIXES: &[&str] = &[
    "ai", "app", "cloud", "cn", "co", "com", "de", "dev", "edu", "eu", "fr", "gov", "info", "io",
    "jp", "net", "org", "page", "ru", "rs", "sh", "site", "so", "tech", "to", "uk", "us", "xyz",
];

/// Placeholder folders and names (`path/to/file.rs`, `your-project/x.py`, `foo/bar.rs`).
const PLACEHOLDER_PARTS: &[&str] = &["foo", "bar", "baz", "xxx", "yyy", "some", "somewhere"];

/// Where a word stands: what it must look like to be a path depends on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WordPlace {
    /// Plain text: only well-known extensions and dotfiles.
    Prose,
    /// Between backticks: also bare file names, folders with their slash, any short extension.
    Span,
    /// In a fenced block: code, where `a/b.c` is as often a division as a path.
    Fence,
}

/// Every reference in a memory's text (frontmatter and body, code spans and fenced blocks
/// included), in the order written. A path named twice appears twice (each place may need a
/// rewrite); [`distinct`] gives each once.
pub fn extract(text: &str) -> Vec<Reference> {
    let mut out = Vec::new();
    let mut fence: Option<(char, usize)> = None;
    let mut offset = 0;
    for (n, raw_line) in text.split_inclusive('\n').enumerate() {
        let line = raw_line.trim_end_matches(['\n', '\r']);
        let line_start = offset;
        offset += raw_line.len();
        if let Some(mark) = fence_mark(line) {
            match fence {
                None => {
                    fence = Some(mark);
                    continue;
                }
                Some((c, len)) if mark.0 == c && mark.1 >= len => {
                    fence = None;
                    continue;
                }
                Some(_) => {}
            }
        }
        let mut found = |start: usize, end: usize, place: WordPlace| {
            scan_piece(
                text,
                line_start + start,
                line_start + end,
                place,
                n + 1,
                &mut out,
            );
        };
        if fence.is_some() {
            found(0, line.len(), WordPlace::Fence);
            continue;
        }
        // Code spans: text between single backticks is code, the rest prose.
        let mut code = false;
        let mut piece_start = 0;
        for (at, c) in line.char_indices() {
            if c == '`' {
                found(
                    piece_start,
                    at,
                    if code {
                        WordPlace::Span
                    } else {
                        WordPlace::Prose
                    },
                );
                code = !code;
                piece_start = at + 1;
            }
        }
        // An unclosed backtick is not a span: what follows it is prose.
        found(piece_start, line.len(), WordPlace::Prose);
    }
    out
}

/// Each path once (the first place it is named), with its form and the first lines named.
pub fn distinct(references: &[Reference]) -> Vec<&Reference> {
    let mut seen = BTreeSet::new();
    references
        .iter()
        .filter(|r| seen.insert((r.path.as_str(), r.form, r.lines)))
        .collect()
}

/// A fence line (three or more backticks or tildes after at most three spaces): its character
/// and length.
fn fence_mark(line: &str) -> Option<(char, usize)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let c = rest.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let len = rest.chars().take_while(|x| *x == c).count();
    (len >= 3).then_some((c, len))
}

/// Splits one piece of a line (code or prose) into words and keeps those that are references.
fn scan_piece(
    text: &str,
    start: usize,
    end: usize,
    place: WordPlace,
    line: usize,
    out: &mut Vec<Reference>,
) {
    let piece = &text[start..end];
    let separator = |c: char| {
        c.is_whitespace()
            || matches!(
                c,
                '(' | ')' | '[' | ']' | '"' | '\'' | ',' | ';' | '=' | '|'
            )
    };
    let mut word_start = None;
    for (at, c) in piece.char_indices().chain([(piece.len(), ' ')]) {
        match (separator(c), word_start) {
            (true, Some(ws)) => {
                if let Some(r) = reference_in(text, start + ws, start + at, place, line) {
                    out.push(r);
                }
                word_start = None;
            }
            (false, None) => word_start = Some(at),
            _ => {}
        }
    }
}

/// The reference one word (`text[start..end]`) makes, if it makes one.
fn reference_in(
    text: &str,
    start: usize,
    end: usize,
    place: WordPlace,
    line: usize,
) -> Option<Reference> {
    let word = &text[start..end];
    if !word.contains(['/', '.']) {
        return None;
    }
    // URLs, scp-like remotes, Windows and variable paths, globs and placeholders are never
    // paths of this repository.
    if word.contains("://")
        || word.starts_with("www.")
        || word.starts_with("mailto:")
        || word.contains([
            '@', '\\', '$', '%', '*', '?', '{', '}', '<', '>', '!', '&', '~', '^',
        ])
    {
        return None;
    }
    // Emphasis and sentence punctuation around a path in prose.
    let lead = word.len() - word.trim_start_matches(['_', '*']).len();
    let mut body = &word[lead..];
    body = body.trim_end_matches(['_', '*']);
    body = body.trim_end_matches(['.', ':', '!', '?']);
    // A test id or a symbol after the file: `tests/test_x.py::test_save`.
    if let Some((file, _)) = body.split_once("::") {
        if !file.contains('/') {
            return None;
        }
        body = file;
    }
    let (path_text, lines) = split_lines(body)?;
    let mut path_start = start + lead;
    let mut path_text = path_text;
    while let Some(rest) = path_text.strip_prefix("./") {
        path_text = rest;
        path_start += 2;
    }
    if path_text.is_empty() || path_text.starts_with('/') {
        return None;
    }
    let folder = path_text.ends_with('/');
    let trimmed = path_text.trim_end_matches('/');
    let parts: Vec<&str> = trimmed.split('/').collect();
    if parts.iter().any(|p| !valid_part(p)) {
        return None;
    }
    let first = parts[0];
    if UNTRACKED_ROOTS.contains(&first) {
        return None;
    }
    if parts.len() > 1 && is_host(first) {
        return None;
    }
    if parts.windows(2).any(|w| w == ["path", "to"]) || parts.iter().any(|p| is_placeholder(p)) {
        return None;
    }
    let last = *parts.last()?;
    let form = if folder {
        // A folder is a reference only when written as one in code: `db/migrations/`.
        if place != WordPlace::Span || lines.is_some() {
            return None;
        }
        if parts.len() == 1 {
            Form::Bare
        } else {
            Form::Folder
        }
    } else if parts.len() == 1 {
        if !bare_file(last, place) {
            return None;
        }
        Form::Bare
    } else {
        // Every folder but a dot-folder (`.github`) is a plain name: `README.md/CONTRIBUTING.md`
        // is two files, `v1.2/notes.md` a version.
        let folders_plain = parts[..parts.len() - 1]
            .iter()
            .all(|p| p.starts_with('.') || !p.contains('.'));
        if !folders_plain || !file_like(last, place) {
            return None;
        }
        if place == WordPlace::Prose && parts.len() == 2 && prose_library(last) {
            return None;
        }
        Form::Path
    };
    // Dotfiles with a slash (`.github/workflows/ci.yml`) are plain paths; a bare dotfile is bare.
    let column = text[..path_start]
        .rfind('\n')
        .map_or(&text[..path_start], |nl| &text[nl + 1..path_start])
        .chars()
        .count()
        + 1;
    Some(Reference {
        path: trimmed.to_string(),
        form,
        lines,
        line,
        column,
        span: (path_start, path_start + trimmed.len()),
    })
}

/// Splits a line suffix off a path: `x.rs:12`, `x.rs:12-20`, `x.rs:12:5`, `x.rs#L12-L20`. A
/// colon or hash followed by anything else means the word is not a path (`Foo::bar`).
fn split_lines(word: &str) -> Option<(&str, Option<Lines>)> {
    if let Some((path, anchor)) = word.split_once('#') {
        let range = anchor.strip_prefix('L')?;
        let (a, b) = match range.split_once('-') {
            Some((a, b)) => (a, Some(b.strip_prefix('L').unwrap_or(b))),
            None => (range, None),
        };
        return Some((path, Some(lines(a, b)?)));
    }
    let Some((path, suffix)) = word.split_once(':') else {
        return Some((word, None));
    };
    let mut parts = suffix.splitn(2, ':');
    let range = parts.next()?;
    if let Some(column) = parts.next() {
        if column.is_empty() || !column.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
    }
    let (a, b) = match range.split_once(['-', '–']) {
        Some((a, b)) => (a, Some(b)),
        None => (range, None),
    };
    Some((path, Some(lines(a, b)?)))
}

fn lines(a: &str, b: Option<&str>) -> Option<Lines> {
    let start: u32 = a.parse().ok().filter(|n| *n > 0)?;
    let end: u32 = match b {
        Some(b) => b.parse().ok().filter(|n| *n >= start)?,
        None => start,
    };
    Some(Lines { start, end })
}

/// A path part: letters (any script), digits, `.`, `-`, `_`, `+`; not dots alone (`..`).
fn valid_part(part: &str) -> bool {
    !part.is_empty()
        && !part.bytes().all(|b| b == b'.')
        && part
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '.' | '-' | '_' | '+'))
}

/// `github.com`, `docs.rs`, `example.co.uk`: a first folder that is a host name.
fn is_host(part: &str) -> bool {
    match part.rsplit_once('.') {
        Some((name, suffix)) => {
            !name.is_empty()
                && !name.starts_with('.')
                && HOST_SUFFIXES.contains(&suffix.to_ascii_lowercase().as_str())
        }
        None => part.eq_ignore_ascii_case("localhost"),
    }
}

fn is_placeholder(part: &str) -> bool {
    let lower = part.to_ascii_lowercase();
    let stem = lower.split('.').next().unwrap_or("");
    PLACEHOLDER_PARTS.contains(&stem)
        || stem.starts_with("your")
        || stem.starts_with("my-")
        || stem.starts_with("my_")
        || stem.contains("...")
}

/// The extension of a file name (`rs` of `lib.rs`, `yml` of `.gitlab-ci.yml`), if it has a
/// name before it.
fn extension(name: &str) -> Option<&str> {
    let (stem, ext) = name.rsplit_once('.')?;
    (!stem.is_empty()).then_some(ext)
}

fn known_extension(ext: &str) -> bool {
    KNOWN_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str())
}

/// The last part of a path with a slash: a file with an extension (any short one with a
/// letter in a code span, a well-known one elsewhere), or a dotfile.
fn file_like(name: &str, place: WordPlace) -> bool {
    if let Some(ext) = extension(name.trim_start_matches('.')) {
        if place == WordPlace::Span {
            return (1..=10).contains(&ext.len())
                && ext.chars().any(|c| c.is_ascii_alphabetic())
                && ext.chars().all(|c| c.is_ascii_alphanumeric());
        }
        return known_extension(ext);
    }
    // `.github/workflows/.keep`, `config/.env`: a dotfile in a folder.
    name.starts_with('.')
        && name.len() > 1
        && name[1..]
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// A file name without a folder: in a code span, one with a well-known extension or a
/// dotfile; elsewhere only a well-known dotfile (a bare `lib.rs` in prose is too often a word).
fn bare_file(name: &str, place: WordPlace) -> bool {
    if KNOWN_DOTFILES.contains(&name) {
        return true;
    }
    if place != WordPlace::Span {
        return false;
    }
    if let Some(rest) = name.strip_prefix('.') {
        return rest.len() > 1
            && rest.chars().next().is_some_and(|c| c.is_ascii_lowercase())
            && rest
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    }
    extension(name).is_some_and(known_extension)
        && name.chars().next().is_some_and(char::is_alphanumeric)
}

fn prose_library(name: &str) -> bool {
    name.rsplit_once('.').is_some_and(|(stem, ext)| {
        ext.eq_ignore_ascii_case("js")
            && PROSE_LIBRARIES.contains(&stem.to_ascii_lowercase().as_str())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The paths found, as `path` or `path:start-end`, with `/` for folders and `=` for bare.
    fn found(text: &str) -> Vec<String> {
        extract(text)
            .iter()
            .map(|r| {
                let mut s = r.path.clone();
                match r.form {
                    Form::Folder => s.push('/'),
                    Form::Bare => s.insert(0, '='),
                    Form::Path => {}
                }
                if let Some(l) = r.lines {
                    s.push_str(&format!(":{}-{}", l.start, l.end));
                }
                s
            })
            .collect()
    }

    #[test]
    fn a_rust_memory() {
        let text = "---\nname: Migrations run at startup\ndescription: db/migrate.rs runs them; see src/main.rs:42\ntype: project\n---\nThe migrations live in `db/migrate.rs` and `src/db/schema.rs:10-40`.\nBuild config is in `Cargo.toml`; lints in `.clippy.toml`.\nDon't look in `target/debug/build.rs` or ~/.cargo/config.toml.\nSee https://docs.rs/sqlx/latest/sqlx/migrate/index.html and docs.rs/sqlx/x.html.\n";
        assert_eq!(
            found(text),
            [
                "db/migrate.rs",
                "src/main.rs:42-42",
                "db/migrate.rs",
                "src/db/schema.rs:10-40",
                "=Cargo.toml",
                "=.clippy.toml",
            ]
        );
    }

    #[test]
    fn a_python_memory() {
        let text = "Settings are read in ./app/config/settings.py (line 30 onwards: app/config/settings.py#L30-L55).\nTests: `pytest tests/unit/test_models.py::test_save` fails on macOS.\n```python\nfrom app.models import User\nopen(\"fixtures/users.json\")\n```\nThe venv in .venv/lib/python3.11/site.py is not ours; neither is /usr/lib/python3/dist.py.\n";
        assert_eq!(
            found(text),
            [
                "app/config/settings.py",
                "app/config/settings.py:30-55",
                "tests/unit/test_models.py",
                "fixtures/users.json",
            ]
        );
    }

    #[test]
    fn a_typescript_memory() {
        let text = "We use React/Next.js and Node.js. Components: `src/components/Button.tsx`,\nhooks in src/hooks/useAuth.ts, routes in [the router](./src/routes/index.ts).\n```ts\nimport { x } from './utils/date.js';\nimport y from '@scope/pkg/index.js';\nconst ratio = width/height.value;\n```\nDependencies live in node_modules/react/index.js; globs like src/**/*.test.ts are skipped.\n";
        assert_eq!(
            found(text),
            [
                "src/components/Button.tsx",
                "src/hooks/useAuth.ts",
                "src/routes/index.ts",
                "utils/date.js",
            ]
        );
    }

    #[test]
    fn a_go_memory() {
        let text = "The handler is in internal/api/handler.go:88; module path github.com/acme/shop/internal/api/handler.go is not a file.\n`go.mod` pins the toolchain; `cmd/shop/` holds main.\n";
        assert_eq!(
            found(text),
            ["internal/api/handler.go:88-88", "=go.mod", "cmd/shop/"]
        );
    }

    #[test]
    fn java_c_and_ruby_memories() {
        let java = "Entry point: src/main/java/com/acme/App.java:12:5; the wrapper is gradle/wrapper/gradle-wrapper.properties.";
        assert_eq!(
            found(java),
            [
                "src/main/java/com/acme/App.java:12-12",
                "gradle/wrapper/gradle-wrapper.properties"
            ]
        );
        let c = "```c\n#include \"net/socket.h\"\n#include <stdio.h>\n```\nThe parser is src/parse.c; `Makefile` drives it.";
        assert_eq!(found(c), ["net/socket.h", "src/parse.c"]);
        let ruby = "Callbacks in app/models/user.rb, migrations in `db/migrate/`, CI in .github/workflows/ci.yml.";
        assert_eq!(
            found(ruby),
            [
                "app/models/user.rb",
                "db/migrate/",
                ".github/workflows/ci.yml"
            ]
        );
    }

    #[test]
    fn prose_that_looks_like_a_path_is_not_one() {
        for text in [
            "Read and/or write, I/O bound, TCP/IP, 1/2 of the time, 24/7.",
            "Released 2026/11/02 at 90 km/h, w/o tests, n/a.",
            "e.g./i.e. style; v1.2/v1.3; client/server; Node.js/Deno.",
            "We moved from React/Next.js to Vue.js/Nuxt.",
            "README.md/CONTRIBUTING.md are both docs.",
        ] {
            assert_eq!(found(text), Vec::<String>::new(), "{text}");
        }
    }

    #[test]
    fn urls_and_paths_outside_the_repository_are_not_references() {
        for text in [
            "See https://github.com/acme/shop/blob/main/src/lib.rs#L10 for it.",
            "Mirror at github.com/acme/shop/src/lib.rs and gitlab.com/x/y.py.",
            "Clone git@github.com:acme/shop.git first.",
            "Config in /etc/nginx/nginx.conf and ~/.ssh/config and ../other/src/lib.rs.",
            "On Windows C:\\Users\\me\\repo\\src\\lib.rs or C:/repo/src/lib.rs.",
            "`file:///tmp/x.rs` and `www.example.com/a.html`.",
        ] {
            assert_eq!(found(text), Vec::<String>::new(), "{text}");
        }
    }

    #[test]
    fn globs_and_placeholders_are_not_references() {
        for text in [
            "Tests match `src/**/*.rs` and `tests/{unit,it}/main.rs` and src/?.rs.",
            "Write to `path/to/file.rs` or `<path>` or `src/<name>.rs`.",
            "Put it in `$HOME/x.rs` or `%APPDATA%/x.json` or your-project/src/main.rs.",
            "Like foo/bar.rs or `src/.../x.rs`.",
        ] {
            assert_eq!(found(text), Vec::<String>::new(), "{text}");
        }
    }

    #[test]
    fn bare_names_count_only_in_code() {
        assert_eq!(found("The lib.rs file and main.py."), Vec::<String>::new());
        assert_eq!(
            found("Run `main.py`; see .gitignore."),
            ["=main.py", "=.gitignore"]
        );
        // A version or a method call in code is not a file.
        assert_eq!(
            found("`v1.2` and `user.save` and `.5`"),
            Vec::<String>::new()
        );
    }

    #[test]
    fn spans_and_columns_point_at_the_path_as_written() {
        let text = "x\nsee ./src/lib.rs:3.\n";
        let refs = extract(text);
        assert_eq!(refs.len(), 1);
        let r = &refs[0];
        assert_eq!((r.line, r.column), (2, 7));
        assert_eq!(&text[r.span.0..r.span.1], "src/lib.rs");
        assert_eq!(r.lines, Some(Lines { start: 3, end: 3 }));
    }

    #[test]
    fn distinct_keeps_the_first_place() {
        let refs = extract("src/a.rs and src/a.rs and src/b.rs");
        let d: Vec<&str> = distinct(&refs).iter().map(|r| r.path.as_str()).collect();
        assert_eq!(d, ["src/a.rs", "src/b.rs"]);
    }

    #[test]
    fn rust_paths_and_symbols_are_not_files() {
        assert_eq!(
            found("Call `crate::db::migrate` and `std::fs::read`; `Foo::bar.rs`."),
            Vec::<String>::new()
        );
    }
}
