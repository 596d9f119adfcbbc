//! The generated index `MEMORY.md`: one line per memory, deterministic to the byte.
//!
//! The same memory set gives the same bytes on every machine, whatever order the files were
//! read in, so the index is never merged: it is regenerated.

use super::memory::MemoryType;

/// Characters per field (title, description) before it is cut with `…`.
pub const MAX_FIELD_CHARS: usize = 120;
/// Characters per line before the line is cut with `…` (the link target is never cut).
pub const MAX_LINE_CHARS: usize = 150;
/// Lines in the whole index, the warning line included.
pub const MAX_LINES: usize = 200;
/// Bytes in the whole index, the warning line included.
pub const MAX_BYTES: usize = 25_000;

/// What the index needs to know of one memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexEntry {
    /// Path relative to the scope folder, with `/` separators.
    pub path: String,
    /// The memory's `name`.
    pub title: String,
    /// The memory's `description` (may be empty; the type stands in).
    pub description: String,
    /// The memory's type.
    pub kind: MemoryType,
}

/// Renders the index for a set of memories. Order of `entries` does not matter.
pub fn render(entries: &[IndexEntry]) -> String {
    let mut sorted: Vec<&IndexEntry> = entries.iter().collect();
    // Ties on the path are broken by the other fields, so that even two entries claiming the
    // same path (which one folder cannot hold) give the same index in any order.
    sorted.sort_by(|a, b| {
        (a.path.as_bytes(), &a.title, &a.description, a.kind).cmp(&(
            b.path.as_bytes(),
            &b.title,
            &b.description,
            b.kind,
        ))
    });
    sorted.dedup_by(|a, b| a.path == b.path);

    // Group equal normalised descriptions under the first path that carries them.
    let mut groups: Vec<(&IndexEntry, Vec<&IndexEntry>)> = Vec::new();
    let mut group_of: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for entry in sorted {
        // Grouped by the whole description, not the part that survives the 120-char cut.
        let key = normalize(&entry.description);
        if !key.is_empty() {
            if let Some(&at) = group_of.get(&key) {
                groups[at].1.push(entry);
                continue;
            }
            group_of.insert(key, groups.len());
        }
        groups.push((entry, Vec::new()));
    }

    // No more than MAX_LINES lines can ever be kept, so only those are rendered.
    let rendered: Vec<String> = groups
        .iter()
        .take(MAX_LINES)
        .map(|(entry, siblings)| {
            let description = sanitize_field(&entry.description);
            Line {
                title: link_text(&sanitize_field(&entry.title)),
                target: percent_encode(&entry.path),
                description: if description.is_empty() {
                    entry.kind.as_str().to_string()
                } else {
                    description
                },
                siblings: siblings.iter().map(|s| percent_encode(&s.path)).collect(),
            }
            .render()
        })
        .collect();
    fit(&rendered, groups.len())
}

/// Joins the lines when they all fit in [`MAX_LINES`] and [`MAX_BYTES`]; otherwise keeps the
/// longest prefix that fits together with the warning line, cutting only at line ends.
/// `total` counts every line, rendered or not.
fn fit(rendered: &[String], total: usize) -> String {
    let all_bytes: usize = rendered.iter().map(|l| l.len() + 1).sum();
    if total <= MAX_LINES && all_bytes <= MAX_BYTES {
        let mut out = String::with_capacity(all_bytes);
        for line in rendered {
            out.push_str(line);
            out.push('\n');
        }
        return out;
    }
    let mut out = String::new();
    let mut kept = 0;
    for line in rendered {
        let room = MAX_BYTES - warning(kept + 1, total).len();
        if kept + 1 >= MAX_LINES || out.len() + line.len() + 1 > room {
            break;
        }
        out.push_str(line);
        out.push('\n');
        kept += 1;
    }
    out.push_str(&warning(kept, total));
    out
}

