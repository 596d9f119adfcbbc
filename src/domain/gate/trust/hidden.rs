//! What a reviewer cannot see but a model reads: invisible characters, and instructions
//! inside HTML comments (hidden when the markdown is rendered).

use std::sync::LazyLock;

use regex::bytes::Regex;

use super::patterns::ascii;
use super::{HIDDEN_CHARACTER, HIDDEN_COMMENT, Risk, risk};
use crate::domain::memory::line_col;
use crate::domain::memory_index::is_hidden;

pub(super) fn hidden_characters(text: &str, risks: &mut Vec<Risk>) {
    // ASCII text can hide only control characters.
    if text
        .bytes()
        .all(|b| (0x20..0x7F).contains(&b) || matches!(b, b'\n' | b'\t' | b'\r'))
    {
        return;
    }
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut reported_line = 0;
    for (i, &(offset, c)) in chars.iter().enumerate() {
        if !is_suspicious(c) {
            continue;
        }
        // A zero-width joiner between two emoji builds one emoji (👩‍💻): that is not hiding.
        if c == '\u{200D}' {
            let before = i.checked_sub(1).map(|j| chars[j].1);
            let after = chars.get(i + 1).map(|&(_, c)| c);
            if before.is_some_and(is_emoji) && after.is_some_and(is_emoji) {
                continue;
            }
        }
        let (line, column) = line_col(text.as_bytes(), offset);
        if line == reported_line {
            continue;
        }
        reported_line = line;
        let count = text
            .lines()
            .nth(line - 1)
            .map_or(1, |l| l.chars().filter(|&c| is_suspicious(c)).count());
        risks.push(Risk {
            rule: HIDDEN_CHARACTER,
            line,
            column,
            message: format!(
                "{count} invisible character(s) on this line, first U+{:04X} ({})",
                c as u32,
                char_name(c)
            ),
            matched: format!("U+{:04X}", c as u32),
        });
    }
}

/// The invisible characters a check reports: [`is_invisible`] less the ones ordinary text
/// holds (a carriage return, the emoji presentation selector).
fn is_suspicious(c: char) -> bool {
    is_hidden(c) || (is_invisible(c) && c != '\r' && c != '\u{FE0F}')
}

fn is_emoji(c: char) -> bool {
    matches!(c as u32, 0x1F000..=0x1FAFF | 0x2600..=0x27BF | 0xFE0F)
}

fn char_name(c: char) -> &'static str {
    match c {
        '\u{200B}' => "zero width space",
        '\u{200C}' => "zero width non-joiner",
        '\u{200D}' => "zero width joiner",
        '\u{200E}' | '\u{200F}' | '\u{061C}' => "direction mark",
        '\u{202A}'..='\u{202E}' => "bidi embedding or override",
        '\u{2066}'..='\u{2069}' => "bidi isolate",
        '\u{2060}' => "word joiner",
        '\u{FEFF}' => "zero width no-break space",
        '\u{00AD}' => "soft hyphen",
        '\u{E0000}'..='\u{E007F}' => "Unicode tag character",
        _ => "invisible character",
    }
}

/// Whether a character is invisible or changes how text around it is read: control
/// characters (except tab and newline), zero-width and joiner characters, bidi controls,
/// variation selectors, Unicode tags, fillers, interlinear annotations and private-use
/// characters. Such characters can hide text from a reviewer that a model still reads.
pub fn is_invisible(c: char) -> bool {
    if c == '\n' || c == '\t' {
        return false;
    }
    c.is_control()
        || matches!(c,
            '\u{00AD}'
            | '\u{034F}'
            | '\u{061C}'
            | '\u{115F}'
            | '\u{1160}'
            | '\u{17B4}'
            | '\u{17B5}'
            | '\u{180B}'..='\u{180F}'
            | '\u{200B}'..='\u{200F}'
            | '\u{2028}'..='\u{202E}'
            | '\u{2060}'..='\u{206F}'
            | '\u{3164}'
            | '\u{FE00}'..='\u{FE0F}'
            | '\u{FEFF}'
            | '\u{FFA0}'
            | '\u{FFF9}'..='\u{FFFB}'
            | '\u{E000}'..='\u{F8FF}'
            | '\u{1BCA0}'..='\u{1BCA3}'
            | '\u{1D173}'..='\u{1D17A}'
            | '\u{E0000}'..='\u{E007F}'
            | '\u{E0100}'..='\u{E01EF}'
            | '\u{F0000}'..='\u{FFFFD}'
            | '\u{100000}'..='\u{10FFFD}')
}

pub(super) static COMMENT: LazyLock<Option<Regex>> =
    LazyLock::new(|| ascii(r"(?s)<!--(.*?)(?:-->|\z)"));

/// Words that make an HTML comment an instruction rather than an editor's note.
pub(super) static COMMENT_INSTRUCTION: LazyLock<Option<Regex>> = LazyLock::new(|| {
    ascii(
        r"\b(?:ignore|instructions?|assistant|system|prompt|model|agent|llm|ai|you\s+(?:must|should|will|are|need)|always|never|do\s+not|don't|run|execute|curl|wget|fetch|download|send|upload|token|password|secret|credential)\b",
    )
});

pub(super) fn hidden_comments(text: &str, risks: &mut Vec<Risk>) {
    if !text.contains("<!--") {
        return;
    }
    let (Some(comment), Some(instruction)) = (&*COMMENT, &*COMMENT_INSTRUCTION) else {
        return;
    };
    for caps in comment.captures_iter(text.as_bytes()) {
        let (Some(whole), Some(inner)) = (caps.get(0), caps.get(1)) else {
            continue;
        };
        if instruction.is_match(inner.as_bytes()) {
            risks.push(risk(
                text,
                HIDDEN_COMMENT,
                whole.start(),
                &String::from_utf8_lossy(whole.as_bytes()),
                "HTML comment (hidden when rendered) holds instructions",
            ));
        }
    }
}
