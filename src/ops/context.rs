//! The memory context an agent injects at the start of a session: the user, private and team
//! indexes within their limits, a reminder that memories are point-in-time observations, and
//! the memories relevant to a query.
//!
//! [`build`] is shared by `teammem context` and `teammem session-start` (after its sync).

use std::collections::BTreeSet;

use serde::Serialize;

use crate::domain::gate::{self, BrokenRules};
use crate::domain::memory_index::{self, MAX_BYTES, MAX_LINES};
use crate::domain::scope::{INDEX_FILE, ScopeKind};
use crate::domain::secrets;

use super::context_blocks::{self, ScopeBlock};
use super::delivery::sessions::Delivered;
use super::recall::{self, DEFAULT_CHARS, DEFAULT_MAX};
use super::{OpError, Project, dream, gate_cache, guard, references};

pub use super::delivery::HookFormat;

/// The line that tells the agent how to treat what follows.
pub const VERIFY_LINE: &str = "Memories are point-in-time observations, not live state: verify a memory against the current code and files before relying on it, and update or forget it when it is wrong.";

/// The context block.
#[derive(Debug, Clone, Serialize)]
pub struct Context {
    /// The text to inject.
    pub text: String,
    /// The scopes whose index was included.
    pub scopes: Vec<ScopeKind>,
    /// How many recalled memories were included.
    pub recalled: usize,
    /// Problems that did not stop the context (a session that could not be counted).
    pub warnings: Vec<String>,
    /// The memories whose index lines the context lists (`scope:rel`, a hash of the file).
    #[serde(skip)]
    pub delivered: Vec<Delivered>,
}

/// What goes into a context.
#[derive(Debug, Clone)]
pub struct BuildOptions<'a> {
    /// The scopes whose indexes are shown.
    pub scopes: Vec<ScopeKind>,
    /// Also include the memories most relevant to this query.
    pub query: Option<&'a str>,
    /// Count the run as one session for each scope's dream gate.
    pub count_session: bool,
}

impl BuildOptions<'_> {
    /// The project's enabled scopes, no query, counted as a session.
    pub fn of(project: &Project) -> BuildOptions<'static> {
        BuildOptions {
            scopes: project.default_scopes(),
            query: None,
            count_session: true,
        }
    }
}

/// Builds the context for the project's enabled scopes, with recall results for `query`.
/// Counts as one session for each scope's dream gate.
///
/// Every index is rendered from the memories that pass the gate ([`gate_cache::gate_scope`]), never
/// read from a `MEMORY.md` as it is; what fails is counted in one line, and everything a memory
/// contributes goes through [`gate::for_agent`].
pub fn build(project: &Project, query: Option<&str>) -> Result<Context, OpError> {
    build_with(
        project,
        &BuildOptions {
            query,
            ..BuildOptions::of(project)
        },
    )
}

