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

#[test]
fn a_batch_changes_nothing_until_finished_and_leaves_no_temp_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let old = tmp.path().join("old.md");
    fs::write(&old, "old\n").unwrap();
    let new = tmp.path().join("sub/new.md");
    let mut batch = Batch::new();
    batch.write(&old, b"replaced\n").unwrap();
    batch.write(&new, b"new\n").unwrap();
    assert_eq!(fs::read_to_string(&old).unwrap(), "old\n");
    assert!(!new.exists());
    batch.finish().unwrap();
    assert_eq!(fs::read_to_string(&old).unwrap(), "replaced\n");
    assert_eq!(fs::read_to_string(&new).unwrap(), "new\n");

    let mut dropped = Batch::new();
    dropped.write(&old, b"never\n").unwrap();
    drop(dropped);
    assert_eq!(fs::read_to_string(&old).unwrap(), "replaced\n");
    let names: Vec<String> = fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
}
