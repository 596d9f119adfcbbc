//! `teammem install-agent` on the files users really have: a private `~/.claude.json`, a
//! settings file linked in from a dotfiles repository, a read-only file, files written on
//! Windows (a byte-order mark, CRLF), broken files, hooks that older teammem docs told people
//! to write, and a home folder with a space in its name. After every write the file still
//! parses with a strict parser (serde_json, toml_edit) and a second run changes nothing.

use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;

use serde_json::{Value, json};

use crate::common::syncrun;
use crate::common::{Run, Sandbox, write};

fn strict_json(text: &str) -> Value {
    serde_json::from_str(text.trim_start_matches('\u{feff}'))
        .unwrap_or_else(|e| panic!("not strict JSON ({e}):\n{text}"))
}

fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// Every command of `event`'s handlers in a settings file.
fn commands(settings: &Value, event: &str) -> Vec<String> {
    let mut out = Vec::new();
    for group in settings["hooks"][event].as_array().into_iter().flatten() {
        for handler in group["hooks"].as_array().into_iter().flatten() {
            out.push(handler["command"].as_str().unwrap_or("").to_string());
        }
    }
    out
}

fn nothing_to_do(run: &Run) {
    run.expect_code(0);
    assert!(!run.stdout.contains("updated"), "{}", run.stdout);
    assert!(!run.stdout.contains("created"), "{}", run.stdout);
}

#[test]
fn a_private_file_stays_private_and_a_linked_one_stays_a_link() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    let home = sb.home();
    // ~/.claude.json holds the account; people and Claude Code keep it to its owner.
    let account = home.join(".claude.json");
    write(
        &account,
        "{\"oauthAccount\": {\"emailAddress\": \"ada@example.com\"}}\n",
    );
    fs::set_permissions(&account, fs::Permissions::from_mode(0o600)).unwrap();
    // ~/.claude/settings.json linked in from a dotfiles repository, with an API key in it.
    let dotfiles = sb.path().join("dotfiles/claude/settings.json");
    write(
        &dotfiles,
        "{\n  \"env\": {\"ANTHROPIC_API_KEY\": \"sk-test\"}\n}\n",
    );
    fs::set_permissions(&dotfiles, fs::Permissions::from_mode(0o640)).unwrap();
    let link = home.join(".claude/settings.json");
    fs::create_dir_all(link.parent().unwrap()).unwrap();
    symlink(&dotfiles, &link).unwrap();

    let run = syncrun::teammem_env(
        &sb,
        &repo,
        &["install-agent", "--client", "claude", "--user"],
        &[],
    );
    run.expect_code(0);

    assert_eq!(
        mode(&account),
        0o600,
        "~/.claude.json became readable by others"
    );
    let value = strict_json(&fs::read_to_string(&account).unwrap());
    assert_eq!(
        value["oauthAccount"]["emailAddress"],
        json!("ada@example.com")
    );
    assert_eq!(value["mcpServers"]["teammem"]["command"], json!("teammem"));

    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink(),
        "the settings link was replaced by a file"
    );
    let settings = strict_json(&fs::read_to_string(&dotfiles).unwrap());
    assert_eq!(settings["env"]["ANTHROPIC_API_KEY"], json!("sk-test"));
    assert_eq!(
        commands(&settings, "SessionStart"),
        ["teammem session-start --hook claude"]
    );
    assert_eq!(mode(&dotfiles), 0o640);

    nothing_to_do(&syncrun::teammem_env(
        &sb,
        &repo,
        &["install-agent", "--client", "claude", "--user"],
        &[],
    ));
}

#[test]
fn a_read_only_file_is_refused_and_nothing_is_written_unless_it_is_complete() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    let settings = repo.join(".qwen/settings.json");
    let before = "{\"memory\": {\"enableTeamMemory\": true}}\n";
    write(&settings, before);
    fs::set_permissions(&settings, fs::Permissions::from_mode(0o444)).unwrap();
    let run = |args: &[&str]| syncrun::teammem_env(&sb, &repo, args, &[]);

    let refused = run(&["install-agent", "--client", "qwen"]);
    refused.expect_code(2);
    assert!(
        refused.stderr.contains(&format!(
            "{}: the file is read-only — make it writable (`chmod u+w '{}'`)",
            settings.display(),
            settings.display()
        )),
        "{}",
        refused.stderr
    );
    assert!(
        refused.stderr.contains("nothing was written"),
        "{}",
        refused.stderr
    );
    assert_eq!(fs::read_to_string(&settings).unwrap(), before);
    assert_eq!(mode(&settings), 0o444);

    // Made writable, installed, made read-only again: a run finds nothing to change.
    fs::set_permissions(&settings, fs::Permissions::from_mode(0o644)).unwrap();
    run(&["install-agent", "--client", "qwen"]).expect_code(0);
    fs::set_permissions(&settings, fs::Permissions::from_mode(0o444)).unwrap();
    nothing_to_do(&run(&["install-agent", "--client", "qwen"]));
}

