use super::*;

use crate::git::git_cli as git;

fn paths(dir: &Path) -> RepoPaths {
    RepoPaths {
        workdir: dir.to_path_buf(),
        git_dir: dir.join(".git"),
    }
}

#[test]
fn only_reftable_and_sha256_repositories_need_git() {
    let tmp = tempfile::tempdir().unwrap();
    let plain = tmp.path().join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    git(&plain, &["init", "-q"]);
    assert!(CliRepo::needing_git(&paths(&plain)).is_none());

    let sha256 = tmp.path().join("sha256");
    std::fs::create_dir_all(&sha256).unwrap();
    git(&sha256, &["init", "-q", "--object-format=sha256"]);
    let cli = CliRepo::needing_git(&paths(&sha256)).unwrap();
    assert_eq!(cli.zero_id().len(), 64);
    assert!(cli.why.contains("SHA-256"), "{}", cli.why);

    let reftable = tmp.path().join("reftable");
    std::fs::create_dir_all(&reftable).unwrap();
    let made = std::process::Command::new("git")
        .current_dir(&reftable)
        .args(["init", "-q", "--ref-format=reftable"])
        .status()
        .unwrap();
    if made.success() {
        git(&reftable, &["config", "filter.planted.smudge", "false"]);
        let cli = CliRepo::needing_git(&paths(&reftable)).unwrap();
        assert_eq!(cli.zero_id().len(), 40);
        assert!(cli.why.contains("reftable"), "{}", cli.why);
        assert_eq!(cli.planted_filters, ["planted"]);
        let args: Vec<String> = cli
            .command()
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert!(
            args.contains(&"filter.planted.smudge=".to_string()),
            "{args:?}"
        );
    }
}

#[test]
fn index_info_removes_with_the_object_format_s_zero_id() {
    let cli = CliRepo {
        paths: paths(Path::new("/nowhere")),
        common_dir: PathBuf::from("/nowhere/.git"),
        why: String::new(),
        hex_len: 64,
        planted_filters: Vec::new(),
    };
    let mut updates = BTreeMap::new();
    updates.insert("a.md".to_string(), None);
    let id = "1".repeat(64);
    updates.insert(
        "b.md".to_string(),
        Some(TreeEntry {
            mode: "100644".into(),
            id: id.clone(),
        }),
    );
    assert_eq!(
        cli.index_info(&updates),
        format!("0 {}\ta.md\0100644 {id}\tb.md\0", "0".repeat(64))
    );
}
