//! `install-mcp`: adds `teammem mcp` to one MCP client's configuration — Claude Code's
//! `.mcp.json`, Qwen Code's `.qwen/settings.json`, Cursor's `.cursor/mcp.json` (all three in
//! the project, to be committed for the team) or Codex's `config.toml` (in `$CODEX_HOME`,
//! default `~/.codex`, as Codex reads project files only in trusted projects).
//!
//! The file is edited in place: other servers, other keys, comments and layout stay as they
//! are; only the `teammem` entry's `command`, `args` (and `type` for Claude Code) are set, so
//! keys a user added to it (`env`, timeouts) survive. Running it twice changes nothing.

use std::fs;
use std::path::{Path, PathBuf};

use jsonc_parser::ParseOptions;
use jsonc_parser::cst::{CstInputValue, CstObject, CstRootNode};
use serde::Serialize;
use serde_json::{Value, json};

use crate::domain::store;

use super::OpError;

/// The name of the server entry in every client's configuration.
pub const SERVER_NAME: &str = "teammem";

/// A client whose configuration `install-mcp` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Client {
    /// Claude Code: `<project>/.mcp.json`, `mcpServers`.
    Claude,
    /// Qwen Code: `<project>/.qwen/settings.json`, `mcpServers`.
    Qwen,
    /// Codex: `$CODEX_HOME/config.toml` (default `~/.codex/config.toml`), `[mcp_servers.*]`.
    Codex,
    /// Cursor: `<project>/.cursor/mcp.json`, `mcpServers`.
    Cursor,
}

/// Where the configuration files are.
#[derive(Debug, Clone)]
pub struct Places {
    /// The project's root (the git work tree).
    pub project: PathBuf,
    /// The user's home folder (`$HOME`), for the clients' user-wide files.
    pub home: Option<PathBuf>,
    /// Codex's home folder (`$CODEX_HOME`, else `~/.codex`).
    pub codex_home: Option<PathBuf>,
}

impl Places {
    /// The places for `project`, the home folders taken from the environment.
    pub fn from_env(project: PathBuf) -> Places {
        let home = std::env::var_os("HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from);
        let codex_home = std::env::var_os("CODEX_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(".codex")));
        Places {
            project,
            home,
            codex_home,
        }
    }

    /// The user's home folder, or an error saying how to set it.
    pub(crate) fn home(&self) -> Result<&Path, OpError> {
        self.home.as_deref().ok_or_else(|| {
            OpError::Usage("cannot find your home folder: set HOME and run again".into())
        })
    }

    /// Codex's home folder, or an error saying how to set it.
    pub(crate) fn codex_home(&self) -> Result<&Path, OpError> {
        self.codex_home.as_deref().ok_or_else(|| {
            OpError::Usage(
                "cannot find Codex's folder: set CODEX_HOME (or HOME) and run again".into(),
            )
        })
    }
}

/// What installing would change, or changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ConfigChange {
    /// The file did not exist.
    Created,
    /// The file existed and its `teammem` entry was added or corrected.
    Updated,
    /// The file already held this entry.
    Unchanged,
}

/// The plan for one client: the file and its text before and after.
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    /// The client.
    pub client: Client,
    /// The configuration file.
    pub path: PathBuf,
    /// What happens to it.
    pub change: ConfigChange,
    /// The server entry as it will be.
    pub entry: Value,
    /// Other servers already configured there, kept as they are.
    pub other_servers: Vec<String>,
    /// The file's text now (empty when it does not exist).
    #[serde(skip)]
    pub before: String,
    /// The file's text after the change.
    #[serde(skip)]
    pub after: String,
}

/// The command that starts the server: the program, and the arguments before `mcp`.
#[derive(Debug, Clone)]
pub struct ServerCommand {
    /// The program (`teammem` on PATH, or a full path).
    pub program: String,
    /// Extra arguments after `mcp` (`--publish`).
    pub extra: Vec<String>,
}

impl ServerCommand {
    /// The server entry's fields for `client`: `type` (Claude Code only), `command`, `args`.
    pub(crate) fn fields(&self, client: Client) -> Vec<(&'static str, Value)> {
        let mut fields: Vec<(&str, Value)> = Vec::new();
        if client == Client::Claude {
            fields.push(("type", json!("stdio")));
        }
        fields.push(("command", json!(self.program)));
        fields.push(("args", json!(self.args(client))));
        fields
    }

