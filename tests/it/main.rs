//! The integration tests, one binary (one link, one process to start): each folder an area
//! (`sync/`, `branch/`, `net/`, `gate/`, `clients/`, ...), sharing the helpers in `common/`.
//! Tests that need process-wide state set it on the child processes they start
//! (`Command::env`), never on this process.

mod common;

mod branch;
mod check;
mod cli;
mod clients;
mod delivery;
mod gate;
mod mcp;
mod net;
mod recall;
mod repo;
mod secrets;
mod sync;
