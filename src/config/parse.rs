//! Reading a config document, and errors that say where and what to do.

use std::fmt;

use super::document::MeshJobConfig;
use super::{API_VERSION, KIND};

/// A problem with a config document, at a place in its text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    pub path: String,
    /// 1-based; 0 when the problem has no place in the text (an unreadable file).
    pub line: usize,
    /// 1-based, in characters; 0 when `line` is 0.
    pub column: usize,
    pub message: String,
}

impl ConfigError {
    pub fn new(path: &str, line: usize, column: usize, message: impl Into<String>) -> Self {
        ConfigError {
            path: path.to_string(),
            line,
            column,
            message: message.into(),
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: error: {}", self.path, self.message)
        } else {
            let (path, line, column, message) = (&self.path, self.line, self.column, &self.message);
            write!(f, "{path}:{line}:{column}: error: {message}")
        }
    }
}

impl std::error::Error for ConfigError {}

/// The YAML options config documents are read with: YAML 1.2 booleans only, and strings
/// that look like numbers or booleans must be quoted, as the schema (and Kubernetes) say.
pub(crate) fn yaml_options() -> serde_saphyr::Options {
    serde_saphyr::options! {
        strict_booleans: true,
        no_schema: true,
        with_snippet: false,
    }
}

/// Parses and validates one config document. `path` names it in errors.
pub fn parse(text: &str, path: &str) -> Result<MeshJobConfig, ConfigError> {
    let mut config: MeshJobConfig = serde_saphyr::from_str_with_options(text, yaml_options())
        .map_err(|err| from_yaml_error(&err, text, path))?;
    config.origin = path.to_string();
    config.validate()?;
    Ok(config)
}

/// Turns a deserialization error into a [`ConfigError`] with a message for people.
pub(crate) fn from_yaml_error(err: &serde_saphyr::Error, text: &str, path: &str) -> ConfigError {
    use serde_saphyr::Error as E;

    if is_empty(text) {
        return ConfigError::new(
            path,
            0,
            0,
            format!(
                "the config file is empty; it needs at least `apiVersion: {API_VERSION}` \
                 and `kind: {KIND}`"
            ),
        );
    }
    let (line, column) = err.location().map_or((0, 0), |at| {
        let n = |v: u64| usize::try_from(v).unwrap_or(0);
        (n(at.line()), n(at.column()))
    });
    let err = match err.without_snippet() {
        E::AliasError { error, .. } => error.as_ref(),
        other => other,
    };
    // Errors raised by serde for a field's value point at the field's key; point at the
    // value instead when it is on the same line.
    let column = match err {
        E::SerdeInvalidType { .. } | E::SerdeInvalidValue { .. } => {
            value_after_key(text, line, column).unwrap_or(column)
        }
        _ => column,
    };
    let message = match err {
        E::SerdeUnknownField {
            field, expected, ..
        } => unknown_key_message(field, expected),
        E::SerdeUnknownVariant { variant, .. } => match unknown_value_field(err) {
            Some((key, want)) => {
                format!("unsupported `{key}: {variant}`; a meshjob config has `{key}: {want}`")
            }
            None => user_message(err),
        },
        E::SerdeMissingField { field, .. } => match *field {
            "apiVersion" => format!("missing `apiVersion: {API_VERSION}`"),
            "kind" => format!("missing `kind: {KIND}`"),
            other => format!("missing `{other}`"),
        },
        E::MultipleDocuments { .. } => {
            "a config file holds one YAML document, but a second one starts here".to_string()
        }
        E::InvalidUtf8Input => "the config file is not valid UTF-8".to_string(),
        E::QuotingRequired { .. } => {
            // serde-saphyr's wording names the value in brackets; ours names the fix.
            let found = scalar_at(text, line, column);
            format!("`{found}` is not a string here; quote it (\"{found}\") if a string is meant")
        }
        E::Unexpected { expected, .. } => match *expected {
            "mapping start" => "expected a mapping (`key: value` entries) here".to_string(),
            "sequence start" => "expected a list here, such as [/bin/sh, -c]".to_string(),
            "string scalar" => "expected a single string here, not a list or a mapping".to_string(),
            other => format!("expected {other} here"),
        },
        _ => user_message(err),
    };
    ConfigError::new(path, line, column, message)
}

