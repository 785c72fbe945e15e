//! How values are written into the script, and read back out of it.

/// Quotes `value` for sh, so that the text holds neither `$(` nor `$$`: every `$` ends a
/// single-quoted piece (`'a$''(b'` is the word `a$(b`).
///
/// # Panics
/// If `value` has a control character, which a YAML block scalar cannot hold.
pub(super) fn sh_quote(value: &str) -> String {
    assert!(
        !value.chars().any(char::is_control),
        "meshjob wrapper: a baked-in value has a control character: {value:?}"
    );
    let mut out = String::from("'");
    for c in value.chars() {
        match c {
            '\'' => out.push_str("'\\''"),
            '$' => out.push_str("$''"),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// `value` as one sh word: as it is when it needs no quotes, else [`sh_quote`]d.
pub(super) fn sh_word(value: &str) -> String {
    let plain = !value.is_empty()
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._/:@%+,=".contains(&b));
    if plain {
        value.to_string()
    } else {
        sh_quote(value)
    }
}

/// The value of a word written by [`sh_word`] or [`sh_quote`]; None for any other text.
pub(super) fn sh_unquote(word: &str) -> Option<String> {
    // Neither writes a control character (a hand-edited script may hold one).
    if word.chars().any(char::is_control) {
        return None;
    }
    let Some(inner) = word.strip_prefix('\'') else {
        return (sh_word(word) == word).then(|| word.to_string());
    };
    let inner = inner.strip_suffix('\'')?;
    let value = inner.replace("'\\''", "'").replace("$''", "$");
    (sh_quote(&value) == word).then_some(value)
}

/// A container name as a file name: letters, digits, '.' and '-' stay, any other byte
/// becomes `_xx` (hex). The mapping is one-to-one, and every wrapper uses the same one.
/// Kubernetes container names (DNS labels) come out unchanged.
pub(super) fn done_name(name: &str) -> String {
    if name.is_empty() {
        // Not a valid container name; `_` alone is never produced below.
        return "_".to_string();
    }
    let mut out = String::new();
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() || b == b'.' || b == b'-' {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("_{b:02x}"));
        }
    }
    out
}

/// The name [`done_name`] turned into `file`, if it did.
pub(super) fn undo_done_name(file: &str) -> Option<String> {
    if file == "_" {
        return Some(String::new());
    }
    let bytes = file.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'_' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    let name = String::from_utf8(out).ok()?;
    (done_name(&name) == file).then_some(name)
}

/// The names in a list of words written by [`wrap_words`] from [`done_name`]s.
pub(super) fn done_names(list: &str) -> Option<Vec<String>> {
    list.split([' ', '\\', '\n'])
        .filter(|w| !w.is_empty())
        .map(undo_done_name)
        .collect()
}

/// Joins words with spaces, continuing the line with `\` before it gets too long; the first
/// line already holds `first_len` characters.
pub(super) fn wrap_words(words: &[String], first_len: usize) -> String {
    let mut out = String::new();
    let mut line_len = first_len;
    for (i, w) in words.iter().enumerate() {
        if i > 0 {
            if line_len + 1 + w.len() > 90 {
                out.push_str(" \\\n  ");
                line_len = 2;
            } else {
                out.push(' ');
                line_len += 1;
            }
        }
        out.push_str(w);
        line_len += w.len();
    }
    out
}

/// The text between the first `start` in `s` and the `end` after it.
pub(super) fn between<'s>(s: &'s str, start: &str, end: &str) -> Option<&'s str> {
    let from = s.find(start)? + start.len();
    let len = s[from..].find(end)?;
    Some(&s[from..from + len])
}

/// The words of a list written by [`wrap_words`] from [`sh_word`]s, as they are written
/// (quoted); None when a quote is left open.
pub(super) fn split_words(list: &str) -> Option<Vec<String>> {
    let (mut words, mut word, mut quoted) = (Vec::new(), String::new(), false);
    let mut chars = list.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                quoted = !quoted;
                word.push(c);
            }
            '\\' if !quoted => match chars.next()? {
                '\n' if !word.is_empty() => words.push(std::mem::take(&mut word)),
                '\n' => {}
                n => {
                    word.push(c);
                    word.push(n);
                }
            },
            ' ' | '\n' if !quoted => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            c => word.push(c),
        }
    }
    if quoted {
        return None;
    }
    if !word.is_empty() {
        words.push(word);
    }
    Some(words)
}
