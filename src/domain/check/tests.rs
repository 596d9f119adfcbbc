//! Unit tests of the file checks: a good memory is clean; layout, paths, size and validation;
//! a configuration that changes severities and the allow-list, and can only tighten; a stale index.

use super::*;

fn run(rel: &str, kind: EntryKind, text: &str) -> Vec<&'static str> {
    let config = CheckConfig::default();
    let mut out = Findings::new(&config);
    check_file(&mut out, rel, kind, text.as_bytes(), &[], Depth::Full, None);
    out.list.iter().map(|f| f.rule).collect()
}

const GOOD: &str = "---\nname: Real DB\ndescription: Tests hit a real Postgres\ntype: feedback\n---\nAlways run the tests.\n";

#[test]
fn a_good_memory_is_clean() {
    assert!(run("feedback/real-db.md", EntryKind::File, GOOD).is_empty());
}

#[test]
fn layout_and_paths() {
    assert_eq!(
        run("feedback/real-db.md", EntryKind::Symlink, "../../x"),
        [PATH_SYMLINK]
    );
    assert_eq!(run("tool.sh", EntryKind::File, "echo"), [PATH_NOT_MARKDOWN]);
    assert_eq!(
        run("notes/real-db.md", EntryKind::File, GOOD),
        [PATH_LAYOUT]
    );
    assert_eq!(
        run("feedback/Real DB.md", EntryKind::File, GOOD),
        [MEMORY_FILE_NAME]
    );
    assert!(run(CONFIG_FILE, EntryKind::File, "{}").is_empty());
}

#[test]
fn size_and_validation() {
    let big = format!("{GOOD}{}", "x".repeat(memory::MAX_FILE_BYTES));
    assert_eq!(
        run("feedback/real-db.md", EntryKind::File, &big),
        [SIZE_LIMIT]
    );
    assert_eq!(
        run("feedback/real-db.md", EntryKind::File, "no frontmatter"),
        [MEMORY_INVALID]
    );
}

#[test]
fn config_changes_severity_and_allow_list() {
    let config = CheckConfig::from_json(
        r#"{"severity": {"trust-external-link": "error", "path-layout": "off"}, "allowed_hosts": ["*.corp.example"]}"#,
    )
    .unwrap();
    let mut out = Findings::new(&config);
    let text = format!("{GOOD}See https://wiki.corp.example/x and https://other.example/\n");
    check_file(
        &mut out,
        "notes/a.md",
        EntryKind::File,
        text.as_bytes(),
        &[],
        Depth::Full,
        None,
    );
    let got: Vec<_> = out.list.iter().map(|f| (f.rule, f.severity)).collect();
    assert_eq!(got, [(trust::EXTERNAL_LINK, Severity::Error)]);
    assert!(CheckConfig::from_json(r#"{"severity": {"nope": "error"}}"#).is_err());
    assert!(CheckConfig::from_json(r#"{"colour": 1}"#).is_err());
}

#[test]
fn a_repository_config_can_only_tighten() {
    let repo = CheckConfig::from_json(
        r#"{"severity": {"secret": "off", "trust-role-marker": "warning", "trust-external-link": "error", "path-layout": "off"}, "allowed_hosts": ["github.com", "evil.example"], "max_file_bytes": 1000}"#,
    )
    .unwrap();
    let (config, notes) = CheckConfig::layered(None, Some(&repo));
    assert_eq!(config.severity(SECRET), Some(Severity::Error));
    assert_eq!(config.severity(trust::ROLE_MARKER), Some(Severity::Error));
    assert_eq!(config.severity(trust::EXTERNAL_LINK), Some(Severity::Error));
    assert_eq!(config.severity(PATH_LAYOUT), Some(Severity::Warning));
    assert_eq!(config.allowed_hosts(), ["github.com"]);
    assert_eq!(config.max_file_bytes(), 1000);
    assert_eq!(notes.len(), 4, "{notes:?}");
    assert!(
        notes.iter().any(|n| n.contains("evil.example")),
        "{notes:?}"
    );

    // The user's own file loosens, except for secrets; the repository still tightens on top.
    let user = CheckConfig::from_json(
        r#"{"severity": {"secret": "off", "trust-role-marker": "off"}, "allowed_hosts": ["*.corp.example"]}"#,
    )
    .unwrap();
    let (config, _) = CheckConfig::layered(Some(&user), None);
    assert_eq!(config.severity(SECRET), Some(Severity::Error));
    assert_eq!(config.severity(trust::ROLE_MARKER), None);
    assert_eq!(config.allowed_hosts(), ["*.corp.example"]);
    let (config, _) = CheckConfig::layered(Some(&user), Some(&repo));
    assert_eq!(config.severity(trust::ROLE_MARKER), Some(Severity::Warning));
    assert!(config.allowed_hosts().is_empty());
}

#[test]
fn index_staleness() {
    let config = CheckConfig::default();
    let memories = [("feedback/real-db.md", GOOD.as_bytes())];
    let policy = Gate::default();
    let good = expected_index(&memories, &policy);
    let mut out = Findings::new(&config);
    check_index(&mut out, &memories, Some(good.as_bytes()), None, &policy);
    assert!(out.list.is_empty());
    check_index(&mut out, &memories, Some(b"- stale\n"), None, &policy);
    check_index(&mut out, &memories, None, None, &policy);
    assert_eq!(out.list.len(), 2);
    assert_eq!(out.list[0].rule, INDEX_STALE);
}
