//! The command line: one file per command. Each command's clap `Args` doc comments are its
//! `--help` text; its `run` function only orchestrates an operation and prints the result
//! through `ui` (the macros below), never with `println!`.

/// The command's result on standard output, with a newline (see [`ui::out`]).
macro_rules! outln {
    () => { $crate::cli::ui::out(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::cli::ui::out(format_args!("{}\n", format_args!($($arg)*))) };
}
/// The command's result on standard output (see [`ui::out`]).
macro_rules! out {
    ($($arg:tt)*) => { $crate::cli::ui::out(format_args!($($arg)*)) };
}
/// A status line on standard output, hidden by `-q` (see [`ui::status`]).
macro_rules! status {
    ($($arg:tt)*) => { $crate::cli::ui::status(format_args!($($arg)*)) };
}
/// `teammem: warning: …` on standard error (see [`ui::warning`]).
macro_rules! warning {
    ($($arg:tt)*) => { $crate::cli::ui::warning(format_args!($($arg)*)) };
}
/// `hint: …` on standard error, hidden by `-q` (see [`ui::hint`]).
macro_rules! hint {
    ($($arg:tt)*) => { $crate::cli::ui::hint(format_args!($($arg)*)) };
}
/// A line on standard error as it is (see [`ui::err`]).
macro_rules! errln {
    ($($arg:tt)*) => { $crate::cli::ui::err(format_args!("{}\n", format_args!($($arg)*))) };
}

pub(crate) mod ui;

mod add;
mod baseline;
mod check;
mod cite;
mod context;
mod demo;
mod dream;
mod forget;
mod hook;
mod hooks;
mod index;
mod init;
mod install_agent;
mod install_mcp;
mod list;
mod mcp;
mod merge_index;
mod prompt_context;
mod recall;
mod redact;
mod remember;
mod resolve;
mod review;
mod scan;
mod session_start;
mod share;
mod shell;
mod show;
mod stale;
mod sync;
mod validate;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

use crate::domain::memory::MemoryType;
use crate::domain::scope::ScopeKind;
use crate::git::remote::tls::{self, TlsUse};
use crate::ops::{EXIT_ERROR, EXIT_OK, OpError, Project};

const EXIT_STATUS_HELP: &str = "\
Exit status:
  0    success, nothing to report
  1    findings: invalid memories, a stale index, a secret, or a refused write
  2    usage error, or an I/O or git error
  141  the reader closed standard output early (teammem list | head -1)

-q prints only results, warnings and errors; -v or TEAMMEM_LOG=1 adds debug lines on stderr.";

/// A memory for coding agents that the whole team shares through git.
///
/// Memories are small markdown files with YAML frontmatter. Private memories stay on this
/// machine; team memories live in the repository at .qwen/team-memory/ and are reviewed in pull
/// requests like code.
#[derive(Debug, Parser)]
#[command(name = "teammem", version, after_help = EXIT_STATUS_HELP)]
pub(crate) struct Cli {
    /// Run as if started in DIR (like `git -C`).
    #[arg(short = 'C', value_name = "DIR", global = true)]
    pub dir: Option<PathBuf>,

    /// Print only the result, warnings and errors (no status lines or hints).
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,

    /// Print debug lines on standard error (as TEAMMEM_LOG=1 does).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,

    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    Init(init::InitArgs),
    Add(add::AddArgs),
    List(list::ListArgs),
    Show(show::ShowArgs),
    Index(index::IndexArgs),
    Validate(validate::ValidateArgs),
    Baseline(baseline::BaselineArgs),
    Recall(recall::RecallArgs),
    Context(context::ContextArgs),
    Dream(dream::DreamArgs),
    Forget(forget::ForgetArgs),
    Resolve(resolve::ResolveArgs),
    Remember(remember::RememberArgs),
    Cite(cite::CiteArgs),
    Stale(stale::StaleArgs),
    Check(check::CheckArgs),
    InstallHooks(hooks::InstallHooksArgs),
    UninstallHooks(hooks::UninstallHooksArgs),
    Review(review::ReviewArgs),
    Sync(sync::SyncArgs),
    Scan(scan::ScanArgs),
    Redact(redact::RedactArgs),
    SessionStart(session_start::SessionStartArgs),
    PromptContext(prompt_context::PromptContextArgs),
    Share(share::ShareArgs),
    Demo(demo::DemoArgs),
    Completions(shell::CompletionsArgs),
    Man(shell::ManArgs),
    Mcp(mcp::McpArgs),
    InstallMcp(install_mcp::InstallMcpArgs),
    InstallAgent(install_agent::InstallAgentArgs),
    #[command(hide = true)]
    MergeIndex(merge_index::MergeIndexArgs),
}

impl Command {
    /// Whether the command never talks to a remote. There is no catch-all arm on purpose: a new
    /// command does not compile until its author says whether it goes online.
    fn is_offline(&self) -> bool {
        match self {
            Command::Sync(args) => args.is_offline(),
            Command::SessionStart(_) => false,
            // The demo's remote is a local folder: no TLS.
            Command::Demo(_) => true,
            Command::Completions(_) | Command::Man(_) | Command::Resolve(_) => true,
            // Online only when team saves are published at once.
            Command::Mcp(args) => !args.publishes(),
            Command::InstallMcp(_) => true,
            Command::InstallAgent(_) => true,
            Command::MergeIndex(_) => true,
            Command::PromptContext(_) => true,
            Command::Baseline(_)
            | Command::Recall(_)
            | Command::Context(_)
            | Command::Dream(_)
            | Command::Forget(_)
            | Command::Remember(_)
            | Command::Cite(_)
            | Command::Stale(_)
            | Command::Check(_)
            | Command::InstallHooks(_)
            | Command::UninstallHooks(_)
            | Command::Review(_) => true,
            Command::Init(_)
            | Command::Add(_)
            | Command::List(_)
            | Command::Show(_)
            | Command::Index(_)
            | Command::Validate(_)
            | Command::Scan(_)
            | Command::Redact(_)
            | Command::Share(_) => true,
        }
    }
}

impl Command {
    /// What the command may need of TLS: nothing offline; sync and session start only what
    /// the repository's remotes need.
    fn tls_use<'a>(&self, dir: Option<&'a std::path::Path>) -> TlsUse<'a> {
        match self {
            _ if self.is_offline() => TlsUse::Never,
            Command::Sync(_) | Command::SessionStart(_) => TlsUse::RemotesOf(dir),
            _ => TlsUse::Any,
        }
    }
}

