//! The frontmatter codec: the only place that touches `serde_yaml`.
//!
//! `serde_yaml` is archived upstream; keeping it behind this one small module means a maintained
//! drop-in fork can replace it by editing this file alone. Nothing here knows what a memory is:
//! it reads a YAML mapping, answers questions about its top-level keys, and writes it back with
//! unknown keys kept in their original order.

use serde_yaml::{Mapping, Value};

/// A YAML syntax problem, located relative to the first line of the YAML text (1-based).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    /// Line within the YAML text, 1-based.
    pub line: usize,
    /// Column within that line, 1-based.
    pub column: usize,
    /// What the parser said.
    pub message: String,
}

/// What a top-level key holds, as far as a reader of plain text fields cares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Field<T> {
    /// The key is absent (or explicitly `null`).
    Missing,
    /// The key holds a value of the expected kind.
    Present(T),
    /// The key holds another kind of value; the string names that kind for an error message.
    WrongKind(&'static str),
}

/// A parsed frontmatter mapping. Opaque so that `serde_yaml` types never leave this module.
#[derive(Debug, Clone, PartialEq)]
pub struct Frontmatter {
    map: Mapping,
    /// The YAML source, kept to recover the exact text of scalars such as `name: 10183`.
    source: String,
}

impl Frontmatter {
    /// An empty mapping.
    pub fn new() -> Self {
        Frontmatter {
            map: Mapping::new(),
            source: String::new(),
        }
    }

    /// Parses YAML text that must be a mapping (an empty text is an empty mapping).
    pub fn parse(yaml: &str) -> Result<Self, SyntaxError> {
        if yaml.trim().is_empty() {
            return Ok(Frontmatter::new());
        }
        check_flow_depth(yaml)?;
        if let Some(map) = parse_simple(yaml) {
            return Ok(Frontmatter {
                map,
                source: yaml.to_string(),
            });
        }
        let value: Value = serde_yaml::from_str(yaml).map_err(|err| {
            let (line, column) = err
                .location()
                .map(|loc| (loc.line().max(1), loc.column().max(1)))
                .unwrap_or((1, 1));
            SyntaxError {
                line,
                column,
                message: err.to_string(),
            }
        })?;
        match value {
            Value::Mapping(map) => Ok(Frontmatter {
                map,
                source: yaml.to_string(),
            }),
            Value::Null => Ok(Frontmatter::new()),
            other => Err(SyntaxError {
                line: 1,
                column: 1,
                message: format!(
                    "frontmatter is a {}, not a mapping of keys",
                    kind_name(&other)
                ),
            }),
        }
    }

    /// The top-level keys in their order. Non-string keys are shown as YAML would print them.
    pub fn keys(&self) -> Vec<String> {
        self.map.keys().map(key_text).collect()
    }

    /// A text field. Numbers and booleans count as text, spelled exactly as written, so that
    /// `name: 10183` is the string "10183" and `name: 1.50` keeps its trailing zero.
    pub fn text(&self, key: &str) -> Field<String> {
        match self.map.get(key) {
            None | Some(Value::Null) => Field::Missing,
            Some(Value::String(s)) => Field::Present(s.clone()),
            Some(Value::Number(n)) => Field::Present(self.raw_scalar(key).unwrap_or(n.to_string())),
            Some(Value::Bool(b)) => Field::Present(self.raw_scalar(key).unwrap_or(b.to_string())),
            Some(other) => Field::WrongKind(kind_name(other)),
        }
    }

    /// A text field that must be written as a YAML string: `type: 1` is a number, not text.
    pub fn strict_text(&self, key: &str) -> Field<String> {
        match self.map.get(key) {
            None | Some(Value::Null) => Field::Missing,
            Some(Value::String(s)) => Field::Present(s.clone()),
            Some(other) => Field::WrongKind(kind_name(other)),
        }
    }

