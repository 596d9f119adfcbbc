//! `teammem mcp`: the memory as a Model Context Protocol server on stdio, so that any agent
//! that speaks MCP (Claude Code, Qwen Code, Codex, Cursor) can search, read, save and forget
//! memories mid-session through the same gate as the command line.
//!
//! [`tools`] holds what each tool does, [`cache`] what the server keeps between calls, [`gate`] the one check everything returned or saved
//! passes, [`input`] the argument checks, [`schema`] what the agent is told, and [`server`] the
//! protocol side (the official `rmcp` SDK on a current-thread tokio runtime).

pub mod cache;
pub mod gate;
pub mod input;
pub mod schema;
pub mod server;
pub mod tools;

pub use server::serve;
pub use tools::{MemoryDoor, Publish, Reply, Timings, ToolError};
