//! Timestamps as the API writes them, and durations as the report shows them.
//!
//! A `metav1.Time` is written in RFC 3339 at one-second precision, in UTC
//! (kubernetes/kubernetes@07e7e2611b40 `staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/time.go`
//! `MarshalJSON`: `t.UTC().AppendFormat(buf, time.RFC3339)`, `2024-05-01T12:00:00Z`); `--now` and
//! hand-edited dumps may carry fractions or an offset, which are read too.

/// Seconds since the Unix epoch of an RFC 3339 timestamp; `None` when it is not one.
pub(crate) fn parse(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let s = text.get(r)?;
        (!s.is_empty() && s.bytes().all(|c| c.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
    };
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, s) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let mut rest = &text[19..];
    if let Some(frac) = rest.strip_prefix('.') {
        let n = frac.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return None;
        }
        rest = &frac[n..];
    }
    let offset = match rest {
        "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes().first()? {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let r = rest.as_bytes();
            if r.len() != 6 || r[3] != b':' {
                return None;
            }
            let oh: i64 = rest.get(1..3)?.parse().ok()?;
            let om: i64 = rest.get(4..6)?.parse().ok()?;
            sign * (oh * 3600 + om * 60)
        }
    };
    Some(days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + s - offset)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The RFC 3339 form (UTC, whole seconds) of seconds since the epoch.
pub(crate) fn format(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // civil_from_days, the inverse of `days_from_civil`.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// `3d4h`, `2h5m`, `45s`: the two largest units of a duration in seconds.
pub(crate) fn human(secs: i64) -> String {
    let secs = secs.max(0);
    let units = [(86_400, "d"), (3600, "h"), (60, "m"), (1, "s")];
    let mut out = String::new();
    let mut left = secs;
    let mut shown = 0;
    for (size, name) in units {
        let n = left / size;
        if n > 0 || (shown > 0 && shown < 2) {
            if n > 0 {
                out.push_str(&format!("{n}{name}"));
            }
            shown += 1;
            left -= n * size;
        }
        if shown == 2 {
            break;
        }
    }
    if out.is_empty() {
        out.push_str("0s");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_writes_rfc3339() {
        assert_eq!(parse("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse("2024-05-01T12:00:00Z"), Some(1_714_564_800));
        assert_eq!(parse("2024-05-01T14:00:00+02:00"), Some(1_714_564_800));
        assert_eq!(parse("2024-05-01T12:00:00.123456Z"), Some(1_714_564_800));
        assert_eq!(parse("2024-02-29T00:00:00Z"), Some(1_709_164_800));
        for bad in [
            "",
            "2024-05-01",
            "2024-13-01T00:00:00Z",
            "2024-05-01T12:00:00",
            "x",
        ] {
            assert_eq!(parse(bad), None, "{bad}");
        }
        assert_eq!(format(1_714_564_800), "2024-05-01T12:00:00Z");
        assert_eq!(format(1_709_164_800), "2024-02-29T00:00:00Z");
    }

    #[test]
    fn durations() {
        assert_eq!(human(0), "0s");
        assert_eq!(human(45), "45s");
        assert_eq!(human(3600 * 26 + 61), "1d2h");
        assert_eq!(human(3600 * 2 + 5 * 60 + 3), "2h5m");
        assert_eq!(human(86_400 + 5), "1d");
    }
}