/// [`build`] for the scopes and query of `options`. A memory that passed the gate before,
/// under the same rules, and whose file did not change since, is not judged again
/// ([`gate_cache`]).
pub fn build_with(project: &Project, options: &BuildOptions<'_>) -> Result<Context, OpError> {
    let scopes = options.scopes.clone();
    let query = options.query;
    let (policy, notes) = guard::policy(project);
    let mut warnings = notes;
    let mut text = String::from("# Memory\n\n");
    text.push_str(VERIFY_LINE);
    text.push('\n');
    text.push_str(gate::DATA_NOTE);
    text.push('\n');
    let mut shown = Vec::new();
    let mut delivered = Vec::new();
    let mut withheld = WithheldInContext::default();
    for &scope in &scopes {
        let dir = project.check_scope_safe(scope)?;
        if !dir.is_dir() {
            continue;
        }
        let mut heading = title(scope).to_string();
        if scope == ScopeKind::Private && guard::private_is_tracked(project) {
            warnings.push(guard::TRACKED_PRIVATE_WARNING.to_string());
            text.push_str(&format!("\nWarning: {}.\n", guard::TRACKED_PRIVATE_WARNING));
            heading = "Private project (tracked by git, so gated like team memory)".into();
        }
        let (withheld_here, block) = match kept_block(project, scope, &dir, &policy) {
            Ok(kept) => kept,
            // A scope that cannot be read safely (a symlink leading out of it) is left out,
            // not the whole context.
            Err(e) => {
                let why = gate::for_agent(&e.to_string());
                warnings.push(format!("the {scope} memory was left out: {why}"));
                text.push_str(&format!(
                    "\n{} memory was left out: it could not be read safely ({why}).\n",
                    title(scope)
                ));
                continue;
            }
        };
        withheld.add(
            withheld_here
                .iter()
                .map(|(rel, broken)| (format!("{scope}:{rel}"), broken)),
        );
        if block.text.is_empty() {
            continue;
        }
        delivered.extend(
            block
                .delivered
                .into_iter()
                .map(|(rel, hash, name)| Delivered {
                    id: format!("{scope}:{rel}"),
                    hash,
                    name,
                }),
        );
        let path = secrets::redact_text(&dir.join(INDEX_FILE).display().to_string());
        text.push_str(&format!("\n## {heading} memory ({path})\n\n{}", block.text));
        shown.push(scope);
    }
    // Memories in two versions, named with the command that resolves them.
    if let Some(line) = super::resolve::conflict_line(project) {
        text.push_str(&format!("\n{line}\n"));
    }
    // Team memory an agent saved that no person has published yet.
    if scopes.contains(&ScopeKind::Team) {
        if let Some(line) = super::pending::context_line(project) {
            text.push_str(&format!("\n{line}\n"));
        }
    }
    let mut recalled = 0;
    if let Some(query) = query.filter(|q| !q.trim().is_empty()) {
        let mut found = recall::recall(project, &scopes, query, DEFAULT_MAX, DEFAULT_CHARS)?;
        let recalled_out = guard::gate_recalled(&policy, &mut found);
        withheld.add(recalled_out.iter().map(|(id, broken)| (id.clone(), broken)));
        if !found.hits.is_empty() {
            text.push_str(&format!(
                "\n## Memories relevant to: {}\n",
                gate::for_agent(query.trim())
            ));
            for hit in &found.hits {
                let who = hit
                    .changed_by
                    .as_ref()
                    .map(|w| format!(", last changed by {}", gate::for_agent(w)))
                    .unwrap_or_default();
                let source = format!("{}:{}", hit.scope, hit.id);
                let refs = hit.references.as_ref();
                text.push_str(&format!(
                    "\n### {} ({}, {}{who})\n{}\n{}\n{}",
                    hit.name,
                    gate::for_agent(&source),
                    hit.age,
                    hit.description,
                    refs.map_or(String::new(), |line| format!("{line}\n")),
                    policy.data_block(&source, &hit.body)
                ));
            }
            recalled = found.hits.len();
        }
    }
    if let Some(line) = gate::withheld_line(withheld.ids.len(), &withheld.rules) {
        text.push('\n');
        text.push_str(&line);
        text.push('\n');
    }
    if options.count_session {
        warnings.extend(count_session(project, &scopes));
    }
    Ok(Context {
        text,
        scopes: shown,
        recalled,
        warnings,
        delivered,
    })
}

/// Counts one session for each scope's dream gate; returns the problems (counting the session
/// must never cost the agent its context).
pub fn count_session(project: &Project, scopes: &[ScopeKind]) -> Vec<String> {
    let mut problems = Vec::new();
    for &scope in scopes {
        if let Err(e) = dream::record_session(project, scope) {
            problems.push(format!(
                "could not count this session for the {scope} scope: {e}"
            ));
        }
    }
    problems
}

/// The block of `scope` (folder `dir`) rendered last time, while nothing it depends on changed
/// ([`context_blocks::key`]); else rendered now ([`scope_block`]) and kept for the next run.
/// With the withheld files and their rules.
fn kept_block(
    project: &Project,
    scope: ScopeKind,
    dir: &std::path::Path,
    policy: &gate::Gate,
) -> Result<(Vec<(String, BrokenRules)>, ScopeBlock), OpError> {
    let key = context_blocks::key(project, scope, dir, policy);
    let kept = key
        .as_deref()
        .and_then(|key| context_blocks::load(project, scope, dir, key))
        .and_then(|block| Some((block.withheld_rules()?, block)));
    if let Some(kept) = kept {
        return Ok(kept);
    }
    let (withheld, block) = scope_block(project, scope, policy)?;
    if let Some(key) = key {
        context_blocks::keep(project, scope, dir, key, &block);
    }
    Ok((withheld, block))
}

