use super::*;
use crate::domain::recall::{BODY, TITLE};

fn stamp(n: u64) -> Stamp {
    Stamp {
        size: n,
        mtime_ns: n as i64 * 1000,
        ctime_ns: n as i64 * 1000 + 1,
        ino: n + 7,
    }
}

fn sample() -> Vec<u8> {
    let files = [
        FileMeta {
            rel: "feedback/a.md",
            stamp: stamp(1),
            settled: true,
            state: DocState::Indexed,
            kind: MemoryType::Feedback,
            lengths: [2, 0, 3, 10],
        },
        FileMeta {
            rel: "project/b.md",
            stamp: stamp(2),
            settled: false,
            state: DocState::Indexed,
            kind: MemoryType::Project,
            lengths: [1, 0, 0, 4],
        },
        FileMeta {
            rel: "project/c.md",
            stamp: stamp(3),
            settled: true,
            state: DocState::Skipped,
            kind: MemoryType::User,
            lengths: [0; FIELDS],
        },
    ];
    let folders = [FolderMeta {
        rel: "",
        stamp: stamp(3),
        settled: true,
    }];
    let tokens = vec![
        (Cow::Borrowed("postgr"), vec![(0, [4, 0, 0, 9])]),
        (
            Cow::Borrowed("数据"),
            vec![(0, [4, 0, 0, 0]), (1, [0, 0, 0, 8])],
        ),
    ];
    encode("/m", false, &folders, &files, tokens)
}

#[test]
fn an_index_reads_back_as_written() {
    let bytes = sample();
    let view = RecallIndex::decode(&bytes).unwrap();
    assert_eq!(view.dir, "/m");
    assert_eq!(view.files.len(), 3);
    assert_eq!(view.files[1].rel, "project/b.md");
    assert_eq!(view.files[0].lengths, [2, 0, 3, 10]);
    assert!(!view.files[1].settled);
    assert_eq!(view.folders[0].stamp, stamp(3));
    assert_eq!(
        view.postings("数据").unwrap().collect::<Vec<_>>(),
        [(0, [4, 0, 0, 0]), (1, [0, 0, 0, 8])]
    );
    assert!(view.postings("mysql").is_none());
    let query = Query::new("postgres 数据");
    assert_eq!(query.tokens(), ["postgr", "数据"]);
    let all = view.gather(&query, &[true, true, true]);
    assert_eq!(all.collection.docs, 2);
    assert_eq!(all.collection.lengths, [3, 0, 3, 14]);
    assert_eq!(all.df, [1, 2]);
    assert_eq!(all.matches, [0, 1]);
    assert_eq!(all.units_of(0), [[4, 0, 0, 9], [4, 0, 0, 0]]);
    assert_eq!(all.units_of(1), [[0, 0, 0, 0], [0, 0, 0, 8]]);
    // A memory not in use counts for nothing, not even in the statistics.
    let some = view.gather(&query, &[false, true, true]);
    assert_eq!(some.collection.docs, 1);
    assert_eq!(some.df, [0, 1]);
}

#[test]
fn every_truncation_and_every_flipped_byte_is_refused() {
    let bytes = sample();
    for n in 0..bytes.len() {
        assert!(RecallIndex::decode(&bytes[..n]).is_none(), "cut at {n}");
        let mut bad = bytes.clone();
        bad[n] ^= 0x20;
        assert!(RecallIndex::decode(&bad).is_none(), "byte {n} flipped");
    }
}

/// A body with a valid length and checksum around it: what a bug in the writer, or a
/// collision, would hand the decoder.
fn sealed(body: &[u8]) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(&checksum(body).to_le_bytes());
    out.extend_from_slice(body);
    out
}

/// Uses everything a query uses of an index, so that a panic anywhere shows.
fn read_all(view: &RecallIndex<'_>) {
    let query = Query::new("postgres 数据 text");
    let _ = view.gather(&query, &vec![true; view.files.len()]);
    for (_, postings) in view.tokens() {
        postings.for_each(drop);
    }
    let renumber: Vec<Option<u32>> = (0..view.files.len() as u32).map(Some).collect();
    let merged = merge_tokens(Some(view), &renumber, TokenMap::default());
    let _ = encode(view.dir, view.symlinks, &view.folders, &view.files, merged);
}

proptest::proptest! {
    #[test]
    fn no_bytes_make_the_decoder_panic(
        noise in proptest::collection::vec(proptest::num::u8::ANY, 0..200),
        at in 0usize..400,
        value in proptest::num::u8::ANY,
    ) {
        if let Some(view) = RecallIndex::decode(&sealed(&noise)) {
            read_all(&view);
        }
        // A real index with one body byte changed and the checksum made to match.
        let good = sample();
        let mut body = good[24..].to_vec();
        let at = at % body.len();
        body[at] = value;
        if let Some(view) = RecallIndex::decode(&sealed(&body)) {
            read_all(&view);
        }
    }
}

#[test]
fn terms_added_to_the_index_give_what_analysing_the_file_gives() {
    let text = b"---\nname: Postgres tests\ndescription: Use it\ntype: project\n---\nThe tests use postgres, always postgres.\n";
    let file = MemoryFile::parse("project/p.md", text).unwrap();
    let fields = folded_fields(&file);
    let mut numbered = NumberedPostings::new();
    let mut analyzer = Analyzer::new();
    let lengths = add_terms(&mut analyzer, &fields, 3, &mut numbered);
    let query = Query::new("postgres always");
    let (direct_lengths, direct) = units_of(&query, &mut analyzer, &fields);
    assert_eq!(direct_lengths, lengths);
    assert_eq!(units_added(&query, &mut analyzer, &numbered, 3), direct);
    let mysql = Query::new("mysql");
    assert_eq!(units_added(&mysql, &mut analyzer, &numbered, 3), None);
    let tokens: std::collections::HashMap<String, Postings> =
        sorted_terms(analyzer, numbered).into_iter().collect();
    assert_eq!(tokens["postgr"], [(3, [4, 0, 0, 8])]);
    assert_eq!(tokens["test"][0].1[TITLE], 4);
    assert_eq!(tokens["test"][0].1[BODY], 4);
    assert!(!tokens.contains_key("the"), "a stop word is not a term");
}
