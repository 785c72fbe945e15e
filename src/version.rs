//! Versions: `X.Y` of Istio and Kubernetes ([`Version`]), a mesh release as its tags name
//! it ([`Release`]: a stable `X.Y` or a Linkerd edge release), and where a version came from
//! ([`VersionOrigin`]). Only major and minor of a stable release decide anything meshjob does; an
//! edge release is its own kind of version, and each mesh's facts decide what it contains.

mod origin;
mod release;

pub(crate) use origin::Sourced;
pub use origin::{Given, ManifestPlace, VersionOrigin};

pub(crate) use release::Edge;
pub use release::Release;

use std::fmt;

/// The JSON Schema pattern of the forms [`Version::parse`] accepts.
pub(crate) const PATTERN: &str =
    r"^v?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(\.(0|[1-9][0-9]*)([-+][0-9A-Za-z.+-]*)?)?$";
/// The JSON Schema pattern of a Linkerd version: [`PATTERN`], or an edge release.
pub(crate) const LINKERD_PATTERN: &str = r"^(v?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(\.(0|[1-9][0-9]*)([-+][0-9A-Za-z.+-]*)?)?|edge-[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.+-]*)?)$";

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

/// What is known of the oldest kubelet of a cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kubelets {
    /// The oldest kubelet is this one (a flag, a node list, the node pools).
    Oldest(Version),
    /// Only a control-plane version is known: the kubelets are at least this old, by the
    /// version skew policy ([`Kubelets::of_control_plane`]).
    AtLeast(Version),
}

impl Kubelets {
    /// The oldest kubelet can be no older than this.
    pub(crate) fn at_least(self) -> Version {
        match self {
            Kubelets::Oldest(v) | Kubelets::AtLeast(v) => v,
        }
    }

    /// What a control plane of version `cp` says of its kubelets. Kubernetes' version skew
    /// policy (kubernetes/website `content/en/releases/version-skew-policy.md`, "kubelet"):
    /// "kubelet must not be newer than kube-apiserver"; it "may be up to three minor versions
    /// older than kube-apiserver (kubelet < 1.25 may only be up to two minor versions older
    /// than kube-apiserver)". So a 1.32 control plane has kubelets of 1.29 or newer, and a
    /// 1.27 one of 1.25 or newer.
    pub(crate) fn of_control_plane(cp: Version) -> Kubelets {
        let minus = |n: u32| Version::new(cp.major, cp.minor.saturating_sub(n));
        let three = minus(3);
        Kubelets::AtLeast(if three >= Version::new(1, 25) {
            three
        } else {
            minus(2)
        })
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// A release with its patch number, `MAJOR.MINOR.PATCH`, for the injectors whose first
/// release with a feature is a patch release (consul-k8s 1.7.5). A missing patch reads as 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Semver(pub [u32; 3]);

impl Semver {
    /// Parses `1.18`, `1.18.3`, `v1.18.3`, and a suffix after `-` or `+` (ignored, as
    /// [`Version::parse`] does).
    pub fn parse(s: &str) -> Result<Semver, String> {
        let v = Version::parse(s)?;
        let body = s.strip_prefix('v').unwrap_or(s);
        let core = body.split(['-', '+']).next().unwrap_or_default();
        let patch = core.split('.').nth(2).map_or(Ok(0), str::parse);
        let patch =
            patch.map_err(|_| format!("invalid version {s:?}: the patch is not a number"))?;
        Ok(Semver([v.major, v.minor, patch]))
    }

    pub const fn new(major: u32, minor: u32, patch: u32) -> Semver {
        Semver([major, minor, patch])
    }

    /// Whether this release is at least the first of its line among `firsts` (each the
    /// first release of a feature on one major.minor line), or newer than every line.
    pub fn at_least_any(self, firsts: &[Semver]) -> bool {
        let [ma, mi, _] = self.0;
        match firsts.iter().find(|f| f.0[0] == ma && f.0[1] == mi) {
            Some(f) => self >= *f,
            None => firsts.iter().all(|f| self > *f),
        }
    }
}

impl fmt::Display for Semver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [a, b, c] = self.0;
        write!(f, "{a}.{b}.{c}")
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
    fn skew_policy_bounds_the_kubelets() {
        use super::Kubelets;
        let cp = |m| Kubelets::of_control_plane(Version::new(1, m)).at_least();
        assert_eq!(cp(32), Version::new(1, 29));
        assert_eq!(cp(28), Version::new(1, 25));
        assert_eq!(cp(27), Version::new(1, 25));
        assert_eq!(cp(26), Version::new(1, 24));
    }

    #[test]
    fn ordering_is_numeric() {
        assert!(Version::parse("1.9").unwrap() < Version::parse("1.24").unwrap());
        assert!(Version::parse("1.30").unwrap() > Version::parse("1.3").unwrap());
        assert_eq!(Version::parse("1.24").unwrap().to_string(), "1.24");
    }
}