fn warning(kept: usize, total: usize) -> String {
    format!(
        "> WARNING: index cut to {kept} of {total} lines to stay within {MAX_LINES} lines and {MAX_BYTES} bytes; run `teammem list` to see every memory.\n"
    )
}

struct Line {
    title: String,
    target: String,
    description: String,
    siblings: Vec<String>,
}

impl Line {
    fn render(&self) -> String {
        // `- [` + title + `](` + target + `) — `
        let head_len =
            |title: &str| 3 + title.chars().count() + 2 + self.target.chars().count() + 4;
        // The title gives way only when the description alone cannot make room.
        let mut title = self.title.clone();
        let min_description = 1;
        if head_len(&title) + min_description > MAX_LINE_CHARS {
            let room = MAX_LINE_CHARS.saturating_sub(head_len("") + min_description);
            title = cut(&title, room.max(1));
        }
        let head = format!("- [{title}]({}) — ", self.target);
        let head_chars = head.chars().count();
        let room = MAX_LINE_CHARS.saturating_sub(head_chars);
        let description = cut(&self.description, room.max(1));

        let mut line = head + &description;
        let mut used = line.chars().count();
        if !self.siblings.is_empty() && description == self.description {
            let mut also = String::new();
            let mut listed = 0;
            for sibling in &self.siblings {
                let sep = if listed == 0 { " (also: " } else { ", " };
                let extra = sep.chars().count() + sibling.chars().count();
                let dropped_after = self.siblings.len() - listed - 1;
                let tail = if dropped_after > 0 {
                    format!(", +{dropped_after} more)").chars().count()
                } else {
                    1
                };
                if used + also.chars().count() + extra + tail > MAX_LINE_CHARS {
                    break;
                }
                also.push_str(sep);
                also.push_str(sibling);
                listed += 1;
            }
            let dropped = self.siblings.len() - listed;
            if listed > 0 {
                if dropped > 0 {
                    also.push_str(&format!(", +{dropped} more"));
                }
                also.push(')');
                line.push_str(&also);
            } else {
                let marker = format!(" (+{dropped} more)");
                if used + marker.chars().count() <= MAX_LINE_CHARS {
                    line.push_str(&marker);
                }
            }
            used = line.chars().count();
        }
        // Only a target too long for even a one-char title and description overflows the line.
        debug_assert!(used <= MAX_LINE_CHARS || head_len("") + 2 > MAX_LINE_CHARS);
        line
    }
}

/// Cuts `text` to at most `max` characters, ending with `…` when cut.
fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// Strips control, zero-width, bidi and tag characters, folds white space, replaces backticks
/// and `](` so a field cannot break out of its link, and cuts to [`MAX_FIELD_CHARS`].
pub fn sanitize_field(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut space = false;
    for c in text.chars() {
        if c.is_whitespace() || c.is_control() {
            space = !out.is_empty();
            continue;
        }
        if is_hidden(c) {
            continue;
        }
        if space {
            out.push(' ');
            space = false;
        }
        out.push(if c == '`' { '\'' } else { c });
    }
    let out = out.replace("](", "] (");
    cut(&out, MAX_FIELD_CHARS)
}