/// A scope as named on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ScopeArg {
    /// Shared with the team through the repository (.qwen/team-memory/).
    Team,
    /// This project, this machine only.
    Private,
    /// Across all projects, this machine only.
    User,
}

impl From<ScopeArg> for ScopeKind {
    fn from(arg: ScopeArg) -> Self {
        match arg {
            ScopeArg::Team => ScopeKind::Team,
            ScopeArg::Private => ScopeKind::Private,
            ScopeArg::User => ScopeKind::User,
        }
    }
}

/// A memory type as named on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum TypeArg {
    /// Who the user is and how they like to work.
    User,
    /// Corrections and confirmations: what to do and not do.
    Feedback,
    /// Facts about the project that the code does not show.
    Project,
    /// Where information lives outside the repository.
    Reference,
}

impl From<TypeArg> for MemoryType {
    fn from(arg: TypeArg) -> Self {
        match arg {
            TypeArg::User => MemoryType::User,
            TypeArg::Feedback => MemoryType::Feedback,
            TypeArg::Project => MemoryType::Project,
            TypeArg::Reference => MemoryType::Reference,
        }
    }
}

/// The scopes a command works on: the one named, or the project's default set.
fn scopes(project: &Project, scope: Option<ScopeArg>) -> Vec<ScopeKind> {
    match scope {
        Some(s) => vec![s.into()],
        None => project.default_scopes(),
    }
}

/// Parses the command line, runs the command, and maps the outcome to the documented status.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => return ExitCode::from(usage_error(&err)),
    };
    ui::init(cli.quiet, cli.verbose);
    // A hook's reader closing early is no reason for a hook command to fail.
    let always_ok = matches!(
        cli.command,
        Command::SessionStart(_) | Command::PromptContext(_)
    );
    let code = run_cli(cli);
    let code = ui::exit_status(code);
    ExitCode::from(if always_ok { EXIT_OK } else { code })
}

