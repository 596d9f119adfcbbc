//! Any bytes as the machine-local state files the hooks read back: a session record
//! (`sessions/<hash>.json`), a scope's `usage.json` and the turn verdicts
//! (`turn-verdicts`). Reading never panics, nor does anything a hook does with what it read;
//! what reads as a record or a usage book is written back and read again the same.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../tests/it/cli/hook_state_props.rs"]
mod props;

fuzz_target!(|bytes: &[u8]| {
    props::check_session_record(bytes);
    props::check_usage_book(bytes);
    props::check_turn_verdicts(bytes);
});
