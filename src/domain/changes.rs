//! The consolidation report: what changed in a scope since its baseline, as markdown with a
//! `## Status` list and a unified diff, cut at a size limit so an agent can always read it.

/// The largest report, in bytes; the diff is cut at a line end before this, with a note.
pub const MAX_REPORT_BYTES: usize = 4 * 1024 * 1024;
/// Lines of context around each change in the diff.
pub const CONTEXT_LINES: usize = 3;
/// Git's mode for a regular file.
pub const MODE_FILE: u32 = 0o100644;
/// Git's mode for an executable file.
pub const MODE_EXECUTABLE: u32 = 0o100755;

/// How a file changed since the consolidation baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BaselineChange {
    /// New since the baseline.
    Added,
    /// Changed content or mode.
    Modified,
    /// Gone since the baseline.
    Deleted,
}

impl BaselineChange {
    /// The status letter, as `git status --short` writes it.
    pub fn letter(self) -> char {
        match self {
            BaselineChange::Added => 'A',
            BaselineChange::Modified => 'M',
            BaselineChange::Deleted => 'D',
        }
    }
}

/// One changed file, with both versions' text and mode (absent on the side it does not exist).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// Path relative to the scope folder.
    pub path: String,
    /// How it changed.
    pub kind: BaselineChange,
    /// The baseline's mode, when it existed there.
    pub old_mode: Option<u32>,
    /// The current mode, when it exists now.
    pub new_mode: Option<u32>,
    /// The baseline's text (empty when added).
    pub old_text: String,
    /// The current text (empty when deleted).
    pub new_text: String,
}

/// The report text and whether the diff had to be cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// The markdown.
    pub text: String,
    /// Whether the diff was cut at [`MAX_REPORT_BYTES`].
    pub cut: bool,
}

/// Renders the report. `changes` must be sorted by path.
pub fn render(title: &str, changes: &[FileChange]) -> Report {
    render_with_limit(title, changes, MAX_REPORT_BYTES)
}

/// [`render`] with a given size limit (tests use small limits).
pub fn render_with_limit(title: &str, changes: &[FileChange], limit: usize) -> Report {
    let mut text = format!("# {title}\n\n## Status\n\n");
    if changes.is_empty() {
        text.push_str("- none\n");
    }
    for change in changes {
        text.push_str(&format!("- {} {}\n", change.kind.letter(), change.path));
    }
    text.push_str("\n## Diff\n\n");
    if changes.is_empty() {
        text.push_str("No changes.\n");
        return Report { text, cut: false };
    }
    let diff: String = changes.iter().map(file_diff).collect();
    let fence = fence_for(&diff);
    text.push_str(&format!("{fence}diff\n"));
    let closing = format!("{fence}\n");
    let mut cut = false;
    let mut shown_files: usize = 0;
    for line in diff.split_inclusive('\n') {
        // Leave room for the closing fence and the longest note.
        if text.len() + line.len() + closing.len() + 200 > limit {
            cut = true;
            // A file whose diff was started but not finished is not shown in full.
            if !line.starts_with("diff --git ") {
                shown_files = shown_files.saturating_sub(1);
            }
            break;
        }
        if line.starts_with("diff --git ") {
            shown_files += 1;
        }
        text.push_str(line);
    }
    text.push_str(&closing);
    if cut {
        text.push_str(&format!(
            "\n> Diff cut at {} MiB: {} of {} changed files are not shown in full — read them in the memory folder.\n",
            limit / (1024 * 1024),
            changes.len() - shown_files,
            changes.len()
        ));
    }
    Report { text, cut }
}

/// A markdown fence longer than any run of backticks in the text, so memory content that holds
/// its own code blocks cannot close it.
fn fence_for(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    "`".repeat((longest + 1).max(3))
}

/// One file's diff, with git's headers for new, deleted and mode-changed files.
fn file_diff(change: &FileChange) -> String {
    let path = &change.path;
    let mut out = format!("diff --git a/{path} b/{path}\n");
    let (old_name, new_name) = match change.kind {
        BaselineChange::Added => {
            out.push_str(&format!(
                "new file mode {:o}\n",
                change.new_mode.unwrap_or(MODE_FILE)
            ));
            ("/dev/null".to_string(), format!("b/{path}"))
        }
        BaselineChange::Deleted => {
            out.push_str(&format!(
                "deleted file mode {:o}\n",
                change.old_mode.unwrap_or(MODE_FILE)
            ));
            (format!("a/{path}"), "/dev/null".to_string())
        }
        BaselineChange::Modified => {
            if let (Some(old), Some(new)) = (change.old_mode, change.new_mode) {
                if old != new {
                    out.push_str(&format!("old mode {old:o}\nnew mode {new:o}\n"));
                }
            }
            (format!("a/{path}"), format!("b/{path}"))
        }
    };
    if change.old_text == change.new_text {
        return out;
    }
    let diff = similar::TextDiff::from_lines(&change.old_text, &change.new_text);
    let hunks = diff
        .unified_diff()
        .context_radius(CONTEXT_LINES)
        .header(&old_name, &new_name)
        .to_string();
    out.push_str(&hunks);
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(path: &str, kind: BaselineChange, old: &str, new: &str) -> FileChange {
        FileChange {
            path: path.into(),
            kind,
            old_mode: (kind != BaselineChange::Added).then_some(MODE_FILE),
            new_mode: (kind != BaselineChange::Deleted).then_some(MODE_FILE),
            old_text: old.into(),
            new_text: new.into(),
        }
    }

    #[test]
    fn empty_report_says_none() {
        let r = render("T", &[]);
        assert_eq!(
            r.text,
            "# T\n\n## Status\n\n- none\n\n## Diff\n\nNo changes.\n"
        );
    }

    #[test]
    fn fence_outgrows_backticks_in_content() {
        let r = render("T", &[change("a.md", BaselineChange::Added, "", "````x\n")]);
        assert!(r.text.contains("\n`````diff\n"), "{}", r.text);
    }

    #[test]
    fn cut_keeps_the_limit() {
        let big = "line\n".repeat(2000);
        let changes = vec![
            change("a.md", BaselineChange::Added, "", &big),
            change("b.md", BaselineChange::Added, "", &big),
        ];
        let r = render_with_limit("T", &changes, 4096);
        assert!(r.cut && r.text.len() <= 4096, "{}", r.text.len());
        assert!(r.text.ends_with("read them in the memory folder.\n"));
    }
}
