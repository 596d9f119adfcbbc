//! Any bytes as a memory file: parsing never panics, and what parses renders to bytes that
//! parse to the same memory.
#![no_main]

use libfuzzer_sys::fuzz_target;
use teammem::memory::MemoryFile;

fuzz_target!(|bytes: &[u8]| {
    if let Ok(file) = MemoryFile::parse("feedback/fuzz.md", bytes) {
        let _ = file.entries();
        let rendered = file.render();
        match MemoryFile::parse("feedback/fuzz.md", rendered.as_bytes()) {
            Ok(again) => {
                assert_eq!(again.name, file.name);
                assert_eq!(again.description, file.description);
                assert_eq!(again.kind, file.kind);
                assert_eq!(again.body, file.body);
                assert_eq!(again.keywords, file.keywords);
            }
            Err(problems) => panic!("a rendered memory does not parse: {problems:?}"),
        }
    }
});
