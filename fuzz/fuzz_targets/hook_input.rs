//! Any bytes as a hook's stdin (what Claude Code, Codex or Qwen Code send a SessionStart or
//! UserPromptSubmit hook): parsing never panics, gives the same answer twice, and a session id
//! it keeps is one the per-session state can be keyed by (not blank, at most 256 bytes).
#![no_main]

use libfuzzer_sys::fuzz_target;
use teammem::hook_state::HookInput;

fuzz_target!(|bytes: &[u8]| {
    let input = HookInput::parse(bytes);
    assert_eq!(input, HookInput::parse(bytes));
    if let Some(id) = input.and_then(|i| i.session_id) {
        assert!(!id.trim().is_empty() && id.len() <= 256, "{id:?}");
    }
});