    fn args(&self, client: Client) -> Vec<String> {
        let mut args = Vec::new();
        // Cursor may start servers outside the project; its config expands ${workspaceFolder}.
        if client == Client::Cursor {
            args.extend(["-C".to_string(), "${workspaceFolder}".to_string()]);
        }
        args.push("mcp".into());
        args.extend(self.extra.iter().cloned());
        args
    }
}

/// Works out what installing the server for `client` does to its configuration file, without
/// writing anything.
pub fn plan(places: &Places, client: Client, command: &ServerCommand) -> Result<Plan, OpError> {
    let path = config_path(places, client)?;
    let before = read_config(&path)?;
    let fields = command.fields(client);
    let (after, (other_servers, entry)) =
        edit_keeping_encoding(before.as_deref().unwrap_or(""), |text| {
            let (after, other_servers, entry) = match client {
                Client::Codex => set_toml_server(&path, text, &fields)?,
                _ => set_json_server(&path, text, &fields)?,
            };
            Ok((after, (other_servers, entry)))
        })?;
    let change = ConfigChange::between(before.as_deref(), &after);
    check_writable(&path, &change)?;
    Ok(Plan {
        client,
        path,
        change,
        entry,
        other_servers,
        before: before.unwrap_or_default(),
        after,
    })
}

impl ConfigChange {
    /// What writing `after` over a file holding `before` (`None`: no file) does.
    pub(crate) fn between(before: Option<&str>, after: &str) -> ConfigChange {
        match before {
            None => ConfigChange::Created,
            Some(text) if text == after => ConfigChange::Unchanged,
            Some(_) => ConfigChange::Updated,
        }
    }
}

/// Writes a plan's file (atomically; its folder is created when missing).
pub fn apply(plan: &Plan) -> Result<(), OpError> {
    write_config(&plan.path, &plan.change, &plan.after)
}

/// A configuration file's text, `None` when it does not exist.
pub(crate) fn read_config(path: &Path) -> Result<Option<String>, OpError> {
    match fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(OpError::io(path, e)),
    }
}

/// Writes a configuration file's new text (atomically; its folder is created when missing),
/// unless nothing changed. An existing file keeps its permissions (`~/.claude.json` and
/// settings holding API keys are often private), and a symlink stays a link: the file it
/// points to is written (a settings file kept in a dotfiles repository and linked into place).
pub(crate) fn write_config(path: &Path, change: &ConfigChange, after: &str) -> Result<(), OpError> {
    if *change == ConfigChange::Unchanged {
        return Ok(());
    }
    let target = write_target(path)?;
    if let Some(parent) = target.parent() {
        fs::create_dir_all(parent).map_err(|e| OpError::io(parent, e))?;
    }
    match fs::metadata(&target) {
        Ok(meta) => store::replace_atomic(&target, after.as_bytes(), meta.permissions())?,
        Err(_) => store::write_atomic(&target, after.as_bytes())?,
    }
    Ok(())
}

/// The file writing `path` changes: `path` itself, or the file a symlink there points to
/// (created when the link dangles).
fn write_target(path: &Path) -> Result<PathBuf, OpError> {
    let is_link = fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    if !is_link {
        return Ok(path.to_path_buf());
    }
    if let Ok(target) = fs::canonicalize(path) {
        return Ok(target);
    }
    let link = fs::read_link(path).map_err(|e| OpError::io(path, e))?;
    Ok(path.parent().unwrap_or(Path::new("")).join(link))
}

/// Refuses to change a file its owner made read-only (write bits are not checked by the
/// system for root, so they are here): a protected settings file is not teammem's to replace.
pub(crate) fn check_writable(path: &Path, change: &ConfigChange) -> Result<(), OpError> {
    if *change != ConfigChange::Updated {
        return Ok(());
    }
    match fs::metadata(path) {
        Ok(meta) if meta.permissions().readonly() => Err(OpError::Usage(format!(
            "{}: the file is read-only — make it writable (`chmod u+w '{}'`) and run again, or \
             make the change `--dry-run` shows by hand; nothing was written",
            path.display(),
            path.display()
        ))),
        _ => Ok(()),
    }
}

