//! How often and how lately each memory was used, kept in machine-local state (`usage.json`
//! beside a scope's memory folder), never in the memory files themselves: citing a team memory
//! must not change what the team shares. Three doors count apart: a memory *surfaced* (put in
//! front of the model unasked, by `teammem prompt-context`), *read* (found by MCP
//! `memory_search` or opened by `memory_read`, which the agent asked for) and *cited* (`teammem
//! cite`, told that it was used).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Seconds in a day.
pub const DAY_SECS: i64 = 86_400;

/// One memory's usage.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// How many times it was cited.
    pub usage_count: u64,
    /// When it was last cited, seconds since the Unix epoch.
    pub last_usage: Option<i64>,
    /// How many times it was read or found by an agent (MCP `memory_read`, `memory_search`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub read_count: u64,
    /// When it was last read or found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_read: Option<i64>,
    /// How many times it was surfaced to a model unasked (`teammem prompt-context`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub surfaced_count: u64,
    /// When it was last surfaced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_surfaced: Option<i64>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Through which door a memory was used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UseKind {
    /// Put in front of the model unasked.
    Surfaced,
    /// Found or opened by an agent.
    Read,
    /// Cited as used.
    Cited,
}

impl Usage {
    /// When it was last read or cited: what says the memory is still in use (a memory only
    /// surfaced may never have helped anyone).
    pub fn last_used(&self) -> Option<i64> {
        self.last_usage.max(self.last_read)
    }
}

/// What recall's tie-break knows of a memory's use: the day it was last read or cited, then
/// how many times it was (a memory only surfaced counts as unused). Greater is preferred.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Used {
    /// The day (whole days since the Unix epoch) it was last read or cited.
    pub day: Option<i64>,
    /// How many times it was read or cited.
    pub times: u64,
}

impl Used {
    /// The tie-break's view of `usage`.
    pub fn of(usage: &Usage) -> Used {
        Used {
            day: usage.last_used().map(|t| t.div_euclid(DAY_SECS)),
            times: usage.usage_count.saturating_add(usage.read_count),
        }
    }
}

/// A scope's usage records, by memory path (relative to the scope folder).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsageBook {
    /// Format version.
    #[serde(default = "version_one")]
    pub version: u32,
    /// Records by path.
    #[serde(default)]
    pub memories: BTreeMap<String, Usage>,
}

fn version_one() -> u32 {
    1
}

impl UsageBook {
    /// Reads the JSON text of `usage.json`; an unreadable file starts a fresh book (the error is
    /// returned for a warning).
    pub fn from_json(text: &str) -> Result<UsageBook, String> {
        serde_json::from_str(text).map_err(|e| e.to_string())
    }

    /// The JSON text to write.
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_else(|_| "{}".into());
        text.push('\n');
        text
    }

    /// Records one citation of `path` at `now`.
    pub fn cite(&mut self, path: &str, now: i64) -> Usage {
        self.record(path, UseKind::Cited, now)
    }

    /// Records one use of `path` through `kind`'s door at `now`.
    pub fn record(&mut self, path: &str, kind: UseKind, now: i64) -> Usage {
        let usage = self.memories.entry(path.to_string()).or_default();
        let (count, last) = match kind {
            UseKind::Cited => (&mut usage.usage_count, &mut usage.last_usage),
            UseKind::Read => (&mut usage.read_count, &mut usage.last_read),
            UseKind::Surfaced => (&mut usage.surfaced_count, &mut usage.last_surfaced),
        };
        *count = count.saturating_add(1);
        *last = Some(now);
        *usage
    }

    /// The usage of `path` (zero when never cited).
    pub fn get(&self, path: &str) -> Usage {
        self.memories.get(path).copied().unwrap_or_default()
    }
}

/// Whole days between `then` and `now` (0 for anything in the future). Saturating: a time
/// read back from a torn or hand-edited `usage.json` must not overflow.
pub fn days_between(then: i64, now: i64) -> i64 {
    now.saturating_sub(then).max(0) / DAY_SECS
}

/// "today", "1 day old", "N days old".
pub fn age_text(then: i64, now: i64) -> String {
    match days_between(then, now) {
        0 => "today".into(),
        1 => "1 day old".into(),
        n => format!("{n} days old"),
    }
}

/// `YYYY-MM-DDTHH:MM:SSZ` for a Unix time.
pub fn utc_text(secs: i64) -> String {
    let rest = secs.rem_euclid(DAY_SECS);
    format!(
        "{}T{:02}:{:02}:{:02}Z",
        utc_date(secs),
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// `YYYY-MM-DD` of a Unix time, in UTC (proleptic Gregorian calendar).
pub fn utc_date(secs: i64) -> String {
    let days = secs.div_euclid(DAY_SECS);
    // Howard Hinnant's days-to-civil algorithm.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// The current time, seconds since the Unix epoch.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(utc_text(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc_text(1_709_210_096), "2024-02-29T12:34:56Z");
        assert_eq!(utc_date(0), "1970-01-01");
        assert_eq!(utc_date(951_782_400), "2000-02-29");
        assert_eq!(utc_date(1_795_998_780), "2026-11-30");
        assert_eq!(utc_date(-1), "1969-12-31");
        assert_eq!(age_text(0, DAY_SECS * 2 - 1), "1 day old");
        assert_eq!(age_text(10, 5), "today");
    }

    #[test]
    fn citing_counts() {
        let mut book = UsageBook::default();
        book.cite("a.md", 5);
        let u = book.cite("a.md", 9);
        assert_eq!(
            u,
            Usage {
                usage_count: 2,
                last_usage: Some(9),
                ..Usage::default()
            }
        );
        book.record("a.md", UseKind::Surfaced, 10);
        let u = book.record("a.md", UseKind::Read, 11);
        assert_eq!((u.surfaced_count, u.read_count, u.usage_count), (1, 1, 2));
        assert_eq!(u.last_used(), Some(11));
        // An old file without the new counts still reads.
        let old = UsageBook::from_json(
            r#"{"version":1,"memories":{"b.md":{"usage_count":3,"last_usage":4}}}"#,
        )
        .unwrap();
        assert_eq!(old.get("b.md").usage_count, 3);
        let back = UsageBook::from_json(&book.to_json()).unwrap();
        assert_eq!(back, book);
    }
}
