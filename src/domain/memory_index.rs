//! The generated index `MEMORY.md`, byte for byte as Qwen Code 0.24 rebuilds it.
//!
//! `MEMORY.md` is Qwen Code's file: it rebuilds the team index at every session start and the
//! private one after each memory write, so teammem writes exactly those bytes and the two tools
//! never rewrite each other's. Qwen Code works on JavaScript strings, so lengths and cuts here
//! count UTF-16 code units, and a cut through a surrogate pair leaves U+FFFD, as Node writes it.
//! Rules teammem would have chosen differently are listed in docs/memory-format.md.

use std::cmp::Ordering;
use std::collections::HashMap;

pub(crate) mod merge;

use super::frontmatter::is_js_space;
use super::memory::MemoryType;

/// UTF-16 code units per field (title, description) before it is cut with `…`.
pub const MAX_FIELD_UNITS: usize = 120;
/// Code points of a link target kept (the rest of a longer path is dropped).
pub const MAX_TARGET_CHARS: usize = 120;
/// UTF-16 code units per line before the line is cut with `…`.
pub const MAX_LINE_UNITS: usize = 150;
/// Lines in the index before the warning.
pub const MAX_LINES: usize = 200;
/// UTF-16 code units in the index before it is cut at a line end and warned about.
pub const MAX_UNITS: usize = 25_000;
/// Bytes of an index an agent's context shows (teammem's own cap on what it injects).
pub const MAX_BYTES: usize = 25_000;
/// Memories read into an index: Qwen Code keeps the first 200 (by path for team memory, the
/// newest for private and user memory) and leaves the rest out without a word.
pub const MAX_FILES: usize = 200;

/// The line Qwen Code ends a cut index with (after an empty line).
pub const WARNING: &str = "> WARNING: MEMORY.md is too large; only part of it was written. Keep index entries concise and move detail into topic files.";

/// One memory's line in `MEMORY.md`: what the index needs to know of the memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexLine {
    /// Path relative to the scope folder, with `/` separators.
    pub path: String,
    /// The memory's `name` (as read by the line rule).
    pub title: String,
    /// The memory's `description` (may be empty; the type stands in).
    pub description: String,
    /// The memory's type.
    pub kind: MemoryType,
}

/// A memory of a private or user scope, whose index is ordered newest first.
#[derive(Debug, Clone, PartialEq)]
pub struct DatedEntry {
    /// The memory.
    pub entry: IndexLine,
    /// Its modification time in milliseconds since the epoch, computed as Node's `mtimeMs`.
    pub mtime_ms: f64,
}

/// Node's `mtimeMs` for a modification time of `secs` seconds and `nanos` nanoseconds.
pub fn mtime_ms(secs: i64, nanos: i64) -> f64 {
    secs as f64 * 1e3 + nanos as f64 / 1e6
}

/// Renders the team index: memories by path (UTF-16 order), the first 200, lines grouped by
/// equal normalised descriptions. Order of `entries` does not matter.
pub fn render(entries: &[IndexLine]) -> String {
    let mut sorted: Vec<&IndexLine> = entries.iter().collect();
    // Ties on the path are broken by the other fields, so that even two entries claiming the
    // same path (which one folder cannot hold) give the same index in any order.
    sorted.sort_by(|a, b| {
        utf16_cmp(&a.path, &b.path).then_with(|| {
            (&a.title, &a.description, a.kind).cmp(&(&b.title, &b.description, b.kind))
        })
    });
    sorted.dedup_by(|a, b| a.path == b.path);
    sorted.truncate(MAX_FILES);

    let mut groups: Vec<(&IndexLine, Vec<&IndexLine>)> = Vec::new();
    let mut group_of: HashMap<String, usize> = HashMap::new();
    for entry in sorted {
        let key = normalize_description(&entry.description);
        if !key.is_empty() {
            if let Some(&at) = group_of.get(&key) {
                groups[at].1.push(entry);
                continue;
            }
            group_of.insert(key, groups.len());
        }
        groups.push((entry, Vec::new()));
    }
    let lines: Vec<Vec<u16>> = groups
        .iter()
        .map(|(primary, others)| {
            let mut line = entry_line(primary);
            if !others.is_empty() {
                let also: Vec<String> = others.iter().map(|o| encode_target(&o.path)).collect();
                line.extend(format!(" (also: {})", also.join(", ")).encode_utf16());
            }
            cut_line(line)
        })
        .collect();
    assemble(&lines)
}

