//! Per-turn recall for a UserPromptSubmit hook (`teammem prompt-context`): the few memories
//! most relevant to the prompt, across the enabled scopes (team only for Qwen Code, which
//! recalls its own private and user memory), through the gate, each at most once per session.
//! Nothing clears the score floor → nothing is returned: a turn gets memory only when some is
//! relevant.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::domain::gate;
use crate::domain::hook_input::HookInput;
use crate::domain::recall::usage::{self, UseKind};
use crate::domain::recall::{Analyzer, fold};
use crate::domain::scope::ScopeKind;
use crate::domain::store::{self, Stamp};
use crate::git::plain::{self, PlainHead};

use super::cite::record_use;
use super::delivery::sessions::{InTranscript, SessionLock, SessionRecord, Sessions, content_hash};
use super::gate_cache::TurnVerdicts;
use super::mcp::cache::{FreshnessBook, WalkLimit};
use super::recall::{self, Recalled};
use super::{OpError, Project, guard};

/// The most memories one turn receives.
pub const MAX_MEMORIES: usize = 5;
/// The most characters of body per memory (the cut is marked).
pub const MAX_CHARS: usize = 1_200;
/// The score a memory must reach (recall's points: BM25F × 100). One occurrence of a term
/// that most memories share scores well below it; a rare term of the prompt in the title, or
/// two of its terms in the body, above it.
pub const MIN_SCORE: u32 = 120;
/// The score a memory sharing a single term with a prompt of several must reach: only a term
/// that few memories hold scores this much (in a handful of memories none does), so that a
/// prompt about something else that happens to share one word brings nothing.
pub const MIN_SCORE_ONE_TERM: u32 = 300;
/// How many more candidates than wanted are asked of recall, for those the session already
/// has (bounded: an old session does not make every turn slower).
const MAX_SKIPPED: usize = 20;

/// What a turn gets.
#[derive(Debug, Clone)]
pub struct PromptOptions {
    /// Only team memories (Qwen Code recalls its own private and user scopes).
    pub team_only: bool,
    /// The score floor ([`MIN_SCORE`]).
    pub min_score: u32,
}

impl Default for PromptOptions {
    fn default() -> Self {
        PromptOptions {
            team_only: false,
            min_score: MIN_SCORE,
        }
    }
}

/// The memories for one turn, and what delivering them changes (see [`PromptContext::record`]).
#[derive(Debug)]
pub struct PromptContext {
    /// The text to add to the turn; empty when nothing is relevant.
    pub text: String,
    /// The memories in it (`scope`, path).
    pub shown: Vec<(ScopeKind, String)>,
    project: Option<Project>,
    session: Option<(Sessions, SessionRecord)>,
    /// Held until the session's record is written back.
    lock: Option<SessionLock>,
    verdicts: Option<TurnVerdicts>,
}

impl PromptContext {
    fn nothing() -> PromptContext {
        PromptContext {
            text: String::new(),
            shown: Vec::new(),
            project: None,
            session: None,
            lock: None,
            verdicts: None,
        }
    }

    /// Records the delivery, once it is printed: the session will not get these memories
    /// again, and each counts as surfaced. Returns the problems (for stderr).
    pub fn record(self) -> Vec<String> {
        let mut problems = Vec::new();
        if let Some(verdicts) = self.verdicts {
            verdicts.save();
        }
        if let Some((sessions, mut record)) = self.session {
            if let Err(e) = sessions.save(&mut record) {
                problems.push(format!("could not record this session's memories: {e}"));
            }
        }
        drop(self.lock);
        if let Some(project) = &self.project {
            if let Err(e) = record_use(project, &self.shown, UseKind::Surfaced) {
                problems.push(format!("could not count the memories surfaced: {e}"));
            }
        }
        problems
    }
}

