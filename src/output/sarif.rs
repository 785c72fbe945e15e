//! `--format sarif`: the findings as one SARIF 2.1.0 log on stdout, for code scanning
//! (GitHub's upload-sarif action). `tool.driver.rules` is the rules table; each result
//! names its rule by id and index, and its place by `physicalLocation` (the path as the
//! findings spell it, relative to the working directory, and the line and column). The
//! shape follows the OASIS SARIF 2.1.0 schema (oasis-tcs/sarif-spec
//! `sarif-2.1/schema/sarif-schema-2.1.0.json`, a copy in testdata/sarif/ checks the output).

use super::report::{Located, fixed_note};
use crate::finding::Severity;
use crate::rules::TABLE;
use serde_json::{Value, json};

/// Where the rules are documented; each rule's anchor follows.
const RULES_URI: &str = "https://github.com/meshjob/meshjob/blob/main/docs/rules.md";

/// The SARIF log of a run, its `results` (an array of [`result`]s, or a stand-in for one that
/// is written apart, see `output::spill`).
pub(crate) fn log(results: Value) -> Value {
    let rules: Vec<Value> = TABLE
        .iter()
        .map(|r| {
            json!({
                "id": r.code,
                "name": r.title,
                "shortDescription": {"text": r.title},
                "fullDescription": {"text": r.summary.trim()},
                "helpUri": format!("{RULES_URI}#{}", crate::rules::anchor(r)),
                "defaultConfiguration": {"level": level(r.severities[0])},
            })
        })
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "meshjob",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": "https://github.com/meshjob/meshjob",
                "rules": rules,
            }},
            "results": results,
        }],
    })
}

fn level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

/// The SARIF result of one finding. `applied`: the run wrote its fixes (`fix`).
pub(crate) fn result(l: &Located, applied: bool) -> Value {
    let f = &l.finding;
    let mut r = json!({
        "ruleId": f.rule.code(),
        "ruleIndex": f.rule as usize,
        "level": level(f.severity),
        "message": {"text": format!("{}{}", f.message, fixed_note(f, applied))},
    });
    if !l.path.is_empty() {
        let mut place = json!({"artifactLocation": {"uri": uri(&l.path)}});
        if l.line > 0 {
            place["region"] = json!({"startLine": l.line, "startColumn": l.col.max(1)});
        }
        r["locations"] = json!([{"physicalLocation": place}]);
    }
    r
}

/// A path as a URI reference: `/`-separated, with what a URI cannot hold percent-encoded
/// (RFC 3986: unreserved characters and `/` stay). A Windows name has its `\` made `/`, and an
/// absolute one its drive kept as a file URI writes it (`file:///C:/srv/job.yaml`, RFC 8089
/// appendix E.2).
fn uri(path: &str) -> String {
    // A name that is not UTF-8 is spelled quoted (`crate::paths::raw`): its own bytes are
    // encoded.
    let raw = crate::paths::raw(path);
    if std::str::from_utf8(&raw).is_err() {
        return encoded(&raw);
    }
    let path = &*crate::paths::slashed(path);
    let drive = path.len() > 2
        && path.as_bytes()[0].is_ascii_alphabetic()
        && path[1..].starts_with(":/")
        && cfg!(windows);
    if drive {
        return format!(
            "file:///{}:{}",
            &path[..1],
            uri(&path[2..]).trim_start_matches("file://")
        );
    }
    encoded(path.as_bytes())
}

/// `path`'s bytes percent-encoded but for unreserved characters and `/`; a `file://` URI
/// when it is absolute.
fn encoded(path: &[u8]) -> String {
    let mut out = String::new();
    for &b in path {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    if path.starts_with(b"/") {
        format!("file://{out}")
    } else {
        out
    }
}
