//! The real client reads what `install-agent` wrote into a user's own file: the newest pinned
//! Codex lists its MCP servers (`codex mcp list --json`, which parses `config.toml` as a Codex
//! session does) after install-agent edited configurations in each form TOML allows for the
//! same section, and in a file written on Windows.

use std::fs;

use serde_json::Value;

use crate::common::clients;
use crate::common::syncrun;
use crate::common::{Run, Sandbox, write};

#[test]
fn codex_reads_every_form_of_config_toml_install_agent_edited() {
    let codex = clients::newest("codex");
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    for (form, config, other) in [
        (
            "inline tables",
            "mcp_servers = { docs = { command = \"docs-mcp\" } }\n",
            Some("docs"),
        ),
        (
            "dotted keys",
            "mcp_servers.docs.command = \"docs-mcp\"\n",
            Some("docs"),
        ),
        (
            "an older teammem entry with env",
            "[mcp_servers]\nteammem = { command = \"/old/teammem\", env = { TEAMMEM_LOG = \"1\" } }\n",
            None,
        ),
        (
            "a byte-order mark and CRLF",
            "\u{feff}# mine\r\nmodel = \"o3\"\r\n\r\n[mcp_servers.docs]\r\ncommand = \"docs-mcp\"\r\n",
            Some("docs"),
        ),
    ] {
        let home = sb.path().join(format!("codex-{}", form.replace(' ', "-")));
        write(&home.join("config.toml"), config);
        let home_str = home.to_str().unwrap();
        syncrun::teammem_env(
            &sb,
            &repo,
            &["install-agent", "--client", "codex"],
            &[("CODEX_HOME", home_str)],
        )
        .expect_code(0);
        let mut cmd = std::process::Command::new(codex.bin());
        sb.isolate(&mut cmd)
            .current_dir(&repo)
            .env("CODEX_HOME", &home)
            .args(["mcp", "list", "--json"]);
        let run = Run::from(cmd.output().unwrap());
        assert_eq!(run.code, 0, "{form}: {run:?}");
        let listed: Value = serde_json::from_str(&run.stdout)
            .unwrap_or_else(|e| panic!("{form}: codex printed no JSON ({e}): {run:?}"));
        let server = |name: &str| {
            listed
                .as_array()
                .into_iter()
                .flatten()
                .find(|s| s["name"] == name)
                .unwrap_or_else(|| panic!("{form}: codex does not list {name}: {listed:#}"))
                .clone()
        };
        let teammem = server("teammem");
        assert_eq!(
            teammem["transport"]["command"], "teammem",
            "{form}: {teammem:#}"
        );
        assert_eq!(
            teammem["transport"]["args"],
            serde_json::json!(["mcp"]),
            "{form}"
        );
        if let Some(other) = other {
            assert_eq!(server(other)["transport"]["command"], "docs-mcp", "{form}");
        } else {
            assert_eq!(
                teammem["transport"]["env"]["TEAMMEM_LOG"], "1",
                "{form}: {teammem:#}"
            );
        }
        let hooks: Value =
            serde_json::from_str(&fs::read_to_string(home.join("hooks.json")).unwrap()).unwrap();
        assert_eq!(
            hooks["hooks"]["SessionStart"][0]["hooks"][0]["command"],
            "teammem session-start --hook codex"
        );
    }
}