#[test]
fn files_written_on_windows_keep_their_byte_order_mark_and_crlf_line_ends() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    let settings = repo.join(".claude/settings.json");
    write(
        &settings,
        "\u{feff}{\r\n\t\"model\": \"opus\",\r\n\t\"hooks\": {\r\n\t\t\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"notify\"}]}]\r\n\t}\r\n}\r\n",
    );
    let codex_home = sb.path().join("codex-home");
    let config = codex_home.join("config.toml");
    write(
        &config,
        "\u{feff}model = \"o3\"\r\n\r\n[mcp_servers.docs]\r\ncommand = \"docs-mcp\"\r\n",
    );
    let env = [("CODEX_HOME", codex_home.to_str().unwrap())];
    let run = |client: &str| {
        syncrun::teammem_env(&sb, &repo, &["install-agent", "--client", client], &env)
    };
    run("claude").expect_code(0);
    run("codex").expect_code(0);

    for path in [&settings, &config] {
        let text = fs::read_to_string(path).unwrap();
        assert!(
            text.starts_with('\u{feff}'),
            "{}: lost its mark:\n{text}",
            path.display()
        );
        let bare_lf = text
            .match_indices('\n')
            .any(|(i, _)| !text[..i].ends_with('\r'));
        assert!(
            !bare_lf,
            "{}: a line ends in LF alone:\n{text:?}",
            path.display()
        );
    }
    let value = strict_json(&fs::read_to_string(&settings).unwrap());
    assert_eq!(value["model"], json!("opus"));
    assert_eq!(commands(&value, "Stop"), ["notify"]);
    assert_eq!(
        commands(&value, "UserPromptSubmit"),
        ["teammem prompt-context --hook claude"]
    );
    let text = fs::read_to_string(&config).unwrap();
    let doc: toml_edit::DocumentMut = text.trim_start_matches('\u{feff}').parse().unwrap();
    assert_eq!(
        doc["mcp_servers"]["docs"]["command"].as_str(),
        Some("docs-mcp")
    );
    assert_eq!(
        doc["mcp_servers"]["teammem"]["command"].as_str(),
        Some("teammem")
    );

    nothing_to_do(&run("claude"));
    nothing_to_do(&run("codex"));
}

#[test]
fn a_broken_file_is_refused_at_its_line_and_column_and_no_file_of_the_client_is_written() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    let codex_home = sb.path().join("codex-home");
    let env = [("CODEX_HOME", codex_home.to_str().unwrap())];
    let run = |client: &str| {
        syncrun::teammem_env(&sb, &repo, &["install-agent", "--client", client], &env)
    };

    // Codex: config.toml is fine, hooks.json is not: neither is written.
    let config = codex_home.join("config.toml");
    write(&config, "model = \"o3\"\n");
    let hooks = codex_home.join("hooks.json");
    write(&hooks, "{\n  \"hooks\": {\n    \"Stop\": [1,,2]\n  }\n}\n");
    let refused = run("codex");
    refused.expect_code(2);
    assert!(
        refused.stderr.contains(&format!(
            "{}:3:16: not valid JSON (Unexpected comma) — fix the file by hand",
            hooks.display()
        )),
        "{}",
        refused.stderr
    );
    assert_eq!(fs::read_to_string(&config).unwrap(), "model = \"o3\"\n");

    // A TOML error names its line and column on one line.
    write(&hooks, "{}\n");
    write(
        &config,
        "model = \"o3\"\n[mcp_servers.docs\ncommand = \"d\"\n",
    );
    let refused = run("codex");
    refused.expect_code(2);
    assert!(
        refused.stderr.contains(&format!(
            "{}:2:18: not valid TOML (unclosed table, expected `]`) — fix the file by hand",
            config.display()
        )),
        "{}",
        refused.stderr
    );
    assert_eq!(fs::read_to_string(&hooks).unwrap(), "{}\n");

    // Claude Code: `.mcp.json` is fine, the settings' `hooks` is a list: neither is written.
    let mcp = repo.join(".mcp.json");
    write(&mcp, "{}\n");
    let settings = repo.join(".claude/settings.json");
    write(&settings, "{\"hooks\": []}\n");
    let refused = run("claude");
    refused.expect_code(2);
    assert!(
        refused.stderr.contains("`hooks` is not an object"),
        "{}",
        refused.stderr
    );
    assert_eq!(fs::read_to_string(&mcp).unwrap(), "{}\n");
    assert_eq!(fs::read_to_string(&settings).unwrap(), "{\"hooks\": []}\n");
}

