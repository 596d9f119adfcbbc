//! What an agent client tells a hook on stdin: Claude Code, Codex and Qwen Code send the same
//! JSON shape for SessionStart (`session_id`, `transcript_path`, `cwd`, `hook_event_name`,
//! `source`) and UserPromptSubmit (the same, with `prompt` instead of `source`). Unknown keys
//! are ignored, so a client that adds fields (Codex's `model`, `turn_id`) still parses; so is a
//! field of a type teammem does not expect (it is read as missing), so that one odd field never
//! costs the hook the others.

use std::borrow::Cow;

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

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
    /// A fork (Claude Code's `--fork-session`, `codex exec fork`): a new session id whose
    /// transcript is a copy of its parent's, and with it the context delivered into it.
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

/// The longest session id kept as it is: ids are UUIDs. A longer one is kept as its hash
/// (`sha256:` and 64 hex digits), so that it still names one session and only that one.
const MAX_SESSION_ID: usize = 256;

impl HookInput {
    /// Parses a hook's stdin; `None` when it is empty or holds no JSON object (the hook then
    /// behaves as it did before hooks had input). Bytes that are not UTF-8, and lone
    /// surrogates (`"\ud800"`, which a JavaScript client writes for half an emoji), become
    /// U+FFFD rather than losing the whole input; text after the object is ignored.
    pub fn parse(bytes: &[u8]) -> Option<HookInput> {
        let text = String::from_utf8_lossy(bytes);
        // A byte order mark (a Windows tool's UTF-8) is not JSON.
        let text = text.trim_start_matches('\u{feff}');
        if text.trim().is_empty() {
            return None;
        }
        let value = first_value(text).or_else(|| match without_lone_surrogates(text) {
            Cow::Owned(mended) => first_value(&mended),
            Cow::Borrowed(_) => None,
        })?;
        let Value::Object(object) = value else {
            return None;
        };
        let session_id = id_text(&object, "session_id").map(|id| match id.len() {
            n if n <= MAX_SESSION_ID => id,
            _ => {
                let digest = Sha256::digest(id.as_bytes());
                let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
                format!("sha256:{hex}")
            }
        });
        Some(HookInput {
            session_id,
            source: text_of(&object, "source").map(StartSource::parse),
            prompt: text_of(&object, "prompt").map(str::to_string),
            event: text_of(&object, "hook_event_name").map(str::to_string),
            transcript_path: text_of(&object, "transcript_path")
                .filter(|p| !p.is_empty())
                .map(std::path::PathBuf::from),
        })
    }

    /// Whether `bytes` (a hook's stdin read so far) already hold a whole hook input: a client
    /// that writes its JSON and keeps stdin open is answered without waiting for its end.
    pub fn is_complete(bytes: &[u8]) -> bool {
        bytes.trim_ascii_end().ends_with(b"}") && HookInput::parse(bytes).is_some()
    }
}

/// The first JSON value of `text`; what follows it is ignored.
fn first_value(text: &str) -> Option<Value> {
    serde_json::Deserializer::from_str(text)
        .into_iter::<Value>()
        .next()?
        .ok()
}

/// The string at `key`; `None` when it is missing, `null` or not a string.
fn text_of<'a>(object: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    object.get(key)?.as_str()
}

