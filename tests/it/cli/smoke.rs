//! The first commands end to end on a real repository.

use crate::common;

use common::Sandbox;

#[test]
fn init_add_list_show_index_on_a_real_repo() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    sb.teammem(&repo, ["init", "--current-branch"])
        .expect_code(0);
    assert!(repo.join(".qwen/team-memory/MEMORY.md").is_file());

    sb.teammem(
        &repo,
        [
            "add",
            "--scope",
            "team",
            "--type",
            "feedback",
            "--name",
            "Use the real database",
            "--description",
            "Integration tests hit a real Postgres",
            "--body",
            "Why: mocks lied.",
        ],
    )
    .expect_code(0);
    let index = std::fs::read_to_string(repo.join(".qwen/team-memory/MEMORY.md")).unwrap();
    assert_eq!(
        index,
        "- [Use the real database](feedback/use-the-real-database.md) — Integration tests hit a real Postgres"
    );

    let list = sb.teammem(&repo, ["list", "--scope", "team"]);
    list.expect_code(0);
    assert!(
        list.stdout.contains("feedback/use-the-real-database.md"),
        "{}",
        list.stdout
    );

    let show = sb.teammem(&repo, ["show", "feedback/use-the-real-database.md"]);
    show.expect_code(0);
    assert!(
        show.stdout.contains("Why: mocks lied.\n"),
        "{}",
        show.stdout
    );

    let dup = sb.teammem(
        &repo,
        [
            "add",
            "--scope",
            "team",
            "--type",
            "project",
            "--name",
            "use the REAL database",
            "--description",
            "x",
            "--body",
            "",
        ],
    );
    dup.expect_code(1);
    assert!(
        dup.stderr.contains("feedback/use-the-real-database.md"),
        "{}",
        dup.stderr
    );

    sb.teammem(&repo, ["index", "--scope", "team", "--check"])
        .expect_code(0);
    std::fs::write(repo.join(".qwen/team-memory/MEMORY.md"), "stale\n").unwrap();
    let check = sb.teammem(&repo, ["index", "--scope", "team", "--check"]);
    check.expect_code(1);
    assert!(check.stdout.contains("-stale"), "{}", check.stdout);
}
