//! Session start: sync the team memory (when its sync is switched on), then build the context
//! an agent injects, ending with one line on what sync did. Never fails: whatever goes wrong
//! (not a repository, a broken repository, an error in sync) becomes that line, so the
//! session always starts (invariant 5).

mod coexist;
mod early;
mod resume;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::time::Duration;

use serde::Serialize;

use crate::domain::gate;
use crate::domain::hook_input::{HookInput, StartSource};
use crate::domain::scope::ScopeKind;
use crate::git::remote::Transport;

use super::context::{self, BuildOptions, Context, VERIFY_LINE};
use super::delivery::sessions::{InTranscript, SessionRecord, Sessions};
use super::sync::{self, SyncOptions, SyncOutcome};
use super::{Project, guard};

/// How session start syncs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionStartOptions {
    /// The sync's time budget, network included.
    pub timeout: Duration,
    /// How fetch and push reach the remote.
    pub transport: Transport,
    /// The context goes to Qwen Code's hook (which shows the private and user indexes
    /// itself, and the team index when its team memory is on).
    pub qwen_hook: bool,
    /// What the client's hook said on stdin (`None`: no input, or not a hook's JSON).
    pub input: Option<HookInput>,
}

impl Default for SessionStartOptions {
    fn default() -> Self {
        SessionStartOptions {
            timeout: sync::DEFAULT_TIMEOUT,
            transport: Transport::Builtin,
            qwen_hook: false,
            input: None,
        }
    }
}

/// What session start produced.
#[derive(Debug, Clone)]
pub struct SessionStart {
    /// The context, its last line saying what sync did.
    pub context: Context,
    /// The line on what sync did (also the context's last line).
    pub sync_line: String,
    /// The sync's report, when a sync ran.
    pub outcome: Option<SyncOutcome>,
    /// Problems for stderr (settings files, sync warnings).
    pub warnings: Vec<String>,
    /// What the context holds for this session.
    pub delivery: Delivery,
}

/// What a session start delivers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Delivery {
    /// The whole context (a new, cleared or compacted context, a fork whose transcript does
    /// not hold it, or no hook input).
    Full,
    /// A resumed session: one line on the memories that changed since its context was given.
    Changes,
    /// A resumed session whose context is up to date: nothing is printed.
    Nothing,
}

