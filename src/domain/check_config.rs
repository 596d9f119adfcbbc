//! Reading a check configuration (`.teammem-check.json`, the user's `teammem-check.json`)
//! line by line in spirit: one bad setting costs that setting, never the file. A team's
//! committed tightening must not be removable by one duplicate key or one unknown rule id, so
//! every setting that can still be read is kept, a setting given twice keeps its strictest
//! value, and each problem is named with its line and its fix. Whatever is read here is then
//! layered on the defaults by [`CheckConfig::layered`], which a repository file can only
//! tighten.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::check::{CheckConfig, SeverityChoice, rule};
use super::secrets::SecretsIgnore;

/// The largest configuration read, in bytes. A configuration is a few hundred bytes (a
/// severity per rule, a host list); 256 KiB holds thousands of hosts, and bounds what every
/// commit's check parses.
pub const MAX_CONFIG_BYTES: usize = 256 * 1024;

/// The largest `.secretsignore` read, in bytes. A fingerprint line is 65 bytes, so 1 MiB
/// accepts some 16,000 findings; a 40 MB file made every commit's check take seconds.
pub const MAX_SECRETSIGNORE_BYTES: usize = 1024 * 1024;

/// How a team folder file was found: its bytes (at most one past its limit), and whether it
/// is a symlink (whose bytes, in git, are its target's path).
#[derive(Debug, Clone, Copy)]
pub struct TeamFile<'a> {
    /// The bytes read.
    pub bytes: &'a [u8],
    /// Whether the entry is a symlink: never followed.
    pub symlink: bool,
}

/// The repository's configuration from its file: `None` when it is a symlink or over
/// [`MAX_CONFIG_BYTES`] (the defaults hold, and no repository file can loosen them), else
/// every setting that can be read ([`read_lenient`]). Each problem is one note naming the
/// file, what is wrong and the fix.
pub fn repo_config(file: TeamFile<'_>) -> (Option<CheckConfig>, Vec<String>) {
    let name = super::check::CONFIG_FILE;
    if file.symlink {
        return (
            None,
            vec![format!(
                "{name} is a symlink; it was not followed — commit the configuration itself"
            )],
        );
    }
    if file.bytes.len() > MAX_CONFIG_BYTES {
        return (
            None,
            vec![format!(
                "{name} is over the {MAX_CONFIG_BYTES}-byte limit; it was not read — a \
                 configuration needs a few hundred bytes, shorten it"
            )],
        );
    }
    let (config, notes) = read_lenient(&String::from_utf8_lossy(file.bytes));
    let notes = notes.into_iter().map(|n| format!("{name} {n}")).collect();
    (Some(config), notes)
}

/// The accepted secret fingerprints from `.secretsignore`: none when it is a symlink or over
/// [`MAX_SECRETSIGNORE_BYTES`] (every secret is then reported, the strict side), with a note.
pub fn secrets_ignore(file: TeamFile<'_>) -> (SecretsIgnore, Option<String>) {
    let name = super::secrets::IGNORE_FILE;
    if file.symlink {
        return (
            SecretsIgnore::default(),
            Some(format!(
                "{name} is a symlink; it was not followed and accepts nothing — commit the \
                 fingerprints themselves"
            )),
        );
    }
    if file.bytes.len() > MAX_SECRETSIGNORE_BYTES {
        return (
            SecretsIgnore::default(),
            Some(format!(
                "{name} is over the {MAX_SECRETSIGNORE_BYTES}-byte limit; it was not read and \
                 accepts nothing — keep one fingerprint per accepted finding (65 bytes a line)"
            )),
        );
    }
    (
        SecretsIgnore::parse(&String::from_utf8_lossy(file.bytes)),
        None,
    )
}

/// A JSON value whose objects keep every entry, duplicates included, in order.
#[derive(Debug, Clone)]
enum JsonNode {
    Object(Vec<(String, JsonNode)>),
    Array(Vec<JsonNode>),
    Scalar(Value),
}

