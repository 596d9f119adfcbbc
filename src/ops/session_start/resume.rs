//! A resumed or forked session: its transcript still holds the context it was given (a fork
//! copies it: Claude Code's `--fork-session`, `codex exec fork`), so session start gives
//! nothing already there — at most one line naming the memories added, changed or
//! removed since that context (or since the last resume).

use std::collections::HashMap;

use crate::ops::context::Context;
use crate::ops::delivery::sessions::{Delivered, InTranscript, SessionRecord};

/// The most memories one line names; the rest are counted.
const MAX_NAMED: usize = 5;

/// What a resumed (or forked) session gets: `Some(None)` when its context is up to date,
/// `Some(Some(line))` for what changed, `None` when teammem cannot tell what its transcript
/// holds (no record of the session and no transcript holding a context): then the full context.
pub fn what_is_new(
    before: Option<&SessionRecord>,
    now: &Context,
    transcript: Option<&InTranscript>,
) -> Option<Option<String>> {
    match before {
        Some(record) => Some(changes_line(&record.indexed, &now.delivered)),
        // No record (a fork, a client that gives a resumed session a new id, or one forgotten
        // after its idle days): a transcript that holds teammem's context needs none again.
        None => transcript.is_some_and(|t| t.context).then_some(None),
    }
}

/// One line naming what differs between the index lines delivered before and now; `None`
/// when nothing does.
pub fn changes_line(before: &[Delivered], now: &[Delivered]) -> Option<String> {
    let old: HashMap<&str, &Delivered> = before.iter().map(|d| (d.id.as_str(), d)).collect();
    let new: HashMap<&str, &Delivered> = now.iter().map(|d| (d.id.as_str(), d)).collect();
    let mut added = Vec::new();
    let mut changed = Vec::new();
    for d in now {
        match old.get(d.id.as_str()) {
            None => added.push(d),
            Some(o) if o.hash != d.hash => changed.push(d),
            Some(_) => {}
        }
    }
    let removed: Vec<&Delivered> = before
        .iter()
        .filter(|d| !new.contains_key(d.id.as_str()))
        .collect();
    let total = added.len() + changed.len() + removed.len();
    if total == 0 {
        return None;
    }
    let mut named = 0;
    let mut parts = Vec::new();
    for (what, list) in [
        ("added", &added),
        ("changed", &changed),
        ("removed", &removed),
    ] {
        if list.is_empty() {
            continue;
        }
        let mut names = Vec::new();
        for d in list.iter() {
            if named < MAX_NAMED {
                names.push(format!("\"{}\" ({})", d.name, d.id));
                named += 1;
            }
        }
        let rest = list.len() - names.len();
        let part = match (names.is_empty(), rest) {
            (_, 0) => format!("{what} {}", names.join(", ")),
            (true, n) => format!("{what} {n} more"),
            (false, n) => format!("{what} {} and {n} more", names.join(", ")),
        };
        parts.push(part);
    }
    Some(format!(
        "Memory changed since this session's memory context was given: {} — `memory_read` (MCP) or `teammem show ID` shows one.",
        parts.join("; ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(id: &str, hash: &str) -> Delivered {
        Delivered {
            id: id.into(),
            hash: hash.into(),
            name: id.to_uppercase(),
        }
    }

    #[test]
    fn names_what_was_added_changed_and_removed() {
        let before = [
            d("team:a.md", "1"),
            d("team:b.md", "1"),
            d("team:c.md", "1"),
        ];
        let now = [
            d("team:a.md", "1"),
            d("team:b.md", "2"),
            d("team:new.md", "1"),
        ];
        assert_eq!(changes_line(&before, &before), None);
        let line = changes_line(&before, &now).unwrap();
        assert!(
            line.contains("added \"TEAM:NEW.MD\" (team:new.md)"),
            "{line}"
        );
        assert!(line.contains("changed \"TEAM:B.MD\" (team:b.md)"), "{line}");
        assert!(line.contains("removed \"TEAM:C.MD\" (team:c.md)"), "{line}");
        assert!(!line.contains("team:a.md"), "{line}");
        assert_eq!(line.lines().count(), 1);
    }

    #[test]
    fn many_changes_are_counted_not_listed() {
        let now: Vec<Delivered> = (0..9).map(|n| d(&format!("team:{n}.md"), "1")).collect();
        let line = changes_line(&[], &now).unwrap();
        assert!(line.contains("and 4 more"), "{line}");
        let gone = changes_line(&now, &now[..1]).unwrap();
        assert!(
            gone.contains("removed") && gone.contains("and 3 more"),
            "{gone}"
        );
    }
}