/// Syncs and builds the context for the project around `cwd`.
pub fn session_start(cwd: &Path, options: &SessionStartOptions) -> SessionStart {
    let project = match Project::open(cwd) {
        Ok(project) => project,
        Err(err) => {
            let line = gate::for_agent(&format!(
                "Team memory sync: not run — teammem could not read this project: {err}"
            ));
            // The sync's report is there on this path too (skipped_reason: error).
            let mut outcome = SyncOutcome::default();
            outcome.skip(sync::SkipReason::Error, err.to_string());
            return SessionStart {
                context: bare_context(&line),
                sync_line: line,
                outcome: Some(outcome),
                warnings: Vec::new(),
                delivery: Delivery::Full,
            };
        }
    };
    let mut warnings = project.warnings.clone();
    // The context is built from what is on disk while the sync runs, and used when the sync
    // changed nothing it depends on; otherwise it is built again after the sync.
    let shown_before = coexist::shown(&project, options.qwen_hook);
    let before = early::DiskState::of(&project, &shown_before.scopes);
    let ((sync_line, outcome, ran), early_built) = std::thread::scope(|s| {
        let early = before.as_ref().and_then(|_| {
            std::thread::Builder::new()
                .spawn_scoped(s, || build_context(&project, &shown_before.scopes))
                .ok()
        });
        let synced = sync_if_on(&project, options);
        (synced, early.and_then(|e| e.join().ok()))
    });
    let sync_line = coexist::sync_line(&project, sync_line);
    let shown = coexist::shown(&project, options.qwen_hook);
    // An error message can quote a path or a remote's words: the line is made safe like memory.
    let sync_line = gate::for_agent(&sync_line);
    if let Some(outcome) = &outcome {
        warnings.extend(outcome.warnings.iter().cloned());
    }
    let input = options.input.as_ref();
    let source = input.and_then(|i| i.source);
    let resumed = source.is_some_and(|s| s.keeps_transcript());
    // A fork starts under a new id with a copy of its parent's transcript: what that copy
    // holds is what the fork was given.
    let forked = source == Some(StartSource::Fork);
    // Qwen Code keeps a SessionStart hook's output out of the conversation it saves (what its
    // UserPromptSubmit hook added stays): a resumed Qwen session gets the whole context again,
    // and keeps the record of the bodies its turns received.
    let context_kept = (resumed || forked) && !options.qwen_hook;
    let holds = shown.scopes == shown_before.scopes
        && early::still_holds(
            before.as_ref(),
            early::DiskState::of(&project, &shown.scopes).as_ref(),
            ran,
            outcome.as_ref(),
        );
    let built = match early_built {
        Some(Ok(Ok(built))) if holds => Ok(Ok(built)),
        _ => build_context(&project, &shown.scopes),
    };
    let mut delivery = Delivery::Full;
    let context = match built {
        Ok(Ok(mut built)) => {
            // A resumed session is the same session, not one more for the dream gate.
            if !resumed {
                built
                    .warnings
                    .extend(context::count_session(&project, &shown.scopes));
            }
            warnings.append(&mut built.warnings);
            // Locked from reading the record to writing it back, as a turn locks it.
            let mut lock = None;
            let record = input.and_then(|i| i.session_id.as_deref()).map(|session| {
                let sessions = Sessions::of(&project);
                lock = sessions.lock(session);
                let own = sessions.load(session);
                (sessions, session, own)
            });
            let own = record.as_ref().and_then(|(_, _, own)| own.as_ref());
            // Without a record of its own, a resumed or forked session's transcript tells what
            // it holds: read once, only then.
            let transcript = match (resumed || forked, own) {
                (true, None) => input
                    .and_then(|i| i.transcript_path.as_deref())
                    .and_then(InTranscript::read),
                _ => None,
            };
            // A fork whose transcript names its parent (Codex's `forked_from_id`) holds what
            // the parent was given: the parent's record stands for its own.
            let parent = match (&record, &transcript) {
                (Some((sessions, _, None)), Some(transcript)) if forked => transcript
                    .forked_from
                    .as_deref()
                    .and_then(|parent| sessions.load(parent)),
                _ => None,
            };
            let before = own.or(parent.as_ref());
            if context_kept {
                if let Some(line) = resume::what_is_new(before, &built, transcript.as_ref()) {
                    delivery = match line {
                        Some(_) => Delivery::Changes,
                        None => Delivery::Nothing,
                    };
                    built.text = line.map(|l| format!("{l}\n")).unwrap_or_default();
                }
            }
            if delivery == Delivery::Full {
                finish_full(&project, &shown, &sync_line, &mut built);
            }
            if let Some((sessions, session, own)) = record {
                // A new context starts a new record. A resumed or forked one keeps the bodies
                // its turns received (they are still in its transcript): from its own record,
                // its parent's, or else from what its transcript holds.
                let mut next = match own.or(parent) {
                    Some(before) if resumed || forked => before,
                    None if resumed || forked => {
                        SessionRecord::from_transcript(session, transcript.as_ref())
                    }
                    _ => SessionRecord::new(session),
                };
                next.session = session.to_string();
                next.indexed = built.delivered.clone();
                if let Err(e) = sessions.save(&mut next) {
                    warnings.push(format!(
                        "could not record what this session was given ({e}); a resumed session may get its memory again"
                    ));
                }
            }
            drop(lock);
            built
        }
        Ok(Err(err)) => bare_context(&format!(
            "{sync_line}\nThe memory indexes could not be read: {err}"
        )),
        Err(_) => bare_context(&format!(
            "{sync_line}\nThe memory indexes could not be read (teammem crashed; please report it)."
        )),
    };
    SessionStart {
        context,
        sync_line,
        outcome,
        warnings,
        delivery,
    }
}

