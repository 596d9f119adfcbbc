//! Merging three versions of the team `MEMORY.md` (what git's merge driver hands over: the
//! merge base, ours and theirs) into the index of the merged memories, so that a rebase, merge
//! or cherry-pick of two teammates' new memories never conflicts on it.
//!
//! When git runs a merge driver, the other memory files of the same merge are not resolved yet
//! (merge-ort writes the work tree only at the end), so the index cannot be rebuilt from the
//! files. Each version of the index is read back into its entries instead — one per memory
//! path, `- [title](target) — description` — the entries are merged path by path (a side that
//! changed an entry wins over one that did not; a deleted entry stays deleted; when both
//! changed it, ours is kept), and the result is rendered by [`crate::domain::gate::team_index_md`], Qwen Code's
//! rules, order and grouping included. For new, changed and removed memories this is the index
//! a rebuild writes. Where a line does not say everything (a line cut at 150 units, a memory
//! listed only in another's `(also: …)`, more than 200 memories), the next `teammem sync` or
//! `teammem index` regenerates it from the files.

use std::collections::{BTreeMap, BTreeSet};

use super::IndexLine;
use crate::domain::memory::MemoryType;

/// What a memory listed only in a group's `(also: …)` is known by, when the caller can read it
/// (from the work tree): its title, description and type.
pub type Lookup<'a> = dyn Fn(&str) -> Option<IndexLine> + 'a;

/// Merges the three versions of the index text; `lookup` fills in memories that a version lists
/// only by path (in a group's `(also: …)`).
pub fn merge(base: &str, ours: &str, theirs: &str, lookup: &Lookup<'_>) -> String {
    let (base, ours, theirs) = (
        entries(base, lookup),
        entries(ours, lookup),
        entries(theirs, lookup),
    );
    let paths: BTreeSet<&String> = base
        .keys()
        .chain(ours.keys())
        .chain(theirs.keys())
        .collect();
    let mut merged = Vec::new();
    for path in paths {
        let (o, a, b) = (base.get(path), ours.get(path), theirs.get(path));
        let kept = if a == b || b == o {
            a
        } else if a == o {
            b
        } else {
            // Both changed it: ours, or theirs when ours deleted it (a version is never lost).
            a.or(b)
        };
        if let Some(entry) = kept {
            merged.push(entry.clone());
        }
    }
    // The one team index builder; no policy: every line here is already in one of the sides.
    crate::domain::gate::team_index_md(merged, None)
}

/// The entries one index text lists, by memory path.
fn entries(text: &str, lookup: &Lookup<'_>) -> BTreeMap<String, IndexLine> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let Some(parsed) = parse_line(line.strip_suffix('\r').unwrap_or(line)) else {
            continue;
        };
        for member in &parsed.also {
            let entry = lookup(member).unwrap_or_else(|| IndexLine {
                path: member.clone(),
                title: file_stem(member).to_string(),
                // The group's description keeps the member in the same group.
                description: parsed.entry.description.clone(),
                kind: parsed.entry.kind,
            });
            out.entry(member.clone()).or_insert(entry);
        }
        out.insert(parsed.entry.path.clone(), parsed.entry);
    }
    out
}

/// One index line read back.
struct Line {
    entry: IndexLine,
    /// Paths listed in `(also: …)`.
    also: Vec<String>,
}

/// Reads `- [title](target) — description[ (also: t1, t2)]`; `None` for anything else (the
/// size warning, blank lines).
fn parse_line(line: &str) -> Option<Line> {
    let rest = line.strip_prefix("- [")?;
    // A cleaned field never holds `](` (Qwen turns it into `] (`), and a target never `)`.
    let (title, rest) = rest.split_once("](")?;
    let (target, rest) = rest.split_once(')')?;
    let description = rest.strip_prefix(" \u{2014} ")?;
    if !target.chars().all(is_target_char) {
        return None;
    }
    let path = decode_target(target)?;
    let (description, also) = split_also(description);
    let kind = kind_of(&path);
    // An empty field shows the type: read it back as empty, so grouping stays as Qwen's.
    let empty_if_type = |field: &str| match MemoryType::parse(field) {
        Some(_) => String::new(),
        None => field.to_string(),
    };
    Some(Line {
        entry: IndexLine {
            title: empty_if_type(title),
            description: empty_if_type(description),
            kind: MemoryType::parse(description)
                .or(MemoryType::parse(title))
                .unwrap_or(kind),
            path,
        },
        also,
    })
}

