//! `install-agent`: wires one coding agent to teammem in that client's own files — the
//! SessionStart hook (`teammem session-start --hook CLIENT`), the UserPromptSubmit hook
//! (`teammem prompt-context --hook CLIENT`) and the MCP server (`teammem mcp`).
//!
//! Built on `install_mcp`'s editors: each file is edited in place, keeping other settings,
//! comments and layout; a hook of teammem's already there is corrected rather than added
//! twice, so a second run changes nothing. Where the client still wants a person's yes (Codex
//! trusts each hook by hash in `/hooks`, Qwen Code approves a project's MCP server, Claude Code
//! a project's `.mcp.json` server), the plan names that step exactly.

use std::path::{Path, PathBuf};

use jsonc_parser::cst::CstInputValue;
use serde::Serialize;
use serde_json::{Value, json};

use super::OpError;
use super::install_mcp::{
    self, Client, ConfigChange, Places, ServerCommand, json_text, parse_json, unique_key, unusable,
};

/// Whose files are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AgentScope {
    /// The project's files, to be committed for the team.
    Project,
    /// The user's own files, for every project.
    User,
}

impl AgentScope {
    /// The scope used when none is asked for: the project for Claude Code and Qwen Code (their
    /// project files are shared with the team), the user for Codex (which reads a project's
    /// `.codex/` only once the project is trusted).
    pub fn default_for(client: Client) -> AgentScope {
        match client {
            Client::Codex => AgentScope::User,
            _ => AgentScope::Project,
        }
    }
}

/// One hook teammem installs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HookSpec {
    /// The client's event name.
    pub event: &'static str,
    /// The teammem subcommand the hook runs.
    pub subcommand: &'static str,
    /// How long Claude Code and Codex let it run, in seconds (Qwen Code keeps its default,
    /// 60 s). Above session start's 15 s sync budget, so a sync is never cut short.
    pub timeout_secs: u64,
}

/// The hooks every client gets.
pub const HOOKS: [HookSpec; 2] = [
    HookSpec {
        event: "SessionStart",
        subcommand: "session-start",
        timeout_secs: 30,
    },
    HookSpec {
        event: "UserPromptSubmit",
        subcommand: "prompt-context",
        timeout_secs: 10,
    },
];

/// What happens to one configuration file.
#[derive(Debug, Clone, Serialize)]
pub struct FileEdit {
    /// The file.
    pub path: PathBuf,
    /// Created, updated or unchanged.
    pub change: ConfigChange,
    /// What teammem sets in it, in words (`the teammem MCP server`, `the SessionStart hook`).
    pub sets: Vec<String>,
    /// Its text now (empty when it does not exist).
    #[serde(skip)]
    pub before: String,
    /// Its text after the change.
    #[serde(skip)]
    pub after: String,
}

/// The plan for one client: every file it touches, and what is left for a person.
#[derive(Debug, Clone, Serialize)]
pub struct AgentPlan {
    /// The client.
    pub client: Client,
    /// Project or user files.
    pub scope: AgentScope,
    /// The files, in the order they are written.
    pub files: Vec<FileEdit>,
    /// The step the client leaves to a person, exactly as to be done.
    pub next_step: Option<String>,
}

