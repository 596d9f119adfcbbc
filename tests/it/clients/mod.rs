//! Real Claude Code, Codex and Qwen Code sessions against recording mock model servers.

mod claude;
mod codex;
mod qwen;
