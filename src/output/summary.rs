//! The one summary line after `diff`, `check` and `fix`, on stderr, as black and ruff end
//! their runs: `2 files would be changed, 1 unchanged; 3 errors (2 fixable), 1 warning`, or
//! `fixed 2 files, 1 unchanged; 1 error left`. Unchanged files that hold nothing meshjob
//! handles (a directory of Deployments) are said to: `1 file unchanged: it holds no workload
//! meshjob handles (...)`, or `3 unchanged (2 with no workload meshjob handles)`.

/// What a run did, counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub(crate) struct Counts {
    /// Every file (and stdin) the run looked at.
    pub files: usize,
    /// Files that would change (`fix`: that were written).
    pub changed: usize,
    /// Files that could not be read, parsed or written.
    pub unprocessed: usize,
    /// Error-level findings (`fix`: those left).
    pub errors: usize,
    /// Of the errors, those `fix` repairs (`check` and `diff` only).
    pub fixable: usize,
    /// Warning-level findings.
    pub warnings: usize,
    /// Of the unchanged files, those that hold nothing meshjob handles: no pod of a kind of
    /// the kinds table, no mesh-wide values.
    pub no_workload: usize,
}

/// What meshjob handles, for a run whose files hold none of it.
const HANDLED: &str = "Jobs, CronJobs, batch Pods, Argo Workflows, Kubeflow jobs, ... and mesh \
                       config; see docs/changes.md#kinds";

fn n(count: usize, one: &str, many: &str) -> String {
    format!("{count} {}", if count == 1 { one } else { many })
}

/// Adds `k what` to `files` unless `k` is 0. The first count names its unit ("2 files");
/// the others share it ("1 unchanged").
fn count(files: &mut Vec<String>, k: usize, what: &str) {
    if k > 0 {
        let head = if files.is_empty() {
            n(k, "file", "files")
        } else {
            k.to_string()
        };
        files.push(format!("{head} {what}"));
    }
}

/// The summary line, or `None` for a run that looked at no file. `stdin`: the run's only
/// input is stdin.
pub(crate) fn line(c: &Counts, fix: bool, stdin: bool) -> Option<String> {
    if c.files == 0 {
        return None;
    }
    let unchanged = c.files.saturating_sub(c.changed + c.unprocessed);
    let idle = c.no_workload.min(unchanged);
    // Every file is one: said after the count, with what meshjob handles.
    let none = idle > 0 && idle == c.files;
    let mut files: Vec<String> = Vec::new();
    if fix && c.changed > 0 {
        files.push(format!("fixed {}", n(c.changed, "file", "files")));
    } else {
        count(&mut files, c.changed, "would be changed");
    }
    let unchanged_what = match idle {
        0 => "unchanged".to_string(),
        _ if none => "unchanged".to_string(),
        k => format!("unchanged ({k} with no workload meshjob handles)"),
    };
    count(&mut files, unchanged, &unchanged_what);
    let failed = if fix {
        "could not be fixed"
    } else {
        "could not be checked"
    };
    count(&mut files, c.unprocessed, failed);
    let mut findings: Vec<String> = Vec::new();
    if c.errors > 0 {
        let mut e = n(c.errors, "error", "errors");
        if fix {
            e.push_str(" left");
        } else if c.fixable > 0 {
            e.push_str(&format!(" ({} fixable)", c.fixable));
        }
        findings.push(e);
    }
    if c.warnings > 0 {
        findings.push(n(c.warnings, "warning", "warnings"));
    }
    let mut out = files.join(", ");
    if none {
        let who = match (stdin, c.files) {
            (true, _) => "stdin holds no workload",
            (false, 1) => "it holds no workload",
            (false, _) => "none of them holds a workload",
        };
        out.push_str(&format!(": {who} meshjob handles ({HANDLED})"));
    }
    if !findings.is_empty() {
        out.push_str("; ");
        out.push_str(&findings.join(", "));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(
        files: usize,
        changed: usize,
        unprocessed: usize,
        errors: usize,
        fixable: usize,
    ) -> Counts {
        Counts {
            files,
            changed,
            unprocessed,
            errors,
            fixable,
            warnings: 0,
            no_workload: 0,
        }
    }

    #[test]
    fn wording() {
        let s = |c: Counts, fix| line(&c, fix, false).unwrap_or_default();
        assert_eq!(
            s(c(3, 2, 0, 2, 2), false),
            "2 files would be changed, 1 unchanged; 2 errors (2 fixable)"
        );
        assert_eq!(s(c(3, 2, 0, 0, 0), true), "fixed 2 files, 1 unchanged");
        assert_eq!(s(c(3, 0, 0, 0, 0), false), "3 files unchanged");
        assert_eq!(s(c(1, 0, 0, 0, 0), true), "1 file unchanged");
        assert_eq!(
            s(c(2, 1, 1, 3, 1), false),
            "1 file would be changed, 1 could not be checked; 3 errors (1 fixable)"
        );
        assert_eq!(
            s(c(2, 1, 1, 2, 0), true),
            "fixed 1 file, 1 could not be fixed; 2 errors left"
        );
        assert_eq!(
            s(c(1, 0, 1, 1, 0), false),
            "1 file could not be checked; 1 error"
        );
        let w = Counts {
            warnings: 1,
            ..c(1, 0, 0, 1, 0)
        };
        assert_eq!(s(w, true), "1 file unchanged; 1 error left, 1 warning");
        assert_eq!(line(&Counts::default(), false, false), None);
    }

    #[test]
    fn files_with_nothing_meshjob_handles() {
        let idle = |k: usize, base: Counts| Counts {
            no_workload: k,
            ..base
        };
        let s = |c: Counts, stdin| line(&c, false, stdin).unwrap_or_default();
        let tail = format!("meshjob handles ({HANDLED})");
        assert_eq!(
            s(idle(1, c(1, 0, 0, 0, 0)), false),
            format!("1 file unchanged: it holds no workload {tail}")
        );
        assert_eq!(
            s(idle(1, c(1, 0, 0, 0, 0)), true),
            format!("1 file unchanged: stdin holds no workload {tail}")
        );
        assert_eq!(
            s(idle(3, c(3, 0, 0, 0, 0)), false),
            format!("3 files unchanged: none of them holds a workload {tail}")
        );
        assert_eq!(
            s(idle(1, c(3, 0, 0, 0, 0)), false),
            "3 files unchanged (1 with no workload meshjob handles)"
        );
        assert_eq!(
            s(idle(2, c(3, 1, 0, 1, 1)), false),
            "1 file would be changed, 2 unchanged (2 with no workload meshjob handles); \
             1 error (1 fixable)"
        );
        let w = Counts {
            warnings: 1,
            ..idle(1, c(1, 0, 0, 0, 0))
        };
        assert_eq!(
            line(&w, true, false).unwrap_or_default(),
            format!("1 file unchanged: it holds no workload {tail}; 1 warning")
        );
    }
}
