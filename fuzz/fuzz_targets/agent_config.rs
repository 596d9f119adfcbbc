//! Any text as a client's existing configuration file, for each file `install-agent` edits
//! (Claude Code's `.mcp.json` and settings, Qwen Code's settings, Codex's `config.toml` and
//! `hooks.json`). Editing never panics; what it accepts it edits once (a second edit changes
//! nothing); and when the file was strict JSON or TOML, the result still is, holds teammem's
//! entries as a strict parser (the client's) reads them, and keeps every key and value the
//! file had outside them.
#![no_main]

use libfuzzer_sys::fuzz_target;
use teammem::agent_config::{AgentFile, edit_text};

#[path = "../../tests/it/cli/agent_config_props.rs"]
mod props;

fuzz_target!(|bytes: &[u8]| {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return;
    };
    for kind in AgentFile::ALL {
        if let Ok(after) = edit_text(kind, text) {
            props::check_edit(kind, text, &after);
        }
    }
});