/// Renders a private or user index: the 200 newest memories, newest first (equal times by
/// file name as `localeCompare` orders them, then by path), one line each, no grouping.
pub fn render_by_time(entries: &[DatedEntry]) -> String {
    let mut sorted: Vec<&DatedEntry> = entries.iter().collect();
    // Qwen lists paths in UTF-16 order, then sorts stably by time and file name.
    sorted.sort_by(|a, b| utf16_cmp(&a.entry.path, &b.entry.path));
    sorted.sort_by(|a, b| {
        b.mtime_ms
            .partial_cmp(&a.mtime_ms)
            .unwrap_or(Ordering::Equal)
            .then_with(|| locale_cmp(file_name(&a.entry.path), file_name(&b.entry.path)))
    });
    sorted.truncate(MAX_FILES);
    let lines: Vec<Vec<u16>> = sorted
        .iter()
        .map(|d| cut_line(entry_line(&d.entry)))
        .collect();
    assemble(&lines)
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// `- [title](target) — description`, fields cleaned; an empty field shows the type.
fn entry_line(entry: &IndexLine) -> Vec<u16> {
    let or_type = |field: Vec<u16>| match field.is_empty() {
        true => entry.kind.as_str().encode_utf16().collect(),
        false => field,
    };
    let mut line: Vec<u16> = "- [".encode_utf16().collect();
    line.extend(or_type(sanitize_field(&entry.title)));
    line.extend("](".encode_utf16());
    line.extend(encode_target(&entry.path).encode_utf16());
    line.extend(") \u{2014} ".encode_utf16());
    line.extend(or_type(sanitize_field(&entry.description)));
    line
}

/// Qwen Code's field cleaning: C0/C1 controls become spaces, zero-width and bidi marks go,
/// backticks become `'`, `](` becomes `] (`, white space folds to one space, the ends are
/// trimmed, and past 120 code units the field is cut (trailing space dropped) and ends in `…`.
/// Brackets are not escaped: a title holding `]` can end its link early.
pub fn sanitize_field(text: &str) -> Vec<u16> {
    let mut clean = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\u{0}'..='\u{1F}' | '\u{7F}'..='\u{9F}' => clean.push(' '),
            '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2066}'..='\u{2069}'
            | '\u{FEFF}' => {}
            '`' => clean.push('\''),
            c => clean.push(c),
        }
    }
    let clean = clean.replace("](", "] (");
    let mut folded = String::with_capacity(clean.len());
    let mut in_space = false;
    for c in clean.chars() {
        if is_js_space(c) {
            if !in_space {
                folded.push(' ');
            }
            in_space = true;
        } else {
            folded.push(c);
            in_space = false;
        }
    }
    let units: Vec<u16> = folded.trim_matches(is_js_space).encode_utf16().collect();
    cut(units, MAX_FIELD_UNITS)
}

/// `text.length <= max ? text : text.slice(0, max - 1).trimEnd() + "…"`, in UTF-16 units.
fn cut(mut units: Vec<u16>, max: usize) -> Vec<u16> {
    if units.len() <= max {
        return units;
    }
    units.truncate(max - 1);
    while units.last().is_some_and(|&u| is_space_unit(u)) {
        units.pop();
    }
    units.push(0x2026);
    units
}

fn cut_line(line: Vec<u16>) -> Vec<u16> {
    cut(line, MAX_LINE_UNITS)
}

