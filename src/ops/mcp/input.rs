//! Reading a tool call's arguments: every value checked for type and size before any memory
//! is touched, and every unknown argument refused, so a typo (`content` for `body`) is an
//! error the agent can fix rather than a silently empty field.

use serde_json::{Map, Value};

use crate::domain::memory::{self, MemoryType};
use crate::domain::scope::ScopeKind;

use crate::ops::catalog::MemoryId;

/// The longest query, in characters.
pub const MAX_QUERY_CHARS: usize = 1_000;
/// The longest id, in characters.
pub const MAX_ID_CHARS: usize = 300;
/// The longest name, in characters.
pub const MAX_NAME_CHARS: usize = 200;
/// The longest description, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 500;
/// The largest body, in bytes (a memory file may hold 64 KiB in all).
pub const MAX_BODY_BYTES: usize = 32 * 1024;
/// The most keywords.
pub const MAX_KEYWORDS: usize = 20;
/// The longest keyword, in characters.
pub const MAX_KEYWORD_CHARS: usize = 60;
/// The most search results one call returns.
pub const MAX_LIMIT: u64 = 20;

/// A tool call's arguments, taken one by one.
pub struct Arguments {
    tool: &'static str,
    map: Map<String, Value>,
}

/// Why the arguments cannot be used; the message names the argument and the fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadInput(pub String);

impl Arguments {
    /// The arguments of a call to `tool` (none given reads as an empty object).
    pub fn new(tool: &'static str, map: Option<Map<String, Value>>) -> Arguments {
        Arguments {
            tool,
            map: map.unwrap_or_default(),
        }
    }

    fn bad(&self, msg: String) -> BadInput {
        BadInput(format!("{}: {msg}", self.tool))
    }

    /// An optional string of at most `max_chars` characters.
    pub fn text(&mut self, name: &str, max_chars: usize) -> Result<Option<String>, BadInput> {
        match self.map.remove(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => {
                let chars = s.chars().count();
                if chars > max_chars {
                    return Err(self.bad(format!(
                        "`{name}` is {chars} characters long; the limit is {max_chars}"
                    )));
                }
                Ok(Some(s))
            }
            Some(other) => {
                Err(self.bad(format!("`{name}` must be a string, not {}", kind(&other))))
            }
        }
    }

    /// A required string of at most `max_chars` characters, not blank.
    pub fn required_text(&mut self, name: &str, max_chars: usize) -> Result<String, BadInput> {
        match self.text(name, max_chars)? {
            Some(s) if !s.trim().is_empty() => Ok(s),
            Some(_) => Err(self.bad(format!("`{name}` is empty"))),
            None => Err(self.bad(format!("`{name}` is required"))),
        }
    }

    /// A required one-line string.
    pub fn one_line(&mut self, name: &str, max_chars: usize) -> Result<String, BadInput> {
        let s = self.required_text(name, max_chars)?;
        if s.contains(['\n', '\r']) {
            return Err(self.bad(format!(
                "`{name}` spans several lines — keep it on one line and put detail in the body"
            )));
        }
        Ok(s)
    }

    /// The body: a required string of at most [`MAX_BODY_BYTES`] bytes.
    pub fn body(&mut self) -> Result<String, BadInput> {
        let body = self.required_text("body", usize::MAX)?;
        if body.len() > MAX_BODY_BYTES {
            return Err(self.bad(format!(
                "`body` is {} bytes; the limit is {MAX_BODY_BYTES} — a memory is a short note: \
                 keep the fact, why it matters and how to apply it, and link to longer documents",
                body.len()
            )));
        }
        Ok(body)
    }

