//! `.qwen-example/` is a real, valid team memory: its memories validate, its settings switch
//! team memory on for Qwen Code and teammem, keep Qwen Code's own (ungated) sync off, and give
//! the hook a timeout in seconds, and its MEMORY.md is exactly what `teammem index` (and so
//! Qwen Code) generates.

use crate::common;

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
        teammem::scope::Environment {
            base_dir: Some(sb.base()),
            ..Default::default()
        },
    )
    .unwrap();
    let switches = project.switches;
    assert!(switches.team && switches.sync && switches.qwen_team && !switches.qwen_sync);

    // Qwen Code 0.24 reads hook timeouts in seconds (1000 or more keeps the old milliseconds).
    let settings: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(example.join("settings.json")).unwrap()).unwrap();
    let hook = &settings["hooks"]["SessionStart"][0]["hooks"][0];
    assert_eq!(hook["command"], "teammem session-start --hook qwen");
    let timeout = hook["timeout"].as_u64().unwrap();
    assert!(
        (16..1000).contains(&timeout),
        "timeout {timeout}: seconds, above sync's 15 s budget"
    );
}
