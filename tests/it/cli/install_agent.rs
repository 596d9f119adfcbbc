//! `teammem install-agent --client claude|codex|qwen`: each client's own files get the two
//! session hooks and the MCP server; what the user had there stays byte for byte; a second
//! run changes nothing; `--dry-run` writes nothing; the remaining manual step is printed.

use std::fs;
use std::path::Path;

use serde_json::{Value, json};

use crate::common::syncrun;
use crate::common::{Sandbox, write};

fn json_of(path: &Path) -> Value {
    serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap()
}

/// Every file under `dir`, with its bytes, for comparing a folder before and after.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = fs::read_dir(&d) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.file_name().is_some_and(|n| n == ".git") {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push((path.display().to_string(), fs::read(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn each_client_gets_both_hooks_and_the_server_and_a_second_run_changes_nothing() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    let codex_home = sb.path().join("codex-home");
    let env = [("CODEX_HOME", codex_home.to_str().unwrap())];
    let run = |args: &[&str]| syncrun::teammem_env(&sb, &repo, args, &env);

    let claude = run(&["install-agent", "--client", "claude"]);
    claude.expect_code(0);
    assert!(
        claude.stdout.contains(&format!(
            "{}: created with the teammem MCP server.",
            repo.join(".mcp.json").display()
        )),
        "{}",
        claude.stdout
    );
    assert!(
        claude.stdout.contains("Next: start `claude` in ")
            && claude
                .stdout
                .contains("approve the project's MCP server \"teammem\""),
        "{}",
        claude.stdout
    );
    let settings = json_of(&repo.join(".claude/settings.json"));
    assert_eq!(
        settings["hooks"]["SessionStart"],
        json!([{"hooks": [{"type": "command", "command": "teammem session-start --hook claude", "timeout": 30}]}])
    );
    assert_eq!(
        settings["hooks"]["UserPromptSubmit"],
        json!([{"hooks": [{"type": "command", "command": "teammem prompt-context --hook claude", "timeout": 10}]}])
    );
    assert_eq!(
        json_of(&repo.join(".mcp.json"))["mcpServers"]["teammem"],
        json!({"type": "stdio", "command": "teammem", "args": ["mcp"]})
    );

    let qwen = run(&["install-agent", "--client", "qwen"]);
    qwen.expect_code(0);
    assert!(
        qwen.stdout.contains(&format!(
            "Next: run `qwen mcp approve teammem` in {}.",
            repo.display()
        )),
        "{}",
        qwen.stdout
    );
    let qwen_settings = json_of(&repo.join(".qwen/settings.json"));
    assert_eq!(
        qwen_settings["hooks"]["SessionStart"][0]["hooks"][0],
        json!({"type": "command", "command": "teammem session-start --hook qwen"})
    );
    assert_eq!(
        qwen_settings["mcpServers"]["teammem"],
        json!({"command": "teammem", "args": ["mcp"]})
    );

    let codex = run(&["install-agent", "--client", "codex"]);
    codex.expect_code(0);
    assert!(
        codex
            .stdout
            .contains("Next: start `codex`, open `/hooks` and trust the two teammem hooks"),
        "{}",
        codex.stdout
    );
    let hooks = json_of(&codex_home.join("hooks.json"));
    assert_eq!(
        hooks["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"],
        json!("teammem prompt-context --hook codex")
    );
    let config = fs::read_to_string(codex_home.join("config.toml")).unwrap();
    assert_eq!(
        config,
        "[mcp_servers.teammem]\ncommand = \"teammem\"\nargs = [\"mcp\"]\n"
    );

    // Run twice: nothing changes, and each file says so.
    let repo_before = snapshot(&repo);
    let codex_before = snapshot(&codex_home);
    for client in ["claude", "qwen", "codex"] {
        let again = run(&["install-agent", "--client", client]);
        again.expect_code(0);
        assert!(!again.stdout.contains("created"), "{}", again.stdout);
        assert!(!again.stdout.contains("updated"), "{}", again.stdout);
        assert!(
            again.stdout.contains("nothing to do"),
            "{client}: {}",
            again.stdout
        );
    }
    assert_eq!(snapshot(&repo), repo_before);
    assert_eq!(snapshot(&codex_home), codex_before);
}