    /// An optional whole number from 1 to `max`.
    pub fn count(&mut self, name: &str, max: u64) -> Result<Option<usize>, BadInput> {
        match self.map.remove(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) => match n.as_u64() {
                Some(v) if (1..=max).contains(&v) => Ok(Some(v as usize)),
                _ => Err(self.bad(format!("`{name}` must be a whole number from 1 to {max}"))),
            },
            Some(other) => {
                Err(self.bad(format!("`{name}` must be a number, not {}", kind(&other))))
            }
        }
    }

    /// An optional boolean, false when absent.
    pub fn flag(&mut self, name: &str) -> Result<bool, BadInput> {
        match self.map.remove(name) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(b),
            Some(other) => Err(self.bad(format!(
                "`{name}` must be true or false, not {}",
                kind(&other)
            ))),
        }
    }

    /// An optional scope: `team`, `private` or `user`.
    pub fn scope(&mut self) -> Result<Option<ScopeKind>, BadInput> {
        match self.text("scope", 20)? {
            None => Ok(None),
            Some(s) => ScopeKind::parse(s.trim()).map(Some).ok_or_else(|| {
                self.bad(format!("unknown scope `{s}` — use team, private or user"))
            }),
        }
    }

    /// A required scope.
    pub fn required_scope(&mut self) -> Result<ScopeKind, BadInput> {
        self.scope()?
            .ok_or_else(|| self.bad("`scope` is required: team, private or user".into()))
    }

    /// The required memory type.
    pub fn memory_type(&mut self) -> Result<MemoryType, BadInput> {
        let s = self.required_text("type", 20)?;
        MemoryType::parse(s.trim()).ok_or_else(|| {
            self.bad(format!(
                "unknown type `{s}` — use user, feedback, project or reference"
            ))
        })
    }

    /// Optional keywords: at most [`MAX_KEYWORDS`] one-line strings.
    pub fn keywords(&mut self) -> Result<Option<Vec<String>>, BadInput> {
        let items = match self.map.remove("keywords") {
            None | Some(Value::Null) => return Ok(None),
            Some(Value::Array(items)) => items,
            Some(other) => {
                return Err(self.bad(format!(
                    "`keywords` must be a list of strings, not {}",
                    kind(&other)
                )));
            }
        };
        if items.len() > MAX_KEYWORDS {
            return Err(self.bad(format!(
                "{} keywords; the limit is {MAX_KEYWORDS}",
                items.len()
            )));
        }
        let mut out = Vec::new();
        for item in items {
            match item {
                Value::String(k)
                    if !k.trim().is_empty()
                        && k.chars().count() <= MAX_KEYWORD_CHARS
                        && !k.contains(['\n', '\r']) =>
                {
                    out.push(k.trim().to_string())
                }
                _ => {
                    return Err(self.bad(format!(
                        "each keyword must be a non-empty one-line string of at most \
                         {MAX_KEYWORD_CHARS} characters"
                    )));
                }
            }
        }
        Ok((!out.is_empty()).then_some(out))
    }

    /// The required memory id, parsed: `[scope:]type/slug.md[:entry]`.
    pub fn id(&mut self) -> Result<(String, MemoryId), BadInput> {
        let text = self.required_text("id", MAX_ID_CHARS)?;
        let text = text.trim().to_string();
        if text.chars().any(char::is_control) {
            return Err(self.bad("`id` holds control characters".into()));
        }
        let id = MemoryId::parse(&text).map_err(|e| self.bad(e.to_string()))?;
        // The store's one rule for what a memory file is, inside the scope's folder.
        let well_formed = memory::is_memory_path(&id.path)
            && memory::qwen_reads_path(&id.path)
            && id
                .path
                .split('/')
                .all(|part| !matches!(part, "" | "." | ".."));
        if !well_formed {
            return Err(self.bad(format!(
                "`{text}` is not a memory id — ids look like `team:feedback/use-real-db.md` \
                 (see memory_list or memory_search)"
            )));
        }
        Ok((text, id))
    }

    /// The optional `cursor` of `memory_list`: the id (`scope:type/slug.md`) of the last
    /// memory of the page before, as that page's answer gave it.
    pub fn cursor(&mut self) -> Result<Option<Cursor>, BadInput> {
        let Some(text) = self.text("cursor", MAX_ID_CHARS)? else {
            return Ok(None);
        };
        let text = text.trim();
        let parsed = MemoryId::parse(text).ok().filter(|id| id.entry.is_none());
        match parsed.and_then(|id| Some((id.scope?, id.path))) {
            Some((scope, path)) if !path.is_empty() && !text.chars().any(char::is_control) => {
                Ok(Some(Cursor { scope, path }))
            }
            _ => Err(self.bad(
                "`cursor` is not one memory_list gave — it looks like \
                 `team:feedback/use-real-db.md`; leave it out for the first page"
                    .into(),
            )),
        }
    }

    /// Refuses any argument not taken yet.
    pub fn finish(self) -> Result<(), BadInput> {
        let mut left: Vec<&String> = self.map.keys().collect();
        if left.is_empty() {
            return Ok(());
        }
        left.sort();
        let names: Vec<String> = left.iter().map(|k| format!("`{k}`")).collect();
        Err(self.bad(format!(
            "unknown argument{} {}",
            if names.len() == 1 { "" } else { "s" },
            names.join(", ")
        )))
    }
}

/// Where a `memory_list` page starts: after this memory in the list's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cursor {
    /// The scope of the last memory listed.
    pub scope: ScopeKind,
    /// Its path in the scope folder.
    pub path: String,
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(value: Value) -> Arguments {
        match value {
            Value::Object(map) => Arguments::new("memory_save", Some(map)),
            _ => unreachable!("tests pass objects"),
        }
    }

    #[test]
    fn sizes_types_and_unknown_keys_are_refused_with_the_argument_named() {
        let mut a = args(json!({"body": "x".repeat(MAX_BODY_BYTES + 1)}));
        assert!(a.body().unwrap_err().0.contains("`body` is 32769 bytes"));
        let mut a = args(json!({"limit": 0}));
        assert!(a.count("limit", MAX_LIMIT).is_err());
        let mut a = args(json!({"limit": "5"}));
        assert!(
            a.count("limit", MAX_LIMIT)
                .unwrap_err()
                .0
                .contains("not a string")
        );
        let mut a = args(json!({"name": "two\nlines"}));
        assert!(a.one_line("name", MAX_NAME_CHARS).is_err());
        let a = args(json!({"content": "x"}));
        assert!(
            a.finish()
                .unwrap_err()
                .0
                .contains("unknown argument `content`")
        );
        let mut a = args(json!({"scope": "everyone"}));
        assert!(a.scope().unwrap_err().0.contains("unknown scope"));
    }

    #[test]
    fn ids_must_name_a_memory_file_inside_its_scope() {
        for bad in [
            "../secrets.md",
            "/etc/passwd",
            "team:MEMORY.md",
            "team:.git/config.md",
            "team:feedback/MEMORY.md",
            "team:feedback/./a.md",
            "feedback/a.txt",
            "a\u{0}b.md",
            "",
        ] {
            let mut a = args(json!({ "id": bad }));
            assert!(a.id().is_err(), "{bad:?} was accepted");
        }
        // Hidden files are memory files, as the store and Qwen Code list them.
        let mut a = args(json!({"id": "team:.drafts/a.md"}));
        assert!(a.id().is_ok());
        let mut a = args(json!({"id": "team:feedback/a.md:2"}));
        let (_, id) = a.id().unwrap();
        assert_eq!((id.scope, id.entry), (Some(ScopeKind::Team), Some(2)));
    }
}