/// The context of `scopes` as the files stand, not yet counted as a session (the caller counts
/// it once, whichever build it uses); a crash is caught.
fn build_context(
    project: &Project,
    scopes: &[ScopeKind],
) -> std::thread::Result<Result<Context, super::OpError>> {
    let build = BuildOptions {
        scopes: scopes.to_vec(),
        query: None,
        count_session: false,
    };
    catch_unwind(AssertUnwindSafe(|| context::build_with(project, &build)))
}

/// Ends a full context: the notes on what the client shows itself, the line on team memories
/// withheld from an index Qwen Code shows anyway, how to share, and what sync did.
fn finish_full(project: &Project, shown: &coexist::Shown, sync_line: &str, built: &mut Context) {
    if !built.text.ends_with('\n') {
        built.text.push('\n');
    }
    built.text.push('\n');
    let mut lines = shown.notes.clone();
    if shown.team_by_qwen {
        let (policy, _) = guard::policy(project);
        // Kept with the team's block, as a context that shows the team index keeps it.
        if let Ok(withheld) = context::withheld_in(project, ScopeKind::Team, &policy) {
            let mut rules = gate::BrokenRules::new();
            for (_, broken) in &withheld {
                rules.extend(broken.iter().copied());
            }
            lines.extend(coexist::qwen_withheld_line(withheld.len(), &rules));
        }
    }
    lines.push(coexist::SHARE_LINE.to_string());
    lines.push(sync_line.to_string());
    for line in lines {
        built.text.push_str(&line);
        built.text.push('\n');
    }
}

/// Runs sync when the repository has team memory with sync switched on; the line says what
/// happened either way. The flag is false when a sync failed or crashed (it may have stopped
/// half-way).
fn sync_if_on(
    project: &Project,
    options: &SessionStartOptions,
) -> (String, Option<SyncOutcome>, bool) {
    if project.repo.is_none() {
        return (
            "Team memory sync: not run — not inside a git repository.".into(),
            None,
            true,
        );
    }
    if !project.switches.sync {
        let why = if project.switches.team {
            "switched off (QWEN_CODE_MEMORY_TEAM_SYNC=0)"
        } else {
            "team memory is off or this repository has none (.qwen/team-memory/)"
        };
        return (format!("Team memory sync: not run — {why}."), None, true);
    }
    // Offline grace: a remote that could not be reached moments ago is not tried again at
    // every agent start; the local half (the commit) still runs.
    let offline = project
        .repo
        .as_ref()
        .and_then(|paths| crate::git::offline::recent_failure(&paths.git_dir));
    let sync_options = SyncOptions {
        timeout: options.timeout,
        transport: options.transport,
        pull: offline.is_none(),
        push: offline.is_none(),
        ..SyncOptions::default()
    };
    let grace = offline.map_or(String::new(), |last| {
        format!(
            " Network skipped: the remote could not be reached {} min ago ({}); session starts \
             retry {} min after that, `teammem sync` tries now.",
            last.ago.as_secs() / 60,
            last.why,
            crate::git::offline::GRACE.as_secs() / 60
        )
    });
    // A no-op decided from the files needs no libgit2 start, as `teammem sync`'s does not.
    let run = || match sync::fast_noop::try_noop(project, &sync_options) {
        Ok(outcome) => Ok(outcome),
        Err(left) => sync::sync(project, &left),
    };
    match catch_unwind(AssertUnwindSafe(run)) {
        Ok(Ok(outcome)) => (
            format!("Team memory sync: {}.{grace}", outcome.summary()),
            Some(outcome),
            true,
        ),
        Ok(Err(err)) => (format!("Team memory sync failed: {err}"), None, false),
        Err(_) => (
            "Team memory sync failed: teammem crashed (please report it); nothing else was affected."
                .into(),
            None,
            false,
        ),
    }
}

/// The context without any index: the reminder and `line`.
fn bare_context(line: &str) -> Context {
    Context {
        text: format!("# Memory\n\n{VERIFY_LINE}\n\n{line}\n"),
        scopes: Vec::new(),
        recalled: 0,
        warnings: Vec::new(),
        delivered: Vec::new(),
    }
}
