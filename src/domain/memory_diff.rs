//! How one memory changed, for a reviewer: frontmatter fields as `field: old → new`, and the
//! body as a word-level diff of the changed lines (`[-removed-]{+added+}`, as
//! `git diff --word-diff=plain` writes it).

use similar::{Algorithm, ChangeTag, DiffOp, TextDiff};

use super::frontmatter::{Field, Frontmatter};
use super::memory_index::is_hidden;

/// One frontmatter field that differs.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct FieldChange {
    /// The key.
    pub field: String,
    /// The old value (`None`: the key was added).
    pub old: Option<String>,
    /// The new value (`None`: the key was removed).
    pub new: Option<String>,
}

/// A memory file split into its frontmatter fields (in file order) and its body. A file without
/// frontmatter is all body.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MemoryParts {
    /// `(key, value)` with values written on one line (lists as `[a, b]`).
    pub fields: Vec<(String, String)>,
    /// Everything after the closing `---` line.
    pub body: String,
}

impl MemoryParts {
    /// Splits a memory file's text. Never fails: what does not parse is shown as written.
    pub fn read(text: &str) -> MemoryParts {
        let Some((yaml, body)) = split(text) else {
            return MemoryParts {
                fields: Vec::new(),
                body: text.to_string(),
            };
        };
        let fields = match Frontmatter::parse(yaml) {
            Ok(fm) => fm
                .keys()
                .into_iter()
                .map(|key| {
                    let value = match (fm.text(&key), fm.text_list(&key)) {
                        (Field::Present(v), _) => v,
                        (_, Field::Present(list)) => format!("[{}]", list.join(", ")),
                        _ => raw_value(yaml, &key),
                    };
                    (key, one_line(&value))
                })
                .collect(),
            Err(_) => vec![("frontmatter".to_string(), one_line(yaml))],
        };
        MemoryParts {
            fields,
            body: body.to_string(),
        }
    }

