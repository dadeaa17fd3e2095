//! Calendar dates without a date crate, for the places that print one
//! (the system prompt's date, ACP's session times, `uji checkpoints`).

/// Days since 1970-01-01 as (year, month, day) in the proleptic Gregorian
/// calendar (Howard Hinnant's civil-from-days algorithm).
pub fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Milliseconds since the epoch as an RFC 3339 UTC time, to the second.
pub fn rfc3339(ms: u64) -> String {
    let (date, time) = date_and_time(ms);
    format!("{date}T{time}Z")
}

/// Milliseconds since the epoch as `YYYY-MM-DD HH:MM:SS` in UTC, for
/// listings people read.
pub fn utc(ms: u64) -> String {
    let (date, time) = date_and_time(ms);
    format!("{date} {time}")
}

fn date_and_time(ms: u64) -> (String, String) {
    let secs = i64::try_from(ms / 1000).unwrap_or(i64::MAX);
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    let rest = secs.rem_euclid(86_400);
    (
        format!("{y:04}-{m:02}-{d:02}"),
        format!(
            "{:02}:{:02}:{:02}",
            rest / 3600,
            rest % 3600 / 60,
            rest % 60
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_764_547_200_000), "2025-12-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400_000 + 3_661_000), "2000-02-29T01:01:01Z");
        assert_eq!(utc(951_782_400_000 + 3_661_000), "2000-02-29 01:01:01");
    }
}
