//! Refused calls as the agent reads them: what was refused and the tools that fix it, unknown
//! arguments, and saves whose fields hold a secret or a trust error.

use std::fmt::Write as _;

use serde_json::{Map, Value};

use super::ToolError;
use crate::domain::gate::Gate;
use crate::domain::secrets;
use crate::ops::OpError;
use crate::ops::add::NewMemory;
use crate::ops::mcp::gate;

/// A refused write as the agent reads it: what was refused, and the tools that fix it.
pub(super) fn refusal(err: OpError) -> ToolError {
    match err {
        OpError::Refused(msg) => ToolError::Refused(format!(
            "{} (memory_read shows it; memory_forget removes it before a corrected save)",
            secrets::redact_text(&msg)
        )),
        other => other.into(),
    }
}

/// Refuses arguments the tool's schema does not name, before any other check, so that a
/// misspelt argument is reported as such rather than as a missing one.
pub(super) fn refuse_unknown_arguments(
    tool: &str,
    arguments: &Map<String, Value>,
) -> Result<(), ToolError> {
    let schema = crate::ops::mcp::schema::input_schema(tool);
    let Some(known) = schema["properties"].as_object() else {
        return Ok(());
    };
    let mut unknown: Vec<String> = arguments
        .keys()
        .filter(|k| !known.contains_key(k.as_str()))
        .map(|k| format!("`{}`", secrets::redact_text(k)))
        .collect();
    if unknown.is_empty() {
        return Ok(());
    }
    unknown.sort();
    let mut names: Vec<&String> = known.keys().collect();
    names.sort();
    let names: Vec<String> = names.iter().map(|k| format!("`{k}`")).collect();
    Err(ToolError::BadInput(format!(
        "{tool}: unknown argument{} {} — it takes {}",
        if unknown.len() == 1 { "" } else { "s" },
        unknown.join(", "),
        names.join(", ")
    )))
}

/// Refuses a save whose fields hold a secret or a trust error, naming the field, the rule and
/// the line — never the matched text.
pub(super) fn refuse_problems(
    accepted: &Gate,
    new: &NewMemory,
    redacted: bool,
) -> Result<(), ToolError> {
    let keywords = new.keywords.clone().unwrap_or_default().join("\n");
    let fields = [
        ("name", new.name.as_str()),
        ("description", new.description.as_str()),
        ("keywords", keywords.as_str()),
        ("body", new.body.as_str()),
    ];
    let mut secrets_found = Vec::new();
    let mut risks = Vec::new();
    for (field, value) in fields {
        for p in gate::judge(accepted, value) {
            let at = if field == "body" {
                format!("body line {}", p.line)
            } else {
                field.to_string()
            };
            if p.rule == crate::domain::check::SECRET {
                secrets_found.push(format!("{at}: {}", p.what));
            } else {
                risks.push(format!("{at}: {} ({})", p.rule, p.what));
            }
        }
    }
    if secrets_found.is_empty() && risks.is_empty() {
        return Ok(());
    }
    let mut msg = String::from("Not saved: ");
    if !secrets_found.is_empty() {
        let _ = write!(
            msg,
            "it contains {} ({}). Memories are injected into agents' prompts, and team memory \
             is shared with every collaborator, so secrets never go in: name where the secret \
             lives instead{}.",
            if secrets_found.len() == 1 {
                "a secret".to_string()
            } else {
                format!("{} secrets", secrets_found.len())
            },
            secrets_found.join("; "),
            if redacted {
                ""
            } else {
                ", or call memory_save again with `redact: true` to store [REDACTED_SECRET] in its place"
            }
        );
    }
    if !risks.is_empty() {
        if !secrets_found.is_empty() {
            msg.push(' ');
        }
        let _ = write!(
            msg,
            "It holds text an agent would read as instructions or cannot see ({}). Memories are \
             read into every session's prompt, so state the fact plainly: no instructions to \
             ignore rules, no role markers, hidden characters or hidden comments, no commands \
             to fetch and run.",
            risks.join("; ")
        );
    }
    Err(ToolError::Refused(msg))
}