    /// A list of text items; a single text value also counts as a one-item list.
    pub fn text_list(&self, key: &str) -> Field<Vec<String>> {
        match self.map.get(key) {
            None | Some(Value::Null) => Field::Missing,
            Some(Value::Sequence(items)) => {
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    match item {
                        Value::String(s) => out.push(s.clone()),
                        Value::Number(n) => out.push(n.to_string()),
                        Value::Bool(b) => out.push(b.to_string()),
                        other => return Field::WrongKind(kind_name(other)),
                    }
                }
                Field::Present(out)
            }
            Some(Value::String(s)) => Field::Present(vec![s.clone()]),
            Some(other) => Field::WrongKind(kind_name(other)),
        }
    }

    /// Sets a text field, keeping the key's position when it already exists.
    pub fn set_text(&mut self, key: &str, value: &str) {
        self.map
            .insert(Value::String(key.into()), Value::String(value.into()));
    }

    /// Sets a list field, keeping the key's position when it already exists.
    pub fn set_text_list(&mut self, key: &str, values: &[String]) {
        let seq = values.iter().cloned().map(Value::String).collect();
        self.map
            .insert(Value::String(key.into()), Value::Sequence(seq));
    }

    /// Removes a key.
    pub fn remove(&mut self, key: &str) {
        self.map.remove(key);
    }

    /// The 1-based line and column (within the YAML text) where a top-level key's value starts.
    pub fn locate(&self, key: &str) -> Option<(usize, usize)> {
        self.source.lines().enumerate().find_map(|(i, line)| {
            let rest = line.strip_prefix(key)?.strip_prefix(':')?;
            let indent = rest.len() - rest.trim_start().len();
            Some((i + 1, key.len() + 2 + indent))
        })
    }

    /// Whether a top-level key's value is written over several lines: a block scalar (`|`, `>`)
    /// or a value continued on indented lines below its key. YAML folds the latter into one
    /// line, but other readers of the file (and people) see several.
    pub fn spans_lines(&self, key: &str) -> bool {
        let mut lines = self.source.lines();
        let Some(value) = lines.find_map(|line| line.strip_prefix(key)?.strip_prefix(':')) else {
            return false;
        };
        let value = match value.find(" #") {
            Some(at) => &value[..at],
            None => value,
        };
        let value = value.trim();
        if value.starts_with(['|', '>']) {
            return true;
        }
        lines.next().is_some_and(|next| {
            let text = next.trim();
            next.starts_with([' ', '\t']) && !text.is_empty() && !text.starts_with('#')
        })
    }

    /// Writes the mapping as YAML, one key per line, ending with a newline (empty for no keys).
    /// A list of plain words is written in flow style (`keywords: [postgres, tests]`), as
    /// people write it; every other value as `serde_yaml` writes it.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for (key, value) in &self.map {
            if let (Value::String(k), Value::Sequence(items)) = (key, value) {
                let words: Option<Vec<&str>> = items
                    .iter()
                    .map(|item| match item {
                        Value::String(w) if is_plain_text(w, true) => Some(w.as_str()),
                        _ => None,
                    })
                    .collect();
                if let Some(words) = words.filter(|_| is_plain_word_start(k)) {
                    out.push_str(&format!("{k}: [{}]\n", words.join(", ")));
                    continue;
                }
            }
            let mut one = Mapping::new();
            one.insert(key.clone(), value.clone());
            // Serialising a mapping of plain values cannot fail; fall back to nothing rather
            // than panic if a future serde_yaml disagrees.
            out.push_str(&serde_yaml::to_string(&one).unwrap_or_default());
        }
        out
    }

    fn raw_scalar(&self, key: &str) -> Option<String> {
        let line = self
            .source
            .lines()
            .find_map(|line| line.strip_prefix(key)?.strip_prefix(':'))?;
        let value = match line.find(" #") {
            Some(at) => &line[..at],
            None => line,
        };
        let value = value.trim();
        (!value.is_empty()).then(|| value.to_string())
    }
}

impl Default for Frontmatter {
    fn default() -> Self {
        Frontmatter::new()
    }
}

