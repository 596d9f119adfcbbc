//! Memory file names: the names no client reads as a memory (refused), names that are not
//! slugs (lint, with the rename that fixes them), and slugs made from titles.

use super::Invalid;
use crate::domain::{conflict, gate};

/// Refuses a file name no client reads as a memory: one that does not end in `.md`, or one
/// that is not valid UTF-8 (listed under a lossy spelling holding U+FFFD, which no reader can
/// open). Any other name is read — a name that is not a slug is [lint](lint_file_name).
pub fn check_file_name(path: &str) -> Option<Invalid> {
    let file = path.rsplit(['/', '\\']).next().unwrap_or(path);
    if !file.ends_with(".md") {
        return Some(Invalid::new(
            path,
            1,
            1,
            format!("file name `{file}` does not end in `.md`"),
            "name memory files `<slug>.md`",
        ));
    }
    if file.contains('\u{FFFD}') {
        return Some(Invalid::new(
            path,
            1,
            1,
            format!("file name `{file}` is not valid UTF-8"),
            rename_hint(file, ""),
        ));
    }
    None
}

/// Lint: a memory file's name should be a slug — lowercase ASCII letters and digits joined by
/// single hyphens, ending in `.md` (a kept conflict copy `<slug>.md.conflict-<sha>.md` is fine
/// too). Qwen Code's own agent writes names like `build_invariant.md`; they are read anyway.
pub fn lint_file_name(path: &str) -> Option<Invalid> {
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
        rename_hint(stem, " (lowercase letters, digits and hyphens)"),
    ))
}

/// How to rename a file whose name is `stem`: to its slug, unless the name holds a secret —
/// its slug would print the secret lowercased, so the hint names none.
pub(super) fn rename_hint(stem: &str, why: &str) -> String {
    let slug = slugify(stem.trim_end_matches(".md"));
    let holds_secret = !gate::secret_spans(stem, &Default::default()).is_empty()
        || !gate::secret_spans(&slug, &Default::default()).is_empty();
    if holds_secret {
        "rename it to a slug that says what the memory is about — the name holds a secret: \
         revoke it, and remove it from the history if it was pushed"
            .to_string()
    } else {
        format!("rename it to `{slug}.md`{why}")
    }
}

pub(super) fn is_slug_file_name(file: &str) -> bool {
    let original = conflict::parse_copy(file).map(|copy| copy.original);
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
