//! Unit tests of the store: an unchanged index is not rewritten.

use super::*;

#[test]
fn unchanged_index_is_not_rewritten() {
    let dir = tempfile::tempdir().unwrap();
    assert!(write_index(dir.path(), "- a\n").unwrap());
    assert!(!write_index(dir.path(), "- a\n").unwrap());
    assert!(write_index(dir.path(), "- b\n").unwrap());
    assert_eq!(
        fs::read_to_string(dir.path().join(INDEX_FILE)).unwrap(),
        "- b\n"
    );
}
