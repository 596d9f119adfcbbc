//! Unit tests of sync: skip reasons and outcome field names as in the design, and author
//! parsing.

use super::team_commit::parse_person;
use super::*;

#[test]
fn skip_reasons_serialize_as_in_the_design() {
    let all = [
        SkipReason::NotAGitRepo,
        SkipReason::DetachedHead,
        SkipReason::OperationInProgress,
        SkipReason::SparseCheckout,
        SkipReason::UnsafePath,
        SkipReason::Locked,
        SkipReason::NoUpstream,
        SkipReason::FetchFailed,
        SkipReason::Diverged,
        SkipReason::PullBlocked,
        SkipReason::LocalAhead,
        SkipReason::PushRejected,
        SkipReason::PushFailed,
        SkipReason::RemoteBusy,
        SkipReason::Proposed,
        SkipReason::NoRemote,
        SkipReason::TooLarge,
        SkipReason::Timeout,
        SkipReason::Error,
    ];
    for reason in all {
        assert_eq!(
            serde_json::to_string(&reason).unwrap(),
            format!("\"{}\"", reason.as_str())
        );
    }
}

#[test]
fn outcome_has_the_design_field_names() {
    let value = serde_json::to_value(SyncOutcome::default()).unwrap();
    let mut keys: Vec<_> = value.as_object().unwrap().keys().cloned().collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "commit",
            "committed",
            "duration_ms",
            "mode",
            "pulled",
            "pushed",
            "quarantined",
            "skipped_reason",
            "warnings"
        ]
    );
}

#[test]
fn authors() {
    let p = parse_person("Ada Lovelace <ada@example.com>").unwrap();
    assert_eq!(p.name, "Ada Lovelace");
    assert_eq!(p.email, "ada@example.com");
    assert!(parse_person("nobody").is_err());
    assert!(parse_person("<a@b>").is_err());
}
