//! What every edit `install-agent` makes to a client's configuration file keeps, checked on
//! any text by the property tests (`no_panic.rs`) and the `agent_config` fuzz target (which
//! includes this file): the edit is made once (a second changes nothing); and when the file
//! was strict JSON or TOML, the result still is, a strict parser (the client's) finds
//! teammem's entries in it, and every key and value the file had outside them is still there.

use serde_json::Value;
use teammem::agent_config::{AgentFile, edit_text};

/// The hook events teammem owns entries under, with the word their command holds.
const HOOKS: [(&str, &str); 2] = [
    ("SessionStart", "session-start"),
    ("UserPromptSubmit", "prompt-context"),
];

/// Checks the edit of a file of `kind` holding `before` into `after`.
pub fn check_edit(kind: AgentFile, before: &str, after: &str) {
    match edit_text(kind, after) {
        Ok(again) => assert_eq!(again, after, "{kind:?}: a second edit changed the text"),
        Err(e) => panic!("{kind:?}: the edited text is refused ({e}):\n{after}"),
    }
    let before = before.strip_prefix('\u{feff}').unwrap_or(before);
    let after = after.strip_prefix('\u{feff}').unwrap_or(after);
    match kind {
        AgentFile::CodexConfig => check_toml(before, after),
        _ => check_json(kind, before, after),
    }
}

fn check_json(kind: AgentFile, before: &str, after: &str) {
    let source = if before.trim().is_empty() {
        "{}"
    } else {
        before
    };
    let Ok(old @ Value::Object(_)) = serde_json::from_str::<Value>(source) else {
        return;
    };
    let new: Value = serde_json::from_str(after).unwrap_or_else(|e| {
        panic!("{kind:?}: strict JSON became invalid ({e}):\n{before}\n---\n{after}")
    });
    let servers = matches!(kind, AgentFile::ClaudeServers | AgentFile::QwenSettings);
    let hooks = matches!(
        kind,
        AgentFile::ClaudeSettings | AgentFile::QwenSettings | AgentFile::CodexHooks
    );
    if servers {
        let entry = &new["mcpServers"]["teammem"];
        assert_eq!(
            entry["command"], "teammem",
            "{kind:?}: no server in\n{after}"
        );
        assert_eq!(
            entry["args"],
            serde_json::json!(["mcp"]),
            "{kind:?}:\n{after}"
        );
    }
    if hooks {
        for (event, word) in HOOKS {
            let commands: Vec<&str> = new["hooks"][event]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|group| group["hooks"].as_array().into_iter().flatten())
                .filter_map(|handler| handler["command"].as_str())
                .collect();
            assert!(
                commands
                    .iter()
                    .any(|c| c.contains(word) || c.contains("context")),
                "{kind:?}: no {event} hook a client would run in\n{after}"
            );
        }
    }
    let mut leaves = Vec::new();
    json_leaves(&old, &mut Vec::new(), &mut leaves);
    for (path, value) in leaves {
        // teammem's entries, and the (empty) objects they go into.
        let ours = (servers && related(&path, &["mcpServers", "teammem"]))
            || (hooks
                && HOOKS
                    .iter()
                    .any(|(event, _)| related(&path, &["hooks", event])));
        if ours {
            continue;
        }
        let mut at = &new;
        for key in &path {
            at = match at {
                Value::Object(map) => map.get(key).unwrap_or(&Value::Null),
                Value::Array(items) => key
                    .parse::<usize>()
                    .ok()
                    .and_then(|i| items.get(i))
                    .unwrap_or(&Value::Null),
                _ => &Value::Null,
            };
        }
        assert_eq!(
            at, value,
            "{kind:?}: {path:?} changed or was lost:\n{before}\n---\n{after}"
        );
    }
}

/// Whether one of `path` and `managed` starts with the other.
fn related(path: &[String], managed: &[&str]) -> bool {
    path.iter().zip(managed).all(|(a, b)| a == b)
}

/// Every leaf of `value` (scalars and empty containers) with its path of keys and indexes.
fn json_leaves<'a>(
    value: &'a Value,
    path: &mut Vec<String>,
    out: &mut Vec<(Vec<String>, &'a Value)>,
) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (key, item) in map {
                path.push(key.clone());
                json_leaves(item, path, out);
                path.pop();
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for (i, item) in items.iter().enumerate() {
                path.push(i.to_string());
                json_leaves(item, path, out);
                path.pop();
            }
        }
        _ => out.push((path.clone(), value)),
    }
}

fn check_toml(before: &str, after: &str) {
    let Ok(old) = before.parse::<toml_edit::DocumentMut>() else {
        return;
    };
    let new: toml_edit::DocumentMut = after
        .parse()
        .unwrap_or_else(|e| panic!("TOML became invalid ({e}):\n{before}\n---\n{after}"));
    let entry = &new["mcp_servers"]["teammem"];
    assert_eq!(
        entry["command"].as_str(),
        Some("teammem"),
        "no server in\n{after}"
    );
    let mut leaves = Vec::new();
    toml_leaves(old.as_item(), &mut Vec::new(), &mut leaves);
    let mut now = Vec::new();
    toml_leaves(new.as_item(), &mut Vec::new(), &mut now);
    for (path, value) in leaves {
        if path.starts_with(&["mcp_servers".into(), "teammem".into()]) {
            continue;
        }
        let found = now.iter().find(|(p, _)| *p == path).map(|(_, v)| v);
        assert_eq!(
            found,
            Some(&value),
            "{path:?} changed or was lost:\n{before}\n---\n{after}"
        );
    }
}

/// Every scalar of a TOML item (as its value's text without decoration) with its path.
fn toml_leaves(
    item: &toml_edit::Item,
    path: &mut Vec<String>,
    out: &mut Vec<(Vec<String>, String)>,
) {
    match item {
        toml_edit::Item::Table(table) => {
            for (key, item) in table.iter() {
                path.push(key.to_string());
                toml_leaves(item, path, out);
                path.pop();
            }
        }
        toml_edit::Item::ArrayOfTables(tables) => {
            for (i, table) in tables.iter().enumerate() {
                path.push(i.to_string());
                for (key, item) in table.iter() {
                    path.push(key.to_string());
                    toml_leaves(item, path, out);
                    path.pop();
                }
                path.pop();
            }
        }
        toml_edit::Item::Value(value) => toml_value_leaves(value, path, out),
        toml_edit::Item::None => {}
    }
}

fn toml_value_leaves(
    value: &toml_edit::Value,
    path: &mut Vec<String>,
    out: &mut Vec<(Vec<String>, String)>,
) {
    match value {
        toml_edit::Value::InlineTable(table) => {
            for (key, value) in table.iter() {
                path.push(key.to_string());
                toml_value_leaves(value, path, out);
                path.pop();
            }
        }
        toml_edit::Value::Array(items) => {
            for (i, value) in items.iter().enumerate() {
                path.push(i.to_string());
                toml_value_leaves(value, path, out);
                path.pop();
            }
        }
        scalar => {
            let mut bare = scalar.clone();
            bare.decor_mut().clear();
            out.push((path.clone(), bare.to_string()));
        }
    }
}
