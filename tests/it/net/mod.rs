//! Sync over real servers: git daemon, smart HTTP, TLS, sshd on loopback.

mod cycle;
mod fast_forward;
mod fetch;
mod https;
mod push;
mod replay;
mod ssh;
