//! No input makes the parser or the index renderer panic (the cargo-fuzz targets in `fuzz/`
//! explore the same two functions for longer; these run in every `cargo test`).

use proptest::prelude::*;
use teammem::memory::{MemoryFile, MemoryType};
use teammem::memory_index::{self, IndexLine, MAX_LINES};

/// Bytes that look like a memory file often enough to reach the YAML parser and the checks.
fn memory_like() -> impl Strategy<Value = Vec<u8>> {
    let key = prop_oneof![
        Just("name"),
        Just("description"),
        Just("type"),
        Just("keywords"),
        Just("other")
    ];
    let value = prop_oneof![
        Just("user".to_string()),
        Just("feedback".to_string()),
        Just("10183".to_string()),
        Just("|\n  a\n  b".to_string()),
        Just("[a, *x]".to_string()),
        Just("&x {a: b}".to_string()),
        "\\PC{0,20}",
        "[\\[\\]{}:,'\"&*!|>#\\- \n]{0,20}",
    ];
    let line = (key, value).prop_map(|(k, v)| format!("{k}: {v}\n"));
    (
        prop::collection::vec(line, 0..8),
        prop_oneof![
            Just("---\n"),
            Just("---\r\n"),
            Just(""),
            Just("\u{feff}---\n")
        ],
        prop::collection::vec(any::<u8>(), 0..40),
    )
        .prop_map(|(lines, open, tail)| {
            let mut bytes = open.as_bytes().to_vec();
            bytes.extend(lines.concat().into_bytes());
            bytes.extend_from_slice(b"---\n");
            bytes.extend(tail);
            bytes
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn parse_never_panics_on_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = MemoryFile::parse("feedback/x.md", &bytes);
    }

    #[test]
    fn parse_never_panics_on_memory_like_bytes(bytes in memory_like()) {
        if let Ok(file) = MemoryFile::parse("feedback/x.md", &bytes) {
            // What parses renders, and the rendering parses to the same memory.
            let again = MemoryFile::parse("feedback/x.md", file.render().as_bytes());
            prop_assert!(again.is_ok(), "{:?}", again);
            let again = again.unwrap();
            prop_assert_eq!(&again.name, &file.name);
            prop_assert_eq!(&again.description, &file.description);
            prop_assert_eq!(&again.body, &file.body);
            prop_assert_eq!(&again.keywords, &file.keywords);
            let _ = file.entries();
        }
    }
}

proptest! {
    // Unicode strategies are slow to generate in a debug build; the fuzz target goes further.
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn render_never_panics_and_stays_within_limits(
        entries in prop::collection::vec(
            ("\\PC{0,60}|[\n\r\t\u{202E}\u{200B}`\\]\\(]{0,10}|a\\.md", "\\PC{0,30}", "\\PC{0,60}", 0..4usize),
            0..40,
        )
    ) {
        let mut entries: Vec<IndexLine> = entries
            .into_iter()
            .map(|(path, title, description, k)| IndexLine {
                path,
                title,
                description,
                kind: MemoryType::ALL[k],
            })
            .collect();
        let out = memory_index::render(&entries);
        // Qwen Code's limits: UTF-16 units, no final newline, a cut index ends with an empty
        // line and the warning.
        let body = out.split("\n\n> WARNING").next().unwrap_or(&out);
        prop_assert!(body.encode_utf16().count() <= memory_index::MAX_UNITS);
        prop_assert!(body.lines().count() <= MAX_LINES);
        prop_assert!(!out.ends_with('\n'));
        for line in body.lines() {
            prop_assert!(line.starts_with("- ["), "{:?}", line);
        }
        // Paths may repeat here (one folder cannot hold that); the order still does not matter.
        entries.reverse();
        prop_assert_eq!(memory_index::render(&entries), out);
    }
}

/// A JSON value built from the keys a client's settings have, so that the editor's paths
/// (`hooks.EVENT[].hooks[].command`, `mcpServers.teammem`) are reached with every type.
fn settings_value() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::{Value, json};
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        Just(json!("teammem session-start --hook claude")),
        Just(json!("teammem context --hook claude")),
        Just(json!("/old/teammem prompt-context --hook qwen")),
        Just(json!("hooks/session-start claude")),
        Just(json!("cd x && teammem session-start")),
        Just(json!("command")),
        Just(json!("mcp")),
        "\\PC{0,12}".prop_map(Value::String),
    ];
    let key = prop_oneof![
        Just("hooks"),
        Just("SessionStart"),
        Just("UserPromptSubmit"),
        Just("mcpServers"),
        Just("teammem"),
        Just("hooks"),
        Just("command"),
        Just("type"),
        Just("matcher"),
        Just("args"),
        Just("model"),
    ];
    leaf.prop_recursive(5, 48, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((key.clone(), inner), 0..5).prop_map(|fields| {
                Value::Object(
                    fields
                        .into_iter()
                        .map(|(k, v)| (k.to_string(), v))
                        .collect(),
                )
            }),
        ]
    })
}

