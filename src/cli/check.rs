//! `teammem check`

use clap::{ArgGroup, Args, ValueEnum};

use crate::ops::check::format as check_format;
use crate::ops::check::{self, CheckSource};
use crate::ops::{EXIT_FINDINGS, EXIT_OK, OpError, Project};

/// Check the team memory as git holds it for secrets, invalid memories and trust risks.
///
/// Reports secrets (redacted), invalid memories, a stale MEMORY.md, unsafe paths (symlinks,
/// files outside <type>/<slug>.md, non-markdown files), size limits and trust risks: hidden
/// characters, prompt-injection text, fake role markers, instructions in HTML comments, risky
/// commands, fetching remote instructions, data exfiltration, base64 blobs and links to hosts
/// outside the allow-list.
///
/// Files are read from git objects, never from the work tree. --staged reads the index about to
/// be committed ($GIT_INDEX_FILE when git sets it, as in a pre-commit hook under `git commit -a`);
/// --range reads every file version each commit of BASE..HEAD wrote, so a secret added and then
/// removed is still found, naming the commit that added it; --all reads the HEAD commit's tree
/// (what is committed, whatever the work tree holds).
///
/// Severities and the link allow-list are set in .qwen/team-memory/.teammem-check.json (which can
/// only tighten the rules) and in your own ~/.qwen/teammem-check.json (which can loosen them, but
/// never for secrets); accepted secrets in .qwen/team-memory/.secretsignore (for --range, the
/// copies in BASE). --staged judges the change: a problem already in HEAD, in a file the commit
/// does not touch, is a warning. Findings at error severity give exit status 1. See
/// docs/check-and-review.md for the rules.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("source").required(true).args(["staged", "range", "all", "ref_updates"])))]
pub struct CheckArgs {
    /// Check the staged team memory (the pre-commit hook's check).
    #[arg(long)]
    staged: bool,
    /// Check every commit of BASE..HEAD (the pull request's check), e.g. origin/main..HEAD.
    #[arg(long, value_name = "BASE..HEAD")]
    range: Option<String>,
    /// Check the team memory in the HEAD commit.
    #[arg(long)]
    all: bool,
    /// Read `<old> <new> <ref>` lines (git's reference-transaction hook input) on standard
    /// input and check each commit they bring into a branch that no ref reaches yet (what
    /// cherry-pick, revert and am create), against its parent.
    #[arg(long)]
    ref_updates: bool,
    /// Output format. With sarif, a check that cannot run (exit status 2) still writes a valid
    /// SARIF log, the error as a tool execution notification.
    #[arg(long, value_enum, default_value_t = CheckFormat::Human)]
    format: CheckFormat,
    /// The same as --format json.
    #[arg(long, conflicts_with = "format")]
    json: bool,
}

/// How findings are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CheckFormat {
    /// Grouped by file, with line numbers.
    Human,
    /// {source, files_checked, commits_checked, errors, warnings, findings: [...]}.
    Json,
    /// SARIF 2.1.0 for code scanning.
    Sarif,
    /// GitHub Actions annotations (::error file=…,line=…::…).
    Github,
}

/// Runs `teammem check`; returns its exit status.
pub fn run(project: &Project, args: CheckArgs) -> Result<u8, OpError> {
    let format = if args.json {
        CheckFormat::Json
    } else {
        args.format
    };
    let json_error = |e: serde_json::Error| OpError::Usage(format!("cannot write JSON: {e}"));
    let source = match (&args.range, args.staged) {
        (Some(spec), _) => CheckSource::range(spec),
        (None, true) => Ok(CheckSource::Staged),
        (None, false) if args.ref_updates => {
            let mut input = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut input)
                .map_err(|e| OpError::Usage(format!("cannot read standard input: {e}")))
                .map(|_| CheckSource::RefUpdates(check::parse_ref_updates(&input)))
        }
        (None, false) => Ok(CheckSource::All),
    };
    let quiet = matches!(source, Ok(CheckSource::RefUpdates(_)));
    let checked = source.and_then(|source| check::check(project, &source));
    let report = match checked {
        Ok(report) => report,
        Err(err) if format == CheckFormat::Sarif => {
            let log = check_format::sarif_failure(&err.to_string()).map_err(json_error)?;
            out!("{log}\n");
            return Err(err);
        }
        Err(err) => return Err(err),
    };
    if quiet && report.findings.is_empty() && format == CheckFormat::Human {
        // Git runs this hook for every ref update: a clean one says nothing.
        return Ok(EXIT_OK);
    }
    let text = match format {
        CheckFormat::Human => check_format::human(&report),
        CheckFormat::Json => check_format::json(&report).map_err(json_error)? + "\n",
        CheckFormat::Sarif => check_format::sarif(&report).map_err(json_error)? + "\n",
        CheckFormat::Github => check_format::github(&report),
    };
    out!("{text}");
    Ok(if report.errors > 0 {
        EXIT_FINDINGS
    } else {
        EXIT_OK
    })
}
