//! The command line as a person uses it: conventions, every command's smoke test, the demo.

mod agent_config_props;
mod commands;
mod conventions;
mod demo;
mod demo_json;
mod dream;
mod example;
mod forget_remember;
mod hook_state_props;
mod index_rules;
mod init_mode;
mod install_agent;
mod install_agent_clients;
mod install_agent_files;
mod memory_files;
mod no_panic;
mod scopes;
mod smoke;