/// A session id: a string with something in it, or a number written as text.
fn id_text(object: &Map<String, Value>, key: &str) -> Option<String> {
    match object.get(key)? {
        Value::String(id) if !id.trim().is_empty() => Some(id.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// `text` with each `\uD800`–`\uDFFF` escape that is not half of a pair turned into
/// `\uFFFD` (serde_json refuses a lone surrogate; JSON.stringify writes one for a string
/// cut inside an emoji). Escaped backslashes are skipped, so `\\ud800` stays text.
fn without_lone_surrogates(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    // The code unit of the `\uXXXX` escape at `at`, if one starts there.
    let escape = |at: usize| -> Option<u16> {
        if bytes.get(at) != Some(&b'\\') || bytes.get(at + 1) != Some(&b'u') {
            return None;
        }
        u16::from_str_radix(text.get(at + 2..at + 6)?, 16).ok()
    };
    let mut lone = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] != b'\\' {
            at += 1;
            continue;
        }
        match escape(at) {
            Some(0xD800..=0xDBFF) if matches!(escape(at + 6), Some(0xDC00..=0xDFFF)) => at += 12,
            Some(0xD800..=0xDFFF) => {
                lone.push(at);
                at += 6;
            }
            Some(_) => at += 6,
            // Any other escape (`\\`, `\"`): two bytes.
            None => at += 2,
        }
    }
    if lone.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut mended = String::with_capacity(text.len());
    let mut from = 0;
    for at in lone {
        mended.push_str(&text[from..at]);
        mended.push_str("\\uFFFD");
        from = at + 6;
    }
    mended.push_str(&text[from..]);
    Cow::Owned(mended)
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
            b"\xff",
            b"\"text\"",
        ] {
            assert_eq!(HookInput::parse(bad), None, "{bad:?}");
        }
        let empty_id = HookInput::parse(br#"{"session_id":" "}"#).unwrap();
        assert_eq!(empty_id.session_id, None);
    }
    #[test]
    fn one_odd_field_costs_nothing_but_itself() {
        // A field of another type is read as missing; the others still count.
        let input = HookInput::parse(
            br#"{"session_id":"s","transcript_path":5,"hook_event_name":{},"source":"resume","prompt":null,"cwd":[1]}"#,
        )
        .unwrap();
        assert_eq!(input.session_id.as_deref(), Some("s"));
        assert_eq!(input.source, Some(StartSource::Resume));
        assert_eq!(
            (input.prompt, input.transcript_path, input.event),
            (None, None, None)
        );
        // A number for an id is that number; text after the object is ignored.
        let input =
            HookInput::parse(b"{\"session_id\": 5, \"prompt\": \"hi\"}\n{\"more\": 1}").unwrap();
        assert_eq!(input.session_id.as_deref(), Some("5"));
        assert_eq!(input.prompt.as_deref(), Some("hi"));
    }

    #[test]
    fn a_long_id_is_its_hash_and_two_long_ids_stay_two() {
        let long = |c: char| format!("{{\"session_id\":\"{}\"}}", c.to_string().repeat(10_000));
        let a = HookInput::parse(long('a').as_bytes())
            .unwrap()
            .session_id
            .unwrap();
        let b = HookInput::parse(long('b').as_bytes())
            .unwrap()
            .session_id
            .unwrap();
        assert!(a.starts_with("sha256:") && a.len() == 71, "{a}");
        assert_ne!(a, b);
        assert_eq!(
            HookInput::parse(long('a').as_bytes())
                .unwrap()
                .session_id
                .unwrap(),
            a
        );
        let odd = HookInput::parse("{\"session_id\":\"../\\u0000/é\"}".as_bytes()).unwrap();
        assert_eq!(odd.session_id.as_deref(), Some("../\u{0}/é"));
    }

    #[test]
    fn bytes_that_are_not_utf8_and_lone_surrogates_keep_the_prompt() {
        let bom = HookInput::parse("\u{feff}{\"prompt\":\"hi\"}".as_bytes()).unwrap();
        assert_eq!(bom.prompt.as_deref(), Some("hi"));
        let input =
            HookInput::parse(b"{\"session_id\":\"s\",\"prompt\":\"caf\xe9 postgres\"}").unwrap();
        assert_eq!(input.prompt.as_deref(), Some("caf\u{FFFD} postgres"));
        let input = HookInput::parse(
            br#"{"session_id":"s","prompt":"half \ud83d emoji \udc00 and a whole \ud83d\ude00, \\ud800 as text"}"#,
        )
        .unwrap();
        assert_eq!(
            input.prompt.as_deref(),
            Some("half \u{FFFD} emoji \u{FFFD} and a whole \u{1F600}, \\ud800 as text")
        );
    }

    #[test]
    fn a_whole_object_is_complete_before_stdin_ends() {
        assert!(HookInput::is_complete(b"{\"prompt\":\"a}\"}\n"));
        assert!(!HookInput::is_complete(b"{\"prompt\":\"a}"));
        assert!(!HookInput::is_complete(b"{\"prompt\":{\"a\":1}"));
        assert!(!HookInput::is_complete(b""));
    }
}
