use super::*;

fn fields(title: &str, body: &str) -> FoldedFields {
    FoldedFields::of(&Document {
        title,
        description: "",
        keywords: &[],
        body,
        kind: MemoryType::Project,
    })
}

/// Scores memories (title, body) as one scope, the way recall does.
fn scores(query: &str, memories: &[(&str, &str)]) -> Vec<f64> {
    let q = Query::new(query);
    let mut analyzer = Analyzer::new();
    let mut collection = Collection::default();
    let mut df = vec![0; q.tokens().len()];
    let mut all = Vec::new();
    for (title, body) in memories {
        let mut units = vec![[0u16; FIELDS]; q.tokens().len()];
        let numbers = q.numbered(&mut analyzer);
        let lengths = analyzer.fields(&fields(title, body), |f, t, n| {
            if let Some(i) = numbers.position(t) {
                units[i][f] += n as u16;
            }
        });
        collection.add(lengths);
        for (d, u) in df.iter_mut().zip(&units) {
            *d += u64::from(u.iter().any(|&n| n > 0));
        }
        all.push((lengths, units));
    }
    let stats = q.stats(&collection, &df);
    all.iter()
        .map(|(lengths, units)| q.score(&stats, *lengths, units))
        .collect()
}

#[test]
fn tokens_fold_case_accents_and_width_and_drop_stop_words() {
    assert_eq!(
        tokenize("Café RÉSUMÉ ＡＢＣ go"),
        ["cafe", "resum", "abc", "go"]
    );
    assert_eq!(
        tokenize("When did the team have the meeting?"),
        ["team", "meet"]
    );
    assert_eq!(
        tokenize("¿Cuándo fue la reunión del equipo?"),
        ["reunion", "equipo"]
    );
    assert_eq!(
        tokenize("Quand est la réunion de l'équipe"),
        ["reunion", "equip"]
    );
    assert_eq!(
        tokenize("Wann ist das Treffen mit dem Team"),
        ["treffen", "team"]
    );
    assert_eq!(tokenize("Когда была встреча команды"), ["встреч", "команд"]);
}

#[test]
fn short_and_long_words_are_cached_apart_and_alike() {
    // 15 bytes (the short-word cache), 16 and more (the other), and prefixes of each other.
    let text = "abcdefghijklmno abcdefghijklmnop abcdefghijklmn abcdefghijklmnopq";
    let mut analyzer = Analyzer::new();
    let first = analyzer.positions(text);
    let again = analyzer.positions(text);
    assert_eq!(first, again);
    let distinct: HashSet<u32> = first.iter().copied().collect();
    assert_eq!(distinct.len(), 4);
    assert_eq!(short_key("ab"), short_key("ab"));
    assert_ne!(short_key("ab"), short_key("ab\0"));
    assert_eq!(short_key("abcdefghijklmnop"), None);
    // The key is the bytes zero-padded, with the length in the last byte.
    let text = "qwertyuiopasdfgé";
    for len in 0..=SHORT_WORD {
        let Some(word) = text.get(..len) else {
            continue;
        };
        let mut key = [0u8; 16];
        key[..len].copy_from_slice(word.as_bytes());
        key[15] = len as u8;
        assert_eq!(short_key(word), Some(u128::from_le_bytes(key)), "{word:?}");
    }
}

proptest::proptest! {
    /// The shortcuts of the ASCII path: its runs are the character-by-character runs,
    /// and a word is set off only where a space, `!` or `?` follows it.
    #[test]
    fn ascii_runs_and_the_set_off_shortcut_agree_with_the_general_rule(
        text in "[a-c0-9 ,!?.\n-]{0,40}|[a-cé数据 ,!?]{0,20}|[a-zA-Z0-9 @\\[`{/:~,!?.\n-]{0,300}",
    ) {
        let mut fast = Vec::new();
        runs_into(&text, &mut fast);
        if text.is_ascii() {
            let mut slow = Vec::new();
            runs_by_chars(&text, &mut slow);
            proptest::prop_assert_eq!(&fast, &slow);
        }
        for (i, run) in fast.iter().enumerate() {
            if set_off(&text, &fast, i) {
                let next = text.as_bytes().get(run.end);
                proptest::prop_assert!(matches!(next, Some(b' ' | b'!' | b'?')), "{:?}", text);
                let word_after_one_space = next == Some(&b' ')
                    && fast.get(i + 1).is_some_and(|r| r.start == run.end + 1);
                proptest::prop_assert!(!word_after_one_space, "{:?}", text);
            }
        }
    }
}

