//! Unit tests of the frontmatter codec: the clients' line rule and split, Claude Code's nested
//! type, unknown keys kept in order, located syntax errors, the plain form against the parser,
//! and alias bombs refused.

use super::*;

#[test]
fn numbers_keep_their_spelling_as_text() {
    let fm = Frontmatter::parse("name: 10183\nversion: 1.50 # note\n").unwrap();
    assert_eq!(fm.text("name"), Field::Present("10183".into()));
    assert_eq!(fm.text("version"), Field::Present("1.50".into()));
}

#[test]
fn scalar_keys_follow_the_line_rule() {
    let fm = Frontmatter::read(
        "name: 'Staging: how to reach it'\ndescription: Tests: always hit the real DB\ntype:   \ntitle:\nkeywords: [a, b]\n",
    );
    assert_eq!(
        fm.text("name"),
        Field::Present("'Staging: how to reach it'".into())
    );
    assert_eq!(
        fm.text("description"),
        Field::Present("Tests: always hit the real DB".into())
    );
    // Spaces alone are an empty value; nothing at all is no value.
    assert_eq!(fm.text("type"), Field::Present(String::new()));
    assert_eq!(fm.text("title"), Field::Missing);
    assert_eq!(
        fm.text_list("keywords"),
        Field::Present(vec!["a".into(), "b".into()])
    );
    assert!(fm.structured_error().is_none());
    // The regex's white space runs over a lone CR into the next line.
    assert_eq!(line_value("name:\rnext", "name"), Some("next".into()));
    assert_eq!(
        line_value("xname: a\nname:\nname: b", "name"),
        Some("b".into())
    );
    assert_eq!(line_value("name: a\u{2028}b", "name"), Some("a".into()));
}

#[test]
fn claude_code_nests_type_under_metadata() {
    let fm = Frontmatter::read("name: n\ndescription: d\nmetadata:\n  type: project\n");
    assert_eq!(fm.text("type"), Field::Missing);
    assert_eq!(
        fm.nested_text("metadata", "type"),
        Field::Present("project".into())
    );
}

#[test]
fn the_split_is_qwen_codes() {
    assert_eq!(
        split_like_qwen("---\na: b\n---\nbody"),
        Some(("a: b", "body"))
    );
    assert_eq!(
        split_like_qwen("---\r\na: b\r\n---\r\nbody"),
        Some(("a: b", "body"))
    );
    assert_eq!(split_like_qwen("---\na: b\n----x"), Some(("a: b", "-x")));
    assert_eq!(split_like_qwen("---\n---\n"), None);
    assert_eq!(split_like_qwen("---\n\n---"), Some(("", "")));
    assert_eq!(split_like_qwen("\u{feff}---\na\n---\n"), None);
}

#[test]
fn unknown_keys_survive_a_rewrite_in_order() {
    let mut fm = Frontmatter::read("zeta: [1, 2]\nname: a\n  more\nalpha: {x: y}\n");
    fm.set_line("name", "b: c");
    fm.set_line("type", "user");
    fm.set_list("keywords", &["x y".into(), "a, b".into()]);
    assert_eq!(
        fm.render(),
        "zeta: [1, 2]\nname: b: c\nalpha: {x: y}\ntype: user\nkeywords:\n- x y\n- a, b\n"
    );
    assert_eq!(fm.text("name"), Field::Present("b: c".into()));
    fm.remove("keywords");
    assert_eq!(
        fm.render(),
        "zeta: [1, 2]\nname: b: c\nalpha: {x: y}\ntype: user\n"
    );
}

#[test]
fn syntax_errors_are_located() {
    let err = Frontmatter::parse("name: a\nkeywords: [unclosed\n").unwrap_err();
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

/// `value_after` as first written, character by character: the reference.
fn value_after_by_chars(rest: &str) -> Option<&str> {
    let spaces = rest
        .char_indices()
        .find(|&(_, c)| !(is_js_space(c) && c != '\n'))
        .map_or(rest.len(), |(i, _)| i);
    let take_line = |from: usize| {
        let end = rest[from..]
            .find(is_js_line_end)
            .map_or(rest.len(), |e| from + e);
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

/// [`line_value`] as first written, character by character: the reference.
pub(super) fn line_value_by_chars(text: &str, key: &str) -> Option<String> {
    let pattern = format!("{key}:");
    let mut line_start = true;
    for (at, c) in text.char_indices() {
        if line_start && text[at..].starts_with(&pattern) {
            if let Some(value) = value_after_by_chars(&text[at + pattern.len()..]) {
                return Some(js_trim(value).to_string());
            }
        }
        line_start = is_js_line_end(c);
    }
    None
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Looking at line starts by bytes finds what reading every character finds.
    #[test]
    fn line_value_by_bytes_equals_by_chars(
        text in "((name|type|nam|names|x)?[: \t\r\n\u{2028}\u{2029}\u{2027}\u{2030}\u{A0}\u{85}a-cé测]{0,6}){0,8}",
        key in "name|type|nam|na",
    ) {
        prop_assert_eq!(line_value(&text, &key), line_value_by_chars(&text, &key), "{:?}", text);
    }
}

#[test]
fn line_value_sees_every_line_end() {
    for (text, value) in [
        ("name: a", Some("a")),
        ("x\nname: a", Some("a")),
        ("x\rname: a", Some("a")),
        ("x\u{2028}name: a", Some("a")),
        ("x\u{2029}name: a\nname: b", Some("a")),
        ("x\u{2027}name: a", None),
        ("é name: a", None),
        ("name:\nname: b", Some("b")),
        ("name:", None),
        ("name", None),
    ] {
        assert_eq!(line_value(text, "name").as_deref(), value, "{text:?}");
        assert_eq!(
            line_value_by_chars(text, "name").as_deref(),
            value,
            "{text:?}"
        );
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
