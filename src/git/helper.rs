//! Work that must stop at the deadline runs in a helper process: the teammem binary itself,
//! started with [`HELPER_ARG`], which the parent kills when the budget runs out. One helper
//! serves a process's jobs in turn (a request and its reply a line each), so a push that lost
//! a race to a teammate's fetches and pushes again without starting a process.
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
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitCode, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use git2::{Oid, Repository};
use serde::{Deserialize, Serialize};

use super::fast_forward::BranchMove;
use super::push::PushOutcome;
use super::remote::child;
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
    let mut input = serde_json::to_vec(&request)
        .map_err(|e| Abandoned::Failed(format!("cannot encode the helper's job: {e}")))?;
    // One request a line: the JSON holds no raw line break.
    input.push(b'\n');
    let helper = match Warm::take(program, &input) {
        Some(helper) => helper,
        None => Warm::start(program, &input)?,
    };
    let pid = helper.pid;
    match helper.replies.recv_timeout(deadline.remaining()) {
        Ok(line) => match serde_json::from_slice::<HelperReply>(&line) {
            Ok(reply) => {
                helper.keep(&deadline);
                Ok(reply)
            }
            Err(_) => {
                helper.stop();
                clean_after(repo, pid);
                Err(Abandoned::Failed(
                    "the helper process answered something else than a reply".to_string(),
                ))
            }
        },
        Err(RecvTimeoutError::Timeout) => {
            helper.stop();
            clean_after(repo, pid);
            Err(Abandoned::Timeout)
        }
        Err(RecvTimeoutError::Disconnected) => {
            let status = helper.stop();
            clean_after(repo, pid);
            if deadline.passed() {
                return Err(Abandoned::Timeout);
            }
            Err(Abandoned::Failed(format!(
                "the helper process ended without an answer ({status})"
            )))
        }
    }
}

/// The helper this process started last, idle between jobs: one sync's fetches and pushes go
/// to it in turn, so a round of the network half starts no process (the start of the binary
/// and of libgit2 is out of the time between learning the remote's tip and pushing on it).
/// It ends when this process (the thread that started it) ends or closes its input, and by
/// itself at the latest deadline it was given.
static WARM: Mutex<Option<Warm>> = Mutex::new(None);

/// A running helper and its pipes.
struct Warm {
    program: PathBuf,
    child: Child,
    pid: u32,
    input: ChildStdin,
    /// Its answers, a line each, read as they come.
    replies: Receiver<Vec<u8>>,
    /// When it ends by itself: the deadline of its last job (and a little more).
    ends: Instant,
}

/// A helper whose own end is nearer than this is not given another job (it could end while
/// taking it): a new one is started.
const REUSE_MARGIN: Duration = Duration::from_secs(1);

impl Warm {
    /// The idle helper of `program`, given `request`; `None` when there is none, it ended, or
    /// it did not take the request (a new one is then started: the job never ran twice, as a
    /// helper that could not read it never started it).
    fn take(program: &Path, request: &[u8]) -> Option<Warm> {
        let mut idle = WARM.lock().ok()?.take()?;
        let alive = matches!(idle.child.try_wait(), Ok(None));
        let in_time = Instant::now()
            .checked_add(REUSE_MARGIN)
            .is_some_and(|soon| soon < idle.ends);
        if idle.program != program || !alive || !in_time {
            idle.stop();
            return None;
        }
        if idle
            .input
            .write_all(request)
            .and_then(|()| idle.input.flush())
            .is_err()
        {
            idle.stop();
            return None;
        }
        Some(idle)
    }