#[test]
fn stemming_joins_word_forms() {
    assert_eq!(tokenize("Researching researched research"), ["research"]);
    assert_eq!(tokenize("migrations migrating"), ["migrat"]);
}

#[test]
fn cjk_runs_become_bigrams_without_function_characters() {
    assert_eq!(
        tokenize("使用数据库test"),
        ["使用", "用数", "数据", "据库", "test"]
    );
    assert_eq!(tokenize("库"), ["库"]);
    assert_eq!(tokenize("真实的数据"), ["真实", "数据"]);
    assert_eq!(tokenize("テストはデータ"), ["テス", "スト", "テー", "ータ"]);
    assert!(tokenize("그리고").is_empty());
}

#[test]
fn a_name_spoken_to_counts_less_than_a_name_spoken_of() {
    let mut analyzer = Analyzer::new();
    let units = |text: &str, analyzer: &mut Analyzer| {
        let mut out = Vec::new();
        analyzer.terms(&fold(text), |t, u| out.push((t, u)));
        out.into_iter()
            .map(|(t, u)| (analyzer.term(t).to_string(), u))
            .collect::<Vec<_>>()
    };
    let mel = |text: &str, analyzer: &mut Analyzer| {
        units(text, analyzer)
            .into_iter()
            .find(|(t, _)| t == "mel")
            .map(|(_, u)| u)
    };
    for spoken_to in [
        "Hey Mel, how was it?",
        "Thank you, Mel!",
        "That's great, Mel!",
    ] {
        assert_eq!(
            mel(spoken_to, &mut analyzer),
            Some(ADDRESSED),
            "{spoken_to}"
        );
    }
    for spoken_of in ["Mel went to the museum.", "I saw Mel there", "Mel: I went"] {
        assert_eq!(
            mel(spoken_of, &mut analyzer),
            Some(OCCURRENCE),
            "{spoken_of}"
        );
    }
    let s = scores(
        "when did mel go to the museum",
        &[
            ("Caroline", "Hey Mel! Did you like the museum?"),
            ("Mel", "I went to the museum on Sunday."),
        ],
    );
    assert!(s[1] > s[0], "{s:?}");
}

#[test]
fn rare_terms_and_short_fields_weigh_more() {
    let s = scores(
        "postgres deploy",
        &[
            ("Deploy", "deploy steps"),
            ("Deploy", "deploy with postgres"),
            ("Deploy notes", "deploy"),
            (
                "Other",
                "a long body about deploy and many other things beside it",
            ),
        ],
    );
    // "postgres" is rare: the one memory that has it wins.
    assert!(s[1] > s[0] && s[1] > s[2], "{s:?}");
    // The same single occurrence counts more in a short body.
    assert!(s[2] > s[3], "{s:?}");
    // Stop words and words no memory has score nothing.
    assert_eq!(scores("the and zebra", &[("Deploy", "the and")]), [0.0]);
}

#[test]
fn adjacent_query_terms_earn_the_proximity_boost() {
    let q = Query::new("database migration");
    let collection = Collection {
        docs: 10,
        lengths: [20, 0, 0, 100],
    };
    let stats = q.stats(&collection, &[3, 3]);
    let mut analyzer = Analyzer::new();
    let together = q.proximity(
        &stats,
        &mut analyzer,
        &fields("", "the database migration ran"),
    );
    let one_apart = q.proximity(&stats, &mut analyzer, &fields("", "database big migration"));
    let apart = q.proximity(
        &stats,
        &mut analyzer,
        &fields("", "database, then cache and later migration"),
    );
    assert!(together > one_apart && one_apart > 0.0 && apart == 0.0);
}

#[test]
fn type_words_are_tie_breaks() {
    let q = Query::new("feedback rules on postgres");
    assert_eq!(q.type_affinity(MemoryType::Feedback), 2);
    assert_eq!(q.type_affinity(MemoryType::Project), 0);
}

#[test]
fn a_query_numbers_its_terms_in_order_of_first_sight_however_long() {
    let words: Vec<String> = (0..20_000).map(|n| format!("word{n}x")).collect();
    let text = format!("{} {}", words.join(" "), words[..3].join(" "));
    let query = Query::new(&text);
    assert_eq!(query.tokens().len(), 20_000);
    assert_eq!(query.position(&query.tokens()[7]), Some(7));
    assert_eq!(query.sequence[..3], [0, 1, 2]);
    assert_eq!(query.sequence[20_000..], [0, 1, 2]);
}
