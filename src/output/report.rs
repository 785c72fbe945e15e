//! Findings: `path:line:col: severity: message [CODE]`, JSON, or GitHub workflow commands.
//! Text from the input (names, paths) is escaped here, where it is printed.

use super::escape;
#[cfg(test)]
use crate::finding::Rule;
use crate::finding::{Finding, Severity};

/// How findings are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Human,
    Json,
    Github,
    /// One SARIF 2.1.0 log on stdout, for code scanning.
    Sarif,
}

/// A finding placed in a file, ready to show. `line` 0 means a finding about the whole
/// file or directory (no position); an empty `path` means one about the whole run.
#[derive(Clone, Debug)]
pub(crate) struct Located {
    pub path: String,
    pub line: usize,
    pub col: usize,
    pub finding: Finding,
}

impl Located {
    /// A finding about a whole file or directory.
    pub(crate) fn at_path(path: &str, finding: Finding) -> Self {
        Located {
            path: path.to_string(),
            line: 0,
            col: 0,
            finding,
        }
    }

    /// A finding that stops a whole file: shown at its start (`path:1:1`), so that every
    /// error points at a place.
    pub(crate) fn at_start(path: &str, finding: Finding) -> Self {
        Located {
            path: path.to_string(),
            line: 1,
            col: 1,
            finding,
        }
    }

    /// A finding about the whole run.
    pub(crate) fn run(finding: Finding) -> Self {
        Self::at_path("", finding)
    }

    /// `path:line:col`, `path`, or `meshjob` for the run, escaped for printing.
    fn place(&self) -> String {
        let path = escape::controls(&self.path);
        match (self.path.is_empty(), self.line) {
            (true, _) => "meshjob".to_string(),
            (false, 0) => path.into_owned(),
            (false, line) => format!("{path}:{line}:{}", self.col),
        }
    }
}

/// One line in the human format.
pub(crate) fn human(l: &Located, color: bool, fix_mode: bool) -> String {
    let sev = l.finding.severity;
    let label = if color {
        let code = match sev {
            Severity::Error => "1;31",
            Severity::Warning => "1;33",
            Severity::Info => "1;36",
        };
        format!("\x1b[{code}m{sev}\x1b[0m")
    } else {
        sev.to_string()
    };
    let fixed = fixed_note(&l.finding, fix_mode);
    format!(
        "{}: {label}: {}{fixed} [{}]",
        l.place(),
        escape::controls(&l.finding.message),
        l.finding.rule
    )
}

/// What follows the message of a finding the run repairs: " (fixed)" where the output
/// carries the repair (`applied`), " (fix available)" where only `fix` would write it.
pub(crate) fn fixed_note(f: &Finding, applied: bool) -> &'static str {
    match (f.fixed, applied) {
        (true, true) => " (fixed)",
        (true, false) => " (fix available)",
        (false, _) => "",
    }
}

/// One line for a host that shows findings without positions (`meshjob: severity:
/// message`): in a resource stream, positions mean nothing to the user, and the message
/// names the object. The output carries the repairs.
pub(crate) fn plain(f: &Finding) -> String {
    format!(
        "meshjob: {}: {}{} [{}]",
        f.severity,
        escape::controls(&f.message),
        fixed_note(f, true),
        f.rule
    )
}

/// Escapes workflow-command data (the message) as GitHub requires.
pub(crate) fn gh_escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a workflow-command property value (file, title).
pub(crate) fn gh_escape_property(s: &str) -> String {
    gh_escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// One GitHub workflow command (`::error file=..,line=..,col=..::message [MJ...]`).
pub(crate) fn github(l: &Located) -> String {
    let cmd = match l.finding.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "notice",
    };
    let mut props = Vec::new();
    if !l.path.is_empty() {
        props.push(format!(
            "file={}",
            // The repository's path as git writes it (`/` on Windows too).
            gh_escape_property(&escape::controls(&crate::paths::slashed(&l.path)))
        ));
    }
    if l.line > 0 {
        props.push(format!("line={},col={}", l.line, l.col));
    }
    props.push(format!(
        "title={}",
        gh_escape_property(&format!("meshjob {}", l.finding.severity))
    ));
    let message = format!(
        "{} [{}]",
        escape::controls(&l.finding.message),
        l.finding.rule
    );
    format!("::{cmd} {}::{}", props.join(","), gh_escape_data(&message))
}

/// The JSON object of one finding.
pub(crate) fn json(l: &Located) -> serde_json::Value {
    let f = &l.finding;
    let mut v = serde_json::json!({
        "path": (!l.path.is_empty()).then_some(&l.path),
        "severity": f.severity.as_str(),
        "code": f.rule.code(),
        "message": f.message,
        "fixed": f.fixed,
    });
    if let Some(o) = &f.object {
        v["object"] = serde_json::json!({
            "apiVersion": o.api_version,
            "kind": o.kind,
            "name": o.name,
            "namespace": o.namespace,
        });
    }
    if l.line > 0 {
        v["line"] = l.line.into();
        v["column"] = l.col.into();
    }
    if !f.versions.is_empty() {
        v["versions"] = f.versions.iter().map(|u| u.json()).collect();
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn github_escaping() {
        assert_eq!(gh_escape_data("50%\r\nx"), "50%25%0D%0Ax");
        assert_eq!(gh_escape_property("a:b,c"), "a%3Ab%2Cc");
        let l = Located {
            path: "dir/x,y.yaml".into(),
            line: 3,
            col: 5,
            finding: Finding::error(Rule::InvalidYaml, 0, "bad: a, b\nnext"),
        };
        assert_eq!(
            github(&l),
            "::error file=dir/x%2Cy.yaml,line=3,col=5,title=meshjob error::bad: a, b\\nnext [MJ001]"
        );
    }
}
