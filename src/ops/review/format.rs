//! The review as markdown for a pull request comment: summary counts first, then one section
//! per memory; diffs and contents longer than [`FOLD_LINES`] are folded into `<details>`.
//!
//! Everything a memory's author wrote is shown inside code spans or fenced blocks, with
//! invisible characters revealed, so the comment cannot be restyled or given hidden text by
//! the memory it describes.

use crate::domain::check::Finding;
use crate::domain::memory_diff::reveal_hidden;

use super::{MemoryChange, Review};

/// Longer bodies and diffs are folded.
pub const FOLD_LINES: usize = 20;

/// The review as markdown.
pub fn markdown(review: &Review) -> String {
    markdown_within(review, None)
}

/// The smallest `max_chars` [`markdown_within`] accepts: room for the header and the note.
pub const MIN_CHARS: usize = 2_000;

/// The review as markdown of at most `max_chars` characters (GitHub's comment limit is 65,536).
/// Memories keep their order; one whose section does not fit is shown without its body, then
/// the rest are left out, and a closing note says how many and how to see everything. Cuts
/// fall between sections, never inside a code block. `max_chars` below [`MIN_CHARS`] is
/// treated as [`MIN_CHARS`].
pub fn markdown_within(review: &Review, max_chars: Option<usize>) -> String {
    let s = &review.summary;
    let mut out = String::from("## Team memory review\n\n");
    out.push_str(&format!(
        "**{} added · {} removed · {} modified · {} renamed** — check: {} error(s), {} warning(s)\n\n",
        s.added, s.removed, s.modified, s.renamed, s.errors, s.warnings
    ));
    out.push_str(&format!(
        "Compared {} (merge base with {}) to {} ({}).\n",
        code(short(&review.merge_base)),
        code(&review.base),
        code(short(&review.head_commit)),
        code(&review.head)
    ));
    if review.memories.is_empty() && review.other_files.is_empty() {
        out.push_str("\nNo change to the team memory.\n");
    }
    if !review.proposal_commits.is_empty() {
        out.push_str("\n### Proposal commits\n\n");
        out.push_str(
            "Author and committer are as each commit states them. Anyone who can push to this \
             branch can write any name there, so a name that is the owner's does not show who \
             made a commit; only a signature your host verifies does.\n\n",
        );
        for c in &review.proposal_commits {
            let flag = if c.not_the_owner {
                " — **author is not the proposal's owner**"
            } else {
                ""
            };
            out.push_str(&format!(
                "- {} {} — author {}, committer {}{flag}\n",
                code(short(&c.commit)),
                code(&c.subject),
                code(&c.author),
                code(&c.committer)
            ));
        }
    }
    let mut tail = String::new();
    if !review.stale_references.is_empty() {
        tail.push_str("\n### Team memories this change makes out of date\n\n");
        for f in &review.stale_references {
            tail.push_str(&format!(
                "- {} {}\n",
                code(&format!("{}:{}", f.path, f.line)),
                risk_line(f)
            ));
        }
    }
    if !review.other_files.is_empty() {
        tail.push_str("\n### Other files in .qwen/team-memory/\n\n");
        for line in &review.other_files {
            tail.push_str(&format!("- {}\n", code(line)));
        }
    }
    if !review.other_risks.is_empty() {
        tail.push_str("\n### Risks in other versions of the team memory\n\n");
        for risk in &review.other_risks {
            tail.push_str(&format!("- {} {}\n", code(&risk.path), risk_line(risk)));
        }
    }
    let Some(max_chars) = max_chars else {
        for memory in &review.memories {
            out.push('\n');
            section(memory, true, &mut out);
        }
        out.push_str(&tail);
        return out;
    };
    let limit = max_chars.max(MIN_CHARS);
    let note_room = cut_note(review, usize::MAX, usize::MAX, 0).chars().count();
    let mut used = out.chars().count();
    let (mut shown, mut bodiless) = (0, 0);
    for memory in &review.memories {
        let mut full = String::from("\n");
        section(memory, true, &mut full);
        let full_len = full.chars().count();
        if used + full_len + note_room <= limit {
            out.push_str(&full);
            used += full_len;
            shown += 1;
            continue;
        }
        let mut short_form = String::from("\n");
        section(memory, false, &mut short_form);
        let short_len = short_form.chars().count();
        if used + short_len + note_room > limit {
            break;
        }
        out.push_str(&short_form);
        used += short_len;
        shown += 1;
        bodiless += usize::from(!memory.body.is_empty());
    }
    let left_out = review.memories.len() - shown;
    let tail_len = tail.chars().count();
    let tail_shown = used + tail_len + note_room <= limit;
    if tail_shown {
        out.push_str(&tail);
    }
    if left_out > 0 || bodiless > 0 || !tail_shown {
        out.push_str(&cut_note(
            review,
            left_out,
            bodiless,
            usize::from(!tail_shown),
        ));
    }
    out
}

