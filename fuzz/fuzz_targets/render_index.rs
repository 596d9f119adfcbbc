//! Any set of index entries: rendering never panics, stays within the limits, does not depend
//! on the order of the entries, and never lets a field start a line of its own.
#![no_main]

use libfuzzer_sys::fuzz_target;
use teammem::memory_index::{IndexLine, MAX_BYTES, MAX_LINES, render};
use teammem::memory::MemoryType;

/// Fields are separated by NUL bytes: path, title, description, then a type byte, repeated.
fn entries(bytes: &[u8]) -> Vec<IndexLine> {
    let fields: Vec<String> = bytes
        .split(|&b| b == 0)
        .map(|f| String::from_utf8_lossy(f).into_owned())
        .collect();
    fields
        .chunks(4)
        .filter(|c| c.len() == 4)
        .map(|c| IndexLine {
            path: c[0].clone(),
            title: c[1].clone(),
            description: c[2].clone(),
            kind: MemoryType::ALL[c[3].len() % 4],
        })
        .collect()
}

fuzz_target!(|bytes: &[u8]| {
    let mut entries = entries(bytes);
    let out = render(&entries);
    assert!(out.len() <= MAX_BYTES);
    assert!(out.lines().count() <= MAX_LINES);
    for line in out.lines() {
        assert!(line.starts_with("- [") || line.starts_with("> WARNING"), "{line:?}");
    }
    entries.reverse();
    assert_eq!(render(&entries), out);
});