/// Reads the plain form nearly every memory uses — `key: text` lines and `key: [a, b]` lists of
/// plain words — without the YAML parser, which costs most of an index rebuild. It answers only
/// when the text is certainly plain, with exactly what the YAML parser would give; anything
/// else (quotes, numbers, booleans, comments after values, nesting, duplicates) returns `None`
/// and goes to the parser. A property test checks it against the parser.
fn parse_simple(yaml: &str) -> Option<Mapping> {
    let mut map = Mapping::new();
    for line in yaml.lines() {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (key, rest) = line.split_once(':')?;
        let value = rest.strip_prefix(' ')?;
        if !is_plain_word_start(key)
            || !key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return None;
        }
        let value = match value.strip_prefix('[') {
            Some(inner) => {
                let inner = inner.strip_suffix(']')?;
                let mut items = Vec::new();
                if !inner.is_empty() {
                    for item in inner.split(", ") {
                        if !is_plain_text(item, true) {
                            return None;
                        }
                        items.push(Value::String(item.to_string()));
                    }
                }
                Value::Sequence(items)
            }
            None if is_plain_text(value, false) => Value::String(value.to_string()),
            None => return None,
        };
        if map.insert(Value::String(key.to_string()), value).is_some() {
            return None;
        }
    }
    Some(map)
}

