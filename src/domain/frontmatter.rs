//! The frontmatter codec: the only place that touches `serde_yaml`.
//!
//! A memory's frontmatter is read the way the clients read it. The scalar keys (`name`,
//! `description`, `type`, `title`) follow Qwen Code's line rule: the first line starting
//! `key:` holds the value, the rest of that line, trimmed — `description: Tests: hit the DB`
//! is the text `Tests: hit the DB`, and `name: 'Quoted'` keeps its quotes, as Qwen shows them.
//! Every other key (lists such as `keywords`, Claude Code's `metadata:` mapping, anything
//! unknown) is YAML, read from the same text with the scalar-key lines blanked out, so a colon
//! in a description never makes the rest unreadable.
//!
//! `serde_yaml` is archived upstream; keeping it behind this one small module means a maintained
//! drop-in fork can replace it by editing this file alone. Nothing here knows what a memory is.
//! Writing edits the text line by line, so keys teammem does not own keep their bytes.

use serde_yaml::{Mapping, Value};

/// The keys read with Qwen Code's line rule rather than as YAML.
pub const LINE_KEYS: [&str; 4] = ["name", "description", "type", "title"];

/// A YAML syntax problem, located relative to the first line of the frontmatter text (1-based).
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

/// A read frontmatter block. Opaque so that `serde_yaml` types never leave this module.
#[derive(Debug, Clone, PartialEq)]
pub struct Frontmatter {
    /// The text between the `---` lines, with LF line ends.
    source: String,
    /// The YAML keys: the text without the line-rule keys' lines.
    structured: Result<Mapping, SyntaxError>,
}

impl Frontmatter {
    /// An empty block.
    pub fn new() -> Self {
        Frontmatter {
            source: String::new(),
            structured: Ok(Mapping::new()),
        }
    }

    /// Reads a frontmatter block. Never fails: a YAML problem in the structured keys is kept
    /// for [`structured_error`](Self::structured_error), and those keys then read as missing.
    pub fn read(text: &str) -> Self {
        // Most blocks hold no `\r`: a plain copy then, without the substring search.
        let source = match memchr::memchr(b'\r', text.as_bytes()) {
            Some(_) => text.replace("\r\n", "\n"),
            None => text.to_string(),
        };
        let structured = parse_structured(&blank_line_keys(&source));
        Frontmatter { source, structured }
    }

    /// Reads a frontmatter block whose structured keys must be valid YAML.
    pub fn parse(text: &str) -> Result<Self, SyntaxError> {
        let fm = Frontmatter::read(text);
        match &fm.structured {
            Err(err) => Err(err.clone()),
            Ok(_) => Ok(fm),
        }
    }

    /// The YAML problem of the structured keys, if any.
    pub fn structured_error(&self) -> Option<&SyntaxError> {
        self.structured.as_ref().err()
    }

    /// A line-rule value exactly as Qwen Code reads it (see [`line_value`]).
    pub fn line_value(&self, key: &str) -> Option<String> {
        line_value(&self.source, key)
    }