/// Splits a trailing ` (also: a.md, b.md)` off a description, when every listed item is a link
/// target.
fn split_also(description: &str) -> (&str, Vec<String>) {
    let Some(at) = description.rfind(" (also: ") else {
        return (description, Vec::new());
    };
    let Some(list) = description[at + " (also: ".len()..].strip_suffix(')') else {
        return (description, Vec::new());
    };
    let targets: Vec<&str> = list.split(", ").collect();
    if targets
        .iter()
        .any(|t| t.is_empty() || !t.chars().all(is_target_char))
    {
        return (description, Vec::new());
    }
    let paths: Option<Vec<String>> = targets.into_iter().map(decode_target).collect();
    match paths {
        Some(paths) => (&description[..at], paths),
        None => (description, Vec::new()),
    }
}

/// The characters [`super::index::encode_target`] leaves in a target.
fn is_target_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '_' | '~' | '-' | '%')
}

/// The path a target names (percent-decoded UTF-8).
fn decode_target(target: &str) -> Option<String> {
    let bytes = target.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = target.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The type a path's folder names (`feedback/x.md`), else `project`.
fn kind_of(path: &str) -> MemoryType {
    path.split('/')
        .next()
        .and_then(MemoryType::parse)
        .unwrap_or(MemoryType::Project)
}

fn file_stem(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.strip_suffix(".md").unwrap_or(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(path: &str, title: &str, description: &str) -> IndexLine {
        IndexLine {
            path: path.into(),
            title: title.into(),
            description: description.into(),
            kind: kind_of(path),
        }
    }

    fn render(entries: &[IndexLine]) -> String {
        crate::domain::memory_index::render(entries)
    }

    fn none(_: &str) -> Option<IndexLine> {
        None
    }

    #[test]
    fn two_adjacent_new_memories_give_the_rebuilt_index() {
        let a = entry("feedback/a.md", "A", "First");
        let b = entry("feedback/b.md", "B", "Second");
        let c = entry("feedback/c.md", "C", "Third");
        let z = entry("project/z.md", "Z", "Last");
        let base = render(&[a.clone(), z.clone()]);
        let ours = render(&[a.clone(), b.clone(), z.clone()]);
        let theirs = render(&[a.clone(), c.clone(), z.clone()]);
        assert_eq!(merge(&base, &ours, &theirs, &none), render(&[a, b, c, z]));
    }

    #[test]
    fn changes_and_deletions_on_either_side_are_kept() {
        let a = entry("feedback/a.md", "A", "First");
        let a2 = entry("feedback/a.md", "A", "First, reworded");
        let b = entry("project/b.md", "B", "Second");
        let c = entry("reference/c.md", "C", "Third");
        let base = render(&[a.clone(), b.clone(), c.clone()]);
        let ours = render(&[a2.clone(), b.clone(), c.clone()]);
        let theirs = render(&[a.clone(), c.clone()]);
        assert_eq!(merge(&base, &ours, &theirs, &none), render(&[a2, c]));
    }

    #[test]
    fn grouping_odd_paths_and_empty_fields_survive_a_round_trip() {
        let a = entry("feedback/a (1).md", "A `x`", "Same thing.");
        let b = entry("feedback/b.md", "B", "same thing");
        let c = entry("project/ünï.md", "", "");
        let d = entry("project/d.md", "D", "Other");
        let base = render(&[a.clone(), b.clone(), c.clone()]);
        let ours = render(&[a.clone(), b.clone(), c.clone(), d.clone()]);
        assert_eq!(merge(&base, &ours, &base, &none), ours);
        // A new memory with the same description joins the group.
        let e = entry("project/e.md", "E", "Same thing!");
        let theirs = render(&[a.clone(), b.clone(), c.clone(), e.clone()]);
        assert_eq!(
            merge(&base, &ours, &theirs, &none),
            render(&[a, b, c, d, e])
        );
    }

    #[test]
    fn anything_else_in_the_file_is_left_out_and_nothing_panics() {
        for text in [
            "",
            "\n\n",
            "garbage",
            "- [x](%ZZ) — y",
            "- [x](a) —",
            "- [](",
            "- [a](b) — c (also: , )",
        ] {
            let _ = merge(text, text, "- [x](feedback/x.md) — y", &none);
        }
        let x = entry("feedback/x.md", "x", "y");
        assert_eq!(
            merge("", "garbage\n", "- [x](feedback/x.md) — y", &none),
            render(&[x])
        );
    }
}