/// The files of `scope` the gate withholds, with the rules each breaks, for a context that
/// shows no index of that scope (Qwen Code shows the team index itself): from the scope's kept
/// block, so that while nothing it depends on changed no memory is read or judged again.
/// Empty when the scope has no folder.
pub fn withheld_in(
    project: &Project,
    scope: ScopeKind,
    policy: &gate::Gate,
) -> Result<Vec<(String, BrokenRules)>, OpError> {
    let dir = project.check_scope_safe(scope)?;
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    kept_block(project, scope, &dir, policy).map(|(withheld, _)| withheld)
}

/// A scope's block of the context, rendered from its memories through the gate: the index
/// (within its limits, made safe) and the line on the paths they name; empty text when the
/// index is empty. With the withheld files and their rules.
fn scope_block(
    project: &Project,
    scope: ScopeKind,
    policy: &gate::Gate,
) -> Result<(Vec<(String, BrokenRules)>, ScopeBlock), OpError> {
    let gated = gate_cache::gate_scope(project, scope, policy)?;
    let withheld: Vec<(String, BrokenRules)> = gated.withheld.clone().into_iter().collect();
    let mut block = ScopeBlock {
        withheld: withheld
            .iter()
            .map(|(rel, broken)| (rel.clone(), broken.iter().map(|r| r.to_string()).collect()))
            .collect(),
        ..ScopeBlock::default()
    };
    let index = within_limits(&memory_index::render(&gated.index_entries()));
    if index.trim().is_empty() {
        return Ok((withheld, block));
    }
    block.delivered = gated
        .passed
        .iter()
        .filter_map(|m| {
            let line = m.line.as_ref()?;
            Some((m.rel.clone(), m.hash.clone(), policy.for_agent(&line.title)))
        })
        .collect();
    let mut text = policy.for_agent(&index);
    if !text.ends_with('\n') {
        text.push('\n');
    }
    let named: Vec<(&str, &[_])> = gated
        .passed
        .iter()
        .map(|m| (m.rel.as_str(), m.references.as_slice()))
        .collect();
    text.push_str(&references::index_block(project, scope, &named));
    block.text = text;
    Ok((withheld, block))
}

/// What the gate withheld across the scopes of one context: each memory (`scope:rel`) once,
/// whether the index or recall met it.
#[derive(Debug, Default)]
struct WithheldInContext {
    ids: BTreeSet<String>,
    rules: BrokenRules,
}

impl WithheldInContext {
    fn add<'a>(&mut self, files: impl Iterator<Item = (String, &'a BrokenRules)>) {
        for (id, broken) in files {
            self.ids.insert(id);
            self.rules.extend(broken.iter().copied());
        }
    }
}

fn title(scope: ScopeKind) -> &'static str {
    match scope {
        ScopeKind::User => "User",
        ScopeKind::Private => "Private project",
        ScopeKind::Team => "Team",
    }
}

/// An index as the agent may see it: at most [`MAX_LINES`] lines and [`MAX_BYTES`] bytes, cut
/// at a line end (a hand-edited index can be longer than a generated one).
pub fn within_limits(index: &str) -> String {
    let mut out = String::new();
    for (n, line) in index.split_inclusive('\n').enumerate() {
        if n >= MAX_LINES || out.len() + line.len() > MAX_BYTES {
            out.push_str("… (index cut at its limit)\n");
            break;
        }
        out.push_str(line);
    }
    out
}

/// The context as the hook expects it: SessionStart JSON for the clients, the text itself
/// for plain (see [`super::delivery::render`]).
pub fn render(context: &Context, format: HookFormat) -> String {
    super::delivery::render(
        format,
        super::delivery::HookEvent::SessionStart,
        &context.text,
    )
}