#[test]
fn existing_files_keep_their_comments_keys_and_other_hooks_byte_for_byte() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    let settings = repo.join(".claude/settings.json");
    let user_part = "{\n  // the team's Claude settings\n  \"model\": \"opus\",\n  \"permissions\": {\"allow\": [\"Bash(cargo test:*)\"]},\n  \"hooks\": {\n    \"PreToolUse\": [{\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"./lint.sh\"}]}],\n    \"SessionStart\": [\n      {\"matcher\": \"startup\", \"hooks\": [{\"type\": \"command\", \"command\": \"echo welcome\"}]}\n    ]\n  }\n}\n";
    write(&settings, user_part);
    let mcp = repo.join(".mcp.json");
    write(
        &mcp,
        "{\n  \"mcpServers\": {\n    \"docs\": {\"command\": \"docs-mcp\", \"args\": []}\n  }\n}\n",
    );
    let qwen = repo.join(".qwen/settings.json");
    write(
        &qwen,
        "{\n  // memory switches\n  \"memory\": {\"enableTeamMemory\": true},\n  \"hooks\": {\"SessionStart\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"/usr/local/bin/teammem session-start --hook qwen\", \"timeout\": 20000}]}]}\n}\n",
    );
    let codex_home = sb.path().join("codex-home");
    write(
        &codex_home.join("config.toml"),
        "# my Codex\nmodel = \"o3\"  # the fast one\n\n[mcp_servers.docs]\ncommand = \"docs-mcp\"\n",
    );
    write(
        &codex_home.join("hooks.json"),
        "{\"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"notify-send done\"}]}]}}\n",
    );
    let env = [("CODEX_HOME", codex_home.to_str().unwrap())];
    let run = |args: &[&str]| syncrun::teammem_env(&sb, &repo, args, &env);
    for client in ["claude", "qwen", "codex"] {
        run(&["install-agent", "--client", client]).expect_code(0);
    }

    // Claude Code: the user's lines are all still there, unchanged, and teammem's group
    // follows the user's own SessionStart group.
    let after = fs::read_to_string(&settings).unwrap();
    for line in [
        "  // the team's Claude settings\n",
        "  \"model\": \"opus\",\n",
        "  \"permissions\": {\"allow\": [\"Bash(cargo test:*)\"]},\n",
        "    \"PreToolUse\": [{\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"./lint.sh\"}]}],\n",
        "      {\"matcher\": \"startup\", \"hooks\": [{\"type\": \"command\", \"command\": \"echo welcome\"}]}",
    ] {
        assert!(after.contains(line), "lost {line:?}:\n{after}");
    }
    let value: Value =
        serde_json::from_str(&after.replace("  // the team's Claude settings\n", "")).unwrap();
    assert_eq!(
        value["hooks"]["SessionStart"][0]["hooks"][0]["command"],
        json!("echo welcome")
    );
    assert_eq!(
        value["hooks"]["SessionStart"][1]["hooks"][0]["command"],
        json!("teammem session-start --hook claude")
    );
    let mcp_after = json_of(&mcp);
    assert_eq!(
        mcp_after["mcpServers"]["docs"],
        json!({"command": "docs-mcp", "args": []})
    );

    // Qwen Code: the old teammem hook is corrected in place (its timeout kept), not doubled.
    let qwen_after = fs::read_to_string(&qwen).unwrap();
    assert!(
        qwen_after.contains("  // memory switches\n  \"memory\": {\"enableTeamMemory\": true},\n"),
        "{qwen_after}"
    );
    assert!(
        qwen_after.contains("{\"type\": \"command\", \"command\": \"teammem session-start --hook qwen\", \"timeout\": 20000}"),
        "{qwen_after}"
    );
    assert_eq!(
        qwen_after.matches("session-start").count(),
        1,
        "{qwen_after}"
    );

    // Codex: the comments, the other server and the Stop hook stay.
    let config = fs::read_to_string(codex_home.join("config.toml")).unwrap();
    assert!(
        config.starts_with("# my Codex\nmodel = \"o3\"  # the fast one\n\n[mcp_servers.docs]\ncommand = \"docs-mcp\"\n"),
        "{config}"
    );
    assert!(config.contains("[mcp_servers.teammem]"), "{config}");
    let hooks = json_of(&codex_home.join("hooks.json"));
    assert_eq!(
        hooks["hooks"]["Stop"][0]["hooks"][0]["command"],
        json!("notify-send done")
    );
    assert_eq!(
        hooks["hooks"]["SessionStart"][0]["hooks"][0]["command"],
        json!("teammem session-start --hook codex")
    );

    let repo_before = snapshot(&repo);
    for client in ["claude", "qwen", "codex"] {
        run(&["install-agent", "--client", client]).expect_code(0);
    }
    assert_eq!(snapshot(&repo), repo_before);
}

#[test]
fn dry_run_prints_the_diff_and_writes_nothing_and_user_scope_writes_the_home_files() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    let codex_home = sb.path().join("codex-home");
    let env = [("CODEX_HOME", codex_home.to_str().unwrap())];
    let run = |args: &[&str]| syncrun::teammem_env(&sb, &repo, args, &env);
    let before = snapshot(&repo);

    let dry = run(&["install-agent", "--client", "claude", "--dry-run"]);
    dry.expect_code(0);
    assert!(
        dry.stdout
            .contains("would create with the SessionStart hook, the UserPromptSubmit hook."),
        "{}",
        dry.stdout
    );
    assert!(
        dry.stdout
            .contains("+            \"command\": \"teammem session-start --hook claude\","),
        "{}",
        dry.stdout
    );
    assert!(
        dry.stdout.contains("Nothing was written (--dry-run)."),
        "{}",
        dry.stdout
    );
    assert_eq!(snapshot(&repo), before);
    let dry = run(&["install-agent", "--client", "codex", "--dry-run"]);
    dry.expect_code(0);
    assert!(!codex_home.exists());

    let user = run(&["install-agent", "--client", "claude", "--user"]);
    user.expect_code(0);
    assert_eq!(snapshot(&repo), before);
    let home = sb.home();
    assert_eq!(
        json_of(&home.join(".claude.json"))["mcpServers"]["teammem"]["command"],
        json!("teammem")
    );
    assert_eq!(
        json_of(&home.join(".claude/settings.json"))["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"],
        json!("teammem prompt-context --hook claude")
    );
    assert!(
        user.stdout.contains("Restart the client"),
        "{}",
        user.stdout
    );

    let project = run(&[
        "install-agent",
        "--client",
        "codex",
        "--project",
        "--command",
        "/opt/team tools/teammem",
    ]);
    project.expect_code(0);
    assert_eq!(
        json_of(&repo.join(".codex/hooks.json"))["hooks"]["SessionStart"][0]["hooks"][0]["command"],
        json!("'/opt/team tools/teammem' session-start --hook codex")
    );
    assert!(
        project.stdout.contains("trust the project when asked"),
        "{}",
        project.stdout
    );

    let bad = run(&["install-agent", "--client", "claude", "--user", "--project"]);
    assert_eq!(bad.code, 2, "{bad:?}");
}
