//! Work that must stop at the deadline runs in a helper process: the teammem binary itself,
//! started with [`HELPER_ARG`], which the parent kills when the budget runs out.
//!
//! libgit2 cannot be interrupted from outside: its socket timeouts are per read (a server that
//! trickles one byte every half second never trips one), its progress callbacks are not called
//! while headers trickle in, and a checkout of 100,000 files has no callback that may stop it.
//! So the parent waits for the helper only until the deadline, then kills it (and its process
//! group) and removes what it left half-done: the ref lock its ref-move note proves its own
//! ([`super::recovery::ref_move`]) and the temp pack files its transfer note proves its own
//! ([`super::recovery::transfer`]). An interrupted checkout is finished by the next sync
//! ([`super::recovery::checkout`]). The helper also dies on its own at the deadline and when its
//! parent dies, so a killed session start never leaves a transfer running.

use std::ffi::{OsStr, OsString};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use git2::{Oid, Repository};
use serde::{Deserialize, Serialize};

use super::fast_forward::BranchMove;
use super::push::PushOutcome;
use super::remote::child::{self, Stopped};
use super::remote::credentials::{CredentialSources, EnvToken};
use super::remote::{Deadline, GitProgram, NetFailure, NetFailureKind, NetworkOptions};
use super::upstream::Upstream;

/// The first argument that makes the teammem binary serve one job as a helper process.
pub const HELPER_ARG: &str = "__teammem-helper";

/// How long after its deadline a helper still runs before it ends itself (the parent kills it
/// at the deadline; this only matters when the parent is gone).
const SELF_STOP_GRACE: Duration = Duration::from_millis(50);

static HELPER_PROGRAM: OnceLock<PathBuf> = OnceLock::new();

/// Called first thing by the teammem binary: serves a helper job when started as a helper
/// (returning its exit status), else records the binary as the helper program for this run.
pub fn serve_if_asked() -> Option<ExitCode> {
    let mut args = std::env::args_os();
    args.next();
    if args.next().as_deref() == Some(OsStr::new(HELPER_ARG)) {
        return Some(serve());
    }
    if let Ok(exe) = std::env::current_exe() {
        let _ = HELPER_PROGRAM.set(exe);
    }
    None
}

/// The helper program of this process: the teammem binary, when it is the one running.
/// Library users (tests, other programs) get `None`, and libgit2 runs in their process; so
/// does a teammem whose binary was replaced or removed while it ran (an upgrade).
pub fn registered_program() -> Option<PathBuf> {
    HELPER_PROGRAM.get().filter(|exe| exe.is_file()).cloned()
}

/// A job for the helper.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) enum Job {
    /// Fetch the upstream branch with libgit2.
    Fetch { upstream: UpstreamWire },
    /// Push the branch with libgit2, with a lease on `expected`.
    Push {
        upstream: UpstreamWire,
        expected: Option<String>,
    },
    /// Move the checked-out branch with a safe checkout.
    MoveBranch {
        branch_ref: String,
        from: Option<String>,
        to: String,
    },
    /// Finish (or roll back) a checkout a killed sync left half-done.
    ResumeCheckout,
}

/// The helper's answer.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) enum HelperReply {
    /// The fetch brought the remote's tip (`None`: the remote lacks the branch).
    Fetched(Option<String>),
    /// The push's outcome.
    Pushed(PushWire),
    /// The branch move's outcome.
    Moved(MoveWire),
    /// What resuming a checkout did (a sentence for the report), if anything.
    Resumed(Option<String>),
    /// A network failure.
    NetFailed {
        timeout: bool,
        #[serde(default)]
        too_large: bool,
        message: String,
    },
    /// Any other error.
    Error(String),
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct UpstreamWire {
    local_ref: String,
    remote: String,
    merge_ref: String,
    tracking_ref: String,
}

impl From<&Upstream> for UpstreamWire {
    fn from(up: &Upstream) -> Self {
        UpstreamWire {
            local_ref: up.local_ref.clone(),
            remote: up.remote.clone(),
            merge_ref: up.merge_ref.clone(),
            tracking_ref: up.tracking_ref.clone(),
        }
    }
}

