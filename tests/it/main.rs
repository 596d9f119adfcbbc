//! The integration tests, one binary (one link, one process to start): each file a scenario
//! area, sharing the helpers in `common/`. Tests that need process-wide state set it on the
//! child processes they start (`Command::env`), never on this process.

mod common;

mod baseline;
mod branch_advertise;
mod branch_concurrent;
mod branch_kill;
mod branch_mode;
mod check_all_parallel;
mod check_cli;
mod check_hooks;
mod check_range_parallel;
mod cli_conventions;
mod cli_smoke;
mod clients_qwen;
mod commands;
mod demo;
mod demo_json;
mod dream;
mod example;
mod forget_remember;
mod gate;
mod index_rules;
mod mcp;
mod mcp_door;
mod mcp_live;
mod memory_files;
mod net_cycle;
mod net_fast_forward;
mod net_fetch;
mod net_https;
mod net_push;
mod net_replay;
mod net_ssh;
mod no_panic;
mod recall;
mod recall_freshness;
mod recall_live;
mod review;
mod scopes;
mod secrets_guard;
mod secrets_layouts;
mod secrets_prose;
mod secrets_scan;
mod session_start;
mod sync_budget;
mod sync_commit;
mod sync_concurrent;
mod sync_ff_untracked;
mod sync_index;
mod sync_kill;
mod sync_merge_driver;
mod sync_network;
mod sync_report_unopened;
mod usage_context;