/// Runs `edit` on a configuration file's text as its parser takes it (without a byte-order
/// mark) and gives the result back in the file's own form: the mark kept, and every line
/// ending in CRLF when the file's lines do (a file written on Windows).
pub(crate) fn edit_keeping_encoding<T>(
    text: &str,
    edit: impl FnOnce(&str) -> Result<(String, T), OpError>,
) -> Result<(String, T), OpError> {
    let (bom, body) = match text.strip_prefix('\u{feff}') {
        Some(rest) => ("\u{feff}", rest),
        None => ("", text),
    };
    let (after, extra) = edit(body)?;
    let mut out = String::with_capacity(bom.len() + after.len());
    out.push_str(bom);
    if body.contains("\r\n") {
        let mut previous = None;
        for c in after.chars() {
            if c == '\n' && previous != Some('\r') {
                out.push('\r');
            }
            out.push(c);
            previous = Some(c);
        }
    } else {
        out.push_str(&after);
    }
    Ok((out, extra))
}

/// `path:line:column: what` for a position `offset` bytes into `text`.
fn at_offset(path: &Path, text: &str, offset: usize) -> String {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    format!("{}:{line}:{column}", path.display())
}

fn config_path(places: &Places, client: Client) -> Result<PathBuf, OpError> {
    Ok(match client {
        Client::Claude => places.project.join(".mcp.json"),
        Client::Qwen => places.project.join(".qwen").join("settings.json"),
        Client::Cursor => places.project.join(".cursor").join("mcp.json"),
        Client::Codex => places.codex_home()?.join("config.toml"),
    })
}

/// The error for a configuration file teammem cannot edit safely: nothing is written.
pub(crate) fn unusable(path: &Path, what: &str) -> OpError {
    unusable_as(&path.display().to_string(), what)
}

/// [`unusable`] for a place in a file (`path:line:column`).
fn unusable_as(place: &str, what: &str) -> OpError {
    OpError::Usage(format!(
        "{place}: {what} — fix the file by hand (or move it aside) and run again; nothing was \
         written"
    ))
}

/// Parses a JSON (or JSONC) configuration file's text into a tree that keeps its comments and
/// layout; empty text is an empty object.
pub(crate) fn parse_json(path: &Path, text: &str) -> Result<CstRootNode, OpError> {
    let source = if text.trim().is_empty() { "{}\n" } else { text };
    let root = CstRootNode::parse(source, &ParseOptions::default()).map_err(|e| {
        let at = format!(
            "{}:{}:{}",
            path.display(),
            e.line_display(),
            e.column_display()
        );
        unusable_as(&at, &format!("not valid JSON ({})", e.kind()))
    })?;
    if root.object_value().is_none() {
        return Err(unusable(path, "the top level is not a JSON object"));
    }
    Ok(root)
}

/// Refuses an object holding `key` more than once (`shown` names it in the message): a client
/// reads the last one and the editor the first, so a change made there would not be seen.
pub(crate) fn unique_key(
    path: &Path,
    object: &CstObject,
    key: &str,
    shown: &str,
) -> Result<(), OpError> {
    let count = object
        .properties()
        .iter()
        .filter(|p| p.decoded_name().as_deref() == Some(key))
        .count();
    match count {
        0 | 1 => Ok(()),
        n => Err(unusable(
            path,
            &format!("`{shown}` is there {n} times (a client reads only the last); keep one"),
        )),
    }
}

