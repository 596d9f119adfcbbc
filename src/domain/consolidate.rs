//! Mechanical consolidation: merging entries that say the same thing, without losing a line.
//!
//! Two entries are the same when their summaries match without case (within a file), or when
//! their `type:summary` matches (across files). The first one survives; every distinct line of a
//! duplicate (its Why, its How to apply, anything else) is appended to the survivor before the
//! duplicate is removed.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use super::memory::{Entry, MemoryFile};

/// The key two entries are compared by: the summary, trimmed, without case.
pub fn summary_key(summary: &str) -> String {
    summary.trim().to_lowercase()
}

/// The lines a duplicate brings to its survivor: every non-blank line, except a bullet entry's
/// own first line (its summary, which the survivor already says).
pub fn carried_lines(entry: &Entry) -> Vec<String> {
    let skip = usize::from(entry.index.is_some());
    entry
        .text
        .lines()
        .skip(skip)
        .map(|l| l.trim_end().to_string())
        .filter(|l| !l.trim().is_empty())
        .collect()
}

/// The lines of `candidates` that `existing` does not hold yet (compared trimmed), each once.
pub fn new_lines(existing: &str, candidates: &[String]) -> Vec<String> {
    let mut have: HashSet<String> = existing.lines().map(|l| l.trim().to_string()).collect();
    candidates
        .iter()
        .filter(|l| have.insert(l.trim().to_string()))
        .cloned()
        .collect()
}

/// Appends lines to an entry's text. Under a bullet every line is indented so it stays part of
/// that bullet; in a whole-file entry only top-level bullets are, so the file does not turn into
/// a multi-entry file.
fn append_to(text: &str, lines: &[String], under_bullet: bool) -> String {
    let mut out = text.to_string();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    for line in lines {
        let top_level = !line.starts_with([' ', '\t']);
        let bullet = line.starts_with("- ") || line.starts_with("* ");
        if top_level && (under_bullet || bullet) {
            out.push_str("  ");
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// A file's body with lines appended to some entries and other entries removed (entries by
/// their position in [`MemoryFile::entries`]). `None` when every entry is removed.
pub fn rebuild(
    file: &MemoryFile,
    appends: &BTreeMap<usize, Vec<String>>,
    removed: &BTreeSet<usize>,
) -> Option<String> {
    let entries = file.entries();
    if !entries.is_empty() && (0..entries.len()).all(|i| removed.contains(&i)) {
        return None;
    }
    let body = &file.body;
    let mut out = String::with_capacity(body.len());
    let mut at = 0;
    for (i, entry) in entries.iter().enumerate() {
        out.push_str(&body[at..entry.span.0]);
        at = entry.span.1;
        if removed.contains(&i) {
            continue;
        }
        let text = &body[entry.span.0..entry.span.1];
        match appends.get(&i) {
            Some(lines) if !lines.is_empty() => {
                out.push_str(&append_to(text, lines, entry.index.is_some()))
            }
            _ => out.push_str(text),
        }
    }
    out.push_str(&body[at..]);
    Some(out)
}

/// Merges the entries of one file that share a summary (without case). Returns the new body and
/// how many entries were merged away, or `None` when there is nothing to merge.
pub fn merge_within(file: &MemoryFile) -> Option<(String, usize)> {
    let entries = file.entries();
    if entries.len() < 2 {
        return None;
    }
    let mut first: HashMap<String, usize> = HashMap::new();
    let mut appends: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    let mut removed = BTreeSet::new();
    for (i, entry) in entries.iter().enumerate() {
        let key = summary_key(&entry.summary);
        if key.is_empty() {
            continue;
        }
        match first.get(&key) {
            Some(&survivor) => {
                let added = appends.entry(survivor).or_default();
                let existing = format!("{}\n{}", entries[survivor].text, added.join("\n"));
                let lines = new_lines(&existing, &carried_lines(entry));
                added.extend(lines);
                removed.insert(i);
            }
            None => {
                first.insert(key, i);
            }
        }
    }
    if removed.is_empty() {
        return None;
    }
    let body = rebuild(file, &appends, &removed)?;
    Some((body, removed.len()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::memory::MemoryType;
    use proptest::prelude::*;

    fn legacy(body: &str) -> MemoryFile {
        MemoryFile::new("Topic", "d", MemoryType::Feedback, None, body)
    }

    #[test]
    fn same_summary_merges_keeping_every_reason() {
        let file = legacy(
            "- Run the linter\n  - Why: CI fails\n- Other\n- run the LINTER\n  - Why: CI fails\n  - How to apply: before push\n",
        );
        let (body, merged) = merge_within(&file).unwrap();
        assert_eq!(merged, 1);
        assert_eq!(
            body,
            "- Run the linter\n  - Why: CI fails\n  - How to apply: before push\n- Other\n"
        );
    }

    #[test]
    fn whole_file_survivor_keeps_bullets_nested() {
        let file = MemoryFile::new("T", "d", MemoryType::Project, None, "Text.\n");
        let mut appends = BTreeMap::new();
        appends.insert(0, vec!["- Why: x".to_string(), "plain".to_string()]);
        let body = rebuild(&file, &appends, &BTreeSet::new()).unwrap();
        assert_eq!(body, "Text.\n  - Why: x\nplain\n");
    }

    fn lines_of(text: &str) -> BTreeSet<String> {
        text.lines()
            .map(|l| l.trim().to_lowercase())
            .filter(|l| !l.is_empty())
            .collect()
    }

    proptest! {
        /// Dream never loses a distinct line: every line of the body before a merge is in the
        /// body after it (trimmed, without case, since a duplicate's summary differs from its
        /// survivor's only in case).
        #[test]
        fn merging_never_loses_a_distinct_line(
            entries in proptest::collection::vec(
                (0usize..4, any::<bool>(), proptest::collection::vec(0usize..6, 0..4)),
                0..8,
            ),
            tail in any::<bool>(),
        ) {
            let summaries = ["Run the linter", "Use real DB", "Pin versions", "Ask first"];
            let reasons = ["Why: CI fails", "How to apply: before push", "Why: mocks lied",
                "How to apply: in tests", "note with `code`", "Why: 数据库"];
            let mut body = String::new();
            for (s, upper, subs) in &entries {
                let summary = if *upper { summaries[*s].to_uppercase() } else { summaries[*s].to_string() };
                body.push_str(&format!("- {summary}\n"));
                for r in subs {
                    body.push_str(&format!("  - {}\n", reasons[*r]));
                }
            }
            if tail {
                body.push_str("\nClosing paragraph.\n");
            }
            let file = legacy(&body);
            let before = lines_of(&body);
            let keys: BTreeSet<String> = file.entries().iter().map(|e| summary_key(&e.summary)).collect();
            match merge_within(&file) {
                None => prop_assert!(file.entries().len() < 2 || keys.len() == file.entries().len()),
                Some((after, merged)) => {
                    let after_lines = lines_of(&after);
                    for line in &before {
                        prop_assert!(after_lines.contains(line), "lost {line:?}\n{body}\n=>\n{after}");
                    }
                    let merged_file = legacy(&after);
                    prop_assert_eq!(merged_file.entries().len(), keys.len());
                    prop_assert_eq!(merged, file.entries().len() - keys.len());
                }
            }
        }
    }
}