    /// The top-level keys in the order they are written (each once).
    pub fn keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = Vec::new();
        for line in self.source.split('\n') {
            if line.starts_with([' ', '\t', '#', '-']) {
                continue;
            }
            if let Some((key, _)) = line.split_once(':') {
                let key = key.trim();
                if !key.is_empty() && !keys.iter().any(|k| k == key) {
                    keys.push(key.to_string());
                }
            }
        }
        keys
    }

    /// A text field. A line-rule key is read with the line rule; any other key as YAML, where
    /// numbers and booleans count as text spelled as written (`1.50` keeps its zero).
    pub fn text(&self, key: &str) -> Field<String> {
        if LINE_KEYS.contains(&key) {
            return match self.line_value(key) {
                Some(v) => Field::Present(v),
                None => Field::Missing,
            };
        }
        let Ok(map) = &self.structured else {
            return Field::Missing;
        };
        match map.get(key) {
            None | Some(Value::Null) => Field::Missing,
            Some(Value::String(s)) => Field::Present(s.clone()),
            Some(Value::Number(n)) => Field::Present(self.raw_scalar(key).unwrap_or(n.to_string())),
            Some(Value::Bool(b)) => Field::Present(self.raw_scalar(key).unwrap_or(b.to_string())),
            Some(other) => Field::WrongKind(kind_name(other)),
        }
    }

    /// A text field inside a top-level mapping, as Claude Code nests `metadata: type:`.
    pub fn nested_text(&self, parent: &str, key: &str) -> Field<String> {
        let Ok(map) = &self.structured else {
            return Field::Missing;
        };
        match map.get(parent) {
            Some(Value::Mapping(inner)) => match inner.get(key) {
                None | Some(Value::Null) => Field::Missing,
                Some(Value::String(s)) => Field::Present(s.clone()),
                Some(other) => Field::WrongKind(kind_name(other)),
            },
            _ => Field::Missing,
        }
    }

    /// A list of text items (YAML); a single text value also counts as a one-item list.
    pub fn text_list(&self, key: &str) -> Field<Vec<String>> {
        let Ok(map) = &self.structured else {
            return Field::Missing;
        };
        match map.get(key) {
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

    /// How many lines start with `key:` (the line rule reads the first).
    pub fn count(&self, key: &str) -> usize {
        self.source
            .split('\n')
            .filter(|line| starts_with_key(line, key))
            .count()
    }

    /// The 1-based line and column (within the frontmatter text) where a key's value starts.
    pub fn locate(&self, key: &str) -> Option<(usize, usize)> {
        self.source.split('\n').enumerate().find_map(|(i, line)| {
            let rest = line.strip_prefix(key)?.strip_prefix(':')?;
            let indent = rest.len() - rest.trim_start().len();
            Some((i + 1, key.chars().count() + 2 + indent))
        })
    }

    /// Whether a key's value is written over several lines: a block scalar (`|`, `>`) or a
    /// value continued on indented lines below its key. The line rule reads only the first.
    pub fn spans_lines(&self, key: &str) -> bool {
        let lines: Vec<&str> = self.source.split('\n').collect();
        let Some(at) = lines.iter().position(|l| starts_with_key(l, key)) else {
            return false;
        };
        let value = lines[at][key.len() + 1..].trim();
        let value = value.split(" #").next().unwrap_or(value).trim();
        if value.starts_with(['|', '>']) {
            return true;
        }
        lines.get(at + 1).is_some_and(|next| {
            let text = next.trim();
            next.starts_with([' ', '\t']) && !text.is_empty() && !text.starts_with('#')
        })
    }

    /// Sets a line-rule key to one line of text (`key: value`), in place of its first line
    /// (and that line's continuation lines), or at the end. The value is written as is: the
    /// line rule reads it back unchanged, and YAML quoting would show in Qwen Code.
    pub fn set_line(&mut self, key: &str, value: &str) {
        self.replace_block(key, format!("{key}: {value}"));
    }

    /// Sets a list key: `key: [a, b]` for plain words, YAML block form otherwise.
    pub fn set_list(&mut self, key: &str, values: &[String]) {
        let plain = is_plain_word_start(key) && values.iter().all(|w| is_plain_text(w, true));
        let text = if plain {
            format!("{key}: [{}]", values.join(", "))
        } else {
            let mut one = Mapping::new();
            let seq = values.iter().cloned().map(Value::String).collect();
            one.insert(Value::String(key.into()), Value::Sequence(seq));
            // Serialising a list of strings cannot fail; an empty list is the fallback.
            serde_yaml::to_string(&one)
                .map(|s| s.trim_end().to_string())
                .unwrap_or_else(|_| format!("{key}: []"))
        };
        self.replace_block(key, text);
    }

    /// Removes a key's lines.
    pub fn remove(&mut self, key: &str) {
        if let Some((start, end)) = self.block(key) {
            let mut lines: Vec<&str> = self.lines();
            lines.drain(start..end);
            self.source = join_lines(&lines);
            self.reparse();
        }
    }

    /// The block as text, one key per line, ending with a newline (empty for no keys).
    pub fn render(&self) -> String {
        join_lines(&self.lines())
    }

    fn lines(&self) -> Vec<&str> {
        let text = self.source.strip_suffix('\n').unwrap_or(&self.source);
        if text.is_empty() {
            Vec::new()
        } else {
            text.split('\n').collect()
        }
    }

    /// The first line of `key` and the continuation lines below it, as a line range.
    fn block(&self, key: &str) -> Option<(usize, usize)> {
        let lines = self.lines();
        let start = lines.iter().position(|l| starts_with_key(l, key))?;
        let mut end = start + 1;
        while end < lines.len() && is_continuation(lines[end]) {
            end += 1;
        }
        Some((start, end))
    }

    fn replace_block(&mut self, key: &str, text: String) {
        let mut lines: Vec<String> = self.lines().into_iter().map(String::from).collect();
        match self.block(key) {
            Some((start, end)) => {
                lines.splice(start..end, [text]);
            }
            None => lines.push(text),
        }
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        self.source = join_lines(&refs);
        self.reparse();
    }

    fn reparse(&mut self) {
        self.structured = parse_structured(&blank_line_keys(&self.source));
    }

    fn raw_scalar(&self, key: &str) -> Option<String> {
        let line = self
            .source
            .split('\n')
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

fn join_lines(lines: &[&str]) -> String {
    let mut out = String::new();
    for line in lines {
        out.push_str(line);
        out.push('\n');
    }
    out
}

fn starts_with_key(line: &str, key: &str) -> bool {
    line.strip_prefix(key).is_some_and(|r| r.starts_with(':'))
}

/// A line that YAML reads as part of the key above it: indented, or a block list item.
fn is_continuation(line: &str) -> bool {
    line.starts_with([' ', '\t']) || line == "-" || line.starts_with("- ")
}

/// The text with the line-rule keys' lines (and their continuation lines) blanked, so YAML
/// reads only the structured keys and its line numbers still match the file.
fn blank_line_keys(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    let mut blanking = false;
    for (i, line) in source.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if LINE_KEYS.iter().any(|k| starts_with_key(line, k)) {
            blanking = true;
            continue;
        }
        if blanking && is_continuation(line) {
            continue;
        }
        blanking = false;
        out.push_str(line);
    }
    out
}

fn parse_structured(yaml: &str) -> Result<Mapping, SyntaxError> {
    if yaml.trim().is_empty() {
        return Ok(Mapping::new());
    }
    check_flow_depth(yaml)?;
    if let Some(map) = parse_simple(yaml) {
        return Ok(map);
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
        Value::Mapping(map) => Ok(map),
        Value::Null => Ok(Mapping::new()),
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

/// The characters JavaScript's `\s` and `trim` treat as white space.
pub fn is_js_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202F}'
                | '\u{205F}'
                | '\u{3000}'
                | '\u{FEFF}'
    )
}

/// The characters that end a line for JavaScript's `^`, `$` and `.`.
fn is_js_line_end(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}')
}