/// A title made safe inside `[…]`: `\`, `[` and `]` are backslash-escaped (CommonMark), so a
/// title ending in `\` or holding a lone bracket cannot escape or close its link early.
fn link_text(title: &str) -> String {
    let mut out = String::with_capacity(title.len());
    for c in title.chars() {
        if matches!(c, '\\' | '[' | ']') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Zero-width, bidi-control and tag characters: invisible text that can hide instructions.
pub fn is_hidden(c: char) -> bool {
    matches!(c,
        '\u{200B}'..='\u{200F}'
        | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{2064}'
        | '\u{2066}'..='\u{2069}'
        | '\u{061C}'
        | '\u{FEFF}'
        | '\u{00AD}'
        | '\u{E0000}'..='\u{E007F}')
}

/// The grouping key of a description: sanitised, NFC, white space folded, lowercase, without
/// trailing `.`, `!` or `…`.
fn normalize(description: &str) -> String {
    if description.is_ascii() {
        // ASCII needs no composition; one pass folds case and white space.
        let mut key = String::with_capacity(description.len());
        let mut space = false;
        for c in description.chars() {
            if c.is_ascii_whitespace() || c.is_ascii_control() {
                space = !key.is_empty();
            } else {
                if space {
                    key.push(' ');
                    space = false;
                }
                key.push(c.to_ascii_lowercase());
            }
        }
        return key.trim_end_matches(['.', '!']).trim_end().to_string();
    }
    normalize_unicode(description)
}

fn normalize_unicode(description: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    let mut clean = String::with_capacity(description.len());
    for c in description.chars() {
        if c.is_whitespace() || c.is_control() {
            clean.push(' ');
        } else if !is_hidden(c) {
            clean.push(c);
        }
    }
    let folded: String = clean.nfc().flat_map(char::to_lowercase).collect();
    folded
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .trim_end_matches(['.', '!', '…'])
        .trim_end()
        .to_string()
}

/// Percent-encodes a relative path for a markdown link: everything but unreserved characters
/// and `/` is encoded, so `a(b).md` becomes `a%28b%29.md` and a newline cannot start a new line.
pub fn percent_encode(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(path: &str, title: &str, description: &str) -> IndexEntry {
        IndexEntry {
            path: path.into(),
            title: title.into(),
            description: description.into(),
            kind: MemoryType::Project,
        }
    }

    proptest::proptest! {
        #[test]
        fn the_ascii_grouping_key_matches_the_unicode_one(text in "[ -~\t\n\r\x07\x0b]{0,40}") {
            proptest::prop_assert_eq!(normalize(&text), normalize_unicode(&text));
        }
    }

    #[test]
    fn line_format_and_sort() {
        let out = render(&[entry("b.md", "B", "second"), entry("a.md", "A", "first")]);
        assert_eq!(out, "- [A](a.md) — first\n- [B](b.md) — second\n");
    }

    #[test]
    fn the_same_path_twice_gives_the_same_index_in_any_order() {
        let a = entry("a.md", "A", "one");
        let b = entry("a.md", "A", "two");
        assert_eq!(render(&[a.clone(), b.clone()]), render(&[b, a]));
    }

    #[test]
    fn empty_description_falls_back_to_type() {
        assert_eq!(render(&[entry("a.md", "A", "")]), "- [A](a.md) — project\n");
    }

    #[test]
    fn equal_descriptions_group() {
        let out = render(&[
            entry("c.md", "C", "Same thing."),
            entry("a.md", "A", "same   thing"),
            entry("b.md", "B", "SAME THING"),
        ]);
        assert_eq!(
            out,
            "- [A](a.md) — same   thing (also: b.md, c.md)\n".replace("same   thing", "same thing")
        );
    }

    #[test]
    fn fields_are_sanitised() {
        let out = render(&[entry("a(b).md", "x`y](evil)", "one\u{202E}two\nthree")]);
        assert_eq!(out, "- [x'y\\] (evil)](a%28b%29.md) — onetwo three\n");
    }

    #[test]
    fn a_title_cannot_escape_or_close_its_link() {
        let out = render(&[
            entry("a.md", "ends in \\", "d"),
            entry("b.md", "lone ] bracket [x", "e"),
        ]);
        assert_eq!(
            out,
            "- [ends in \\\\](a.md) — d\n- [lone \\] bracket \\[x](b.md) — e\n"
        );
        // Cut to fit the line (a long path leaves 39 chars for the title), a cut through an
        // escape leaves `\…`, and `\` escapes only ASCII punctuation, so the `]` still closes.
        let path = format!("{}.md", "p".repeat(97));
        let line = render(&[entry(&path, &"\\".repeat(60), "f")]);
        assert!(
            line.starts_with(&format!("- [{}…]({path}) — f", "\\".repeat(39))),
            "{line}"
        );
    }
}