/// Works out what wiring `client` does to its files, without writing anything.
pub fn plan(
    places: &Places,
    client: Client,
    scope: AgentScope,
    command: &ServerCommand,
) -> Result<AgentPlan, OpError> {
    let project = places.project.as_path();
    let mut files = Vec::new();
    let mut edit = |kind: AgentFile, path: PathBuf| -> Result<(), OpError> {
        files.push(edit_file(&path, |path, text| {
            edit_agent_file(kind, path, text, command)
        })?);
        Ok(())
    };
    match (client, scope) {
        (Client::Claude, AgentScope::Project) => {
            edit(AgentFile::ClaudeServers, project.join(".mcp.json"))?;
            edit(
                AgentFile::ClaudeSettings,
                project.join(".claude").join("settings.json"),
            )?;
        }
        (Client::Claude, AgentScope::User) => {
            let home = places.home()?;
            edit(AgentFile::ClaudeServers, home.join(".claude.json"))?;
            edit(
                AgentFile::ClaudeSettings,
                home.join(".claude").join("settings.json"),
            )?;
        }
        (Client::Qwen, AgentScope::Project) => {
            edit(
                AgentFile::QwenSettings,
                project.join(".qwen").join("settings.json"),
            )?;
        }
        (Client::Qwen, AgentScope::User) => {
            let settings = places.home()?.join(".qwen").join("settings.json");
            edit(AgentFile::QwenSettings, settings)?;
        }
        (Client::Codex, scope) => {
            let folder = match scope {
                AgentScope::Project => project.join(".codex"),
                AgentScope::User => places.codex_home()?.to_path_buf(),
            };
            edit(AgentFile::CodexConfig, folder.join("config.toml"))?;
            edit(AgentFile::CodexHooks, folder.join("hooks.json"))?;
        }
        (Client::Cursor, _) => {
            return Err(OpError::Usage(
                "Cursor has no session hooks teammem can install: use `teammem install-mcp \
                 --client cursor` for its MCP server"
                    .into(),
            ));
        }
    }
    let next_step = next_step(client, scope, project);
    Ok(AgentPlan {
        client,
        scope,
        files,
        next_step,
    })
}

/// One kind of file `install-agent` edits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentFile {
    /// Claude Code's MCP servers: `.mcp.json`, or `~/.claude.json` for the user.
    ClaudeServers,
    /// Claude Code's settings, where its hooks are: `.claude/settings.json`.
    ClaudeSettings,
    /// Qwen Code's settings, holding both its MCP servers and its hooks.
    QwenSettings,
    /// Codex's `config.toml`, where its MCP servers are.
    CodexConfig,
    /// Codex's `hooks.json`.
    CodexHooks,
}

impl AgentFile {
    /// Every kind.
    pub const ALL: [AgentFile; 5] = [
        AgentFile::ClaudeServers,
        AgentFile::ClaudeSettings,
        AgentFile::QwenSettings,
        AgentFile::CodexConfig,
        AgentFile::CodexHooks,
    ];

    fn client(self) -> Client {
        match self {
            AgentFile::ClaudeServers | AgentFile::ClaudeSettings => Client::Claude,
            AgentFile::QwenSettings => Client::Qwen,
            AgentFile::CodexConfig | AgentFile::CodexHooks => Client::Codex,
        }
    }
}

/// What `install-agent` (running `teammem` from PATH) makes of a file of `kind` holding
/// `text`: the new text, or the refusal a person would read (nothing is read or written on
/// disk). The same edit as a real run, for tests and fuzzing.
pub fn edit_text(kind: AgentFile, text: &str) -> Result<String, OpError> {
    let command = ServerCommand {
        program: "teammem".into(),
        extra: Vec::new(),
    };
    let path = Path::new("settings");
    install_mcp::edit_keeping_encoding(text, |text| edit_agent_file(kind, path, text, &command))
        .map(|(text, _)| text)
}

/// Edits the text of one file of `kind`; returns the new text and what was set, in words.
fn edit_agent_file(
    kind: AgentFile,
    path: &Path,
    text: &str,
    command: &ServerCommand,
) -> Result<(String, Vec<String>), OpError> {
    let client = kind.client();
    let hook_command = |hook: &HookSpec| {
        format!(
            "{} {} --hook {}",
            shell_word(&command.program),
            hook.subcommand,
            client_name(client)
        )
    };
    match kind {
        AgentFile::ClaudeServers => set_server_json(path, text, client, command),
        AgentFile::ClaudeSettings | AgentFile::CodexHooks => {
            set_hooks_json(path, text, client, &hook_command)
        }
        AgentFile::QwenSettings => {
            let (text, mut sets) = set_server_json(path, text, client, command)?;
            let (text, hooks) = set_hooks_json(path, &text, client, &hook_command)?;
            sets.extend(hooks);
            Ok((text, sets))
        }
        AgentFile::CodexConfig => {
            let fields = command.fields(client);
            let (text, _, _) = install_mcp::set_toml_server(path, text, &fields)?;
            Ok((text, vec!["the teammem MCP server".to_string()]))
        }
    }
}

