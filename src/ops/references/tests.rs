use super::*;

fn removal(renamed_to: Option<&str>) -> Removal {
    Removal {
        commit: Oid::from_str("1a2b3c4d5e6f00000000000000000000000000ff").unwrap(),
        author: "Alice".into(),
        time: 1_793_577_600, // 2026-11-02
        renamed_to: renamed_to.map(str::to_string),
    }
}

#[test]
fn lines_say_what_broke_or_that_all_holds() {
    let broken = MemoryReferences {
        holding: 2,
        broken: vec![Broken::Removed {
            path: "src/old.rs".into(),
            removal: removal(None),
        }],
    };
    assert_eq!(
        broken.line().unwrap(),
        "Note: names src/old.rs, removed in 1a2b3c4 by Alice on 2026-11-02."
    );
    let renamed = MemoryReferences {
        holding: 0,
        broken: vec![
            Broken::Removed {
                path: "src/old.rs".into(),
                removal: removal(Some("src/new.rs")),
            },
            Broken::PastEnd {
                path: "src/lib.rs".into(),
                lines: Lines {
                    start: 900,
                    end: 900,
                },
                count: 120,
            },
        ],
    };
    assert_eq!(
        renamed.line().unwrap(),
        "Note: names src/old.rs, renamed to src/new.rs in 1a2b3c4 by Alice on 2026-11-02 \
         (and 1 more reference that no longer holds)."
    );
    assert_eq!(
        renamed.broken[1].describe(),
        "src/lib.rs:900 is past the file's end (120 lines)"
    );
    let fine = MemoryReferences {
        holding: 3,
        broken: Vec::new(),
    };
    assert_eq!(fine.line().unwrap(), "References checked: 3 paths exist.");
    assert_eq!(MemoryReferences::default().line(), None);
}
