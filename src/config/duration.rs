//! Go durations (`time.ParseDuration`), which is how Istio reads the
//! `google.protobuf.Duration` fields of a ProxyConfig from YAML (istio/api
//! `mesh/v1alpha1/proxy.proto`, `termination_drain_duration`), and the typed drain duration of
//! the settings.

use std::fmt;

/// Validates a duration the way Go's `time.ParseDuration` does, which is how Istio reads
/// `google.protobuf.Duration` fields from YAML: `300ms`, `5s`, `1m30s`, `-1.5h`, `0`.
/// Returns the duration in nanoseconds (signed), or a message naming the accepted forms.
pub(crate) fn parse_go_duration(s: &str) -> Result<i128, String> {
    const HINT: &str = "expected a Go duration such as \"5s\", \"500ms\" or \"1m30s\" \
                        (units: ns, us, ms, s, m, h; no spaces)";
    let err = |why: &str| Err(format!("invalid duration {s:?}: {why}; {HINT}"));
    let (neg, mut rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if rest == "0" {
        return Ok(0);
    }
    if rest.is_empty() {
        return err("empty");
    }
    let mut total: i128 = 0;
    while !rest.is_empty() {
        let int_len = rest.bytes().take_while(u8::is_ascii_digit).count();
        let (int_part, after) = rest.split_at(int_len);
        let (frac_part, after) = match after.strip_prefix('.') {
            Some(a) => {
                let n = a.bytes().take_while(u8::is_ascii_digit).count();
                a.split_at(n)
            }
            None => ("", after),
        };
        if int_part.is_empty() && frac_part.is_empty() {
            return err("a number must come before each unit");
        }
        let unit_len = after
            .bytes()
            .take_while(|b| !b.is_ascii_digit() && *b != b'.')
            .count();
        let (unit, after) = after.split_at(unit_len);
        let scale: i128 = match unit {
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            "" => return err("missing unit"),
            _ => return err(&format!("unknown unit {unit:?}")),
        };
        let int: i128 = if int_part.is_empty() {
            0
        } else {
            match int_part.parse::<i128>() {
                Ok(v) if v <= i128::from(i64::MAX) => v,
                _ => return err("out of range"),
            }
        };
        let mut frac_ns: i128 = 0;
        let mut div: i128 = 1;
        for d in frac_part.bytes().take(18) {
            frac_ns = frac_ns * 10 + i128::from(d - b'0');
            div *= 10;
        }
        total += int * scale + frac_ns * scale / div;
        if total > i128::from(i64::MAX) {
            return err("out of range");
        }
        rest = after;
    }
    Ok(if neg { -total } else { total })
}

/// A drain duration, checked once where it is read (config file, functionConfig, flag):
/// a valid Go duration that is not negative, kept as written and as nanoseconds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GoDuration {
    text: String,
    nanos: i128,
}

impl GoDuration {
    /// `terminationDrainDuration`'s default (ProxyConfig field 29: 5s; istio/api `mesh/v1alpha1/proxy.proto`).
    pub fn default_drain() -> GoDuration {
        GoDuration {
            text: "5s".to_string(),
            nanos: 5_000_000_000,
        }
    }

    /// Parses a drain duration: a valid Go duration that is not negative.
    pub fn parse_drain(s: &str) -> Result<GoDuration, String> {
        match parse_go_duration(s)? {
            n if n < 0 => Err(format!(
                "invalid duration {s:?}: must not be negative; expected a Go duration such as \"5s\""
            )),
            nanos => Ok(GoDuration {
                text: s.to_string(),
                nanos,
            }),
        }
    }

    /// The duration as it was written (what meshjob writes into manifests).
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether `text` is a Go duration of the same length (`5s` and `5000ms` are).
    pub fn same_as(&self, text: &str) -> bool {
        parse_go_duration(text).is_ok_and(|n| n == self.nanos)
    }

    pub fn nanos(&self) -> i128 {
        self.nanos
    }
}

impl fmt::Display for GoDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_durations() {
        assert_eq!(parse_go_duration("5s"), Ok(5_000_000_000));
        assert_eq!(parse_go_duration("500ms"), Ok(500_000_000));
        assert_eq!(parse_go_duration("1m30s"), Ok(90_000_000_000));
        assert_eq!(parse_go_duration("1.5h"), Ok(5_400_000_000_000));
        assert_eq!(parse_go_duration(".5s"), Ok(500_000_000));
        assert_eq!(parse_go_duration("0"), Ok(0));
        assert_eq!(parse_go_duration("-1s"), Ok(-1_000_000_000));
        for bad in ["", "5", "5 s", "s", "1x", "1.s5", "--1s", " 5s", "5s "] {
            assert!(
                parse_go_duration(bad).is_err(),
                "{bad:?} should be rejected"
            );
        }
        assert!(GoDuration::parse_drain("-1s").is_err());
        assert!(GoDuration::parse_drain("30s").is_ok());
        assert!(GoDuration::parse_drain("30s").unwrap().same_as("30000ms"));
    }
}