    /// Starts a helper of `program` in a process group of its own, given `request`.
    fn start(program: &Path, request: &[u8]) -> Result<Warm, Abandoned> {
        let mut cmd = Command::new(program);
        cmd.arg(HELPER_ARG)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        // Its own process group, so whatever it starts (ssh, a credential helper) dies with it.
        cmd.process_group(0);
        let mut child = cmd.spawn().map_err(|e| {
            Abandoned::Failed(format!(
                "cannot start the helper process {}: {e}",
                program.display()
            ))
        })?;
        let pid = child.id();
        let (Some(input), Some(output)) = (child.stdin.take(), child.stdout.take()) else {
            child::kill_group(&mut child);
            return Err(Abandoned::Failed(
                "the helper process has no pipes".to_string(),
            ));
        };
        let (send, replies) = mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(output);
            loop {
                let mut line = Vec::new();
                match lines.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        if send.send(line).is_err() {
                            break;
                        }
                    }
                }
            }
        });
        let mut helper = Warm {
            program: program.to_path_buf(),
            child,
            pid,
            input,
            replies,
            ends: Instant::now(),
        };
        // A helper that cannot read its job died at once: its reply channel says so.
        let _ = helper
            .input
            .write_all(request)
            .and_then(|()| helper.input.flush());
        Ok(helper)
    }

    /// Keeps the helper, whose last job had `deadline`, for the next job (one idle helper at
    /// most).
    fn keep(mut self, deadline: &Deadline) {
        self.ends = Instant::now()
            .checked_add(deadline.remaining())
            .unwrap_or_else(Instant::now);
        let Ok(mut slot) = WARM.lock() else {
            self.stop();
            return;
        };
        if let Some(older) = slot.replace(self) {
            older.stop();
        }
    }

    /// Kills the helper with everything it started, and reaps it; how it ended.
    fn stop(mut self) -> String {
        match self.child.try_wait() {
            Ok(Some(status)) => status.to_string(),
            _ => {
                child::kill_group(&mut self.child);
                "killed".to_string()
            }
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

/// The helper's side: reads requests from stdin, a line each, does each job and writes its
/// reply to stdout as a line; ends when stdin closes, and by itself at the latest deadline it
/// was given (its parent kills it then; this matters only when the parent is gone).
fn serve() -> ExitCode {
    let mut lines = std::io::stdin().lock();
    let mut stop_at: Option<Arc<Mutex<Instant>>> = None;
    loop {
        let mut input = Vec::new();
        match lines.read_until(b'\n', &mut input) {
            Ok(0) => return ExitCode::SUCCESS,
            Ok(_) => {}
            Err(_) => return ExitCode::from(2),
        }
        let Ok(request) = serde_json::from_slice::<Request>(&input) else {
            eprintln!(
                "teammem: {HELPER_ARG} is teammem's own helper; it is not meant to be run by hand"
            );
            return ExitCode::from(2);
        };
        let budget = Duration::from_millis(request.budget_ms);
        let until = Instant::now()
            .checked_add(budget.saturating_add(SELF_STOP_GRACE))
            .unwrap_or_else(Instant::now);
        match &stop_at {
            Some(at) => {
                if let Ok(mut at) = at.lock() {
                    *at = until;
                }
            }
            None => {
                die_with_parent(request.parent);
                let at = Arc::new(Mutex::new(until));
                stop_at = Some(Arc::clone(&at));
                std::thread::spawn(move || {
                    loop {
                        let until = at.lock().map(|a| *a).unwrap_or_else(|_| Instant::now());
                        let now = Instant::now();
                        if now >= until {
                            crate::sys::exit_now(3);
                        }
                        std::thread::sleep(until - now);
                    }
                });
            }
        }
        let reply = answer(request, budget);
        let mut text = serde_json::to_vec(&reply).unwrap_or_default();
        text.push(b'\n');
        let mut out = std::io::stdout();
        if out.write_all(&text).and_then(|()| out.flush()).is_err() {
            return ExitCode::from(2);
        }
    }
}

/// Asks the kernel to kill this process when its parent dies, then checks the parent is still
/// the one that started it (it may have died before the request took effect).
fn die_with_parent(parent: u32) {
    crate::sys::die_with_parent(parent);
}

fn answer(request: Request, budget: Duration) -> HelperReply {
    let opened = Repository::open(&request.repo)
        .and_then(|repo| super::user_config::follow_environment(&repo).map(|()| repo));
    let repo = match opened {
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
