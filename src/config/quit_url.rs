//! The quit URL: the one parser behind the config file, the KRM functionConfig, the
//! `--quit-url` flag, the JSON Schema's pattern and the wrapper.
//!
//! The URL is baked into a shell script that talks plain HTTP with the tools a container
//! has, so it is held to what that script can use safely: `http://HOST[:PORT]/PATH`, HOST a
//! DNS name or an IPv4 address (the wrapper cannot reach a bracketed IPv6 literal), PORT
//! 1-65535 (default 80), and a PATH of characters that need no quoting care, with
//! well-formed `%XX` escapes. No user info, query or fragment: pilot-agent's
//! `/quitquitquit` takes none.

/// A parsed quit URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuitUrl {
    pub host: String,
    pub port: u16,
    pub path: String,
}

impl std::fmt::Display for QuitUrl {
    /// The URL, with the port only when it is not HTTP's default.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.port {
            80 => write!(f, "http://{}{}", self.host, self.path),
            port => write!(f, "http://{}:{port}{}", self.host, self.path),
        }
    }
}

const EXAMPLE: &str = "such as http://localhost:15020/quitquitquit";
/// Path characters besides letters and digits; the schema's pattern lists the same.
pub(crate) const PATH_CHARS: &str = "-._~/%:@+,;=";
/// The schema's pattern for `quitUrl`: the set [`parse`] accepts.
pub(crate) const PATTERN: &str = r"^http://[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:[0-9]{1,5})?/([A-Za-z0-9._~/:@+,;=-]|%[0-9A-Fa-f]{2})+$";

/// Parses and checks a quit URL; the error says what is wrong and what to write.
pub fn parse(url: &str) -> Result<QuitUrl, String> {
    let Some(rest) = url.strip_prefix("http://") else {
        return Err(if url.starts_with("https://") {
            format!(
                "{url:?} uses https, but pilot-agent's status port serves plain http; write http://, {EXAMPLE}"
            )
        } else {
            format!("{url:?} must be http://HOST[:PORT]/PATH, {EXAMPLE}")
        });
    };
    let Some(slash) = rest.find('/') else {
        return Err(format!("{url:?} has no path; add one, {EXAMPLE}"));
    };
    let (authority, path) = rest.split_at(slash);
    if authority.starts_with('[') {
        return Err(format!(
            "{url:?} has an IPv6 host, which the wrapper cannot reach; use localhost or \
             127.0.0.1, {EXAMPLE}"
        ));
    }
    let (host, port) = match authority.split_once(':') {
        Some((host, digits)) => (host, Some(digits)),
        None => (authority, None),
    };
    let host_ok = host
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
        && host.starts_with(|c: char| c.is_ascii_alphanumeric())
        && host.ends_with(|c: char| c.is_ascii_alphanumeric());
    if !host_ok {
        return Err(format!("{url:?} has an invalid host {host:?}, {EXAMPLE}"));
    }
    let port = match port {
        None => 80,
        Some(digits) => match digits.parse::<u16>() {
            Ok(p) if p > 0 && digits.len() <= 5 && digits.bytes().all(|b| b.is_ascii_digit()) => p,
            _ => {
                return Err(format!(
                    "{url:?} has an invalid port {digits:?}; use 1-65535"
                ));
            }
        },
    };
    if path.len() < 2 {
        return Err(format!("{url:?} has an empty path, {EXAMPLE}"));
    }
    if let Some(bad) = path
        .chars()
        .find(|c| !c.is_ascii_alphanumeric() && !PATH_CHARS.contains(*c))
    {
        return Err(format!(
            "{url:?} has {bad:?} in its path; only letters, digits and {PATH_CHARS} are allowed"
        ));
    }
    let bytes = path.as_bytes();
    for (i, _) in path.match_indices('%') {
        if !bytes
            .get(i + 1..i + 3)
            .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit))
        {
            return Err(format!(
                "{url:?} has a '%' not followed by two hex digits in its path"
            ));
        }
    }
    Ok(QuitUrl {
        host: host.to_string(),
        port,
        path: path.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts() {
        let ok = |url: &str, host: &str, port: u16, path: &str| {
            let want = QuitUrl {
                host: host.into(),
                port,
                path: path.into(),
            };
            assert_eq!(parse(url), Ok(want), "{url}");
        };
        ok(
            "http://localhost:15020/quitquitquit",
            "localhost",
            15020,
            "/quitquitquit",
        );
        ok(
            "http://127.0.0.1:15000/quitquitquit",
            "127.0.0.1",
            15000,
            "/quitquitquit",
        );
        ok("http://localhost/quit", "localhost", 80, "/quit");
        ok("http://localhost:65535/q", "localhost", 65535, "/q");
        ok(
            "http://my-host.local:1/a/b_c~d%20e",
            "my-host.local",
            1,
            "/a/b_c~d%20e",
        );
    }

    #[test]
    fn refuses_with_a_reason() {
        let err = |url: &str, needle: &str| match parse(url) {
            Ok(e) => panic!("{url} parsed as {e:?}"),
            Err(msg) => assert!(msg.contains(needle), "{url}: {msg:?} lacks {needle:?}"),
        };
        err("", "must be http://");
        err("localhost:15020/quitquitquit", "must be http://");
        err("HTTP://localhost/quit", "must be http://");
        err("https://localhost:15020/quitquitquit", "uses https");
        err("ftp://localhost/", "must be http://");
        err("http://localhost:15020", "no path");
        err("http://localhost?x=1", "no path");
        err("http://localhost:15020/", "empty path");
        err("http://:15020/q", "invalid host");
        err("http:///q", "invalid host");
        err("http://-host/q", "invalid host");
        err("http://local_host/q", "invalid host");
        err("http://user@localhost/q", "invalid host");
        err("http://[::1]:15020/q", "IPv6");
        err("http://[]/q", "IPv6");
        err("http://localhost:/q", "port \"\"");
        err("http://localhost:0/q", "port \"0\"");
        err("http://localhost:65536/q", "port \"65536\"");
        err("http://localhost:x1/q", "port \"x1\"");
        err("http://localhost:+80/q", "port \"+80\"");
        err("http://localhost/a b", "' ' in its path");
        err("http://localhost/a'b", "'\\'' in its path");
        err("http://localhost/a\nb", "'\\n' in its path");
        err("http://localhost/a`b`", "'`' in its path");
        err("http://localhost/$(reboot)", "'$' in its path");
        err("http://localhost/quit?now=1", "'?' in its path");
        err("http://localhost/a#b", "'#' in its path");
        err("http://localhost/a%zz", "two hex digits");
        err("http://localhost/a%2", "two hex digits");
    }
}