/// A JSON tree's text, edited from `before`: ending in a newline, unless the edit changed
/// nothing (a file that holds everything already is left as it is, final newline or not).
pub(crate) fn json_text(root: &CstRootNode, before: &str) -> String {
    let mut text = root.to_string();
    if text == before {
        return text;
    }
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// A JSON value as input for the tree editor.
pub(crate) fn cst_value(value: &Value) -> CstInputValue {
    match value {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(items) => CstInputValue::Array(items.iter().map(cst_value).collect()),
        Value::Object(map) => {
            CstInputValue::Object(map.iter().map(|(k, v)| (k.clone(), cst_value(v))).collect())
        }
    }
}

/// Sets `mcpServers.teammem`'s fields in a JSON (or JSONC) document, keeping everything else.
/// Returns the new text, the other servers' names and the entry as it ends up.
pub(crate) fn set_json_server(
    path: &Path,
    text: &str,
    fields: &[(&str, Value)],
) -> Result<(String, Vec<String>, Value), OpError> {
    let unusable = |what: &str| unusable(path, what);
    let root = parse_json(path, text)?;
    let Some(top) = root.object_value() else {
        return Err(unusable("the top level is not a JSON object"));
    };
    unique_key(path, &top, "mcpServers", "mcpServers")?;
    let servers = match top.get("mcpServers") {
        None => top.object_value_or_set("mcpServers"),
        Some(prop) => prop
            .object_value()
            .ok_or_else(|| unusable("`mcpServers` is not an object"))?,
    };
    let other_servers: Vec<String> = servers
        .properties()
        .iter()
        .filter_map(|p| p.decoded_name())
        .filter(|n| n != SERVER_NAME)
        .collect();
    unique_key(path, &servers, SERVER_NAME, "mcpServers.teammem")?;
    let entry = match servers.get(SERVER_NAME) {
        Some(prop) => match prop.object_value() {
            Some(entry) => entry,
            None => {
                prop.set_value(CstInputValue::Object(Vec::new()));
                prop.object_value()
                    .ok_or_else(|| unusable("cannot replace the `teammem` entry"))?
            }
        },
        None => servers.object_value_or_set(SERVER_NAME),
    };
    for (key, want) in fields {
        unique_key(path, &entry, key, &format!("mcpServers.teammem.{key}"))?;
        match entry.get(key) {
            Some(prop) => {
                let have = prop.value().and_then(|v| v.to_serde_value());
                if have.as_ref() != Some(want) {
                    prop.set_value(cst_value(want));
                }
            }
            None => {
                entry.append(key, cst_value(want));
            }
        }
    }
    let final_entry = entry.to_serde_value().unwrap_or(Value::Null);
    Ok((json_text(&root, text), other_servers, final_entry))
}

/// Sets `[mcp_servers.teammem]`'s fields in a TOML document, keeping everything else.
pub(crate) fn set_toml_server(
    path: &Path,
    text: &str,
    fields: &[(&str, Value)],
) -> Result<(String, Vec<String>, Value), OpError> {
    let unusable = |what: String| unusable(path, &what);
    let mut doc: toml_edit::DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
        let at = at_offset(path, text, e.span().map_or(0, |s| s.start));
        unusable_as(&at, &format!("not valid TOML ({})", e.message()))
    })?;
    let servers = doc
        .entry("mcp_servers")
        .or_insert_with(|| {
            let mut table = toml_edit::Table::new();
            table.set_implicit(true);
            toml_edit::Item::Table(table)
        })
        .as_table_like_mut()
        .ok_or_else(|| unusable("`mcp_servers` is not a table".into()))?;
    let other_servers: Vec<String> = servers
        .iter()
        .map(|(k, _)| k.to_string())
        .filter(|k| k != SERVER_NAME)
        .collect();
    let entry = servers
        .entry(SERVER_NAME)
        .or_insert(toml_edit::Item::Table(toml_edit::Table::new()))
        .as_table_like_mut()
        .ok_or_else(|| unusable("`mcp_servers.teammem` is not a table".into()))?;
    for (key, want) in fields {
        let wanted = toml_value(want);
        let same = entry
            .get(key)
            .and_then(|item| item.as_value())
            .is_some_and(|have| same_toml(have, &wanted));
        if !same {
            entry.insert(key, toml_edit::Item::Value(wanted));
        }
    }
    let mut shown = serde_json::Map::new();
    for (key, item) in entry.iter() {
        if let Some(v) = item.as_value() {
            shown.insert(key.to_string(), json_of_toml(v));
        }
    }
    Ok((doc.to_string(), other_servers, Value::Object(shown)))
}

fn toml_value(value: &Value) -> toml_edit::Value {
    match value {
        Value::Array(items) => {
            let mut array = toml_edit::Array::new();
            for item in items {
                array.push(toml_value(item));
            }
            toml_edit::Value::Array(array)
        }
        Value::Bool(b) => toml_edit::Value::from(*b),
        Value::String(s) => toml_edit::Value::from(s.as_str()),
        other => toml_edit::Value::from(other.to_string()),
    }
}

fn same_toml(a: &toml_edit::Value, b: &toml_edit::Value) -> bool {
    json_of_toml(a) == json_of_toml(b)
}

