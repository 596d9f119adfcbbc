//! The memory context an agent injects at the start of a session: the user, private and team
//! indexes within their limits, a reminder that memories are point-in-time observations, and
//! the memories relevant to a query.
//!
//! [`build`] is shared by `teammem context` and `teammem session-start` (after its sync).

use std::fs;

use serde::Serialize;

use crate::domain::index::{MAX_BYTES, MAX_LINES};
use crate::domain::scope::{INDEX_FILE, ScopeKind};

use super::recall::{self, DEFAULT_CHARS, DEFAULT_MAX};
use super::{OpError, Project, dream};

/// The line that tells the agent how to treat what follows.
pub const VERIFY_LINE: &str = "Memories are point-in-time observations, not live state: verify a memory against the current code and files before relying on it, and update or forget it when it is wrong.";

/// How the context is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookFormat {
    /// Qwen Code's SessionStart hook JSON.
    Qwen,
    /// Claude Code's SessionStart hook JSON.
    Claude,
    /// Plain text.
    Plain,
}

/// The context block.
#[derive(Debug, Clone, Serialize)]
pub struct Context {
    /// The text to inject.
    pub text: String,
    /// The scopes whose index was included.
    pub scopes: Vec<ScopeKind>,
    /// How many recalled memories were included.
    pub recalled: usize,
    /// Problems that did not stop the context (a session that could not be counted).
    pub warnings: Vec<String>,
}

/// Builds the context for the project's enabled scopes, with recall results for `query`.
/// Counts as one session for each scope's dream gate.
pub fn build(project: &Project, query: Option<&str>) -> Result<Context, OpError> {
    let scopes = project.default_scopes();
    let mut text = String::from("# Memory\n\n");
    text.push_str(VERIFY_LINE);
    text.push('\n');
    let mut shown = Vec::new();
    for &scope in &scopes {
        let dir = project.check_scope_safe(scope)?;
        let path = dir.join(INDEX_FILE);
        let is_file = fs::symlink_metadata(&path)
            .map(|m| m.is_file())
            .unwrap_or(false);
        if !is_file {
            continue;
        }
        let index = fs::read_to_string(&path).map_err(|e| OpError::io(&path, e))?;
        let index = within_limits(&index);
        if index.trim().is_empty() {
            continue;
        }
        text.push_str(&format!(
            "\n## {} memory ({})\n\n{}",
            title(scope),
            path.display(),
            index
        ));
        if !index.ends_with('\n') {
            text.push('\n');
        }
        shown.push(scope);
    }
    // Memories in two versions, named with the command that resolves them.
    if let Some(line) = super::resolve::conflict_line(project) {
        text.push_str(&format!("\n{line}\n"));
    }
    let mut recalled = 0;
    if let Some(query) = query.filter(|q| !q.trim().is_empty()) {
        let found = recall::recall(project, &scopes, query, DEFAULT_MAX, DEFAULT_CHARS)?;
        if !found.hits.is_empty() {
            text.push_str(&format!("\n## Memories relevant to: {}\n", query.trim()));
            for hit in &found.hits {
                let who = hit
                    .changed_by
                    .as_ref()
                    .map(|w| format!(", last changed by {w}"))
                    .unwrap_or_default();
                text.push_str(&format!(
                    "\n### {} ({}:{}, {}{who})\n{}\n\n{}\n",
                    hit.name, hit.scope, hit.id, hit.age, hit.description, hit.body
                ));
            }
            recalled = found.hits.len();
        }
    }
    // Counting the session must never cost the agent its context.
    let mut warnings = Vec::new();
    for &scope in &scopes {
        if let Err(e) = dream::record_session(project, scope) {
            warnings.push(format!(
                "could not count this session for the {scope} scope: {e}"
            ));
        }
    }
    Ok(Context {
        text,
        scopes: shown,
        recalled,
        warnings,
    })
}

fn title(scope: ScopeKind) -> &'static str {
    match scope {
        ScopeKind::User => "User",
        ScopeKind::Private => "Private project",
        ScopeKind::Team => "Team",
    }
}

/// An index as the agent may see it: at most [`MAX_LINES`] lines and [`MAX_BYTES`] bytes, cut
/// at a line end (a hand-edited index can be longer than a generated one).
pub fn within_limits(index: &str) -> String {
    let mut out = String::new();
    for (n, line) in index.split_inclusive('\n').enumerate() {
        if n >= MAX_LINES || out.len() + line.len() > MAX_BYTES {
            out.push_str("… (index cut at its limit)\n");
            break;
        }
        out.push_str(line);
    }
    out
}

/// The context as the hook expects it: SessionStart JSON for Qwen Code and Claude Code, the
/// text itself for plain.
pub fn render(context: &Context, format: HookFormat) -> String {
    match format {
        HookFormat::Plain => context.text.clone(),
        HookFormat::Qwen | HookFormat::Claude => {
            let value = serde_json::json!({
                "hookSpecificOutput": {
                    "hookEventName": "SessionStart",
                    "additionalContext": context.text,
                }
            });
            format!("{value}\n")
        }
    }
}