/// The closing note of a cut review. Called with `usize::MAX` counts, it is as long as it can
/// ever be, which is the room kept for it.
fn cut_note(review: &Review, left_out: usize, bodiless: usize, tail_cut: usize) -> String {
    let mut parts = Vec::new();
    if left_out > 0 {
        parts.push(format!("{left_out} more memory change(s) are not shown"));
    }
    if bodiless > 0 {
        parts.push(format!(
            "{bodiless} memory change(s) are shown without their body"
        ));
    }
    if tail_cut > 0 {
        parts.push("the other files and their risks are not shown".to_string());
    }
    format!(
        "\n---\n_This review was cut to fit a comment: {}. Run {} to see all of it._\n",
        parts.join("; "),
        code(&format!("teammem review {}..{}", review.base, review.head))
    )
}

/// One memory's section; `with_body` false leaves out its content or body diff.
fn section(m: &MemoryChange, with_body: bool, out: &mut String) {
    let title = m
        .name
        .as_deref()
        .map(|n| format!(" — {}", code(n)))
        .unwrap_or_default();
    match &m.old_path {
        Some(old) => out.push_str(&format!(
            "### Renamed {} → {}{title}\n\n",
            code(old),
            code(&m.path)
        )),
        None => out.push_str(&format!(
            "### {} {}{title}\n\n",
            capitalised(m.status),
            code(&m.path)
        )),
    }
    if matches!(m.status, "added" | "removed") {
        let kind = m.kind.as_deref().unwrap_or("?");
        let description = m.description.as_deref().unwrap_or("");
        out.push_str(&format!(
            "- type {} · description {}\n",
            code(kind),
            code(description)
        ));
    }
    for change in &m.frontmatter {
        let value = |v: &Option<String>| v.as_deref().map_or("(none)".to_string(), code);
        out.push_str(&format!(
            "- {}: {} → {}\n",
            code(&change.field),
            value(&change.old),
            value(&change.new)
        ));
    }
    if !m.changes.is_empty() {
        let who: Vec<String> = m
            .changes
            .iter()
            .map(|c| {
                format!(
                    "{} on {} ({})",
                    code(&c.author),
                    c.date,
                    code(short(&c.commit))
                )
            })
            .collect();
        out.push_str(&format!("- changed by {}\n", who.join(", ")));
    }
    if !m.risks.is_empty() {
        out.push_str("\n**Risks**\n\n");
        for risk in &m.risks {
            out.push_str(&format!("- {}\n", risk_line(risk)));
        }
    }
    if with_body && !m.body.is_empty() {
        let what = if m.status == "added" {
            "Content"
        } else {
            "Body changes (`[-removed-]` `{+added+}`)"
        };
        out.push('\n');
        let block = fenced(&m.body);
        if m.body_lines > FOLD_LINES {
            out.push_str(&format!(
                "<details><summary>{what}, {} lines</summary>\n\n{block}\n</details>\n",
                m.body_lines
            ));
        } else {
            out.push_str(&format!("{what}:\n\n{block}"));
        }
    }
}

fn risk_line(f: &Finding) -> String {
    let commit = f
        .commit
        .as_deref()
        .map(|c| format!(" (commit {})", code(short(c))))
        .unwrap_or_default();
    format!(
        "**{}** {} line {}: {}{commit}",
        f.severity.as_str(),
        code(f.rule),
        f.line,
        code(&f.message)
    )
}

/// A code span of one line of text: invisible characters and backticks cannot break out.
fn code(text: &str) -> String {
    let clean = reveal_hidden(text)
        .replace('`', "'")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    if clean.is_empty() {
        "` `".to_string()
    } else {
        format!("`{clean}`")
    }
}

/// A fenced block longer than any backtick run inside, invisible characters revealed.
fn fenced(text: &str) -> String {
    let text = reveal_hidden(text);
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat((longest + 1).max(3));
    let newline = if text.ends_with('\n') { "" } else { "\n" };
    format!("{fence}text\n{text}{newline}{fence}\n")
}

fn capitalised(status: &str) -> String {
    let mut c = status.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

fn short(commit: &str) -> &str {
    commit.get(..7).unwrap_or(commit)
}