fn json_of_toml(value: &toml_edit::Value) -> Value {
    match value {
        toml_edit::Value::String(s) => json!(s.value()),
        toml_edit::Value::Boolean(b) => json!(b.value()),
        toml_edit::Value::Integer(i) => json!(i.value()),
        toml_edit::Value::Float(f) => json!(f.value()),
        toml_edit::Value::Array(items) => Value::Array(items.iter().map(json_of_toml).collect()),
        other => json!(other.to_string().trim()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn places(dir: &Path) -> Places {
        Places {
            project: dir.to_path_buf(),
            home: Some(dir.join("home")),
            codex_home: Some(dir.join("codex-home")),
        }
    }

    fn command() -> ServerCommand {
        ServerCommand {
            program: "teammem".into(),
            extra: Vec::new(),
        }
    }

    #[test]
    fn json_keeps_other_servers_keys_and_comments_and_is_idempotent() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".qwen/settings.json");
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        let before = "{\n  // the team's settings\n  \"memory\": {\"enableTeamMemory\": true},\n  \"mcpServers\": {\n    \"other\": {\"command\": \"x\"},\n    \"teammem\": {\"command\": \"old\", \"env\": {\"A\": \"1\"}}\n  }\n}\n";
        fs::write(&path, before).unwrap();
        let plan1 = plan(&places(dir.path()), Client::Qwen, &command()).unwrap();
        assert_eq!(plan1.change, ConfigChange::Updated);
        assert_eq!(plan1.other_servers, vec!["other".to_string()]);
        apply(&plan1).unwrap();
        let after = fs::read_to_string(&path).unwrap();
        assert!(after.contains("// the team's settings"), "{after}");
        assert!(after.contains("\"other\": {\"command\": \"x\"}"), "{after}");
        let value: Value =
            serde_json::from_str(&after.replace("// the team's settings\n", "")).unwrap();
        assert_eq!(value["memory"]["enableTeamMemory"], json!(true));
        assert_eq!(value["mcpServers"]["teammem"]["command"], json!("teammem"));
        assert_eq!(value["mcpServers"]["teammem"]["args"], json!(["mcp"]));
        assert_eq!(value["mcpServers"]["teammem"]["env"], json!({"A": "1"}));
        let plan2 = plan(&places(dir.path()), Client::Qwen, &command()).unwrap();
        assert_eq!(plan2.change, ConfigChange::Unchanged);
    }

    #[test]
    fn new_files_for_each_client_parse_as_their_format() {
        let dir = tempfile::tempdir().unwrap();
        for client in [Client::Claude, Client::Cursor, Client::Qwen] {
            let p = plan(&places(dir.path()), client, &command()).unwrap();
            assert_eq!(p.change, ConfigChange::Created);
            let value: Value = serde_json::from_str(&p.after).unwrap();
            let entry = &value["mcpServers"]["teammem"];
            assert_eq!(entry["command"], json!("teammem"));
            assert_eq!(
                entry["args"].as_array().unwrap().last(),
                Some(&json!("mcp"))
            );
        }
        let p = plan(&places(dir.path()), Client::Codex, &command()).unwrap();
        let doc: toml_edit::DocumentMut = p.after.parse().unwrap();
        assert_eq!(
            doc["mcp_servers"]["teammem"]["command"].as_str(),
            Some("teammem")
        );
        assert!(p.path.ends_with("codex-home/config.toml"));
    }

    #[test]
    fn toml_keeps_comments_other_tables_and_extra_keys() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("codex-home/config.toml");
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        let before = "# my codex\nmodel = \"o3\"\n\n[mcp_servers.docs]\ncommand = \"docs-mcp\"\n\n[mcp_servers.teammem]\ncommand = \"teammem\"\nstartup_timeout_sec = 20\n";
        fs::write(&path, before).unwrap();
        let p = plan(&places(dir.path()), Client::Codex, &command()).unwrap();
        assert_eq!(p.change, ConfigChange::Updated);
        apply(&p).unwrap();
        let after = fs::read_to_string(&path).unwrap();
        assert!(after.starts_with("# my codex\nmodel = \"o3\"\n"), "{after}");
        assert!(
            after.contains("[mcp_servers.docs]\ncommand = \"docs-mcp\""),
            "{after}"
        );
        assert!(after.contains("startup_timeout_sec = 20"), "{after}");
        assert!(after.contains("args = [\"mcp\"]"), "{after}");
        let again = plan(&places(dir.path()), Client::Codex, &command()).unwrap();
        assert_eq!(again.change, ConfigChange::Unchanged);
    }

    #[test]
    fn a_broken_file_is_never_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".mcp.json");
        fs::write(&path, "{\"mcpServers\": [1, 2]}").unwrap();
        let err = plan(&places(dir.path()), Client::Claude, &command()).unwrap_err();
        assert!(
            err.to_string().contains("`mcpServers` is not an object"),
            "{err}"
        );
        fs::write(&path, "{not json").unwrap();
        let err = plan(&places(dir.path()), Client::Claude, &command()).unwrap_err();
        assert!(err.to_string().contains("not valid JSON"), "{err}");
        assert_eq!(fs::read_to_string(&path).unwrap(), "{not json");
    }
}