/// Writes every file of a plan that changes (each atomically).
pub fn apply(plan: &AgentPlan) -> Result<(), OpError> {
    for file in &plan.files {
        install_mcp::write_config(&file.path, &file.change, &file.after)?;
    }
    Ok(())
}

/// The client's name as `--hook` takes it.
fn client_name(client: Client) -> &'static str {
    match client {
        Client::Claude => "claude",
        Client::Qwen => "qwen",
        Client::Codex => "codex",
        Client::Cursor => "cursor",
    }
}

/// What the client leaves to a person once the files are written.
fn next_step(client: Client, scope: AgentScope, project: &Path) -> Option<String> {
    match (client, scope) {
        // Claude Code asks once whether to use a project's .mcp.json servers.
        (Client::Claude, AgentScope::Project) => Some(format!(
            "start `claude` in {} and approve the project's MCP server \"teammem\" when asked",
            project.display()
        )),
        (Client::Claude, AgentScope::User) => None,
        // Qwen Code gates MCP servers from a workspace's settings until approved, by hash.
        (Client::Qwen, AgentScope::Project) => Some(format!(
            "run `qwen mcp approve teammem` in {}",
            project.display()
        )),
        (Client::Qwen, AgentScope::User) => None,
        // Codex runs no hook until a person trusted its current definition in /hooks.
        (Client::Codex, AgentScope::User) => Some(
            "start `codex`, open `/hooks` and trust the two teammem hooks (SessionStart and \
             UserPromptSubmit); Codex skips them until then"
                .to_string(),
        ),
        (Client::Codex, AgentScope::Project) => Some(format!(
            "start `codex` in {} and trust the project when asked (Codex ignores an untrusted \
             project's .codex/), then open `/hooks` and trust the two teammem hooks \
             (SessionStart and UserPromptSubmit)",
            project.display()
        )),
        (Client::Cursor, _) => None,
    }
}

/// Reads `path`, applies `edit` to its text and says what changed.
fn edit_file(
    path: &Path,
    edit: impl FnOnce(&Path, &str) -> Result<(String, Vec<String>), OpError>,
) -> Result<FileEdit, OpError> {
    let before = install_mcp::read_config(path)?;
    let (after, sets) =
        install_mcp::edit_keeping_encoding(before.as_deref().unwrap_or(""), |text| {
            edit(path, text)
        })?;
    let change = ConfigChange::between(before.as_deref(), &after);
    install_mcp::check_writable(path, &change)?;
    Ok(FileEdit {
        path: path.to_path_buf(),
        change,
        sets,
        before: before.unwrap_or_default(),
        after,
    })
}

fn set_server_json(
    path: &Path,
    text: &str,
    client: Client,
    command: &ServerCommand,
) -> Result<(String, Vec<String>), OpError> {
    let (text, _, _) = install_mcp::set_json_server(path, text, &command.fields(client))?;
    Ok((text, vec!["the teammem MCP server".to_string()]))
}

/// Sets both hooks in a JSON settings file (`hooks.EVENT[].hooks[]`, the shape Claude Code,
/// Codex's hooks.json and Qwen Code share).
fn set_hooks_json(
    path: &Path,
    text: &str,
    client: Client,
    hook_command: &dyn Fn(&HookSpec) -> String,
) -> Result<(String, Vec<String>), OpError> {
    let mut text = text.to_string();
    let mut sets = Vec::new();
    for hook in &HOOKS {
        // Qwen Code 0.23 reads a hook's timeout in milliseconds and 0.24 in seconds: no
        // number means the same to both, so its hooks get its default (60 s in both).
        let timeout = match client {
            Client::Qwen => None,
            _ => Some(hook.timeout_secs),
        };
        text = set_json_hook(path, &text, hook, &hook_command(hook), timeout)?;
        sets.push(format!("the {} hook", hook.event));
    }
    Ok((text, sets))
}

