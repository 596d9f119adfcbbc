//! `.qwen-example/` is a real, valid team memory: its memories validate, its settings switch
//! team memory and sync on, and its MEMORY.md is exactly what `teammem index` generates.

mod common;

use std::fs;
use std::path::Path;

use common::Sandbox;

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).unwrap();
        }
    }
}

#[test]
fn the_example_is_valid_and_its_index_is_generated() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join(".qwen-example");
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    copy_dir(&example, &repo.join(".qwen"));

    let run = sb.teammem(&repo, ["validate", ".qwen/team-memory"]);
    run.expect_code(0);
    assert_eq!(run.stdout, "7 file(s) checked, 0 problem(s)\n");

    // Byte-identical: --check finds nothing stale, and a rebuild writes nothing.
    let run = sb.teammem(&repo, ["index", "--scope", "team", "--check"]);
    assert_eq!(
        run.code, 0,
        "the example's MEMORY.md is stale:\n{}",
        run.stdout
    );
    sb.teammem(&repo, ["index", "--scope", "team"])
        .expect_code(0);
    assert_eq!(
        fs::read(repo.join(".qwen/team-memory/MEMORY.md")).unwrap(),
        fs::read(example.join("team-memory/MEMORY.md")).unwrap()
    );

    // Every type is shown, and the settings switch team memory on.
    let run = sb.teammem(&repo, ["list", "--json"]);
    run.expect_code(0);
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let mut types: Vec<&str> = json["memories"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["scope"] == "team")
        .map(|m| m["type"].as_str().unwrap())
        .collect();
    types.dedup();
    assert_eq!(types, ["feedback", "project", "reference", "user"]);
    let project = teammem::ops::Project::open_with(
        &repo,
        teammem::domain::scope::Environment {
            base_dir: Some(sb.base()),
            ..Default::default()
        },
    )
    .unwrap();
    assert!(project.switches.team && project.switches.sync);
}