    /// The value of a field.
    pub fn field(&self, key: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

fn split(text: &str) -> Option<(&str, &str)> {
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end_matches(['\n', '\r']) == "---" {
            return Some((&rest[..offset], &rest[offset + line.len()..]));
        }
        offset += line.len();
    }
    None
}

/// The lines of a nested value, folded onto one line.
fn raw_value(yaml: &str, key: &str) -> String {
    let mut lines = yaml
        .lines()
        .skip_while(|l| !l.starts_with(&format!("{key}:")));
    let mut out = lines
        .next()
        .map(|l| l[key.len() + 1..].trim().to_string())
        .unwrap_or_default();
    for line in lines.take_while(|l| l.starts_with([' ', '\t', '-'])) {
        out.push(' ');
        out.push_str(line.trim());
    }
    out
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The fields that differ, in the new file's order, then the removed ones.
pub fn field_changes(old: &MemoryParts, new: &MemoryParts) -> Vec<FieldChange> {
    let mut out = Vec::new();
    for (key, value) in &new.fields {
        match old.field(key) {
            Some(before) if before == value => {}
            before => out.push(FieldChange {
                field: key.clone(),
                old: before.map(str::to_string),
                new: Some(value.clone()),
            }),
        }
    }
    for (key, value) in &old.fields {
        if new.field(key).is_none() {
            out.push(FieldChange {
                field: key.clone(),
                old: Some(value.clone()),
                new: None,
            });
        }
    }
    out
}

/// A word-level diff of two bodies: each group of changed lines with one line of context,
/// words removed as `[-…-]` and added as `{+…+}`; groups are separated by a `…` line.
/// Returns an empty string when the bodies are equal.
pub fn word_diff(old: &str, new: &str) -> String {
    let lines = TextDiff::configure()
        .algorithm(Algorithm::Patience)
        .diff_lines(old, new);
    let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
    let new_lines: Vec<&str> = new.split_inclusive('\n').collect();
    let mut out = String::new();
    for (n, group) in lines.grouped_ops(1).iter().enumerate() {
        if n > 0 {
            out.push_str("…\n");
        }
        for op in group {
            match *op {
                DiffOp::Equal { old_index, len, .. } => {
                    for line in &old_lines[old_index..old_index + len] {
                        out.push_str(line);
                    }
                }
                _ => {
                    let (old_range, new_range) = (op.old_range(), op.new_range());
                    let before: String = old_lines[old_range].concat();
                    let after: String = new_lines[new_range].concat();
                    words(&before, &after, &mut out);
                }
            }
        }
        if !out.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

fn words(old: &str, new: &str, out: &mut String) {
    let diff = TextDiff::configure()
        .algorithm(Algorithm::Patience)
        .diff_words(old, new);
    // Runs of one tag are joined so a changed phrase reads as one `[-…-]`, not word by word.
    let mut run: Option<(ChangeTag, String)> = None;
    let flush = |run: &mut Option<(ChangeTag, String)>, out: &mut String| {
        if let Some((tag, text)) = run.take() {
            match tag {
                ChangeTag::Equal => out.push_str(&text),
                ChangeTag::Delete => marked(out, "[-", &text, "-]"),
                ChangeTag::Insert => marked(out, "{+", &text, "+}"),
            }
        }
    };
    for change in diff.iter_all_changes() {
        let tag = change.tag();
        let value = change.value();
        match &mut run {
            Some((t, text)) if *t == tag => text.push_str(value),
            _ => {
                flush(&mut run, out);
                run = Some((tag, value.to_string()));
            }
        }
    }
    flush(&mut run, out);
}

/// Writes a changed run inside markers, keeping its surrounding white space (and line breaks)
/// outside them so every marker pair stays on one line.
fn marked(out: &mut String, open: &str, text: &str, close: &str) {
    let mut lines = text.split('\n').peekable();
    while let Some(line) = lines.next() {
        let trimmed = line.trim();
        if trimmed.is_empty() {
            out.push_str(line);
        } else {
            let lead = &line[..line.len() - line.trim_start().len()];
            let tail = &line[line.trim_end().len()..];
            out.push_str(lead);
            out.push_str(open);
            out.push_str(trimmed);
            out.push_str(close);
            out.push_str(tail);
        }
        if lines.peek().is_some() {
            out.push('\n');
        }
    }
}

/// Shows invisible characters as `<U+XXXX>` so a reviewer sees what an agent would read.
pub fn reveal_hidden(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if is_hidden(c) {
            out.push_str(&format!("<U+{:04X}>", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_and_changes() {
        let old = MemoryParts::read(
            "---\nname: A\ndescription: old text\ntype: feedback\nkeywords: [x, y]\nowner: me\n---\nbody\n",
        );
        let new = MemoryParts::read(
            "---\nname: A\ndescription: new text\ntype: project\nkeywords: [x]\n---\nbody\n",
        );
        let changes: Vec<String> = field_changes(&old, &new)
            .into_iter()
            .map(|c| format!("{}: {:?} → {:?}", c.field, c.old, c.new))
            .collect();
        assert_eq!(
            changes,
            [
                "description: Some(\"old text\") → Some(\"new text\")",
                "type: Some(\"feedback\") → Some(\"project\")",
                "keywords: Some(\"[x, y]\") → Some(\"[x]\")",
                "owner: Some(\"me\") → None",
            ]
        );
        assert_eq!(MemoryParts::read("no frontmatter").body, "no frontmatter");
    }

    #[test]
    fn word_level_body_diff() {
        let old = "Intro line.\nTests hit a mocked database.\nUnchanged.\nMore.\nEnd.\n";
        let new = "Intro line.\nTests hit a real Postgres database.\nUnchanged.\nMore.\nEnd.\n";
        assert_eq!(
            word_diff(old, new),
            "Intro line.\nTests hit a [-mocked-]{+real Postgres+} database.\nUnchanged.\n"
        );
        assert_eq!(word_diff("same\n", "same\n"), "");
        assert_eq!(word_diff("", "new line\n"), "{+new line+}\n");
    }
}