/// Sets one command hook under `hooks.EVENT`: a handler of teammem's running the same
/// subcommand is corrected in place (its matcher, timeout and other keys kept), and another
/// such handler in a group with the same matcher, which would deliver the memory twice, is
/// removed; a handler that runs teammem in a way of the user's own (the ready script
/// `hooks/session-start`, a `cd … &&` or a variable before it) is kept as written. Otherwise
/// a new matcher group is appended after the user's own.
fn set_json_hook(
    path: &Path,
    text: &str,
    hook: &HookSpec,
    command: &str,
    timeout: Option<u64>,
) -> Result<String, OpError> {
    let root = parse_json(path, text)?;
    let top = root
        .object_value()
        .ok_or_else(|| unusable(path, "the top level is not a JSON object"))?;
    unique_key(path, &top, "hooks", "hooks")?;
    let hooks = match top.get("hooks") {
        None => top.object_value_or_set("hooks"),
        Some(prop) => prop
            .object_value()
            .ok_or_else(|| unusable(path, "`hooks` is not an object"))?,
    };
    let event = format!("hooks.{}", hook.event);
    unique_key(path, &hooks, hook.event, &event)?;
    let groups = match hooks.get(hook.event) {
        None => hooks.array_value_or_set(hook.event),
        Some(prop) => prop
            .array_value()
            .ok_or_else(|| unusable(path, &format!("`{event}` is not an array")))?,
    };
    // The matcher of the group whose handler is teammem's, once one is found.
    let mut found: Option<Option<Value>> = None;
    for group in groups.elements() {
        let Some(group) = group.as_object() else {
            continue;
        };
        unique_key(path, &group, "hooks", &format!("{event}[].hooks"))?;
        unique_key(path, &group, "matcher", &format!("{event}[].matcher"))?;
        let Some(handlers) = group.array_value("hooks") else {
            continue;
        };
        let matcher = group
            .get("matcher")
            .and_then(|m| m.value())
            .and_then(|v| v.to_serde_value());
        let mut removed = false;
        for handler in handlers.elements() {
            let Some(handler) = handler.as_object() else {
                continue;
            };
            for key in ["command", "type"] {
                unique_key(path, &handler, key, &format!("{event}[].hooks[].{key}"))?;
            }
            let Some(prop) = handler.get("command") else {
                continue;
            };
            let have = prop.value().and_then(|v| v.to_serde_value());
            let Some(Value::String(have)) = have else {
                continue;
            };
            let form = teammem_hook(&have, hook);
            if form == HookForm::Other {
                continue;
            }
            if let Some(first) = &found {
                if *first == matcher && form != HookForm::Custom {
                    handler.remove();
                    removed = true;
                }
                continue;
            }
            found = Some(matcher.clone());
            if form == HookForm::Custom {
                continue;
            }
            if have != command {
                prop.set_value(CstInputValue::String(command.to_string()));
            }
            match handler.get("type") {
                Some(kind)
                    if kind.value().and_then(|v| v.to_serde_value()) == Some(json!("command")) => {}
                Some(kind) => kind.set_value(CstInputValue::String("command".into())),
                None => {
                    handler.insert(0, "type", CstInputValue::String("command".into()));
                }
            }
        }
        // A group left without handlers by the removal above would only hold a matcher.
        if removed && handlers.elements().is_empty() {
            group.remove();
        }
    }
    if found.is_some() {
        return Ok(json_text(&root, text));
    }
    // Built field by field: a JSON map would sort `type` after `command`.
    let mut handler = vec![
        ("type".into(), CstInputValue::String("command".into())),
        ("command".into(), CstInputValue::String(command.to_string())),
    ];
    if let Some(timeout) = timeout {
        handler.push(("timeout".into(), CstInputValue::Number(timeout.to_string())));
    }
    let handler = CstInputValue::Object(handler);
    groups.append(CstInputValue::Object(vec![(
        "hooks".into(),
        CstInputValue::Array(vec![handler]),
    )]));
    Ok(json_text(&root, text))
}