/// Prints clap's message (help and version on stdout, through [`ui`] so a closed pipe is quiet;
/// errors on stderr) and returns its exit status.
fn usage_error(err: &clap::Error) -> u8 {
    ui::init(false, 0);
    let code = u8::try_from(err.exit_code()).unwrap_or(EXIT_ERROR);
    if err.use_stderr() {
        let _ = err.print();
        return code;
    }
    use std::io::IsTerminal;
    let text = if std::io::stdout().is_terminal() {
        err.render().ansi().to_string()
    } else {
        err.render().to_string()
    };
    ui::out_bytes(text.as_bytes());
    ui::exit_status(code)
}

fn run_cli(cli: Cli) -> u8 {
    tls::set_up(cli.command.tls_use(cli.dir.as_deref()));
    let cwd = match &cli.dir {
        Some(dir) if !dir.is_dir() => {
            // Like `git -C`: a folder that is not there is a usage error, not "no repository".
            ui::error(format_args!(
                "cannot change to {}: {}",
                dir.display(),
                if dir.exists() {
                    "not a folder"
                } else {
                    "no such folder"
                }
            ));
            return EXIT_ERROR;
        }
        Some(dir) => dir.clone(),
        None => match std::env::current_dir() {
            Ok(dir) => dir,
            Err(e) => {
                ui::error(format_args!("cannot read the current folder: {e}"));
                return EXIT_ERROR;
            }
        },
    };
    ui::debug(format_args!("working in {}", cwd.display()));
    match run(cli.command, &cwd) {
        Ok(code) => code,
        Err(err) => {
            ui::error(format_args!("{}", shown(&err.to_string())));
            err.exit_code()
        }
    }
}

fn run(command: Command, cwd: &std::path::Path) -> Result<u8, OpError> {
    // Session start never fails, not even when the project cannot be read.
    let command = match command {
        Command::SessionStart(args) => return Ok(session_start::run(cwd, args)),
        // Nor does a turn's recall: it fails open.
        Command::PromptContext(args) => return Ok(prompt_context::run(cwd, args)),
        // Generated from the definitions above; no project needed.
        Command::Completions(args) => return shell::completions(args),
        Command::Man(args) => return shell::man(args),
        // git's merge driver: three files, no project.
        Command::MergeIndex(args) => return merge_index::run(cwd, args),
        other => other,
    };
    // `scan` reads files only, a no-op sync may (`ops/sync/fast_noop.rs`), and `recall` and
    // `mcp` need libgit2 only for some ages and writes (then they open the repository
    // themselves): they find the repository without starting libgit2, whose OpenSSL set-up
    // costs more than a warm recall's own work.
    let opened = match &command {
        Command::Scan(_) | Command::Sync(_) | Command::Recall(_) | Command::Mcp(_) => {
            Project::open_plain(cwd)
        }
        _ => Project::open(cwd),
    };
    let project = match opened {
        Ok(project) => project,
        Err(err) => {
            if let Command::Sync(args) = &command {
                sync::report_unopened(args, &err)?;
            }
            return Err(err);
        }
    };
    ui::debug(format_args!(
        "git root: {}; scopes in use: {}; team memory {}, its sync {}",
        project
            .repo
            .as_ref()
            .map_or("none (not in a repository)".to_string(), |r| r
                .workdir
                .display()
                .to_string()),
        project
            .default_scopes()
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        if project.switches.team { "on" } else { "off" },
        if project.switches.sync { "on" } else { "off" },
    ));
    for scope in project.default_scopes() {
        if let Some(dir) = project.layout.memory_dir(scope) {
            ui::debug(format_args!("{scope} memory folder: {}", dir.display()));
        }
    }
    for warning in &project.warnings {
        warning!("{}", shown(warning));
    }
    match command {
        Command::Init(args) => init::run(&project, args),
        Command::Add(args) => add::run(&project, args),
        Command::List(args) => list::run(&project, args),
        Command::Show(args) => show::run(&project, args),
        Command::Index(args) => index::run(&project, args),
        Command::Validate(args) => validate::run(&project, args),
        Command::Baseline(args) => baseline::run(&project, args),
        Command::Recall(args) => recall::run(&project, args),
        Command::Context(args) => context::run(&project, args),
        Command::Dream(args) => dream::run(&project, args),
        Command::Forget(args) => forget::run(&project, args),
        Command::Resolve(args) => resolve::run(&project, args),
        Command::Remember(args) => remember::run(&project, args),
        Command::Cite(args) => cite::run(&project, args),
        Command::Stale(args) => stale::run(&project, args),
        Command::Check(args) => check::run(&project, args),
        Command::InstallHooks(args) => hooks::install(&project, args),
        Command::UninstallHooks(args) => hooks::uninstall(&project, args),
        Command::Review(args) => review::run(&project, args),
        Command::Sync(args) => sync::run(&project, args),
        Command::Scan(args) => scan::run(&project, cwd, args),
        Command::Redact(args) => redact::run(&project, args),
        Command::Share(args) => share::run(&project, args),
        Command::SessionStart(args) => Ok(session_start::run(cwd, args)),
        Command::PromptContext(args) => Ok(prompt_context::run(cwd, args)),
        Command::Demo(args) => demo::run(args),
        Command::Completions(args) => shell::completions(args),
        Command::Man(args) => shell::man(args),
        Command::Mcp(args) => mcp::run(project, args),
        Command::InstallMcp(args) => install_mcp::run(&project, args),
        Command::InstallAgent(args) => install_agent::run(&project, args),
        Command::MergeIndex(args) => merge_index::run(cwd, args),
    }
}

