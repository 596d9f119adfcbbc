//! What an agent client tells a hook on stdin: Claude Code, Codex and Qwen Code send the same
//! JSON shape for SessionStart (`session_id`, `transcript_path`, `cwd`, `hook_event_name`,
//! `source`) and UserPromptSubmit (the same, with `prompt` instead of `source`). Unknown keys
//! are ignored, so a client that adds fields (Codex's `model`, `turn_id`) still parses.

use serde::Deserialize;

/// Why a session (re)started, as SessionStart's `source` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartSource {
    /// A new session.
    Startup,
    /// A session resumed (`--continue`, `--resume`, `codex exec resume`): its transcript,
    /// and the context delivered into it, are still there.
    Resume,
    /// `/clear`: the transcript was emptied.
    Clear,
    /// The transcript was compacted into a summary: what was delivered is gone.
    Compact,
    /// Claude Code's forked session: a new context.
    Fork,
    /// A source this version does not know; treated as a new context.
    Other,
}

impl StartSource {
    fn parse(text: &str) -> StartSource {
        match text {
            "startup" => StartSource::Startup,
            "resume" => StartSource::Resume,
            "clear" => StartSource::Clear,
            "compact" => StartSource::Compact,
            "fork" => StartSource::Fork,
            _ => StartSource::Other,
        }
    }

    /// Whether the transcript still holds what was delivered before (only on resume).
    pub fn keeps_transcript(self) -> bool {
        self == StartSource::Resume
    }
}

/// The fields of a hook's input that teammem uses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HookInput {
    /// The client's session id: what per-session delivery state is keyed by.
    pub session_id: Option<String>,
    /// SessionStart's source.
    pub source: Option<StartSource>,
    /// UserPromptSubmit's prompt.
    pub prompt: Option<String>,
    /// The event that ran the hook (`SessionStart`, `UserPromptSubmit`).
    pub event: Option<String>,
    /// The session's transcript file, when the client names one.
    pub transcript_path: Option<std::path::PathBuf>,
}

/// The wire shape; every field optional, as clients differ in what they send.
#[derive(Debug, Deserialize)]
struct Wire {
    #[serde(default)]
    session_id: Option<String>,
    #[serde(default)]
    source: Option<String>,
    #[serde(default)]
    prompt: Option<String>,
    #[serde(default)]
    hook_event_name: Option<String>,
    #[serde(default)]
    transcript_path: Option<String>,
}

/// The longest session id kept: ids are UUIDs; anything longer is not a client's id.
const MAX_SESSION_ID: usize = 256;

impl HookInput {
    /// Parses a hook's stdin; `None` when it is empty or not a JSON object (the hook then
    /// behaves as it did before hooks had input).
    pub fn parse(bytes: &[u8]) -> Option<HookInput> {
        let text = std::str::from_utf8(bytes).ok()?;
        if text.trim().is_empty() {
            return None;
        }
        let wire: Wire = serde_json::from_str(text).ok()?;
        let session_id = wire
            .session_id
            .filter(|id| !id.trim().is_empty() && id.len() <= MAX_SESSION_ID);
        Some(HookInput {
            session_id,
            source: wire.source.as_deref().map(StartSource::parse),
            prompt: wire.prompt,
            event: wire.hook_event_name,
            transcript_path: wire
                .transcript_path
                .filter(|p| !p.is_empty())
                .map(std::path::PathBuf::from),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_clients_session_start_shape_parses() {
        let claude = br#"{"session_id":"abc","transcript_path":"/t.jsonl","cwd":"/w","hook_event_name":"SessionStart","source":"resume"}"#;
        let input = HookInput::parse(claude).unwrap();
        assert_eq!(input.session_id.as_deref(), Some("abc"));
        assert_eq!(input.source, Some(StartSource::Resume));
        let codex = br#"{"session_id":"019f","transcript_path":null,"cwd":"/w","hook_event_name":"SessionStart","model":"gpt","permission_mode":"default","source":"startup"}"#;
        assert_eq!(
            HookInput::parse(codex).unwrap().source,
            Some(StartSource::Startup)
        );
        let fork = br#"{"session_id":"x","source":"fork"}"#;
        assert_eq!(
            HookInput::parse(fork).unwrap().source,
            Some(StartSource::Fork)
        );
    }

    #[test]
    fn a_prompt_parses_and_bad_input_is_none() {
        let input = HookInput::parse(
            br#"{"session_id":"s","hook_event_name":"UserPromptSubmit","prompt":"why?"}"#,
        )
        .unwrap();
        assert_eq!(input.prompt.as_deref(), Some("why?"));
        assert_eq!(input.source, None);
        for bad in [
            &b""[..],
            b"  \n",
            b"not json",
            b"[1,2]",
            b"{\"session_id\": 5}",
            b"\xff",
        ] {
            assert_eq!(HookInput::parse(bad), None, "{bad:?}");
        }
        let empty_id = HookInput::parse(br#"{"session_id":" "}"#).unwrap();
        assert_eq!(empty_id.session_id, None);
    }
}
