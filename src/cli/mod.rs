//! The command line: one file per command. Each command's clap `Args` doc comments are its
//! `--help` text; its `run` function only orchestrates an operation and prints the result.

mod add;
mod baseline;
mod check;
mod cite;
mod context;
mod demo;
mod dream;
mod forget;
mod hooks;
mod index;
mod init;
mod list;
mod recall;
mod redact;
mod remember;
mod review;
mod scan;
mod session_start;
mod show;
mod stale;
mod sync;
mod validate;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

use crate::domain::memory::MemoryType;
use crate::domain::scope::ScopeKind;
use crate::ops::{EXIT_ERROR, OpError, Project};

const EXIT_STATUS_HELP: &str = "\
Exit status:
  0  success, nothing to report
  1  findings: invalid memories, a stale index, a secret, or a refused write
  2  usage error, or an I/O or git error";

/// A memory for coding agents that the whole team shares through git.
///
/// Memories are small markdown files with YAML frontmatter. Private memories stay on this
/// machine; team memories live in the repository at .qwen/team-memory/ and are reviewed in pull
/// requests like code.
#[derive(Debug, Parser)]
#[command(name = "teammem", version, after_help = EXIT_STATUS_HELP)]
pub struct Cli {
    /// Run as if started in DIR (like `git -C`).
    #[arg(short = 'C', value_name = "DIR", global = true)]
    pub dir: Option<PathBuf>,

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
    Demo(demo::DemoArgs),
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
            | Command::Redact(_) => true,
        }
    }
}

impl Command {
    /// Whether a command that goes online reaches only remotes that need no TLS (a local
    /// folder, git://, ssh), as far as the repository's config shows.
    fn needs_no_tls(&self, dir: Option<&std::path::Path>) -> bool {
        match self {
            Command::Sync(_) | Command::SessionStart(_) => sync::remotes_need_no_tls(dir),
            _ => false,
        }
    }
}

/// libgit2 parses the whole CA bundle (`SSL_CERT_FILE`) when it starts — tens of milliseconds,
/// most of a local sync — though only fetch and push over HTTPS need it. A command that never
/// talks to a remote points OpenSSL at an empty bundle instead.
fn skip_tls_bundle() {
    #[cfg(unix)]
    // SAFETY: runs first thing in `main`, before any other thread exists.
    unsafe {
        std::env::set_var("SSL_CERT_FILE", "/dev/null")
    };
}

/// Folders where distributions keep CA certificates as hashed links (`<hash>.0`), which
/// OpenSSL can search one certificate at a time.
const HASHED_CA_FOLDERS: &[&str] = &[
    "/etc/ssl/certs",
    "/usr/lib/ssl/certs",
    "/usr/local/share/certs",
];

/// For a command that may fetch or push over HTTPS: unless the user chose a bundle
/// (`SSL_CERT_FILE`), let OpenSSL look up the certificates a server's chain needs in the hashed
/// CA folder (`SSL_CERT_DIR`, or the distribution's) instead of parsing the whole bundle at
/// start — about 15 ms a run on Debian. The folder and the bundle hold the same certificates
/// (`update-ca-certificates` writes both); with no hashed folder nothing changes.
fn prefer_hashed_ca_folder() {
    if std::env::var_os("SSL_CERT_FILE").is_some() {
        return;
    }
    let folder = match std::env::var_os("SSL_CERT_DIR") {
        Some(dir) => Some(std::path::PathBuf::from(dir)).filter(|d| has_hashed_certificates(d)),
        None => HASHED_CA_FOLDERS
            .iter()
            .map(std::path::PathBuf::from)
            .find(|d| has_hashed_certificates(d)),
    };
    if let Some(folder) = folder {
        #[cfg(unix)]
        // SAFETY: runs first thing in `main`, before any other thread exists.
        unsafe {
            std::env::set_var("SSL_CERT_FILE", "/dev/null");
            std::env::set_var("SSL_CERT_DIR", folder);
        }
    }
}

/// Whether `dir` holds at least one `<8 hex digits>.<n>` link, as `openssl rehash` makes them.
fn has_hashed_certificates(dir: &std::path::Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|entry| {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        name.split_once('.').is_some_and(|(hash, n)| {
            hash.len() == 8
                && hash.bytes().all(|b| b.is_ascii_hexdigit())
                && !n.is_empty()
                && n.bytes().all(|b| b.is_ascii_digit())
        })
    })
}

/// A scope as named on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ScopeArg {
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
pub enum TypeArg {
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
    let cli = Cli::parse();
    if cli.command.is_offline() || cli.command.needs_no_tls(cli.dir.as_deref()) {
        skip_tls_bundle();
    } else {
        prefer_hashed_ca_folder();
    }
    let cwd = match &cli.dir {
        Some(dir) => dir.clone(),
        None => match std::env::current_dir() {
            Ok(dir) => dir,
            Err(e) => {
                eprintln!("teammem: cannot read the current folder: {e}");
                return ExitCode::from(EXIT_ERROR);
            }
        },
    };
    match run(cli.command, &cwd) {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            let _ = std::io::stdout().flush();
            eprintln!("teammem: {}", shown(&err.to_string()));
            ExitCode::from(err.exit_code())
        }
    }
}

fn run(command: Command, cwd: &std::path::Path) -> Result<u8, OpError> {
    // Session start never fails, not even when the project cannot be read.
    let command = match command {
        Command::SessionStart(args) => return Ok(session_start::run(cwd, args)),
        other => other,
    };
    let project = Project::open(cwd)?;
    for warning in &project.warnings {
        eprintln!("teammem: warning: {}", shown(warning));
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
        Command::SessionStart(args) => Ok(session_start::run(cwd, args)),
        Command::Demo(args) => demo::run(args),
    }
}

/// Prints a value as pretty JSON on stdout, every string in it redacted ([`shown`]): a path,
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
        shown(&text)
    } else {
        let mut value = serde_json::to_value(value).map_err(json_error)?;
        redact_json(&mut value);
        serde_json::to_string_pretty(&value).map_err(json_error)?
    };
    println!("{text}");
    Ok(())
}

fn redact_json(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::String(text) => {
            let safe = shown(text);
            if safe != *text {
                *text = safe;
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(redact_json),
        serde_json::Value::Object(map) => map.values_mut().for_each(redact_json),
        _ => {}
    }
}

/// Text as a command may print it: every detected secret redacted, including one that fills
/// a file or folder name.
pub(crate) fn shown(text: &str) -> String {
    crate::domain::gate::redact_path(text)
}
