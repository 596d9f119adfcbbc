//! `teammem mcp`: the memory as a Model Context Protocol server on stdio, so that any agent
//! that speaks MCP (Claude Code, Qwen Code, Codex, Cursor) can search, read, save and forget
//! memories mid-session through the same gate as the command line.
//!
//! [`tools`] holds what each tool does, [`cache`] what the server keeps between calls (and
//! [`ages_file`] what it keeps for the next server), [`gate`] the one check everything returned or saved
//! passes, [`input`] the argument checks, [`schema`] what the agent is told, and [`server`] the
//! protocol side (the official `rmcp` SDK on a current-thread tokio runtime); [`watch`] tells a
//! long-lived server which memory files changed since it last asked, and [`live`] feeds that to
//! recall's indexes held in memory; with [`vouch`] the server tells each turn's hook whether
//! recall's on-disk index still holds, so that the hook takes no stats.

pub(crate) mod ages_file;
pub(crate) mod cache;
pub(crate) mod gate;
pub(crate) mod input;
pub(crate) mod live;
pub(crate) mod reads;
pub(crate) mod schema;
pub(crate) mod server;
pub(crate) mod tools;
pub(crate) mod vouch;
pub(crate) mod watch;

pub(crate) use server::serve;
pub(crate) use tools::{MemoryDoor, Publish};
