//! Delivering memory to an agent through its client's hooks: the output shape each client
//! accepts ([`HookFormat`], [`render`]) and what each session was already given
//! ([`sessions`]), so that each memory reaches the model once per context.

pub mod sessions;

/// How a hook's answer is printed: the client named by `--hook`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HookFormat {
    /// Qwen Code hook JSON.
    // The same shape as Claude Code's.
    Qwen,
    /// Claude Code hook JSON.
    Claude,
    /// Codex hook JSON (exactly Codex's schema).
    // Exactly `{"hookSpecificOutput": {"hookEventName", "additionalContext"}}`: Codex rejects any
    // other key (and then injects nothing).
    Codex,
    /// Plain text.
    Plain,
}

/// The hook event a command answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookEvent {
    /// At the start (or resume, clear, compaction) of a session.
    SessionStart,
    /// Before each prompt reaches the model.
    UserPromptSubmit,
}

impl HookEvent {
    /// The event's name in hook JSON.
    pub fn name(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "SessionStart",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
        }
    }
}

/// `text` in the shape `format` prints for `event`: the hook JSON (one line and a newline)
/// for the clients, the text itself for plain. Nothing to say prints nothing: every client
/// takes an empty stdout with exit status 0 as "no context to add".
pub fn render(format: HookFormat, event: HookEvent, text: &str) -> String {
    if text.is_empty() {
        return String::new();
    }
    match format {
        HookFormat::Plain => text.to_string(),
        HookFormat::Qwen | HookFormat::Claude | HookFormat::Codex => {
            let value = serde_json::json!({
                "hookSpecificOutput": {
                    "hookEventName": event.name(),
                    "additionalContext": text,
                }
            });
            format!("{value}\n")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codex_gets_exactly_its_schema_and_nothing_prints_nothing() {
        let out = render(HookFormat::Codex, HookEvent::UserPromptSubmit, "hi");
        let value: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(
            value,
            serde_json::json!({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "hi"}})
        );
        assert_eq!(render(HookFormat::Codex, HookEvent::SessionStart, ""), "");
        assert_eq!(
            render(HookFormat::Plain, HookEvent::SessionStart, "x\n"),
            "x\n"
        );
    }
}