/// The memories relevant to the prompt of `input`, for the project around `cwd`.
pub fn prompt_context(
    cwd: &Path,
    input: &HookInput,
    options: &PromptOptions,
) -> Result<PromptContext, OpError> {
    let Some(prompt) = input.prompt.as_deref().filter(|p| !p.trim().is_empty()) else {
        return Ok(PromptContext::nothing());
    };
    let project = Project::open_plain(cwd)?;
    let scopes: Vec<ScopeKind> = project
        .default_scopes()
        .into_iter()
        .filter(|s| !options.team_only || *s == ScopeKind::Team)
        .collect();
    if scopes.is_empty() {
        return Ok(PromptContext::nothing());
    }
    let (mut lock, mut unrecorded) = (None, false);
    let sessions = input.session_id.as_deref().map(|id| {
        let sessions = Sessions::of(&project);
        lock = sessions.lock(id);
        let record = sessions.load(id).unwrap_or_else(|| {
            // No record (no session start wrote one, or it could not; a record lost or
            // corrupt): the transcript shows which bodies this session holds already.
            unrecorded = true;
            let transcript = input
                .transcript_path
                .as_deref()
                .and_then(InTranscript::read);
            SessionRecord::from_transcript(id, transcript.as_ref())
        });
        (sessions, record)
    });
    let had = sessions.as_ref().map_or(0, |(_, r)| r.bodies.len());
    let pool = MAX_MEMORIES + had.min(MAX_SKIPPED);
    let (policy, _) = guard::policy(&project);
    let mut verdicts = TurnVerdicts::load(&project, &policy);
    let delivered = |id: &str| sessions.as_ref().is_some_and(|(_, r)| r.has_body(id));
    // What the answer needs of the hits (the floor, the gate, the ages) is done while the
    // stats that confirm recall's index are still being taken: should one show a change, recall
    // answers again from what changed and this is done again on that answer.
    let choose = |found: &mut Recalled| -> Result<(), OpError> {
        let wanted = found.tokens.len().min(2);
        let tokens = found.tokens.clone();
        found.hits.retain(|hit| {
            let enough = hit.score >= options.min_score
                && (hit.score >= options.min_score.max(MIN_SCORE_ONE_TERM)
                    || terms_shared(&tokens, hit) >= wanted);
            enough && !delivered(&format!("{}:{}", hit.scope, hit.id))
        });
        // Withheld memories are left out without a word: a turn is not the place for the
        // gate's report (session start and `teammem check` give it).
        gate_first(&policy, &mut verdicts, found, MAX_MEMORIES);
        if found.hits.is_empty() {
            return Ok(());
        }
        // Ages come from the ages kept per `HEAD` commit, as the MCP server tells them:
        // walking git's history for five memories was half of a warm turn's own work.
        age_from_history(&project, &mut found.hits)?;
        Ok(())
    };
    let (found, chosen) =
        recall::recall_unaged_then(&project, &scopes, prompt, (pool, MAX_CHARS), choose)?;
    chosen?;
    if found.hits.is_empty() {
        verdicts.save();
        // The record read from the transcript is kept, so that the next turns need not read it
        // again (unless it cannot be written, as in a read-only state folder).
        if let Some((sessions, mut record)) = sessions.filter(|_| unrecorded) {
            let _ = sessions.save(&mut record);
        }
        return Ok(PromptContext::nothing());
    }
    let mut text = String::from("# Memory relevant to this prompt (teammem)\n\n");
    text.push_str(
        "Point-in-time observations: verify one against the current code before relying on it.\n",
    );
    text.push_str(gate::DATA_NOTE);
    text.push('\n');
    let mut shown = Vec::new();
    let mut session = sessions;
    for hit in &found.hits {
        let id = format!("{}:{}", hit.scope, hit.id);
        // The id is made safe by its path alone: as a whole, `user:…` would read as a role
        // label to the gate's neutraliser.
        let safe_id = verdicts.for_agent_by_default(&hit.id);
        let shown_id = format!("{}:{safe_id}", hit.scope);
        let who = hit
            .changed_by
            .as_ref()
            .map(|w| format!(", last changed by {}", verdicts.for_agent_by_default(w)))
            .unwrap_or_default();
        let body = verdicts.for_agent_by_default(&hit.body);
        // A path it names that no longer holds at HEAD, in one line (`references_line`).
        let refs = hit
            .references
            .as_ref()
            .map_or(String::new(), |line| format!("{line}\n"));
        text.push_str(&format!(
            "\n## {} ({}, {}, {}{who})\n{}\n{refs}\n{}",
            hit.name,
            shown_id,
            hit.kind,
            hit.age,
            hit.description,
            gate::data_block_inert(&shown_id, body)
        ));
        if let Some((_, record)) = &mut session {
            record.add_body(&id, content_hash(hit.body.as_bytes()), &hit.name);
        }
        // An entry (`path:n`) counts for its file, as `teammem cite` counts it.
        let file = hit.id.split(':').next().unwrap_or(&hit.id);
        shown.push((hit.scope, file.to_string()));
    }
    Ok(PromptContext {
        text,
        shown,
        project: Some(project),
        session,
        lock,
        verdicts: Some(verdicts),
    })
}

