//! Kept conflict copies. When a teammate and you changed one memory differently, sync keeps
//! theirs at the memory's path and yours beside it as `<slug>.md.conflict-<sha>.md`, until
//! `teammem resolve` makes one memory (or two) of them.
//!
//! The copy's name starts with the whole original name, so it sorts right after the original
//! wherever paths are sorted byte by byte (MEMORY.md, `teammem list`, Qwen Code's team index):
//! the index shows the memory first and its other version second. Copies made before this
//! name, `<slug>.conflict-<sha>.md`, are recognised too.

/// What sits between the original name and the commit id in a copy's name.
pub const MARK: &str = ".conflict-";

/// The path of the copy that keeps a version of `path` made in commit `short`:
/// `feedback/use-postgres.md` becomes `feedback/use-postgres.md.conflict-abc1234.md`.
///
/// A conflict copy is never itself copied into a copy of a copy: a version of
/// `a.md.conflict-abc1234.md` is kept as `a.md.conflict-<short>.md`, beside the original
/// memory (unless that is the very name, which keeps the old form so no version is lost).
pub fn copy_path(path: &str, short: &str) -> String {
    if let Some(copy) = parse_copy(path) {
        let beside = plain_copy_path(&copy.original, short);
        if beside != path {
            return beside;
        }
    }
    plain_copy_path(path, short)
}

/// The copy's name with `path`'s whole name kept, even for a conflict copy: for the rare case
/// where [`copy_path`]'s name is already taken.
pub fn plain_copy_path(path: &str, short: &str) -> String {
    if path.ends_with(".md") {
        format!("{path}{MARK}{short}.md")
    } else {
        format!("{path}{MARK}{short}")
    }
}

/// A conflict copy's parts, read from its path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopyName {
    /// The path of the memory it is a version of.
    pub original: String,
    /// The commit id (abbreviated) the name carries.
    pub commit: String,
}

/// The original and commit of a conflict copy's path; `None` for any other path.
pub fn parse_copy(path: &str) -> Option<CopyName> {
    let (folder, file) = match path.rsplit_once('/') {
        Some((folder, file)) => (Some(folder), file),
        None => (None, path),
    };
    let stem = file.strip_suffix(".md")?;
    let (before, commit) = stem.rsplit_once(MARK)?;
    let hex = commit
        .bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    if !(7..=40).contains(&commit.len()) || !hex || before.is_empty() {
        return None;
    }
    // `<slug>.md.conflict-<sha>.md` today; `<slug>.conflict-<sha>.md` from older syncs.
    let original_file = if before.ends_with(".md") {
        before.to_string()
    } else {
        format!("{before}.md")
    };
    let original = match folder {
        Some(folder) => format!("{folder}/{original_file}"),
        None => original_file,
    };
    Some(CopyName {
        original,
        commit: commit.to_string(),
    })
}

/// Whether `path` is a kept conflict copy (the tests' check of [`parse_copy`]).
#[cfg(test)]
pub fn is_copy(path: &str) -> bool {
    parse_copy(path).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_of_a_copy_sits_beside_the_original() {
        let copy = copy_path("project/a.md.conflict-abc1234.md", "def5678");
        assert_eq!(copy, "project/a.md.conflict-def5678.md");
        let same = copy_path("project/a.md.conflict-abc1234.md", "abc1234");
        assert_ne!(same, "project/a.md.conflict-abc1234.md");
    }

    #[test]
    fn a_copy_names_its_original_and_sorts_right_after_it() {
        let copy = copy_path("feedback/use-postgres.md", "abc1234");
        assert_eq!(copy, "feedback/use-postgres.md.conflict-abc1234.md");
        assert_eq!(
            parse_copy(&copy),
            Some(CopyName {
                original: "feedback/use-postgres.md".into(),
                commit: "abc1234".into()
            })
        );
        let mut paths = vec![
            copy.as_str(),
            "feedback/use-postgres0.md",
            "feedback/use-postgres.md",
            "feedback/use-postgres-more.md",
        ];
        paths.sort();
        assert_eq!(
            paths,
            [
                "feedback/use-postgres-more.md",
                "feedback/use-postgres.md",
                "feedback/use-postgres.md.conflict-abc1234.md",
                "feedback/use-postgres0.md",
            ]
        );
    }

    #[test]
    fn older_copy_names_are_recognised_and_other_names_are_not() {
        assert_eq!(
            parse_copy("project/deploys.conflict-0123abc.md").map(|c| c.original),
            Some("project/deploys.md".into())
        );
        for not_a_copy in [
            "project/deploys.md",
            "project/deploys.conflict-xyz1234.md",
            "project/deploys.conflict-abc.md",
            "project/.conflict-abc1234.md",
            "project/deploys.md.conflict-ABC1234.md",
        ] {
            assert!(!is_copy(not_a_copy), "{not_a_copy}");
        }
    }
}
