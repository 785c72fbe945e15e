//! docs/rules.md against the rules table (`src/rules.rs`): one section per rule, headed by
//! its code and title, and the index generated from the table. `MESHJOB_UPDATE_GOLDEN=1
//! cargo test --test rules_doc` rewrites the index.

mod common;

use meshjob::{RULES as TABLE, rules_index as docs_index};

const BEGIN: &str = "<!-- index: generated from src/rules.rs -->\n";
const END: &str = "<!-- end of index -->\n";

#[test]
fn rules_doc_matches_the_table() {
    let path = common::root().join("docs/rules.md");
    let text = std::fs::read_to_string(&path).expect("docs/rules.md");
    let mut failures = Vec::new();
    for r in TABLE {
        let heading = format!("\n## {} {}\n", r.code, r.title);
        if !text.contains(&heading) {
            failures.push(format!("docs/rules.md has no heading {heading:?}"));
        }
    }
    let sections = text.matches("\n## MJ").count();
    if sections != TABLE.len() {
        failures.push(format!(
            "docs/rules.md has {sections} rule sections, the table {} rules",
            TABLE.len()
        ));
    }
    let (Some(b), Some(e)) = (text.find(BEGIN), text.find(END)) else {
        panic!("docs/rules.md has no generated index between {BEGIN:?} and {END:?}");
    };
    let index = &text[b + BEGIN.len()..e];
    let mut want = text[..b + BEGIN.len()].to_string();
    want.push_str(&docs_index());
    want.push_str(&text[e..]);
    if let Err(m) = common::golden::check_file(&path, want.as_bytes()) {
        failures.push(format!("the index in docs/rules.md is stale: {m}"));
    }
    assert!(!index.is_empty() || common::golden::updating());
    common::golden::assert_none(&failures);
}
