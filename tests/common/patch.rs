//! Applies a unified diff (as `meshjob diff` prints it) to a text, in-process, so that tests
//! can check "the diff applied to the input gives the output" without an outside `patch`.
//!
//! Strict on purpose: every context and removed line must match exactly, hunks must come in
//! order, and `\ No newline at end of file` is honoured.

/// Applies `diff` to `old`. Errors say which hunk line did not match.
pub fn apply(old: &str, diff: &str) -> Result<String, String> {
    if diff.is_empty() {
        return Ok(old.to_string());
    }
    let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
    let lines: Vec<&str> = diff.split_inclusive('\n').collect();
    let mut i = 0;
    // Headers.
    while i < lines.len() && !lines[i].starts_with("@@") {
        if !(lines[i].starts_with("--- ") || lines[i].starts_with("+++ ")) {
            return Err(format!("unexpected header line {:?}", lines[i]));
        }
        i += 1;
    }
    let mut out = String::with_capacity(old.len() + diff.len());
    let mut at = 0; // next old line to copy
    while i < lines.len() {
        let header = lines[i];
        let old_start = hunk_old_start(header)?;
        // `@@ -0,0` only for an empty old text; otherwise 1-based.
        let from = old_start.saturating_sub(1);
        if from < at || from > old_lines.len() {
            return Err(format!("hunk {header:?} out of order or out of range"));
        }
        for l in &old_lines[at..from] {
            out.push_str(l);
        }
        at = from;
        i += 1;
        while i < lines.len() && !lines[i].starts_with("@@") {
            let line = lines[i];
            let next_no_nl = lines
                .get(i + 1)
                .is_some_and(|n| n.starts_with("\\ No newline"));
            let body = &line[1..];
            // The body without the diff's own line break when the original had none.
            let body = if next_no_nl {
                body.strip_suffix('\n').unwrap_or(body)
            } else {
                body
            };
            match line.as_bytes()[0] {
                b' ' | b'-' => {
                    let have = old_lines.get(at).copied().unwrap_or("");
                    if have != body {
                        return Err(format!(
                            "line {}: diff expects {body:?}, text has {have:?}",
                            at + 1
                        ));
                    }
                    if line.starts_with(' ') {
                        out.push_str(body);
                    }
                    at += 1;
                }
                b'+' => out.push_str(body),
                b'\\' => {}
                _ => return Err(format!("unexpected diff line {line:?}")),
            }
            i += 1;
        }
    }
    for l in &old_lines[at..] {
        out.push_str(l);
    }
    Ok(out)
}

fn hunk_old_start(header: &str) -> Result<usize, String> {
    header
        .strip_prefix("@@ -")
        .and_then(|r| r.split([',', ' ']).next())
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| format!("bad hunk header {header:?}"))
}