/// Settings text as people write it: a value, compact or pretty, maybe with a byte-order
/// mark, CRLF, a comment, a trailing comma or a duplicate key; or any text at all.
fn settings_text() -> impl Strategy<Value = String> {
    let written = (
        settings_value(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        0..4u8,
    )
        .prop_map(|(value, pretty, bom, crlf, extra)| {
            let value = match value {
                v @ serde_json::Value::Object(_) => v,
                v => serde_json::json!({ "hooks": { "SessionStart": v } }),
            };
            let mut text = match pretty {
                true => serde_json::to_string_pretty(&value).unwrap(),
                false => value.to_string(),
            };
            match extra {
                1 => text = text.replacen('{', "{\n  // a comment\n", 1),
                2 => {
                    if let Some(end) = text.rfind('}') {
                        if text[..end].trim_end().ends_with(['"', '}', ']']) {
                            text.insert(end, ',');
                        }
                    }
                }
                3 => text = text.replacen('{', "{\"hooks\": {}, ", 1),
                _ => {}
            }
            if crlf {
                text = text.replace('\n', "\r\n");
            }
            if bom {
                text.insert(0, '\u{feff}');
            }
            text
        });
    prop_oneof![4 => written, 1 => "\\PC{0,40}", 1 => "[\\[\\]{}:,\"/* \n\\\\a-z0-9]{0,40}"]
}

/// A Codex `config.toml` made of the forms its sections take: tables, dotted keys, inline
/// tables, arrays of tables, comments, CRLF.
fn config_toml() -> impl Strategy<Value = String> {
    let line = prop_oneof![
        Just("model = \"o3\""),
        Just("[mcp_servers]"),
        Just("[mcp_servers.docs]"),
        Just("[mcp_servers.teammem]"),
        Just("[mcp_servers.teammem.env]"),
        Just("[[mcp_servers]]"),
        Just("[[mcp_servers.teammem]]"),
        Just("mcp_servers.teammem.command = \"old\""),
        Just("mcp_servers = { docs = { command = \"d\" } }"),
        Just("teammem = { command = \"old\", env = { A = \"1\" } }"),
        Just("teammem = \"x\""),
        Just("command = \"teammem\""),
        Just("args = [\"mcp\", \"--publish\"]"),
        Just("args = 5"),
        Just("startup_timeout_sec = 20"),
        Just("# comment"),
        Just(""),
        Just("[profiles.fast]"),
        Just("model = 'x' # trailing"),
    ];
    (
        prop::collection::vec(line, 0..8),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(lines, crlf, bom)| {
            let end = if crlf { "\r\n" } else { "\n" };
            let mut text: String = lines.iter().map(|l| format!("{l}{end}")).collect();
            if bom {
                text.insert(0, '\u{feff}');
            }
            text
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn agent_config_edits_never_panic_and_keep_what_the_file_had(text in settings_text()) {
        use teammem::agent_config::{AgentFile, edit_text};
        for kind in AgentFile::ALL {
            if let Ok(after) = edit_text(kind, &text) {
                super::agent_config_props::check_edit(kind, &text, &after);
            }
        }
    }

    #[test]
    fn codex_config_edits_never_panic_and_keep_what_the_file_had(text in config_toml()) {
        use teammem::agent_config::{AgentFile, edit_text};
        if let Ok(after) = edit_text(AgentFile::CodexConfig, &text) {
            super::agent_config_props::check_edit(AgentFile::CodexConfig, &text, &after);
        }
    }

    #[test]
    fn hook_input_never_panics(
        bytes in prop_oneof![
            prop::collection::vec(any::<u8>(), 0..200),
            (
                prop_oneof![Just("session_id"), Just("source"), Just("prompt"), Just("hook_event_name"), Just("transcript_path")],
                prop_oneof![Just("\"resume\"".to_string()), Just("null".to_string()), Just("5".to_string()), Just("[]".to_string()), "\"\\\\PC{0,300}\"", "\"[\\\\\\\\ud800a-z]{0,20}\""],
            ).prop_map(|(k, v)| format!("{{\"{k}\": {v}}}").into_bytes()),
        ]
    ) {
        let input = teammem::hook_state::HookInput::parse(&bytes);
        prop_assert_eq!(&input, &teammem::hook_state::HookInput::parse(&bytes));
        if let Some(id) = input.and_then(|i| i.session_id) {
            prop_assert!(!id.trim().is_empty() && id.len() <= 256, "{:?}", id);
        }
    }

    #[test]
    fn hook_state_files_never_panic(
        bytes in prop_oneof![
            prop::collection::vec(any::<u8>(), 0..200),
            (any::<i64>(), any::<u64>(), any::<i64>(), "\\PC{0,8}").prop_map(|(t, n, u, s)| {
                format!(
                    "{{\"version\":1,\"session\":\"s\",\"updated\":{u},\"indexed\":[{{\"id\":\"{s}\",\"hash\":\"h\"}}],\"bodies\":[],\"memories\":{{\"a.md\":{{\"usage_count\":{n},\"last_usage\":{t},\"read_count\":{n},\"last_read\":{t},\"surfaced_count\":{n},\"last_surfaced\":{t}}}}}}}"
                ).into_bytes()
            }),
        ]
    ) {
        super::hook_state_props::check_session_record(&bytes);
        super::hook_state_props::check_usage_book(&bytes);
        super::hook_state_props::check_turn_verdicts(&bytes);
    }
}

/// The extremes the property test may miss: times at the ends of the clock and counts at
/// their limit (a torn or hand-edited state file), which overflowed `usage.json`'s age and
/// count arithmetic and a session record's age check.
#[test]
fn state_files_at_the_limits_of_their_numbers_read_without_overflow() {
    for time in [i64::MIN, i64::MAX] {
        let n = u64::MAX;
        let usage = format!(
            "{{\"version\":1,\"memories\":{{\"a.md\":{{\"usage_count\":{n},\"last_usage\":{time},\"read_count\":{n},\"last_read\":{time},\"surfaced_count\":{n},\"last_surfaced\":{time}}}}}}}"
        );
        super::hook_state_props::check_usage_book(usage.as_bytes());
        let record = format!("{{\"version\":1,\"session\":\"s\",\"updated\":{time}}}");
        super::hook_state_props::check_session_record(record.as_bytes());
    }
}

/// A key twice in one object: a client reads the last, the editor would change the first.
#[test]
fn a_key_twice_where_teammem_edits_is_refused() {
    use teammem::agent_config::{AgentFile, edit_text};
    for (kind, text, key) in [
        (
            AgentFile::ClaudeSettings,
            "{\"hooks\": {}, \"hooks\": {\"Stop\": []}}",
            "`hooks` is there 2 times",
        ),
        (
            AgentFile::CodexHooks,
            "{\"hooks\": {\"SessionStart\": [], \"SessionStart\": []}}",
            "`hooks.SessionStart` is there 2 times",
        ),
        (
            AgentFile::ClaudeServers,
            "{\"mcpServers\": {\"teammem\": {\"command\": \"a\", \"command\": \"b\"}}}",
            "`mcpServers.teammem.command` is there 2 times",
        ),
    ] {
        let err = edit_text(kind, text).unwrap_err().to_string();
        assert!(err.contains(key), "{err}");
        assert!(err.contains("keep one"), "{err}");
    }
}
