//! The memory branch (`init --branch`): sync, floods, crafted entries, proposals, kills.

mod advertise;
mod concurrent;
mod deadline;
mod entries;
mod entries_current;
mod flood;
mod kill;
mod line_endings;
mod lost_answer;
mod mode;
mod noop_fast;
mod oversized;
mod partial;
mod proposals;
