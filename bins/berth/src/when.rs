//! Instants as people type them (`now`, `+2h`, `tomorrow 09:00`, RFC 3339), read on the client
//! so a typo is named here, not returned as a JSON error about a body the user never wrote.

use chrono::{DateTime, Duration, NaiveDate, NaiveTime, TimeZone as _, Utc};

const EXPECTED: &str = "expected RFC 3339 (2030-01-01T09:00:00Z), `now`, `+DURATION` (+90s, +30m, +2h, +1d, +1w, +1h30m), `today|tomorrow [HH:MM]` or `YYYY-MM-DD [HH:MM]` (UTC)";

/// `text` as an instant, relative forms taken from `now`; the error names the text and the forms.
pub fn parse(text: &str, now: DateTime<Utc>) -> Result<DateTime<Utc>, String> {
    let t = text.trim();
    let fail = || format!("`{text}` is not a time; {EXPECTED}");
    if let Ok(at) = DateTime::parse_from_rfc3339(t) {
        return Ok(at.with_timezone(&Utc));
    }
    if t.eq_ignore_ascii_case("now") {
        return Ok(now);
    }
    if let Some(rest) = t.strip_prefix('+') {
        return duration(rest).map(|d| now + d).ok_or_else(fail);
    }
    let (day, clock) = match t.split_once(char::is_whitespace) {
        Some((d, c)) => (d, Some(c.trim())),
        None => (t, None),
    };
    let date = match day.to_ascii_lowercase().as_str() {
        "today" => now.date_naive(),
        "tomorrow" => now.date_naive().succ_opt().ok_or_else(fail)?,
        _ => NaiveDate::parse_from_str(day, "%Y-%m-%d").map_err(|_| fail())?,
    };
    let time = match clock {
        None => NaiveTime::MIN,
        Some(c) => NaiveTime::parse_from_str(c, "%H:%M")
            .or_else(|_| NaiveTime::parse_from_str(c, "%H:%M:%S"))
            .map_err(|_| fail())?,
    };
    Ok(Utc.from_utc_datetime(&date.and_time(time)))
}

/// `90s`, `30m`, `2h`, `1d`, `1w` and sums of them (`1h30m`).
fn duration(text: &str) -> Option<Duration> {
    let mut total = Duration::zero();
    let mut digits = String::new();
    for c in text.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        let n: i64 = digits.parse().ok()?;
        digits.clear();
        total += match c {
            's' => Duration::try_seconds(n)?,
            'm' => Duration::try_minutes(n)?,
            'h' => Duration::try_hours(n)?,
            'd' => Duration::try_days(n)?,
            'w' => Duration::try_weeks(n)?,
            _ => return None,
        };
    }
    (digits.is_empty() && !text.is_empty()).then_some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn every_form_reads_as_the_instant_it_names() {
        let now = at("2030-03-31T22:15:00Z");
        for (text, want) in [
            ("2030-01-01T09:00:00Z", "2030-01-01T09:00:00Z"),
            ("2030-01-01T10:00:00+01:00", "2030-01-01T09:00:00Z"),
            ("now", "2030-03-31T22:15:00Z"),
            ("+2h", "2030-04-01T00:15:00Z"),
            ("+1h30m", "2030-03-31T23:45:00Z"),
            ("+90s", "2030-03-31T22:16:30Z"),
            ("+1w", "2030-04-07T22:15:00Z"),
            ("tomorrow", "2030-04-01T00:00:00Z"),
            ("tomorrow 09:00", "2030-04-01T09:00:00Z"),
            ("Today 23:30:15", "2030-03-31T23:30:15Z"),
            ("2030-05-02", "2030-05-02T00:00:00Z"),
            ("2030-05-02 07:45", "2030-05-02T07:45:00Z"),
        ] {
            assert_eq!(parse(text, now), Ok(at(want)), "{text}");
        }
    }

    #[test]
    fn a_typo_is_named_with_the_forms_expected() {
        let now = at("2030-03-31T22:15:00Z");
        for text in [
            "tomorow",
            "+2",
            "+2x",
            "+",
            "tomorrow 9am",
            "2030-13-01",
            "2h",
        ] {
            let e = parse(text, now).unwrap_err();
            assert!(
                e.starts_with(&format!("`{text}` is not a time; expected RFC 3339")),
                "{e}"
            );
        }
    }
}