/// Keeps the first `want` hits that pass the gate, in order, judging no more than that: a hit
/// the answer does not show is not read or judged. Each is made inert as
/// [`guard::gate_recalled`] makes it, through what earlier turns learnt ([`TurnVerdicts`]):
/// a memory and texts known to pass are not judged or scanned again.
fn gate_first(policy: &gate::Gate, verdicts: &mut TurnVerdicts, found: &mut Recalled, want: usize) {
    let mut kept = Vec::with_capacity(want);
    for mut hit in std::mem::take(&mut found.hits) {
        if kept.len() == want {
            break;
        }
        let rel = hit.id.split(':').next().unwrap_or(&hit.id).to_string();
        // A file that cannot be read withholds only itself.
        let passed = store::read_capped(Path::new(&hit.path))
            .is_ok_and(|bytes| verdicts.passes(policy, &hit.path, &rel, &bytes));
        if passed {
            hit.name = verdicts.for_agent(policy, &hit.name);
            hit.description = verdicts.for_agent(policy, &hit.description);
            hit.body = verdicts.for_agent(policy, &hit.body);
            hit.path = verdicts.redacted(&hit.path);
            kept.push(hit);
        }
    }
    found.hits = kept;
}

/// How long a turn may walk git's history: first to fill the ages of a new `HEAD` for every
/// memory (kept for the next turns and the MCP server), and, when that walk did not end, for
/// the ages of its few memories alone, as `recall` does (a memory whose last commit lies
/// deeper is shown without an age). A longer history is left to the MCP server.
const AGES_WALK: Duration = Duration::from_millis(300);

/// Sets [`AGES_WALK`] in milliseconds: a test makes it long, so that what it sees does not
/// depend on how loaded the machine is (or 0, for a history deeper than any walk).
pub const AGES_WALK_MS_VAR: &str = "TEAMMEM_TURN_WALK_MS";

/// Bounds the walk for every memory's age by the commits it reads (unbounded by default): a
/// test's history is then deeper than the walk without depending on time.
pub const AGES_WALK_COMMITS_VAR: &str = "TEAMMEM_TURN_WALK_COMMITS";

/// How long the walks may take, and how many commits the walk for every memory's age may
/// read ([`AGES_WALK_MS_VAR`], [`AGES_WALK_COMMITS_VAR`]).
fn walk_bounds() -> (Duration, Option<usize>) {
    let number = |var: &str| std::env::var(var).ok()?.trim().parse::<u64>().ok();
    let time = number(AGES_WALK_MS_VAR).map_or(AGES_WALK, Duration::from_millis);
    let commits = number(AGES_WALK_COMMITS_VAR).and_then(|n| usize::try_from(n).ok());
    (time, commits)
}

