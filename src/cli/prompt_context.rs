//! `teammem prompt-context`

use std::time::Duration;

use clap::Args;

use super::hook;
use crate::ops::EXIT_OK;
use crate::ops::delivery::{self, HookEvent, HookFormat};
use crate::ops::prompt_context::{self, MIN_SCORE, PromptOptions};

/// Print the memories relevant to the prompt a hook is given (a UserPromptSubmit hook).
///
/// Reads the hook's JSON on stdin (`prompt`, `session_id`), recalls across the enabled scopes
/// (team only with --hook qwen: Qwen Code recalls its own private and user memory) and prints
/// at most 5 memories that pass the memory gate, each with its scope, id, type, age and who
/// last changed it, bodies cut at 1,200 characters and delimited as data. A memory this
/// session was already given is never given again; when nothing reaches the score floor,
/// nothing is printed. Each memory printed counts as surfaced (`teammem stale`).
///
/// Fails open and silent: any error, or a run longer than --timeout-ms, prints nothing (a line
/// on stderr says why) and exits 0, so the prompt always goes on.
#[derive(Debug, Args)]
pub struct PromptContextArgs {
    /// Output shape: qwen, claude and codex print UserPromptSubmit hook JSON
    /// ({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext":
    /// ...}}), plain prints the text.
    #[arg(long, value_enum, default_value = "plain")]
    hook: HookFormat,
    /// The time budget in milliseconds, stdin included: past it, nothing is printed.
    #[arg(long, value_name = "MS", default_value_t = 1500)]
    timeout_ms: u64,
    /// The score a memory must reach (recall's score: BM25F × 100).
    #[arg(long, value_name = "POINTS", default_value_t = MIN_SCORE)]
    min_score: u32,
}

/// Runs `teammem prompt-context` in `cwd`; the exit status is always 0.
pub fn run(cwd: &std::path::Path, args: PromptContextArgs) -> u8 {
    let started = std::time::Instant::now();
    let budget = Duration::from_millis(args.timeout_ms);
    let Some(input) = hook::read_input(budget) else {
        return EXIT_OK;
    };
    let options = PromptOptions {
        team_only: args.hook == HookFormat::Qwen,
        min_score: args.min_score,
    };
    // The work runs on its own thread so that the budget holds whatever it waits on; a late
    // answer is dropped (nothing printed, nothing recorded) when the process exits.
    let (send, receive) = std::sync::mpsc::channel();
    let cwd = cwd.to_path_buf();
    std::thread::spawn(move || {
        let found =
            std::panic::catch_unwind(|| prompt_context::prompt_context(&cwd, &input, &options));
        let _ = send.send(found);
    });
    let left = budget.saturating_sub(started.elapsed());
    let found = match receive.recv_timeout(left) {
        Ok(Ok(Ok(found))) => found,
        Ok(Ok(Err(err))) => {
            warning!(
                "prompt-context: nothing added: {}",
                super::shown(&err.to_string())
            );
            return EXIT_OK;
        }
        Ok(Err(_)) => {
            warning!("prompt-context: nothing added: teammem crashed (please report it)");
            return EXIT_OK;
        }
        Err(_) => {
            warning!(
                "prompt-context: nothing added: over the {} ms budget",
                args.timeout_ms
            );
            return EXIT_OK;
        }
    };
    let format = args.hook;
    out!(
        "{}",
        delivery::render(format, HookEvent::UserPromptSubmit, &found.text)
    );
    for problem in found.record() {
        warning!("prompt-context: {problem}");
    }
    EXIT_OK
}
