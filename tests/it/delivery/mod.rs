//! What an agent receives: session start, resume, per-prompt recall, usage, references.

mod hook_inputs;
mod hooks_resume;
mod prompt_ages_walk;
mod prompt_context;
mod prompt_freshness;
mod references;
mod session_blocks;
mod session_start;
mod usage_context;
mod usage_doors;