/// Whether one UTF-16 unit is JavaScript white space (every such character is in the BMP).
fn is_space_unit(unit: u16) -> bool {
    char::from_u32(u32::from(unit)).is_some_and(is_js_space)
}

/// Joins the lines with `\n` and no final newline. Over 200 lines or 25,000 code units, keeps
/// what fits (cut at the last line end within the limit) and appends an empty line and
/// [`WARNING`].
fn assemble(lines: &[Vec<u16>]) -> String {
    let kept = &lines[..lines.len().min(MAX_LINES)];
    let mut out: Vec<u16> = Vec::new();
    for (i, line) in kept.iter().enumerate() {
        if i > 0 {
            out.push(u16::from(b'\n'));
        }
        out.extend_from_slice(line);
    }
    let mut cut_short = lines.len() > MAX_LINES;
    if out.len() > MAX_UNITS {
        let from = MAX_UNITS.min(out.len() - 1);
        let at = out[..=from].iter().rposition(|&u| u == u16::from(b'\n'));
        out.truncate(match at {
            Some(at) if at > 0 => at,
            _ => MAX_UNITS,
        });
        cut_short = true;
    }
    if cut_short {
        out.extend("\n\n".encode_utf16());
        out.extend(WARNING.encode_utf16());
    }
    String::from_utf16_lossy(&out)
}

/// The grouping key: lowercase, white space folded, trimmed, without a trailing run of
/// `. , ; : ! ? ) ] } ' " \``, trimmed again. No Unicode normalisation.
fn normalize_description(description: &str) -> String {
    let lower = description.to_lowercase();
    let mut folded = String::with_capacity(lower.len());
    let mut in_space = false;
    for c in lower.chars() {
        if is_js_space(c) {
            if !in_space {
                folded.push(' ');
            }
            in_space = true;
        } else {
            folded.push(c);
            in_space = false;
        }
    }
    let trimmed = folded.trim_matches(is_js_space);
    let stripped =
        trimmed.trim_end_matches(['.', ',', ';', ':', '!', '?', ')', ']', '}', '\'', '"', '`']);
    stripped.trim_matches(is_js_space).to_string()
}