/// Each hit's age and author as [`recall::recall`] tells them (the last commit that changed it
/// when `HEAD` holds the version on disk, else its file time), from the ages kept for the
/// `HEAD` commit ([`FreshnessBook`]): no history is walked, and libgit2 is not started, unless
/// `HEAD` moved since the ages were last found. A file that cannot be read keeps its file time.
fn age_from_history(project: &Project, hits: &mut [recall::Hit]) -> Result<(), OpError> {
    if project.repo.is_none() {
        return Ok(());
    }
    // The gate showed each path redacted: the file is found again from its scope and id.
    let mut read: Vec<(PathBuf, String, Vec<u8>)> = Vec::with_capacity(hits.len());
    for hit in hits.iter() {
        let rel = hit.id.split(':').next().unwrap_or(&hit.id).to_string();
        let dir = project.scope_dir(hit.scope)?;
        let bytes = store::read_capped(&dir.join(&rel)).unwrap_or_default();
        read.push((dir, rel, bytes));
    }
    let paths: Vec<PathBuf> = read.iter().map(|(dir, rel, _)| dir.join(rel)).collect();
    let files: Vec<(&Path, &[u8])> = paths
        .iter()
        .zip(&read)
        .map(|(path, (_, _, bytes))| (path.as_path(), bytes.as_slice()))
        .collect();
    // The ages are kept only for a `HEAD` read from the git folder's files; and a walk that
    // did not end in time at this `HEAD` is not tried again at every turn.
    let head = project
        .repo
        .as_ref()
        .and_then(|paths| plain::head_commit(&paths.git_dir));
    let walk_marker = walk_marker(project);
    let book = match (&head, &walk_marker) {
        (Some(PlainHead::At(id)), Some(marker)) => {
            let abandoned = std::fs::read_to_string(marker).is_ok_and(|at| at == *id);
            (!abandoned).then_some((id, marker))
        }
        _ => None,
    };
    let (walk, commits) = walk_bounds();
    let kept = book.and_then(|(id, marker)| {
        let limit = WalkLimit {
            until: Instant::now() + walk,
            commits,
        };
        let kept = FreshnessBook::of_project(project).committed_once(&files, limit);
        if kept.is_none() {
            // A marker that cannot be written only costs the next turn the same walk.
            let _ = store::write_cache(marker, id.as_bytes());
        }
        kept
    });
    let ages: Vec<Option<recall::Freshness>> = match kept {
        Some(kept) => kept,
        None => {
            // The file time of the version recall read, when git does not hold it.
            let places: Vec<(&Path, &str, Stamp)> = read
                .iter()
                .zip(hits.iter())
                .map(|((dir, rel, _), hit)| {
                    let stamp = Stamp {
                        mtime_ns: hit.changed_at.saturating_mul(1_000_000_000),
                        ..Stamp::default()
                    };
                    (dir.as_path(), rel.as_str(), stamp)
                })
                .collect();
            recall::ages_from_history(project, &places, Instant::now() + walk)?
                .into_iter()
                .map(Some)
                .collect()
        }
    };
    let now = usage::now();
    for (hit, age) in hits.iter_mut().zip(ages) {
        let Some(age) = age else {
            continue;
        };
        hit.age_days = usage::days_between(age.time, now);
        hit.age = match age.from {
            recall::NOT_REACHED => "age not known".to_string(),
            _ => usage::age_text(age.time, now),
        };
        hit.changed_at = age.time;
        hit.changed_from = age.from;
        hit.changed_by = age.by;
    }
    Ok(())
}

/// Where a turn notes the `HEAD` at which the walk for every memory's age did not end within
/// [`AGES_WALK`]: the project's state folder, outside the work tree.
fn walk_marker(project: &Project) -> Option<PathBuf> {
    Some(
        project
            .layout
            .outside_state_dir(ScopeKind::Private)?
            .join("ages-walk-abandoned"),
    )
}

/// How many of the query's terms (`tokens`, as recall analysed them) a hit's title,
/// description and shown body hold.
fn terms_shared(tokens: &[String], hit: &recall::Hit) -> usize {
    let mut analyzer = Analyzer::new();
    let mut held = HashSet::new();
    // The note that marks a cut body is teammem's words, not the memory's.
    let body = match hit.body_cut {
        true => hit
            .body
            .rsplit_once("\n\n[cut:")
            .map_or(&hit.body[..], |(b, _)| b),
        false => &hit.body,
    };
    let text = fold(&format!("{}\n{}\n{}", hit.name, hit.description, body));
    analyzer.terms(&text, |term, _| {
        held.insert(term);
    });
    tokens
        .iter()
        .filter(|token| held.contains(&analyzer.number(token)))
        .count()
}
