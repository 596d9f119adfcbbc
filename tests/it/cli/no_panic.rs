//! No input makes the parser or the index renderer panic (the cargo-fuzz targets in `fuzz/`
//! explore the same two functions for longer; these run in every `cargo test`).

use proptest::prelude::*;
use teammem::memory::{MemoryFile, MemoryType};
use teammem::memory_index::{self, IndexLine, MAX_LINES};

/// Bytes that look like a memory file often enough to reach the YAML parser and the checks.
fn memory_like() -> impl Strategy<Value = Vec<u8>> {
    let key = prop_oneof![
        Just("name"),
        Just("description"),
        Just("type"),
        Just("keywords"),
        Just("other")
    ];
    let value = prop_oneof![
        Just("user".to_string()),
        Just("feedback".to_string()),
        Just("10183".to_string()),
        Just("|\n  a\n  b".to_string()),
        Just("[a, *x]".to_string()),
        Just("&x {a: b}".to_string()),
        "\\PC{0,20}",
        "[\\[\\]{}:,'\"&*!|>#\\- \n]{0,20}",
    ];
    let line = (key, value).prop_map(|(k, v)| format!("{k}: {v}\n"));
    (
        prop::collection::vec(line, 0..8),
        prop_oneof![
            Just("---\n"),
            Just("---\r\n"),
            Just(""),
            Just("\u{feff}---\n")
        ],
        prop::collection::vec(any::<u8>(), 0..40),
    )
        .prop_map(|(lines, open, tail)| {
            let mut bytes = open.as_bytes().to_vec();
            bytes.extend(lines.concat().into_bytes());
            bytes.extend_from_slice(b"---\n");
            bytes.extend(tail);
            bytes
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn parse_never_panics_on_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = MemoryFile::parse("feedback/x.md", &bytes);
    }

    #[test]
    fn parse_never_panics_on_memory_like_bytes(bytes in memory_like()) {
        if let Ok(file) = MemoryFile::parse("feedback/x.md", &bytes) {
            // What parses renders, and the rendering parses to the same memory.
            let again = MemoryFile::parse("feedback/x.md", file.render().as_bytes());
            prop_assert!(again.is_ok(), "{:?}", again);
            let again = again.unwrap();
            prop_assert_eq!(&again.name, &file.name);
            prop_assert_eq!(&again.description, &file.description);
            prop_assert_eq!(&again.body, &file.body);
            prop_assert_eq!(&again.keywords, &file.keywords);
            let _ = file.entries();
        }
    }
}

proptest! {
    // Unicode strategies are slow to generate in a debug build; the fuzz target goes further.
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn render_never_panics_and_stays_within_limits(
        entries in prop::collection::vec(
            ("\\PC{0,60}|[\n\r\t\u{202E}\u{200B}`\\]\\(]{0,10}|a\\.md", "\\PC{0,30}", "\\PC{0,60}", 0..4usize),
            0..40,
        )
    ) {
        let mut entries: Vec<IndexLine> = entries
            .into_iter()
            .map(|(path, title, description, k)| IndexLine {
                path,
                title,
                description,
                kind: MemoryType::ALL[k],
            })
            .collect();
        let out = memory_index::render(&entries);
        // Qwen Code's limits: UTF-16 units, no final newline, a cut index ends with an empty
        // line and the warning.
        let body = out.split("\n\n> WARNING").next().unwrap_or(&out);
        prop_assert!(body.encode_utf16().count() <= memory_index::MAX_UNITS);
        prop_assert!(body.lines().count() <= MAX_LINES);
        prop_assert!(!out.ends_with('\n'));
        for line in body.lines() {
            prop_assert!(line.starts_with("- ["), "{:?}", line);
        }
        // Paths may repeat here (one folder cannot hold that); the order still does not matter.
        entries.reverse();
        prop_assert_eq!(memory_index::render(&entries), out);
    }
}
