//! Any bytes as a recall index file (both raw and with a valid length and checksum, so the
//! decoder's body is reached): decoding never panics, and neither does anything a query does
//! with what was decoded — gathering a query's statistics, walking the postings, merging and
//! encoding again.
#![no_main]

use libfuzzer_sys::fuzz_target;
use teammem::recall::Query;
use teammem::recall_index::{MAGIC, RecallIndex, TokenMap, checksum, encode, merge_tokens};

fn exercise(view: &RecallIndex<'_>) {
    let query = Query::new("postgres 数据 text");
    let _ = view.gather(&query, &vec![true; view.files.len()]);
    for (_, postings) in view.tokens() {
        postings.for_each(drop);
    }
    let renumber: Vec<Option<u32>> = (0..view.files.len() as u32).map(Some).collect();
    let merged = merge_tokens(Some(view), &renumber, TokenMap::default());
    let _ = encode(view.dir, view.symlinks, &view.folders, &view.files, merged);
}

fuzz_target!(|body: &[u8]| {
    if let Some(view) = RecallIndex::decode(body) {
        exercise(&view);
    }
    let mut sealed = MAGIC.to_vec();
    sealed.extend_from_slice(&(body.len() as u64).to_le_bytes());
    sealed.extend_from_slice(&checksum(body).to_le_bytes());
    sealed.extend_from_slice(body);
    if let Some(view) = RecallIndex::decode(&sealed) {
        exercise(&view);
    }
});