#[test]
fn hooks_older_docs_wrote_are_replaced_or_kept_never_doubled() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    // Claude Code: `teammem context --hook` at SessionStart (older docs; it ignores the hook's
    // input, so a resumed session got the memory twice) and a second copy of the hook in
    // another group with the same matcher; one with a matcher of its own stays.
    let settings = repo.join(".claude/settings.json");
    write(
        &settings,
        r#"{
  "hooks": {
    "SessionStart": [
      {"hooks": [{"type": "command", "command": "teammem context --hook claude", "timeout": 20}]},
      {"hooks": [{"type": "command", "command": "echo hi"}, {"type": "command", "command": "/usr/local/bin/teammem session-start --hook claude"}]},
      {"hooks": [{"type": "command", "command": "teammem session-start --hook claude"}]},
      {"matcher": "compact", "hooks": [{"type": "command", "command": "teammem session-start --hook claude"}]}
    ]
  }
}
"#,
    );
    // Qwen Code: the ready script teammem ships, as docs/sync.md shows it: kept as written.
    let qwen = repo.join(".qwen/settings.json");
    write(
        &qwen,
        "{\"hooks\": {\"SessionStart\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"\\\"$QWEN_PROJECT_DIR\\\"/hooks/session-start qwen\"}]}]}}\n",
    );
    let run = |client: &str| {
        syncrun::teammem_env(&sb, &repo, &["install-agent", "--client", client], &[])
    };
    run("claude").expect_code(0);
    run("qwen").expect_code(0);

    let value = strict_json(&fs::read_to_string(&settings).unwrap());
    assert_eq!(
        commands(&value, "SessionStart"),
        [
            "teammem session-start --hook claude",
            "echo hi",
            "teammem session-start --hook claude"
        ]
    );
    let groups = value["hooks"]["SessionStart"].as_array().unwrap();
    assert_eq!(groups.len(), 3, "{value:#}");
    assert_eq!(groups[0]["hooks"][0]["timeout"], json!(20));
    assert_eq!(groups[2]["matcher"], json!("compact"));

    let value = strict_json(&fs::read_to_string(&qwen).unwrap());
    assert_eq!(
        commands(&value, "SessionStart"),
        ["\"$QWEN_PROJECT_DIR\"/hooks/session-start qwen"]
    );
    assert_eq!(
        commands(&value, "UserPromptSubmit"),
        ["teammem prompt-context --hook qwen"]
    );
    nothing_to_do(&run("claude"));
    nothing_to_do(&run("qwen"));
}

#[test]
fn a_home_folder_with_a_space_and_no_client_folder_yet() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    let home = sb.path().join("Ada Lovelace");
    fs::create_dir_all(&home).unwrap();
    let home_str = home.to_str().unwrap();
    let env = [("HOME", home_str)];
    for client in ["qwen", "codex", "claude"] {
        let out = syncrun::teammem_env(
            &sb,
            &repo,
            &["install-agent", "--client", client, "--user"],
            &env,
        );
        out.expect_code(0);
    }
    let qwen = strict_json(&fs::read_to_string(home.join(".qwen/settings.json")).unwrap());
    assert_eq!(
        commands(&qwen, "SessionStart"),
        ["teammem session-start --hook qwen"]
    );
    let codex = fs::read_to_string(home.join(".codex/config.toml")).unwrap();
    let doc: toml_edit::DocumentMut = codex.parse().unwrap();
    assert_eq!(
        doc["mcp_servers"]["teammem"]["args"].to_string().trim(),
        "[\"mcp\"]"
    );
    strict_json(&fs::read_to_string(home.join(".codex/hooks.json")).unwrap());
    strict_json(&fs::read_to_string(home.join(".claude.json")).unwrap());
    strict_json(&fs::read_to_string(home.join(".claude/settings.json")).unwrap());
    assert!(!repo.join(".qwen").exists() && !repo.join(".mcp.json").exists());
}

#[test]
fn a_complete_file_without_a_final_newline_is_left_as_it_is() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    let run = || syncrun::teammem_env(&sb, &repo, &["install-agent", "--client", "qwen"], &[]);
    run().expect_code(0);
    let settings = repo.join(".qwen/settings.json");
    let complete = fs::read_to_string(&settings).unwrap();
    let bare = complete.trim_end().to_string();
    fs::write(&settings, &bare).unwrap();
    let again = run();
    nothing_to_do(&again);
    assert!(again.stdout.contains("nothing to do"), "{}", again.stdout);
    assert_eq!(fs::read_to_string(&settings).unwrap(), bare);
}