/// True when the text holds no YAML document: nothing, blanks, comments or bare markers.
fn is_empty(text: &str) -> bool {
    serde_saphyr::from_str_multiple::<serde::de::IgnoredAny, Vec<_>>(text)
        .is_ok_and(|docs| docs.is_empty())
}

/// serde-saphyr's user-facing text, with our wording for the types meshjob uses.
fn user_message(err: &serde_saphyr::Error) -> String {
    use serde_saphyr::MessageFormatter;
    let text = serde_saphyr::UserMessageFormatter.format_message(err);
    // The text may quote the input; keep control characters out of the terminal.
    let text: String = text
        .chars()
        .map(|c| match c.is_control() {
            true => c.escape_debug().to_string(),
            false => c.to_string(),
        })
        .collect();
    text.replace(
        "expected a boolean",
        "expected an unquoted `true` or `false`",
    )
    .replace("expected u32", "expected an unquoted whole number")
}

/// `apiVersion`/`kind` are enums of one value each; tell which one the error is about.
fn unknown_value_field(err: &serde_saphyr::Error) -> Option<(&'static str, &'static str)> {
    let serde_saphyr::Error::SerdeUnknownVariant { expected, .. } = err else {
        return None;
    };
    if expected.contains(&API_VERSION) {
        Some(("apiVersion", API_VERSION))
    } else if expected.contains(&KIND) {
        Some(("kind", KIND))
    } else {
        None
    }
}

/// The plain scalar starting at `line`:`column` (1-based, characters), up to the end of the
/// line, a comment or a flow indicator.
fn scalar_at(text: &str, line: usize, column: usize) -> String {
    let Some(row) = text.lines().nth(line.saturating_sub(1)) else {
        return String::new();
    };
    let rest: String = row.chars().skip(column.saturating_sub(1)).collect();
    let end = rest
        .char_indices()
        .find(|&(i, c)| matches!(c, ',' | ']' | '}') || (c == '#' && rest[..i].ends_with(' ')))
        .map_or(rest.len(), |(i, _)| i);
    rest[..end].trim_end().to_string()
}

/// The column of the value after the `key:` that starts at `line`:`column`, when the value
/// is on the same line.
fn value_after_key(text: &str, line: usize, column: usize) -> Option<usize> {
    let row = text.lines().nth(line.checked_sub(1)?)?;
    let chars: Vec<char> = row.chars().collect();
    let mut at = column.checked_sub(1)?;
    while at < chars.len() && !matches!(chars[at], ':' | ' ' | '\t' | '"' | '\'' | '{' | '[') {
        at += 1;
    }
    while chars.get(at) == Some(&' ') {
        at += 1;
    }
    if chars.get(at) != Some(&':') {
        return None;
    }
    at += 1;
    while chars.get(at) == Some(&' ') {
        at += 1;
    }
    match chars.get(at) {
        Some('#') | None => None,
        Some(_) => Some(at + 1),
    }
}

/// "unknown key `drainDuraton` ...; did you mean `drainDuration`?"
fn unknown_key_message(key: &str, expected: &[&str]) -> String {
    let at_top = expected.contains(&"apiVersion");
    let place = if at_top {
        "at the top level"
    } else if expected.contains(&"quitUrl") {
        "in `spec`"
    } else if expected.contains(&"annotations") {
        "in `metadata`"
    } else {
        "here"
    };
    let mut message = format!("unknown key `{key}` {place}");
    let spec_keys = if at_top {
        super::spec_keys()
    } else {
        Vec::new()
    };
    if let Some(best) = closest(key, expected.iter().copied()) {
        message.push_str(&format!("; did you mean `{best}`?"));
    } else if let Some(best) = closest(key, spec_keys.iter().map(String::as_str)) {
        message.push_str(&format!(
            "; settings go under `spec:`; did you mean `spec.{best}`?"
        ));
    } else {
        message.push_str(&format!("; expected one of {}", quoted_list(expected)));
    }
    message
}