/// `--format` for commands whose output is human text or JSON (`--json` is the same as
/// `--format json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum TextFormat {
    /// Text for people.
    Human,
    /// JSON for programs.
    Json,
}

/// Whether a command was asked for JSON, by `--json` or by `--format json`.
fn json_wanted(json: bool, format: Option<TextFormat>) -> bool {
    json || format == Some(TextFormat::Json)
}

/// Prints a value as pretty JSON on stdout, every string in it redacted: a path,
/// a name or a message can hold a secret, and no output prints one.
fn print_json<T: serde::Serialize>(value: &T) -> Result<(), OpError> {
    let json_error = |e: serde_json::Error| OpError::Usage(format!("cannot write JSON: {e}"));
    let text = serde_json::to_string_pretty(value).map_err(json_error)?;
    let spans = crate::domain::gate::secret_spans(&text, &Default::default());
    // A span without a quote or backslash lies inside one JSON string: replacing it keeps the
    // document valid and its field order. Otherwise every string is redacted on its own.
    let text = if spans
        .iter()
        .all(|&(a, b)| !text[a..b].contains(['"', '\\']))
    {
        crate::domain::gate::redact_secrets(&text)
    } else {
        let mut value = serde_json::to_value(value).map_err(json_error)?;
        redact_json(&mut value);
        serde_json::to_string_pretty(&value).map_err(json_error)?
    };
    outln!("{text}");
    Ok(())
}

/// Prints a value as pretty JSON on stdout as it is: only for a value whose strings are fixed
/// words, ids and numbers, which no secret rule can match (the fast no-op's report).
fn print_json_unredacted<T: serde::Serialize>(value: &T) -> Result<(), OpError> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|e| OpError::Usage(format!("cannot write JSON: {e}")))?;
    outln!("{text}");
    Ok(())
}

fn redact_json(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::String(text) => {
            // The JSON encoder escapes control characters itself; only secrets are replaced.
            let safe = crate::domain::gate::redact_secrets(text);
            if safe != *text {
                *text = safe;
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(redact_json),
        serde_json::Value::Object(map) => map.values_mut().for_each(redact_json),
        _ => {}
    }
}

/// Text as a command may print it to a person: every detected secret redacted, including one
/// that fills a file or folder name, and every control character but newline and tab escaped
/// (see [`crate::domain::gate::printable`]).
pub(crate) fn shown(text: &str) -> String {
    crate::domain::gate::printable(text)
}