impl From<UpstreamWire> for Upstream {
    fn from(w: UpstreamWire) -> Self {
        Upstream {
            local_ref: w.local_ref,
            remote: w.remote,
            merge_ref: w.merge_ref,
            tracking_ref: w.tracking_ref,
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) enum PushWire {
    Pushed(String),
    LeaseRefused,
    Rejected(String),
}

impl PushWire {
    fn of(outcome: &PushOutcome) -> Self {
        match outcome {
            PushOutcome::Pushed { tip } => PushWire::Pushed(tip.to_string()),
            PushOutcome::LeaseRefused => PushWire::LeaseRefused,
            PushOutcome::Rejected { message } => PushWire::Rejected(message.clone()),
        }
    }

    pub(crate) fn outcome(self) -> Result<PushOutcome, String> {
        Ok(match self {
            PushWire::Pushed(tip) => PushOutcome::Pushed {
                tip: parse_oid(&tip)?,
            },
            PushWire::LeaseRefused => PushOutcome::LeaseRefused,
            PushWire::Rejected(message) => PushOutcome::Rejected { message },
        })
    }
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) enum MoveWire {
    UpToDate,
    Moved { from: Option<String>, to: String },
    Blocked(Vec<String>),
    NotFastForward,
    BranchMoved,
    OutOfTime,
}

impl MoveWire {
    fn of(moved: &BranchMove) -> Self {
        match moved {
            BranchMove::UpToDate => MoveWire::UpToDate,
            BranchMove::Moved { from, to } => MoveWire::Moved {
                from: from.map(|o| o.to_string()),
                to: to.to_string(),
            },
            BranchMove::Blocked { paths } => MoveWire::Blocked(paths.clone()),
            BranchMove::NotFastForward => MoveWire::NotFastForward,
            BranchMove::BranchMoved => MoveWire::BranchMoved,
            BranchMove::OutOfTime => MoveWire::OutOfTime,
        }
    }

    pub(crate) fn outcome(self) -> Result<BranchMove, String> {
        Ok(match self {
            MoveWire::UpToDate => BranchMove::UpToDate,
            MoveWire::Moved { from, to } => BranchMove::Moved {
                from: from.as_deref().map(parse_oid).transpose()?,
                to: parse_oid(&to)?,
            },
            MoveWire::Blocked(paths) => BranchMove::Blocked { paths },
            MoveWire::NotFastForward => BranchMove::NotFastForward,
            MoveWire::BranchMoved => BranchMove::BranchMoved,
            MoveWire::OutOfTime => BranchMove::OutOfTime,
        })
    }
}

pub(crate) fn parse_oid(hex: &str) -> Result<Oid, String> {
    Oid::from_str(hex).map_err(|e| format!("the helper sent a bad object id {hex:?}: {e}"))
}

/// Everything the helper needs: which repository, what to do, by when, and the network
/// settings of the parent.
#[derive(Debug, Serialize, Deserialize)]
struct Request {
    /// The parent's process id: the helper stops if it is not its parent.
    parent: u32,
    /// The work tree (or git folder of a bare repository).
    repo: PathBuf,
    /// Milliseconds left in the budget.
    budget_ms: u64,
    job: Job,
    credentials: CredentialsWire,
    git_program: OsString,
    git_env: Vec<(OsString, Option<OsString>)>,
}

#[derive(Debug, Serialize, Deserialize)]
struct CredentialsWire {
    home: Option<PathBuf>,
    ssh_agent: bool,
    ssh_user: Option<String>,
    token: Option<(String, String, Option<String>)>,
    credential_helpers: bool,
}

impl CredentialsWire {
    fn of(sources: &CredentialSources) -> Self {
        CredentialsWire {
            home: sources.home.clone(),
            ssh_agent: sources.ssh_agent,
            ssh_user: sources.ssh_user.clone(),
            // The token goes to our own child through a pipe, never a command line.
            token: sources.token.as_ref().map(|t| {
                (
                    t.username.clone(),
                    secrecy::ExposeSecret::expose_secret(&t.secret).to_string(),
                    t.host.clone(),
                )
            }),
            credential_helpers: sources.credential_helpers,
        }
    }

    fn sources(self) -> CredentialSources {
        CredentialSources {
            home: self.home,
            ssh_agent: self.ssh_agent,
            ssh_user: self.ssh_user,
            token: self.token.map(|(username, secret, host)| EnvToken {
                username,
                secret: secret.into(),
                host,
            }),
            credential_helpers: self.credential_helpers,
        }
    }
}

/// How a helper run ended when it gave no reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Abandoned {
    /// The deadline passed: the helper was killed and its leftovers removed.
    Timeout,
    /// It could not be started, or died without a reply (the message says how).
    Failed(String),
}

/// Runs `job` in the helper `program`, waiting at most until the deadline. At the deadline the
/// helper and everything it started are killed, and its ref lock and temp pack files removed.
/// `network` carries the credentials and git program for a fetch or push (`None`: a checkout).
pub(crate) fn run(
    program: &Path,
    repo: &Repository,
    job: Job,
    deadline: Deadline,
    network: Option<&NetworkOptions>,
) -> Result<HelperReply, Abandoned> {
    let default_git = GitProgram::from_process();
    let request = Request {
        parent: std::process::id(),
        repo: repo.workdir().unwrap_or(repo.path()).to_path_buf(),
        budget_ms: u64::try_from(deadline.remaining().as_millis()).unwrap_or(u64::MAX),
        job,
        credentials: CredentialsWire::of(
            &network.map(|n| n.credentials.clone()).unwrap_or_default(),
        ),
        git_program: network.map_or(&default_git, |n| &n.git).program.clone(),
        git_env: network.map_or(&default_git, |n| &n.git).env.clone(),
    };
    let input = serde_json::to_vec(&request)
        .map_err(|e| Abandoned::Failed(format!("cannot encode the helper's job: {e}")))?;
    let mut cmd = Command::new(program);
    cmd.arg(HELPER_ARG)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let done = match child::run_within(cmd, &input, &deadline) {
        Ok(done) => done,
        Err(Stopped::Spawn(e)) => {
            return Err(Abandoned::Failed(format!(
                "cannot start the helper process {}: {e}",
                program.display()
            )));
        }
        Err(Stopped::Wait { pid, error }) => {
            clean_after(repo, pid);
            return Err(Abandoned::Failed(format!(
                "waiting for the helper: {error}"
            )));
        }
        Err(Stopped::Deadline { pid }) => {
            clean_after(repo, pid);
            return Err(Abandoned::Timeout);
        }
    };
    match serde_json::from_slice::<HelperReply>(&done.stdout) {
        Ok(reply) => Ok(reply),
        Err(_) => {
            clean_after(repo, done.pid);
            if deadline.passed() {
                return Err(Abandoned::Timeout);
            }
            Err(Abandoned::Failed(format!(
                "the helper process ended without an answer ({})",
                done.status
            )))
        }
    }
}

/// Removes what a dead helper left: the ref lock its note proves its own, and its temp packs.
fn clean_after(repo: &Repository, pid: u32) {
    let _ = super::recovery::ref_move::release_lock_of_dead_writer(repo);
    let _ = super::recovery::transfer::clean_if_dead(repo, Some(pid));
}

/// Maps a helper failure to the network failure the report shows.
pub(crate) fn net_failure(abandoned: Abandoned, what: &str) -> NetFailure {
    match abandoned {
        Abandoned::Timeout => NetFailure::timeout(format!(
            "{what}: the time budget ran out; the transfer was stopped"
        )),
        Abandoned::Failed(message) => NetFailure::failed(format!("{what}: {message}")),
    }
}

/// Turns a helper reply that is not the expected one into a failure.
pub(crate) fn unexpected(reply: HelperReply, what: &str) -> NetFailure {
    match reply {
        HelperReply::NetFailed {
            timeout,
            too_large,
            message,
        } => NetFailure {
            kind: match (timeout, too_large) {
                (_, true) => NetFailureKind::TooLarge,
                (true, _) => NetFailureKind::Timeout,
                _ => NetFailureKind::Failed,
            },
            message,
        },
        HelperReply::Error(message) => NetFailure::failed(format!("{what}: {message}")),
        other => NetFailure::failed(format!("{what}: the helper answered {other:?}")),
    }
}

/// The helper's side: reads the request from stdin, does the job, writes the reply to stdout.
fn serve() -> ExitCode {
    let mut input = Vec::new();
    if std::io::stdin().read_to_end(&mut input).is_err() {
        return ExitCode::from(2);
    }
    let Ok(request) = serde_json::from_slice::<Request>(&input) else {
        eprintln!(
            "teammem: {HELPER_ARG} is teammem's own helper; it is not meant to be run by hand"
        );
        return ExitCode::from(2);
    };
    die_with_parent(request.parent);
    let budget = Duration::from_millis(request.budget_ms);
    std::thread::spawn(move || {
        // The parent kills this process at the deadline; if the parent is gone, stop anyway.
        std::thread::sleep(budget.saturating_add(SELF_STOP_GRACE));
        crate::sys::exit_now(3);
    });
    let reply = answer(request, budget);
    let text = serde_json::to_vec(&reply).unwrap_or_default();
    let mut out = std::io::stdout();
    let _ = out.write_all(&text);
    let _ = out.flush();
    ExitCode::SUCCESS
}

/// Asks the kernel to kill this process when its parent dies, then checks the parent is still
/// the one that started it (it may have died before the request took effect).
fn die_with_parent(parent: u32) {
    crate::sys::die_with_parent(parent);
}

fn answer(request: Request, budget: Duration) -> HelperReply {
    let repo = match Repository::open(&request.repo) {
        Ok(repo) => repo,
        Err(e) => {
            return HelperReply::Error(format!("{}: {}", request.repo.display(), e.message()));
        }
    };
    let options = NetworkOptions {
        deadline: Deadline::after(budget),
        transport: super::remote::Transport::Builtin,
        credentials: request.credentials.sources(),
        git: GitProgram {
            program: request.git_program,
            env: request.git_env,
        },
        helper: None,
    };
    let net = |failure: NetFailure| HelperReply::NetFailed {
        timeout: failure.kind == NetFailureKind::Timeout,
        too_large: failure.kind == NetFailureKind::TooLarge,
        message: failure.message,
    };
    match request.job {
        Job::Fetch { upstream } => {
            let _note = match super::recovery::transfer::TransferNote::announce(&repo) {
                Ok(note) => note,
                Err(e) => return HelperReply::Error(e.to_string()),
            };
            match super::fetch::fetch_in_process(&repo, &upstream.into(), &options) {
                Ok(fetched) => HelperReply::Fetched(fetched.tip.map(|t| t.to_string())),
                Err(failure) => net(failure),
            }
        }
        Job::Push { upstream, expected } => {
            let expected = match expected.as_deref().map(parse_oid).transpose() {
                Ok(expected) => expected,
                Err(e) => return HelperReply::Error(e),
            };
            let _note = match super::recovery::transfer::TransferNote::announce(&repo) {
                Ok(note) => note,
                Err(e) => return HelperReply::Error(e.to_string()),
            };
            match super::push::push_in_process(&repo, &upstream.into(), expected, &options) {
                Ok(outcome) => HelperReply::Pushed(PushWire::of(&outcome)),
                Err(failure) => net(failure),
            }
        }
        Job::MoveBranch {
            branch_ref,
            from,
            to,
        } => {
            let from = match from.as_deref().map(parse_oid).transpose() {
                Ok(from) => from,
                Err(e) => return HelperReply::Error(e),
            };
            let to = match parse_oid(&to) {
                Ok(to) => to,
                Err(e) => return HelperReply::Error(e),
            };
            match super::fast_forward::move_branch_in_process(&repo, &branch_ref, from, to) {
                Ok(moved) => HelperReply::Moved(MoveWire::of(&moved)),
                Err(e) => HelperReply::Error(e.to_string()),
            }
        }
        Job::ResumeCheckout => match super::recovery::checkout::resume_in_process(&repo) {
            Ok(said) => HelperReply::Resumed(said),
            Err(e) => HelperReply::Error(e.to_string()),
        },
    }
}