fn quoted_list(keys: &[&str]) -> String {
    let keys: Vec<String> = keys.iter().map(|k| format!("`{k}`")).collect();
    keys.join(", ")
}

/// The candidate closest to `key`, ignoring case, `_` and `-`, if it is close enough to be
/// a likely typo: at most a third of the key's length in edits.
pub(crate) fn closest<'a>(key: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let norm = |s: &str| -> Vec<char> {
        s.chars()
            .filter(|c| !matches!(c, '_' | '-'))
            .flat_map(char::to_lowercase)
            .collect()
    };
    let key_n = norm(key);
    let limit = (key_n.len() / 3).max(1);
    candidates
        .map(|c| (edit_distance(&key_n, &norm(c)), c))
        .filter(|&(d, _)| d <= limit)
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

/// Levenshtein distance, with a transposition of neighbours counting as one edit.
fn edit_distance(a: &[char], b: &[char]) -> usize {
    let mut rows = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in rows[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (rows[i - 1][j] + 1)
                .min(rows[i][j - 1] + 1)
                .min(rows[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = best;
        }
    }
    rows[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dist(a: &str, b: &str) -> usize {
        let v = |s: &str| s.chars().collect::<Vec<_>>();
        edit_distance(&v(a), &v(b))
    }

    #[test]
    fn edit_distances() {
        assert_eq!(dist("", ""), 0);
        assert_eq!(dist("abc", ""), 3);
        assert_eq!(dist("kitten", "sitting"), 3);
        assert_eq!(dist("drainDuraton", "drainDuration"), 1);
        assert_eq!(dist("fro", "for"), 1);
    }

    #[test]
    fn suggestions() {
        let spec = ["quitUrl", "drainDuration", "force", "entrypoints"];
        let pick = |k| closest(k, spec.iter().copied());
        assert_eq!(pick("drainDuraton"), Some("drainDuration"));
        assert_eq!(pick("DRAIN_DURATION"), Some("drainDuration"));
        assert_eq!(pick("quit-url"), Some("quitUrl"));
        assert_eq!(pick("quitURL"), Some("quitUrl"));
        assert_eq!(pick("entrypoint"), Some("entrypoints"));
        assert_eq!(pick("frce"), Some("force"));
        assert_eq!(pick("timeout"), None);
        assert_eq!(pick("x"), None);
    }

    #[test]
    fn scalars_in_text() {
        let text = "a: 1\nb: [x, 10]\nc: yes # no\n";
        assert_eq!(scalar_at(text, 1, 4), "1");
        assert_eq!(scalar_at(text, 2, 8), "10");
        assert_eq!(scalar_at(text, 3, 4), "yes");
        assert_eq!(scalar_at(text, 9, 1), "");
    }

    #[test]
    fn values_after_keys() {
        let text = "spec:\n  force: \"yes\"\n  wait:   # none\n  a: {b: 1}\n";
        assert_eq!(value_after_key(text, 2, 3), Some(10));
        assert_eq!(value_after_key(text, 3, 3), None);
        assert_eq!(value_after_key(text, 1, 1), None);
        assert_eq!(value_after_key(text, 4, 7), Some(10));
        assert_eq!(value_after_key(text, 7, 1), None);
    }

    #[test]
    fn display_with_and_without_position() {
        let e = ConfigError::new("a.yaml", 3, 5, "bad");
        assert_eq!(e.to_string(), "a.yaml:3:5: error: bad");
        let e = ConfigError::new("a.yaml", 0, 0, "unreadable");
        assert_eq!(e.to_string(), "a.yaml: error: unreadable");
    }
}