/// What a hook handler's shell command is to teammem.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HookForm {
    /// Teammem itself runs the hook's subcommand (whatever path or flags), or, at
    /// SessionStart, the `teammem context --hook …` older docs showed (which ignores the
    /// hook's input and repeats the memory on resume): corrected to the wanted command.
    Direct,
    /// Teammem's hook in a form of the user's own: the ready script (`hooks/session-start`),
    /// or teammem after `cd … &&`, `env`, a variable. Kept as written.
    Custom,
    /// Not teammem's hook.
    Other,
}

/// What `command` is to teammem's `hook`.
fn teammem_hook(command: &str, hook: &HookSpec) -> HookForm {
    let commands = shell_commands(command);
    let sole = commands.len() == 1;
    for words in &commands {
        // Variables set for the command, and the programs that only run the next word.
        let lead = words
            .iter()
            .take_while(|w| {
                is_assignment(w) || matches!(w.as_str(), "env" | "exec" | "command" | "sh" | "bash")
            })
            .count();
        let Some(program) = words.get(lead) else {
            continue;
        };
        let args = &words[lead + 1..];
        let name = program.rsplit(['/', '\\']).next().unwrap_or(program);
        let runs_sub = args.iter().any(|w| w == hook.subcommand);
        let old_start = hook.event == "SessionStart"
            && args.first().is_some_and(|w| w == "context")
            && args
                .iter()
                .any(|w| w == "--hook" || w.starts_with("--hook="));
        let teammem = name == "teammem" || name == "teammem.exe";
        if teammem && (runs_sub || old_start) {
            return match sole && lead == 0 {
                true => HookForm::Direct,
                false if old_start => HookForm::Direct,
                false => HookForm::Custom,
            };
        }
        // The ready scripts shipped in teammem's `hooks/` folder.
        let script = format!("hooks/{}", hook.subcommand);
        if program.replace('\\', "/").ends_with(&script) {
            return HookForm::Custom;
        }
    }
    HookForm::Other
}

/// Whether a shell word sets a variable (`NAME=value`).
fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// The simple commands of a shell command line, each as its words with quotes removed
/// (single, double, backslash), split at unquoted `;`, `&`, `|` and newlines. Enough to read
/// a hook's command line; nothing is expanded.
fn shell_commands(line: &str) -> Vec<Vec<String>> {
    let mut commands = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    w.push(c);
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => {
                            if let Some(next) = chars.next() {
                                w.push(next);
                            }
                        }
                        _ => w.push(c),
                    }
                }
            }
            '\\' => {
                if let Some(next) = chars.next() {
                    word.get_or_insert_with(String::new).push(next);
                }
            }
            ';' | '&' | '|' | '\n' => {
                words.extend(word.take());
                if !words.is_empty() {
                    commands.push(std::mem::take(&mut words));
                }
            }
            c if c.is_whitespace() => words.extend(word.take()),
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word.take());
    if !words.is_empty() {
        commands.push(words);
    }
    commands
}

