//! What reading the hooks' machine-local state keeps, on any bytes, checked by the property
//! tests (`no_panic.rs`) and the `hook_state` fuzz target (which includes this file): a
//! session record, a usage book and the turn verdicts are read without a panic, what a hook
//! then does with them never panics, and a record or book that reads is written back and read
//! again the same.

use teammem::hook_state::{
    SessionRecord, TurnVerdicts, UsageBook, UseKind, Used, age_text, utc_text,
};

/// A "now" for the checks, and the clock's extremes.
const NOWS: [i64; 3] = [1_800_000_000, i64::MIN, i64::MAX];

/// `bytes` as a session's record file.
pub fn check_session_record(bytes: &[u8]) {
    let session = serde_json::from_slice::<serde_json::Value>(bytes)
        .ok()
        .and_then(|v| v["session"].as_str().map(String::from))
        .unwrap_or_else(|| "s".to_string());
    for now in NOWS {
        let Some(mut record) = SessionRecord::read(bytes, &session, now) else {
            continue;
        };
        let _ = record.has_body("team:a.md");
        record.add_body("team:a.md", "0123456789abcdef".into(), "A");
        record.updated = now;
        let written = serde_json::to_vec(&record).expect("a record encodes");
        assert_eq!(SessionRecord::read(&written, &session, now), Some(record));
    }
}

/// `bytes` as a scope's `usage.json`.
pub fn check_usage_book(bytes: &[u8]) {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return;
    };
    let Ok(mut book) = UsageBook::from_json(text) else {
        return;
    };
    let again = UsageBook::from_json(&book.to_json()).expect("a written book reads");
    assert_eq!(again, book);
    let paths: Vec<String> = book.memories.keys().cloned().collect();
    for path in paths {
        let usage = book.get(&path);
        let _ = Used::of(&usage);
        let times = [usage.last_usage, usage.last_read, usage.last_surfaced];
        for time in times.into_iter().flatten() {
            for now in NOWS {
                let _ = age_text(time, now);
            }
            let _ = utc_text(time);
        }
        for kind in [UseKind::Surfaced, UseKind::Read, UseKind::Cited] {
            book.record(&path, kind, NOWS[0]);
        }
    }
}

/// `bytes` as the turn verdicts file, raw and after a valid header.
pub fn check_turn_verdicts(bytes: &[u8]) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join("turn-verdicts");
    let mut headed = b"teammem-turn-verdicts 1\nr\n".to_vec();
    headed.extend_from_slice(bytes);
    for file in [bytes, &headed[..]] {
        std::fs::write(&path, file).expect("write the verdicts");
        let mut verdicts = TurnVerdicts::at(Some(path.clone()), "r".to_string());
        assert_eq!(verdicts.for_agent_by_default("Plain."), "Plain.");
        verdicts.save();
        let mut again = TurnVerdicts::at(Some(path.clone()), "r".to_string());
        assert_eq!(again.for_agent_by_default("Plain."), "Plain.");
    }
}
