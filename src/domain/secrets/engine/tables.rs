//! Secrets in Markdown tables: a cell under a column whose header names a secret is judged
//! as the value of that key.

use std::ops::Range;
use std::sync::OnceLock;

use super::RawFinding;
use crate::domain::secrets::judge::{self, Confidence};
use crate::domain::secrets::rules::{RULES, SecretRule};

/// The generic rule's index: a Markdown table's cell under a secret column is judged as its
/// assignment.
fn generic_rule() -> Option<usize> {
    static INDEX: OnceLock<Option<usize>> = OnceLock::new();
    *INDEX.get_or_init(|| RULES.iter().position(|r| r.id == "generic-secret"))
}

/// The cells of a Markdown table row, as byte ranges of `text` without their padding; `None`
/// when the line is not a row (it holds no `|`).
fn row_cells(text: &str, start: usize, end: usize) -> Option<Vec<(usize, usize)>> {
    let line = &text.as_bytes()[start..end];
    if !line.contains(&b'|') {
        return None;
    }
    let mut cells = Vec::new();
    let mut from = 0;
    for (at, &b) in line.iter().enumerate().chain([(line.len(), &b'|')]) {
        // `\|` is a pipe inside a cell.
        if b != b'|' || (at > 0 && at < line.len() && line[at - 1] == b'\\') {
            continue;
        }
        let mut s = from;
        let mut e = at;
        while s < e && line[s].is_ascii_whitespace() {
            s += 1;
        }
        while e > s && line[e - 1].is_ascii_whitespace() {
            e -= 1;
        }
        cells.push((start + s, start + e));
        from = at + 1;
    }
    // A row written with its outer pipes has an empty first and last cell.
    if line.trim_ascii_start().first() == Some(&b'|') {
        cells.remove(0);
    }
    if line.trim_ascii_end().last() == Some(&b'|') {
        cells.pop();
    }
    Some(cells)
}

/// Whether a row is a table's delimiter row (`|---|:--:|`).
fn is_delimiter_row(text: &str, cells: &[(usize, usize)]) -> bool {
    !cells.is_empty()
        && cells.iter().all(|&(s, e)| {
            let cell = text[s..e].trim_matches(':');
            !cell.is_empty() && cell.bytes().all(|b| b == b'-')
        })
}

/// The line holding byte `at`, without its line break: `(start, end)`.
fn line_around(bytes: &[u8], at: usize) -> (usize, usize) {
    let start = memchr::memrchr(b'\n', &bytes[..at]).map_or(0, |nl| nl + 1);
    let mut end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |nl| at + nl);
    if end > start && bytes[end - 1] == b'\r' {
        end -= 1;
    }
    (start, end)
}

/// The start of the line after the one ending at `end` (its line break may be `\r\n`), or the
/// text's length.
fn next_line(bytes: &[u8], end: usize) -> usize {
    memchr::memchr(b'\n', &bytes[end..]).map_or(bytes.len(), |nl| end + nl + 1)
}

/// Secrets in the cells of a Markdown table column whose header names a secret (`| user |
/// password |` over `| grafana | …value… |`): each cell is judged as the value of an
/// assignment to its column's header. Only the lines holding `--` are looked at for a
/// delimiter row, so a text without tables costs one `memchr` search of its `busy` ranges (a
/// `|` is a busy byte: every one lies in them) and one `memmem` search.
pub(super) fn table_cells(
    text: &str,
    busy: &[Range<usize>],
    out: &mut Vec<(RawFinding, Confidence)>,
) {
    let bytes = text.as_bytes();
    if !busy
        .iter()
        .any(|r| memchr::memchr(b'|', &bytes[r.clone()]).is_some())
    {
        return;
    }
    let Some(rule_index) = generic_rule() else {
        return;
    };
    let rule = &RULES[rule_index];
    // Lines before this byte are done with.
    let mut done = 0;
    for hit in memchr::memmem::find_iter(bytes, b"--") {
        if hit < done {
            continue;
        }
        let (start, end) = line_around(bytes, hit);
        done = next_line(bytes, end);
        let delimiter = start > 0
            && row_cells(text, start, end).is_some_and(|cells| is_delimiter_row(text, &cells));
        let header = if delimiter {
            let (s, e) = line_around(bytes, start - 1);
            row_cells(text, s, e)
        } else {
            None
        };
        let Some(header) = header else {
            continue;
        };
        let columns: Vec<Option<&str>> = header
            .iter()
            .map(|&(s, e)| {
                let name = text[s..e].trim_matches(['*', '_', '`']);
                (!name.is_empty() && name.len() <= 40).then_some(name)
            })
            .collect();
        let mut at = next_line(bytes, end);
        while at < bytes.len() {
            let (row_start, row_end) = line_around(bytes, at);
            let Some(row) = row_cells(text, row_start, row_end) else {
                break;
            };
            for (column, &(s, e)) in row.iter().enumerate() {
                if let Some(Some(key)) = columns.get(column) {
                    judge_cell(text, rule, rule_index, key, s, e, out);
                }
            }
            at = next_line(bytes, row_end);
        }
        done = done.max(at);
    }
}

/// Judges one table cell under the column `key` (see [`table_cells`]).
fn judge_cell(
    text: &str,
    rule: &SecretRule,
    rule_index: usize,
    key: &str,
    start: usize,
    end: usize,
    out: &mut Vec<(RawFinding, Confidence)>,
) {
    let bytes = text.as_bytes();
    let (mut s, mut e) = (start, end);
    let quoted = e > s + 1 && matches!(bytes[s], b'`' | b'"' | b'\'') && bytes[e - 1] == bytes[s];
    if quoted {
        s += 1;
        e -= 1;
    }
    let Some(value) = text.get(s..e) else {
        return;
    };
    if value.is_empty() || value.contains(char::is_whitespace) || value.len() > 200 {
        return;
    }
    let context = judge::JudgeContext {
        key,
        next: None,
        before: "",
        quoted,
        assigned: false,
        compared: false,
    };
    if let Some(confidence) = judge::judge(rule, value, &context) {
        out.push((
            RawFinding {
                rule: rule_index,
                start: s,
                end: e,
            },
            confidence,
        ));
    }
}
