//! Civil dates in UTC for `--since` and human-readable timestamps. Pure (proleptic Gregorian
//! calendar, the days-from-civil algorithm of Howard Hinnant's "chrono-Compatible Low-Level
//! Date Algorithms").

/// Days from 1970-01-01 to the given civil date.
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date `(year, month, day)` of a day count from 1970-01-01.
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

fn is_leap(year: i64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap(year) => 29,
        2 => 28,
        _ => 0,
    }
}

/// `YYYY-MM-DDTHH:MM:SSZ` of a Unix timestamp (seconds), UTC.
pub fn format_utc(timestamp: i64) -> String {
    let days = timestamp.div_euclid(86_400);
    let secs = timestamp.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

fn number(s: &str, what: &str) -> Result<i64, String> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("{what} {s:?} is not a number"));
    }
    s.parse::<i64>().map_err(|e| format!("{what} {s:?}: {e}"))
}

/// Parses a `--since` value: Unix seconds (`1714521600`), a UTC date (`2024-05-01`, midnight),
/// or a UTC date and time (`2024-05-01T12:30`, `2024-05-01T12:30:15Z`, a space instead of `T`).
pub fn parse_since(text: &str) -> Result<i64, String> {
    let s = text.trim();
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        return s
            .parse::<i64>()
            .map_err(|e| format!("{s:?} is not a Unix time: {e}"));
    }
    let usage = || {
        format!(
            "{s:?} is not a date: expected YYYY-MM-DD, YYYY-MM-DDTHH:MM[:SS][Z] or Unix seconds"
        )
    };
    let (date, time) = match s.find(['T', 't', ' ']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let parts: Vec<&str> = date.split('-').collect();
    let [y, m, d] = parts.as_slice() else {
        return Err(usage());
    };
    if y.len() != 4 || m.len() != 2 || d.len() != 2 {
        return Err(usage());
    }
    let year = number(y, "year")?;
    let month = u32::try_from(number(m, "month")?).map_err(|_| usage())?;
    let day = u32::try_from(number(d, "day")?).map_err(|_| usage())?;
    if !(1..=12).contains(&month) {
        return Err(format!("{s:?}: month {month} is not 1-12"));
    }
    if day == 0 || day > days_in_month(year, month) {
        return Err(format!("{s:?}: {year:04}-{month:02} has no day {day}"));
    }
    let mut seconds = 0;
    if let Some(time) = time {
        let time = time.strip_suffix(['Z', 'z']).unwrap_or(time);
        let fields: Vec<&str> = time.split(':').collect();
        if !(2..=3).contains(&fields.len()) || fields.iter().any(|f| f.len() != 2) {
            return Err(usage());
        }
        let limits = [(23, "hour"), (59, "minute"), (59, "second")];
        let mut unit = 3600;
        for (field, (max, what)) in fields.iter().zip(limits) {
            let v = number(field, what)?;
            if v > max {
                return Err(format!("{s:?}: {what} {v} is out of range"));
            }
            seconds += v * unit;
            unit /= 60;
        }
    }
    Ok(days_from_civil(year, month, day) * 86_400 + seconds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epoch_and_known_dates() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(parse_since("2024-05-01"), Ok(1_714_521_600));
        assert_eq!(parse_since("2024-05-01T12:30:15Z"), Ok(1_714_566_615));
        assert_eq!(parse_since("2024-05-01 12:30"), Ok(1_714_566_600));
        assert_eq!(parse_since("1714521600"), Ok(1_714_521_600));
        assert_eq!(format_utc(1_714_566_615), "2024-05-01T12:30:15Z");
        assert_eq!(format_utc(-1), "1969-12-31T23:59:59Z");
    }

    #[test]
    fn civil_round_trip_over_four_centuries() {
        for days in (-146_097..2 * 146_097).step_by(7) {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days, "{y}-{m}-{d}");
        }
    }

    #[test]
    fn rejects_impossible_dates_and_junk() {
        for bad in [
            "2023-02-29",
            "2024-13-01",
            "2024-04-31",
            "2024-5-1",
            "yesterday",
            "",
            "2024-05-01T24:00",
            "2024-05-01T12",
            "-5",
        ] {
            assert!(parse_since(bad).is_err(), "{bad:?} should be rejected");
        }
        assert_eq!(parse_since("2024-02-29"), Ok(1_709_164_800));
    }
}