/// A plain scalar that YAML reads as this very string: it starts with a letter, is not a word
/// YAML (1.1 or 1.2) reads as null, a boolean or a float, and holds no character that could
/// start a comment, a mapping, a flow collection, a line break or a YAML error.
fn is_plain_text(text: &str, in_flow: bool) -> bool {
    is_plain_word_start(text)
        && !text.ends_with([' ', ':'])
        && !text.contains(": ")
        && text.chars().all(|c| {
            let printable = matches!(c, '\u{20}'..='\u{7E}' | '\u{A0}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..='\u{10FFFF}');
            printable
                && !matches!(c, '#' | '\u{FEFF}' | '\u{2028}' | '\u{2029}')
                && !(in_flow && matches!(c, ',' | '[' | ']' | '{' | '}'))
        })
}

fn is_plain_word_start(text: &str) -> bool {
    const SPECIAL: [&str; 12] = [
        "null", "true", "false", "yes", "no", "on", "off", "y", "n", "inf", "infinity", "nan",
    ];
    text.chars().next().is_some_and(char::is_alphabetic)
        && !SPECIAL.iter().any(|w| text.eq_ignore_ascii_case(w))
}

/// How deeply `[` and `{` may nest. libyaml's scanner costs time quadratic in the nesting
/// depth (20,000 `[` take seconds), so deeper text is refused before it is parsed.
pub const MAX_FLOW_DEPTH: usize = 64;

/// Refuses text whose brackets nest deeper than [`MAX_FLOW_DEPTH`]. Brackets inside quotes are
/// counted too: no real frontmatter comes near the limit, and skipping quotes would let a stray
/// `'` hide the brackets after it.
fn check_flow_depth(yaml: &str) -> Result<(), SyntaxError> {
    let mut depth = 0usize;
    let (mut line, mut column) = (1, 0);
    for c in yaml.chars() {
        column += 1;
        match c {
            '\n' => (line, column) = (line + 1, 0),
            '[' | '{' => {
                depth += 1;
                if depth > MAX_FLOW_DEPTH {
                    return Err(SyntaxError {
                        line,
                        column,
                        message: format!("brackets nest deeper than {MAX_FLOW_DEPTH} levels"),
                    });
                }
            }
            ']' | '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

fn key_text(key: &Value) -> String {
    match key {
        Value::String(s) => s.clone(),
        other => serde_yaml::to_string(other)
            .map(|s| s.trim_end().to_string())
            .unwrap_or_default(),
    }
}

fn kind_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Sequence(_) => "list",
        Value::Mapping(_) => "mapping",
        Value::Tagged(_) => "tagged value",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_keep_their_spelling_as_text() {
        let fm = Frontmatter::parse("name: 10183\ndescription: 1.50 # note\n").unwrap();
        assert_eq!(fm.text("name"), Field::Present("10183".into()));
        assert_eq!(fm.text("description"), Field::Present("1.50".into()));
    }

    #[test]
    fn unknown_keys_survive_a_rewrite_in_order() {
        let mut fm = Frontmatter::parse("zeta: [1, 2]\nname: a\nalpha: {x: y}\n").unwrap();
        fm.set_text("name", "b");
        fm.set_text("type", "user");
        assert_eq!(
            fm.render(),
            "zeta:\n- 1\n- 2\nname: b\nalpha:\n  x: y\ntype: user\n"
        );
    }

    #[test]
    fn syntax_errors_are_located() {
        let err = Frontmatter::parse("name: a\ndescription: [unclosed\n").unwrap_err();
        assert!(err.line >= 2, "{err:?}");
    }

    use proptest::prelude::*;

    /// What the YAML parser reads; no document at all is an empty mapping, as in `parse`.
    fn parser(yaml: &str) -> Result<Value, String> {
        match serde_yaml::from_str::<Value>(yaml) {
            Ok(Value::Null) => Ok(Value::Mapping(Mapping::new())),
            other => other.map_err(|e| e.to_string()),
        }
    }

    #[test]
    fn the_plain_form_skips_the_parser_and_agrees_with_it() {
        let yaml = "name: Use the real database\n# note\ndescription: Tests hit Postgres, never a mock\ntype: feedback\nkeywords: [postgres, tests]\nempty: []\n";
        let simple = parse_simple(yaml).unwrap();
        assert_eq!(parser(yaml), Ok(Value::Mapping(simple)));
        for not_plain in [
            "name: 10183\n",
            "name: true\n",
            "name: No\n",
            "name: a # comment\n",
            "name: 'quoted'\n",
            "name: a: b\n",
            "name:\n",
            "name: a\nname: b\n",
            "name: [a, 1]\n",
            "name: [a,b]\n",
            "name: |\n  a\n",
            "  name: a\n",
            "name: a \n",
            "null: a\n",
            "name: .inf\n",
            "name: a\u{2028}b\n",
        ] {
            assert_eq!(parse_simple(not_plain), None, "{not_plain:?}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]

        /// Whatever the plain reader accepts, the YAML parser reads the same way.
        #[test]
        fn plain_reader_agrees_with_the_parser(
            lines in prop::collection::vec(
                (
                    "[a-zA-Z_0-9 -]{1,6}|name|null|Yes|description",
                    prop_oneof![
                        "[a-zA-Z0-9 .,:#'\"!&*|>%@`~\\{}\\[\\]\\-é测\u{2028}\u{85}\u{7F}\u{FEFF}]{0,12}",
                        "(True|NULL|off|Inf|NaN|nan|y|N|0x1F|1e3|1_000|0o17|\\.5|[+-]?[0-9.]{1,4})",
                        "\\[[a-z0-9 ,:#'\\[\\]{}]{0,12}\\]",
                    ],
                    prop_oneof![Just(": "), Just(":"), Just(":  "), Just(" : ")],
                ),
                0..5,
            )
        ) {
            let yaml: String = lines.iter().map(|(k, v, sep)| format!("{k}{sep}{v}\n")).collect();
            if let Some(simple) = parse_simple(&yaml) {
                prop_assert_eq!(parser(&yaml), Ok(Value::Mapping(simple)), "{:?}", yaml);
            }
        }
    }

    #[test]
    fn alias_bombs_are_refused_quickly() {
        let mut yaml = String::from("a: &a [x,x,x,x,x,x,x,x,x,x]\n");
        for (i, prev) in ('b'..='j').zip('a'..='i') {
            yaml.push_str(&format!(
                "{i}: &{i} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]\n"
            ));
        }
        assert!(Frontmatter::parse(&yaml).is_err());
    }
}
