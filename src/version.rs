//! `X.Y` versions of Istio and Kubernetes, as given by `--istio-version` and
//! `--kubernetes-version`. Only major and minor decide anything meshjob does.

use std::fmt;

/// The JSON Schema pattern of the forms [`Version::parse`] accepts.
pub(crate) const PATTERN: &str =
    r"^v?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(\.(0|[1-9][0-9]*)([-+][0-9A-Za-z.+-]*)?)?$";

/// A major.minor version. Ordered, so `v >= Version::new(1, 24)` reads as it should.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    pub major: u32,
    pub minor: u32,
}

impl Version {
    pub const fn new(major: u32, minor: u32) -> Self {
        Version { major, minor }
    }

    /// Parses `1.29`, `1.29.3`, `v1.29.3`, and a kubelet's `v1.29.3-gke.1093000` or
    /// `v1.30.2+k3s1`: an optional `v`, then `MAJOR.MINOR`, then optionally `.PATCH` and a
    /// `-` or `+` suffix. Anything else is refused with a message that shows the forms.
    pub fn parse(s: &str) -> Result<Version, String> {
        let bad = || {
            Err(format!(
                "invalid version {s:?}: expected MAJOR.MINOR such as \"1.29\" \
                 (\"1.29.3\" and \"v1.29.3\" are accepted too; the patch is ignored)"
            ))
        };
        let body = s.strip_prefix('v').unwrap_or(s);
        let (core, _) = match body.find(['-', '+']) {
            Some(i) => body.split_at(i),
            None => (body, ""),
        };
        let mut parts = core.split('.');
        let (Some(major), Some(minor)) = (parts.next(), parts.next()) else {
            return bad();
        };
        let patch = parts.next();
        if parts.next().is_some() || core.len() < body.len() && patch.is_none() {
            return bad();
        }
        let num = |p: &str| -> Option<u32> {
            if p.is_empty()
                || !p.bytes().all(|b| b.is_ascii_digit())
                || p.len() > 1 && p.starts_with('0')
            {
                return None;
            }
            p.parse().ok()
        };
        if core.len() < body.len() && body.len() == core.len() + 1 {
            return bad();
        }
        match (num(major), num(minor), patch.map(num)) {
            (Some(major), Some(minor), None | Some(Some(_))) => Ok(Version { major, minor }),
            _ => bad(),
        }
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

#[cfg(test)]
mod tests {
    use super::Version;

    #[test]
    fn accepted_forms() {
        for (s, want) in [
            ("1.29", (1, 29)),
            ("1.29.3", (1, 29)),
            ("v1.33.1", (1, 33)),
            ("v1.29.3-gke.1093000", (1, 29)),
            ("v1.30.2+k3s1", (1, 30)),
            ("1.0", (1, 0)),
            ("1.30", (1, 30)),
        ] {
            assert_eq!(Version::parse(s), Ok(Version::new(want.0, want.1)), "{s}");
        }
    }

    #[test]
    fn refused_forms() {
        for s in [
            "",
            "1",
            "1.",
            ".29",
            "latest",
            "1.29.3.4",
            "1.x",
            "V1.29",
            " 1.29",
            "1.29 ",
            "1.029",
            "1.29-rc.1",
            "+1.29",
            "1.-1",
            "１.29",
            "99999999999.1",
        ] {
            assert!(Version::parse(s).is_err(), "{s:?} was accepted");
        }
    }

    #[test]
    fn ordering_is_numeric() {
        assert!(Version::parse("1.9").unwrap() < Version::parse("1.24").unwrap());
        assert!(Version::parse("1.30").unwrap() > Version::parse("1.3").unwrap());
        assert_eq!(Version::parse("1.24").unwrap().to_string(), "1.24");
    }
}