/// Trims JavaScript white space from both ends, as `String.prototype.trim` does.
pub fn js_trim(text: &str) -> &str {
    text.trim_matches(is_js_space)
}

/// Qwen Code's line rule for one key: the first line (lines end at `\n`, `\r`, U+2028 and
/// U+2029) that starts with `key:` and holds a value, that value trimmed. This is the regex
/// `^key:[^\S\n]*(.+)$` (multi-line) followed by `trim()`, step for step: the spaces after the
/// colon may run over a `\r`, and a value of spaces alone is the empty string.
///
/// It looks at line starts only, found by bytes (this runs for several keys of every memory
/// when the recall index is built); the tests hold the character-by-character version as the
/// reference it must equal.
pub fn line_value(text: &str, key: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let key = key.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        let rest = &bytes[at..];
        if rest.len() > key.len() && rest.starts_with(key) && rest[key.len()] == b':' {
            // `at + key.len() + 1` follows an ASCII colon: a character boundary.
            if let Some(value) = text.get(at + key.len() + 1..).and_then(value_after) {
                return Some(js_trim(value).to_string());
            }
        }
        at = next_line_start(bytes, at)?;
    }
    None
}

/// Where the line after the one holding byte `at` starts: after the first line end at or
/// after `at` ([`line_end`]); `None` when there is none.
fn next_line_start(bytes: &[u8], at: usize) -> Option<usize> {
    line_end(bytes, at).map(|(end, len)| end + len)
}

/// The first `\n`, `\r`, U+2028 or U+2029 (UTF-8 `E2 80 A8`, `E2 80 A9`) at or after byte
/// `at`: its position and length in bytes.
fn line_end(bytes: &[u8], mut at: usize) -> Option<(usize, usize)> {
    while let Some(found) = memchr::memchr3(b'\n', b'\r', 0xE2, bytes.get(at..)?) {
        let end = at + found;
        if bytes[end] != 0xE2 {
            return Some((end, 1));
        }
        if bytes.get(end + 1) == Some(&0x80) && matches!(bytes.get(end + 2), Some(0xA8 | 0xA9)) {
            return Some((end, 3));
        }
        at = end + 1;
    }
    None
}

/// What `[^\S\n]*(.+)$` captures at the start of `rest`, with the regex's backtracking.
fn value_after(rest: &str) -> Option<&str> {
    let spaces = rest
        .char_indices()
        .find(|&(_, c)| !(is_js_space(c) && c != '\n'))
        .map_or(rest.len(), |(i, _)| i);
    // The rest of the line from `from` (a character boundary), its end found by bytes.
    let take_line = |from: usize| {
        let end = line_end(rest.as_bytes(), from).map_or(rest.len(), |(end, _)| end);
        &rest[from..end]
    };
    if rest[spaces..]
        .chars()
        .next()
        .is_some_and(|c| !is_js_line_end(c))
    {
        return Some(take_line(spaces));
    }
    // Nothing after the spaces on this line: the regex gives spaces back one at a time until
    // one of them can start `.+`.
    rest[..spaces]
        .char_indices()
        .rev()
        .find(|&(_, c)| !is_js_line_end(c))
        .map(|(i, _)| take_line(i))
}

/// Splits a file's text into frontmatter and body exactly as Qwen Code does (the regex
/// `^---\n([\s\S]*?)\n---\n?([\s\S]*)$` on the text with CRLF made LF), but on the original
/// text: the frontmatter as written (without the line end before the closing `---`) and the
/// body after the closing `---` and its line end. `None` when Qwen sees no frontmatter.
pub fn split_like_qwen(text: &str) -> Option<(&str, &str)> {
    let open = if text.starts_with("---\r\n") {
        5
    } else if text.starts_with("---\n") {
        4
    } else {
        return None;
    };
    let close = text[open..].find("\n---")? + open;
    let yaml = &text[open..close];
    let yaml = yaml.strip_suffix('\r').unwrap_or(yaml);
    let after = &text[close + 4..];
    let body = after
        .strip_prefix("\r\n")
        .or_else(|| after.strip_prefix('\n'))
        .unwrap_or(after);
    Some((yaml, body))
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
mod tests;