/// `word` as one word of a POSIX shell command: as is when it holds only safe characters,
/// else single-quoted.
fn shell_word(word: &str) -> String {
    let safe = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:,=@%".contains(c));
    if safe {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;

    fn places(dir: &Path) -> Places {
        Places {
            project: dir.join("project"),
            home: Some(dir.join("home")),
            codex_home: Some(dir.join("home/.codex")),
        }
    }

    fn command() -> ServerCommand {
        ServerCommand {
            program: "teammem".into(),
            extra: Vec::new(),
        }
    }

    fn json(text: &str) -> Value {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn fresh_claude_project_gets_mcp_json_and_both_hooks() {
        let dir = tempfile::tempdir().unwrap();
        let p = plan(
            &places(dir.path()),
            Client::Claude,
            AgentScope::Project,
            &command(),
        )
        .unwrap();
        assert_eq!(p.files.len(), 2);
        assert!(p.files[0].path.ends_with("project/.mcp.json"));
        assert!(p.files[1].path.ends_with("project/.claude/settings.json"));
        assert!(p.files.iter().all(|f| f.change == ConfigChange::Created));
        let settings = json(&p.files[1].after);
        assert_eq!(
            settings["hooks"]["SessionStart"],
            json!([{"hooks": [{"type": "command", "command": "teammem session-start --hook claude", "timeout": 30}]}])
        );
        assert_eq!(
            settings["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"],
            json!("teammem prompt-context --hook claude")
        );
        assert_eq!(
            json(&p.files[0].after)["mcpServers"]["teammem"]["args"],
            json!(["mcp"])
        );
        assert!(p.next_step.unwrap().contains("approve"));
    }

    #[test]
    fn qwen_hooks_carry_no_timeout_and_one_file_holds_everything() {
        let dir = tempfile::tempdir().unwrap();
        let p = plan(
            &places(dir.path()),
            Client::Qwen,
            AgentScope::User,
            &command(),
        )
        .unwrap();
        assert_eq!(p.files.len(), 1);
        assert!(p.files[0].path.ends_with("home/.qwen/settings.json"));
        let v = json(&p.files[0].after);
        assert_eq!(
            v["hooks"]["SessionStart"][0]["hooks"][0],
            json!({"type": "command", "command": "teammem session-start --hook qwen"})
        );
        assert_eq!(v["mcpServers"]["teammem"]["command"], json!("teammem"));
        assert_eq!(p.next_step, None);
        let p = plan(
            &places(dir.path()),
            Client::Qwen,
            AgentScope::Project,
            &command(),
        )
        .unwrap();
        assert_eq!(
            p.next_step.as_deref(),
            Some(
                format!(
                    "run `qwen mcp approve teammem` in {}",
                    dir.path().join("project").display()
                )
                .as_str()
            )
        );
    }

    #[test]
    fn codex_writes_config_toml_and_hooks_json_and_asks_for_trust() {
        let dir = tempfile::tempdir().unwrap();
        let p = plan(
            &places(dir.path()),
            Client::Codex,
            AgentScope::default_for(Client::Codex),
            &command(),
        )
        .unwrap();
        assert!(p.files[0].path.ends_with("home/.codex/config.toml"));
        assert!(p.files[1].path.ends_with("home/.codex/hooks.json"));
        let doc: toml_edit::DocumentMut = p.files[0].after.parse().unwrap();
        assert_eq!(
            doc["mcp_servers"]["teammem"]["command"].as_str(),
            Some("teammem")
        );
        let hooks = json(&p.files[1].after);
        assert_eq!(
            hooks["hooks"]["SessionStart"][0]["hooks"][0]["command"],
            json!("teammem session-start --hook codex")
        );
        assert!(p.next_step.unwrap().contains("/hooks"));
    }

    #[test]
    fn an_existing_teammem_hook_is_corrected_in_place_and_others_kept_byte_for_byte() {
        let dir = tempfile::tempdir().unwrap();
        let places = places(dir.path());
        let settings = places.project.join(".claude/settings.json");
        fs::create_dir_all(settings.parent().unwrap()).unwrap();
        let before = r#"{
  // my settings
  "model": "opus",
  "hooks": {
    "SessionStart": [
      {"matcher": "startup|resume", "hooks": [{"type": "command", "command": "/old/bin/teammem session-start --hook claude", "timeout": 20}]},
      {"hooks": [{"type": "command", "command": "echo hi"}]}
    ],
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "lint"}]}]
  }
}
"#;
        fs::write(&settings, before).unwrap();
        let p = plan(&places, Client::Claude, AgentScope::Project, &command()).unwrap();
        let after = &p.files[1].after;
        assert_eq!(p.files[1].change, ConfigChange::Updated);
        assert!(
            after.starts_with("{\n  // my settings\n  \"model\": \"opus\",\n"),
            "{after}"
        );
        assert!(after.contains(r#"{"matcher": "startup|resume", "hooks": [{"type": "command", "command": "teammem session-start --hook claude", "timeout": 20}]},"#), "{after}");
        assert!(
            after.contains(r#"{"hooks": [{"type": "command", "command": "echo hi"}]}"#),
            "{after}"
        );
        assert!(after.contains(r#""PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "lint"}]}]"#), "{after}");
        assert_eq!(after.matches("session-start").count(), 1, "{after}");
        assert_eq!(after.matches("prompt-context").count(), 1, "{after}");
        apply(&p).unwrap();
        let again = plan(&places, Client::Claude, AgentScope::Project, &command()).unwrap();
        assert!(
            again
                .files
                .iter()
                .all(|f| f.change == ConfigChange::Unchanged)
        );
    }

    #[test]
    fn a_program_path_with_spaces_is_quoted_for_the_shell_and_still_recognised() {
        let dir = tempfile::tempdir().unwrap();
        let places = places(dir.path());
        let cmd = ServerCommand {
            program: "/opt/my tools/teammem".into(),
            extra: Vec::new(),
        };
        let p = plan(&places, Client::Codex, AgentScope::User, &cmd).unwrap();
        let hooks = json(&p.files[1].after);
        assert_eq!(
            hooks["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"],
            json!("'/opt/my tools/teammem' prompt-context --hook codex")
        );
        apply(&p).unwrap();
        let again = plan(&places, Client::Codex, AgentScope::User, &cmd).unwrap();
        assert!(
            again
                .files
                .iter()
                .all(|f| f.change == ConfigChange::Unchanged)
        );
    }

    #[test]
    fn hooks_that_are_not_an_object_stop_the_plan_and_nothing_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let places = places(dir.path());
        let settings = places.project.join(".qwen/settings.json");
        fs::create_dir_all(settings.parent().unwrap()).unwrap();
        fs::write(&settings, "{\"hooks\": []}").unwrap();
        let err = plan(&places, Client::Qwen, AgentScope::Project, &command()).unwrap_err();
        assert!(
            err.to_string().contains("`hooks` is not an object"),
            "{err}"
        );
        assert_eq!(fs::read_to_string(&settings).unwrap(), "{\"hooks\": []}");
    }

    #[test]
    fn only_teammem_running_the_subcommand_counts_as_ours() {
        let [start, prompt] = HOOKS;
        let form = |command: &str, hook: &HookSpec| teammem_hook(command, hook);
        for direct in [
            "teammem session-start --hook claude",
            "'/a b/teammem' session-start",
            "\"/a b/teammem\" session-start --hook=qwen",
            "/usr/local/bin/teammem -C /w session-start --hook claude",
            "teammem context --hook claude",
            "cd \"$CLAUDE_PROJECT_DIR\" && teammem context --hook claude",
            "teammem context --hook claude; echo done",
        ] {
            assert_eq!(form(direct, &start), HookForm::Direct, "{direct}");
        }
        for custom in [
            "hooks/session-start claude",
            "\"$CLAUDE_PROJECT_DIR\"/hooks/session-start claude",
            "sh ./hooks/session-start qwen",
            "cd \"$CLAUDE_PROJECT_DIR\" && teammem session-start --hook claude",
            "TEAMMEM_LOG=1 teammem session-start --hook claude",
            "env TEAMMEM_LOG=1 teammem session-start",
        ] {
            assert_eq!(form(custom, &start), HookForm::Custom, "{custom}");
        }
        for other in [
            "teammem prompt-context --hook qwen",
            "echo teammem session-start",
            "my-teammem session-start",
            "hooks/prompt-context claude",
            "",
            "'unclosed teammem session-start",
        ] {
            assert_eq!(form(other, &start), HookForm::Other, "{other}");
        }
        assert_eq!(
            form("teammem context --hook claude", &prompt),
            HookForm::Other
        );
        assert_eq!(
            form("hooks/prompt-context claude", &prompt),
            HookForm::Custom
        );
    }
}