/// A link target: the path's first 120 characters, every one but `/` and `[A-Za-z0-9._~-]`
/// percent-encoded as UTF-8 (`a(b).md` → `a%28b%29.md`, a newline → `%0A`).
pub fn encode_target(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for c in path.chars().take(MAX_TARGET_CHARS) {
        if c == '/' || c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '~' | '-') {
            out.push(c);
            continue;
        }
        let mut buf = [0u8; 4];
        for b in c.encode_utf8(&mut buf).bytes() {
            out.push_str(&format!("%{b:02X}"));
        }
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

/// Percent-encodes a whole relative path for a markdown link (every byte but unreserved
/// characters and `/`), for reports that link files; the index itself uses [`encode_target`].
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

/// Compares two strings as JavaScript's `<` does: by UTF-16 code units.
pub fn utf16_cmp(a: &str, b: &str) -> Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

/// ASCII in the order of ICU's root collation (which Node's `localeCompare` uses) at the
/// primary level; upper and lower case of a letter share a place.
const ASCII_ORDER: &str = " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789abcdefghijklmnopqrstuvwxyz";

/// One character's collation weights: primary (`None` when ignorable), accent, case or variant.
type Weights = (Option<u32>, u8, u8);

/// The primary weight of an ASCII character from [`ASCII_ORDER`], spaced so that other
/// characters can sit between two of them.
fn ascii_primary(c: char) -> u32 {
    ASCII_ORDER.find(c).map_or(0, |at| 1_000 + at as u32 * 10)
}

/// A character's category, as far as collation groups go.
fn category(c: char) -> &'static str {
    use std::sync::OnceLock;
    static CLASSES: OnceLock<Vec<(&'static str, regex::Regex)>> = OnceLock::new();
    let classes = CLASSES.get_or_init(|| {
        ["Cc", "Cf", "Mn", "Me", "Zs", "Sc", "P", "S", "Nd", "L"]
            .into_iter()
            .filter_map(|name| {
                regex::Regex::new(&format!("^\\p{{{name}}}$"))
                    .ok()
                    .map(|re| (name, re))
            })
            .collect()
    });
    let mut buf = [0u8; 4];
    let text: &str = c.encode_utf8(&mut buf);
    classes
        .iter()
        .find(|(_, re)| re.is_match(text))
        .map_or("", |(name, _)| name)
}

/// The collation weights of one character, approximating ICU's root collation: white space,
/// then punctuation, symbols, currency, digits and letters; controls and format characters
/// ignored; accents and case decide only between otherwise equal names. Exact for ASCII.
fn weights(c: char, out: &mut Vec<Weights>) {
    let upper = u8::from(c.is_uppercase());
    let lower = c.to_lowercase().next().unwrap_or(c);
    let space = |sub: u32, variant: u8| (Some(100 + sub), 0, variant);
    let w: Weights = match c {
        '\t' => space(1, 0),
        '\n' => space(2, 0),
        '\u{0B}' => space(3, 0),
        '\u{0C}' => space(4, 0),
        '\r' => space(5, 0),
        '\u{85}' => space(6, 0),
        '\u{2028}' => space(7, 0),
        '\u{2029}' => space(8, 0),
        ' ' => space(9, 0),
        '\u{3000}' => space(9, 1),
        '\u{A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{1680}' => space(9, 2),
        'ß' => {
            let s = ascii_primary('s');
            out.push((Some(s), 0, 1));
            (Some(s), 0, 1)
        }
        '\u{2026}' => (Some(ascii_primary('.') + 5), 0, 0),
        '\u{2010}'..='\u{2015}' => (Some(ascii_primary('-') + 5), 0, 0),
        '«' | '»' => (Some(ascii_primary('"') + 5), 0, 0),
        '¢' => (Some(ascii_primary('$') - 5), 0, 0),
        c if lower.is_ascii() && !c.is_ascii_control() => (Some(ascii_primary(lower)), 0, upper),
        c => match category(c) {
            "Cc" | "Cf" => (None, 0, 0),
            "Mn" | "Me" => (None, 1, 0),
            "Zs" => space(9, 2),
            "Sc" => (Some(ascii_primary('$') + 5), 0, 0),
            "P" => (Some(ascii_primary('}') + 5), 0, 0),
            "S" => (Some(ascii_primary('~') + 5), 0, 0),
            "Nd" => (Some(ascii_primary('9') + 5), 0, 0),
            _ => {
                use unicode_normalization::UnicodeNormalization;
                match std::iter::once(lower).nfd().next() {
                    Some(base) if base.is_ascii_alphabetic() => {
                        (Some(ascii_primary(base)), 1, upper)
                    }
                    _ => (Some(0x10_0000 + u32::from(lower)), 0, upper),
                }
            }
        },
    };
    out.push(w);
}

/// An approximation of `a.localeCompare(b)` in Node's default locale: primary letters and
/// symbols first (white space < punctuation < symbols < digits < letters, case ignored), then
/// accents, then lowercase before uppercase. Exact for ASCII names; close for others.
pub fn locale_cmp(a: &str, b: &str) -> Ordering {
    use unicode_normalization::UnicodeNormalization;
    // Canonically equal spellings (`é`, `e` + U+0301) compare equal, as in ICU.
    let all = |s: &str| {
        let mut out = Vec::with_capacity(s.len());
        for c in s.nfd() {
            weights(c, &mut out);
        }
        out
    };
    let (wa, wb) = (all(a), all(b));
    let primary = |w: &[Weights]| w.iter().filter_map(|x| x.0).collect::<Vec<u32>>();
    let level = |f: fn(&Weights) -> u8, w: &[Weights]| {
        w.iter()
            .filter(|x| x.0.is_some() || x.1 != 0)
            .map(f)
            .collect::<Vec<u8>>()
    };
    primary(&wa)
        .cmp(&primary(&wb))
        .then_with(|| level(|w| w.1, &wa).cmp(&level(|w| w.1, &wb)))
        .then_with(|| level(|w| w.2, &wa).cmp(&level(|w| w.2, &wb)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(path: &str, title: &str, description: &str) -> IndexLine {
        IndexLine {
            path: path.into(),
            title: title.into(),
            description: description.into(),
            kind: MemoryType::Project,
        }
    }

    #[test]
    fn line_format_and_sort_with_no_final_newline() {
        let out = render(&[entry("b.md", "B", "second"), entry("a.md", "A", "first")]);
        assert_eq!(
            out,
            "- [A](a.md) \u{2014} first\n- [B](b.md) \u{2014} second"
        );
        assert_eq!(render(&[]), "");
    }

    #[test]
    fn empty_fields_fall_back_to_type() {
        assert_eq!(
            render(&[entry("a.md", " ", "")]),
            "- [project](a.md) \u{2014} project"
        );
    }

    #[test]
    fn equal_descriptions_group() {
        let out = render(&[
            entry("c.md", "C", "Same thing."),
            entry("a.md", "A", "same   thing"),
            entry("b.md", "B", "SAME THING!)"),
        ]);
        assert_eq!(out, "- [A](a.md) \u{2014} same thing (also: b.md, c.md)");
    }

    #[test]
    fn fields_are_cleaned_and_brackets_are_not_escaped() {
        let out = render(&[entry("a(b).md", "x`y](evil) ]", "one\u{202E}two\nthree")]);
        assert_eq!(out, "- [x'y] (evil) ]](a%28b%29.md) \u{2014} onetwo three");
    }

    #[test]
    fn long_lines_are_cut_in_utf16_units() {
        // 😀 is two units: a cut through it leaves U+FFFD, as Node writes a lone surrogate.
        let title = "😀".repeat(80);
        let out = render(&[entry("a.md", &title, "d")]);
        let expected_title: String = "😀".repeat(59) + "\u{FFFD}…";
        assert!(
            out.starts_with(&format!("- [{expected_title}](a.md)")),
            "{out}"
        );
        let line = render(&[entry("a.md", &"t".repeat(100), &"word ".repeat(20))]);
        assert_eq!(line.encode_utf16().count(), MAX_LINE_UNITS);
        // Cut at 149 units, the trailing space dropped, then `…`.
        assert!(line.ends_with(" w…"), "{line}");
    }

    #[test]
    fn only_the_first_200_paths_are_read() {
        let entries: Vec<IndexLine> = (0..250)
            .map(|i| entry(&format!("m{i:03}.md"), "t", &format!("d{i}")))
            .collect();
        let out = render(&entries);
        assert_eq!(out.lines().count(), 200);
        assert!(out.ends_with("(m199.md) \u{2014} d199"));
    }

    #[test]
    fn newest_first_then_file_name() {
        let dated = |path: &str, t: f64| DatedEntry {
            entry: entry(path, path, "d"),
            mtime_ms: t,
        };
        let out = render_by_time(&[dated("a/b.md", 1.0), dated("B.md", 2.0), dated("a.md", 2.0)]);
        let order: Vec<&str> = out.lines().map(|l| &l[3..l.find(']').unwrap()]).collect();
        assert_eq!(order, ["a.md", "B.md", "a/b.md"]);
    }

    #[test]
    fn collation_matches_icu_for_ascii() {
        let mut names = vec![
            "b", "a", "B", "A", "_", "-", "1", "a-b", "ab", "a.md", "a_b", "z",
        ];
        names.sort_by(|a, b| locale_cmp(a, b));
        assert_eq!(
            names,
            [
                "_", "-", "1", "a", "A", "a_b", "a-b", "a.md", "ab", "b", "B", "z"
            ]
        );
    }
}
