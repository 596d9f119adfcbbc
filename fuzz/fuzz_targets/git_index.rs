//! Any bytes as git's index file, the way sync reads it before splicing the team folder's
//! entries: taking it apart never panics, and a file it accepts, put back together with the
//! same entries, is accepted again with the same entries and a valid trailer.
#![no_main]

use libfuzzer_sys::fuzz_target;
use teammem::git::{checksum_ok, split};

const PREFIX: &[u8] = b".qwen/team-memory/";

fuzz_target!(|bytes: &[u8]| {
    let _ = checksum_ok(bytes);
    let Ok(first) = split(bytes, PREFIX) else {
        return;
    };
    let raw: Vec<&[u8]> = first.entries().iter().map(|e| e.raw).collect();
    let mut rebuilt = Vec::new();
    first
        .write_to(&mut rebuilt, &raw, ".qwen/team-memory")
        .expect("writing to memory cannot fail");
    let again = split(&rebuilt, PREFIX).expect("a file put back together splits again");
    assert_eq!(again.entries(), first.entries());
    assert!(
        checksum_ok(&rebuilt),
        "the new trailer matches the new bytes"
    );
});