impl<'de> Deserialize<'de> for JsonNode {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<JsonNode, D::Error> {
        deserializer.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = JsonNode;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<JsonNode, E> {
        Ok(JsonNode::Scalar(Value::Bool(v)))
    }
    fn visit_i64<E>(self, v: i64) -> Result<JsonNode, E> {
        Ok(JsonNode::Scalar(Value::from(v)))
    }
    fn visit_u64<E>(self, v: u64) -> Result<JsonNode, E> {
        Ok(JsonNode::Scalar(Value::from(v)))
    }
    fn visit_f64<E>(self, v: f64) -> Result<JsonNode, E> {
        Ok(JsonNode::Scalar(Value::from(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<JsonNode, E> {
        Ok(JsonNode::Scalar(Value::String(v.to_string())))
    }
    fn visit_unit<E>(self) -> Result<JsonNode, E> {
        Ok(JsonNode::Scalar(Value::Null))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<JsonNode, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(JsonNode::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<JsonNode, A::Error> {
        let mut entries = Vec::new();
        while let Some((key, value)) = map.next_entry::<String, JsonNode>()? {
            entries.push((key, value));
        }
        Ok(JsonNode::Object(entries))
    }
}

/// Finds the line of the `nth` (0-based) occurrence of `"key"` in the text, for messages.
struct KeyLines<'a> {
    text: &'a str,
}

impl KeyLines<'_> {
    fn of(&self, key: &str, nth: usize) -> usize {
        let quoted = format!("\"{key}\"");
        self.text
            .match_indices(&quoted)
            .nth(nth)
            .map_or(1, |(at, _)| self.text[..at].matches('\n').count() + 1)
    }
}

/// Reads a configuration, keeping every setting that can be read. Returns it with one note
/// per setting left out or merged (`line N: … — fix`). A text that is not JSON at all yields
/// the empty configuration (the defaults) and the parser's own line and column.
pub fn read_lenient(text: &str) -> (CheckConfig, Vec<String>) {
    let mut config = CheckConfig::default();
    let mut notes = Vec::new();
    let root = match serde_json::from_str::<JsonNode>(text) {
        Ok(JsonNode::Object(entries)) => entries,
        Ok(_) => {
            notes.push("line 1: the configuration is not a JSON object — write `{…}`".into());
            return (config, notes);
        }
        Err(e) => {
            notes.push(format!(
                "line {}: not JSON ({e}) — fix the syntax; nothing in it was applied",
                e.line()
            ));
            return (config, notes);
        }
    };
    let lines = KeyLines { text };
    let mut seen: Vec<&str> = Vec::new();
    for (key, value) in &root {
        let nth = seen.iter().filter(|k| **k == key).count();
        seen.push(key);
        let line = lines.of(key, nth);
        if nth > 0 {
            notes.push(format!(
                "line {line}: `{key}` is given twice — the strictest of both was kept; write it once"
            ));
        }
        match (key.as_str(), value) {
            ("severity", JsonNode::Object(entries)) => {
                read_severities(entries, &lines, &mut config, &mut notes)
            }
            ("allowed_hosts", JsonNode::Array(items)) => {
                let hosts: Option<Vec<String>> = items
                    .iter()
                    .map(|item| match item {
                        JsonNode::Scalar(Value::String(h)) => Some(h.clone()),
                        _ => None,
                    })
                    .collect();
                match hosts {
                    // Twice: only the hosts both lists allow.
                    Some(hosts) => {
                        config.allowed_hosts = Some(match config.allowed_hosts.take() {
                            Some(before) => before.into_iter().filter(|h| hosts.contains(h)).collect(),
                            None => hosts,
                        })
                    }
                    None => notes.push(format!(
                        "line {line}: `allowed_hosts` holds a value that is not a host name — \
                         write a list of strings; it was left out"
                    )),
                }
            }
            ("max_file_bytes", JsonNode::Scalar(Value::Number(n))) if n.as_u64().is_some() => {
                let max = n.as_u64().unwrap_or(u64::MAX).min(usize::MAX as u64) as usize;
                config.max_file_bytes = Some(config.max_file_bytes.map_or(max, |m| m.min(max)));
            }
            ("max_memories", JsonNode::Scalar(Value::Number(n))) if n.as_u64().is_some() => {
                let max = n.as_u64().unwrap_or(u64::MAX).min(usize::MAX as u64) as usize;
                config.max_memories = Some(config.max_memories.map_or(max, |m| m.min(max)));
            }
            ("max_total_bytes", JsonNode::Scalar(Value::Number(n))) if n.as_u64().is_some() => {
                let max = n.as_u64().unwrap_or(u64::MAX);
                config.max_total_bytes = Some(config.max_total_bytes.map_or(max, |m| m.min(max)));
            }
            (
                "severity" | "allowed_hosts" | "max_file_bytes" | "max_memories" | "max_total_bytes",
                _,
            ) => notes.push(format!(
                "line {line}: `{key}` has the wrong type — see docs/check-and-review.md; it was left out"
            )),
            _ => notes.push(format!(
                "line {line}: unknown setting `{key}` — remove it (settings: severity, \
                 allowed_hosts, max_file_bytes, max_memories, max_total_bytes); it was left out"
            )),
        }
    }
    (config, notes)
}

fn read_severities(
    entries: &[(String, JsonNode)],
    lines: &KeyLines<'_>,
    config: &mut CheckConfig,
    notes: &mut Vec<String>,
) {
    let mut seen: Vec<&str> = Vec::new();
    for (id, value) in entries {
        let nth = seen.iter().filter(|k| **k == id).count();
        seen.push(id);
        let line = lines.of(id, nth);
        if rule(id).is_none() {
            notes.push(format!(
                "line {line}: unknown rule `{id}` in \"severity\" — use a rule id from \
                 `teammem check --help` or docs/check-and-review.md; it was left out"
            ));
            continue;
        }
        let choice = match value {
            JsonNode::Scalar(Value::String(s)) => match s.as_str() {
                "error" => SeverityChoice::Error,
                "warning" => SeverityChoice::Warning,
                "off" => SeverityChoice::Off,
                _ => {
                    notes.push(format!(
                        "line {line}: `{id}` set to `{s}` — write `error`, `warning` or `off`; \
                         it was left out"
                    ));
                    continue;
                }
            },
            _ => {
                notes.push(format!(
                    "line {line}: `{id}` is not a string — write `error`, `warning` or `off`; \
                     it was left out"
                ));
                continue;
            }
        };
        if nth > 0 {
            notes.push(format!(
                "line {line}: `{id}` is given twice — the stricter was kept; write it once"
            ));
        }
        let strictest = match config.severity.get(id.as_str()) {
            Some(&before) if rank(before) >= rank(choice) => before,
            _ => choice,
        };
        config.severity.insert(id.clone(), strictest);
    }
}

fn rank(choice: SeverityChoice) -> u8 {
    match choice {
        SeverityChoice::Off => 0,
        SeverityChoice::Warning => 1,
        SeverityChoice::Error => 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_bad_line_keeps_the_rest() {
        let text = "{\n  \"severity\": {\n    \"trust-external-link\": \"error\",\n    \"no-such-rule\": \"error\",\n    \"trust-base64-blob\": \"error\",\n    \"trust-base64-blob\": \"off\"\n  },\n  \"max_file_bytes\": 9000,\n  \"colour\": true\n}\n";
        let (config, notes) = read_lenient(text);
        assert_eq!(
            config.severity.get("trust-external-link"),
            Some(&SeverityChoice::Error)
        );
        assert_eq!(
            config.severity.get("trust-base64-blob"),
            Some(&SeverityChoice::Error)
        );
        assert!(!config.severity.contains_key("no-such-rule"));
        assert_eq!(config.max_file_bytes, Some(9000));
        assert_eq!(notes.len(), 3, "{notes:?}");
        assert!(
            notes[0].starts_with("line 4: unknown rule `no-such-rule`"),
            "{notes:?}"
        );
        assert!(
            notes[1].starts_with("line 6: `trust-base64-blob` is given twice"),
            "{notes:?}"
        );
        assert!(
            notes[2].starts_with("line 9: unknown setting `colour`"),
            "{notes:?}"
        );
    }

    #[test]
    fn a_setting_twice_keeps_the_strictest() {
        let text = r#"{"severity": {"trust-external-link": "error"}, "severity": {"trust-external-link": "off"}, "max_file_bytes": 100, "max_file_bytes": 50000, "allowed_hosts": ["a.example", "b.example"], "allowed_hosts": ["b.example", "c.example"]}"#;
        let (config, notes) = read_lenient(text);
        assert_eq!(
            config.severity.get("trust-external-link"),
            Some(&SeverityChoice::Error)
        );
        assert_eq!(config.max_file_bytes, Some(100));
        assert_eq!(config.allowed_hosts, Some(vec!["b.example".to_string()]));
        assert_eq!(notes.len(), 3, "{notes:?}");
    }

    #[test]
    fn the_memory_branch_limits_are_read_and_twice_keep_the_lowest() {
        let text = r#"{"max_memories": 2000, "max_total_bytes": 8000000, "max_memories": 500, "bogus": 1}"#;
        let (config, notes) = read_lenient(text);
        assert_eq!(config.max_memories, Some(500));
        assert_eq!(config.max_total_bytes, Some(8_000_000));
        assert_eq!(notes.len(), 2, "{notes:?}");
    }

    #[test]
    fn text_that_is_not_json_names_its_line() {
        let (config, notes) = read_lenient("{\n\"severity\": {\n}}}");
        assert_eq!(config, CheckConfig::default());
        assert!(notes[0].starts_with("line 3: not JSON"), "{notes:?}");
    }
}
