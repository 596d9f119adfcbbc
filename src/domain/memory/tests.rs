//! Unit tests of memory files: the paths Qwen Code scans, byte-exact round trips, CRLF, slugs and
//! legacy bullet entries.

use super::*;

// Each case one of the four old copies (store, check, replay, quarantine) decided
// differently; all now follow Qwen Code's scan.
#[test]
fn memory_paths_are_what_qwen_code_scans() {
    assert!(is_memory_path("feedback/use-real-db.md"));
    assert!(is_memory_path("top-level.md"));
    // Hidden files and folders: Qwen Code reads them (check and replay used to skip them).
    assert!(is_memory_path(".hidden.md"));
    assert!(is_memory_path("feedback/.draft.md"));
    assert!(is_memory_path(".drafts/feedback/x.md"));
    // MEMORY.md is an index at any depth (check, replay and quarantine only knew the top one).
    assert!(!is_memory_path("MEMORY.md"));
    assert!(!is_memory_path("feedback/MEMORY.md"));
    assert!(is_memory_path("feedback/NOT-MEMORY.md"));
    // Git's own folder is no memory (only the store knew).
    assert!(!is_memory_path(".git/notes.md"));
    assert!(!is_memory_path("sub/.git/x.md"));
    assert!(is_memory_path(".github/x.md"));
    // Not markdown.
    assert!(!is_memory_path("feedback/x.txt"));
    assert!(!is_memory_path("feedback/x.md.bak"));
    assert!(!is_memory_path(".teammem.toml"));
}

const GOOD: &str = "---\nname: Use the real database\ndescription: Tests hit a real Postgres\ntype: feedback\nkeywords: [postgres, tests]\nowner: data-team\n---\nBody line.\n\nWhy: mocks lied.\n";

#[test]
fn parses_and_round_trips_bytes() {
    let m = MemoryFile::parse("feedback/x.md", GOOD.as_bytes()).unwrap();
    assert_eq!(m.name, "Use the real database");
    assert_eq!(m.kind, MemoryType::Feedback);
    assert_eq!(
        m.keywords.as_deref(),
        Some(&["postgres".to_string(), "tests".to_string()][..])
    );
    assert_eq!(m.body, "Body line.\n\nWhy: mocks lied.\n");
    assert_eq!(
        m.render(),
        "---\nname: Use the real database\ndescription: Tests hit a real Postgres\ntype: feedback\nkeywords: [postgres, tests]\nowner: data-team\n---\nBody line.\n\nWhy: mocks lied.\n"
    );
}

#[test]
fn crlf_reads_like_lf() {
    let crlf = GOOD.replace('\n', "\r\n");
    let m = MemoryFile::parse("x.md", crlf.as_bytes()).unwrap();
    assert_eq!(m.name, "Use the real database");
    assert!(m.render().starts_with("---\r\nname:"));
}

#[test]
fn slugs() {
    assert!(lint_file_name("feedback/use-real-db.md").is_none());
    assert!(lint_file_name("feedback/use-real-db.conflict-abc1234.md").is_none());
    assert!(check_file_name("feedback/Use Real DB.md").is_none());
    assert!(check_file_name("feedback/notes.txt").is_some());
    let bad = lint_file_name("feedback/Use Real DB.md").unwrap();
    assert!(bad.fix.contains("use-real-db.md"), "{bad}");
    assert_eq!(slugify("Use the REAL database!"), "use-the-real-database");
    assert!(slugify("使用真实数据库").starts_with("memory-"));
}

#[test]
fn legacy_bullets_are_entries() {
    let text = "---\nname: Feedback\ndescription: d\ntype: feedback\n---\n- First thing\n  - Why: a\n- Second thing\n  - How to apply: b\n";
    let m = MemoryFile::parse("feedback.md", text.as_bytes()).unwrap();
    let entries = m.entries();
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0].summary, "First thing");
    assert_eq!(entries[1].text, "- Second thing\n  - How to apply: b\n");
    assert_eq!(entries[1].index, Some(2));
}
