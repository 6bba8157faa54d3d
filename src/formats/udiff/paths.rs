//! Paths in headers: git's `a/`/`b/` sides and quoting, GNU diff's
//! directory names, epoch timestamps for a missing side.

use pest::iterators::Pair;

use super::*;

/// Two different paths that are the same but for their first component,
/// without it (`old/x`, `new/x` is `x`; git's `a/`, `b/` are not this).
pub(super) fn strip_first_components(
    old: &HeaderLine,
    new: &HeaderLine,
) -> Option<(HeaderLine, HeaderLine)> {
    let (Some((Side::Path(a, aspan), al)), Some((Side::Path(b, bspan), bl))) = (old, new) else {
        return None;
    };
    let (a_first, a_rest) = a.split_once('/')?;
    let (b_first, b_rest) = b.split_once('/')?;
    if a == b || a_rest != b_rest || a_rest.is_empty() || (a_first, b_first) == ("a", "b") {
        return None;
    }
    let side = |rest: &str, span: &Span, cut: usize, line: &Span| {
        Some((
            Side::Path(rest.to_string(), Span::new(span.start + cut, span.end)),
            *line,
        ))
    };
    Some((
        side(a_rest, aspan, a_first.len() + 1, al),
        side(b_rest, bspan, b_first.len() + 1, bl),
    ))
}

/// Whether a `---`/`+++` line's timestamp is the Unix epoch, in any time
/// zone (`1970-01-01 00:00:00.000000000 +0000`, `1969-12-31 19:00:00 -0500`).
pub(super) fn has_epoch_time(pair: &Pair<Rule>) -> bool {
    pair.clone()
        .into_inner()
        .flatten()
        .find(|p| p.as_rule() == Rule::timestamp)
        .is_some_and(|t| is_epoch(t.as_str().trim()))
}

pub(super) fn is_epoch(text: &str) -> bool {
    let mut words = text.split_whitespace();
    let (Some(date), Some(time), zone) = (words.next(), words.next(), words.next()) else {
        return false;
    };
    let num = |s: &str| s.parse::<i64>().ok();
    let date: Vec<i64> = date.split('-').filter_map(num).collect();
    let time: Vec<i64> = time
        .split('.')
        .next()
        .unwrap_or("")
        .split(':')
        .filter_map(num)
        .collect();
    let (&[y, mo, d], &[h, mi, sec]) = (&date[..], &time[..]) else {
        return false;
    };
    // Seconds from the epoch, of the local time, then the zone taken off.
    let days = days_from_civil(y, mo, d);
    let local = days * 86_400 + h * 3600 + mi * 60 + sec;
    let offset = match zone {
        Some(z) if z.len() == 5 && (z.starts_with('+') || z.starts_with('-')) => {
            let (hh, mm) = (num(&z[1..3]).unwrap_or(0), num(&z[3..5]).unwrap_or(0));
            let sign = if z.starts_with('-') { -1 } else { 1 };
            sign * (hh * 3600 + mm * 60)
        }
        _ => 0,
    };
    local - offset == 0 && !text.contains(|c: char| c.is_ascii_alphabetic())
}

/// Days from 1970-01-01 to a date of the proleptic Gregorian calendar.
pub(super) fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Strips `a/` and `b/` when every real path of the pair carries its
/// prefix; else, in GNU diff's output (`gnu`), where two different paths
/// are the same but for their first component (`diff -ruN old new`),
/// strips that, as `patch -p1` does.
pub(super) fn strip_prefixes(
    old: HeaderLine,
    new: HeaderLine,
    gnu: bool,
) -> (HeaderLine, HeaderLine) {
    if let Some(stripped) = gnu.then(|| strip_first_components(&old, &new)).flatten() {
        return stripped;
    }
    let has = |side: &HeaderLine, prefix: &str| match side {
        Some((Side::Path(p, _), _)) => p.starts_with(prefix),
        _ => true,
    };
    let real = |side: &HeaderLine| matches!(side, Some((Side::Path(..), _)));
    if !(has(&old, "a/") && has(&new, "b/") && (real(&old) || real(&new))) {
        return (old, new);
    }
    let strip = |side: HeaderLine| {
        side.map(|(s, span)| match s {
            Side::Path(p, ps) => (
                Side::Path(p[2..].to_string(), Span::new(ps.start + 2, ps.end)),
                span,
            ),
            other => (other, span),
        })
    };
    (strip(old), strip(new))
}

/// The path of `diff --git a/P b/P`, when both halves name the same file.
pub(super) fn git_header_path(text: &str) -> Option<String> {
    let text = text.trim_end();
    let rest = text.strip_prefix("a/")?;
    // "P b/P": the two halves have the same length.
    let n = rest.len().checked_sub(3)? / 2;
    let (left, right) = (rest.get(..n)?, rest.get(n..)?);
    (right.strip_prefix(" b/")? == left).then(|| left.to_string())
}

/// The two paths of `diff --git a/OLD b/NEW`, prefixes taken off: split
/// where both halves are equal if they can be, else at the first blank
/// (each side plain without blanks, or C-quoted).
pub(super) fn git_header_sides(text: &str) -> Option<(String, String)> {
    if let Some(p) = git_header_path(text) {
        return Some((p.clone(), p));
    }
    // `git diff --no-prefix`: `diff --git P P`, two equal halves.
    let text = text.trim_end();
    if text.len() % 2 == 1 {
        let mid = text.len() / 2;
        let (left, right) = (text.get(..mid).unwrap_or(""), text.get(mid..).unwrap_or(""));
        if let Some(right) = right.strip_prefix(' ') {
            if left == right && !left.starts_with('"') {
                return Some((left.to_string(), left.to_string()));
            }
        }
    }
    let text = text.trim_end();
    let (a, rest) = quoted_or_word(text)?;
    let (b, tail) = quoted_or_word(rest.strip_prefix(' ')?)?;
    if !tail.is_empty() {
        return None;
    }
    let a = decode_path(a);
    let b = decode_path(b);
    Some((
        a.strip_prefix("a/")?.to_string(),
        b.strip_prefix("b/")?.to_string(),
    ))
}

/// A C-quoted string or a run without blanks at the start of `text`, and the rest.
pub(super) fn quoted_or_word(text: &str) -> Option<(&str, &str)> {
    if let Some(inner) = text.strip_prefix('"') {
        let mut escaped = false;
        for (i, c) in inner.char_indices() {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => return Some(text.split_at(i + 2)),
                _ => {}
            }
        }
        return None;
    }
    let end = text.find(' ').unwrap_or(text.len());
    (end > 0).then(|| text.split_at(end))
}

/// Decodes git's C-style quoting; plain paths lose trailing whitespace.
pub(super) fn decode_path(raw: &str) -> String {
    let Some(inner) = raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')) else {
        return raw.trim_end().to_string();
    };
    let mut bytes = vec![];
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            let mut buf = [0; 4];
            bytes.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            continue;
        }
        match chars.next() {
            Some('n') => bytes.push(b'\n'),
            Some('t') => bytes.push(b'\t'),
            Some('r') => bytes.push(b'\r'),
            Some('a') => bytes.push(7),
            Some('b') => bytes.push(8),
            Some('f') => bytes.push(12),
            Some('v') => bytes.push(11),
            Some(d @ '0'..='7') => {
                let mut value = d as u32 - '0' as u32;
                for _ in 0..2 {
                    if let Some(&next @ '0'..='7') = chars.peek() {
                        value = value * 8 + (next as u32 - '0' as u32);
                        chars.next();
                    }
                }
                bytes.push(value as u8);
            }
            Some(other) => {
                let mut buf = [0; 4];
                bytes.extend_from_slice(other.encode_utf8(&mut buf).as_bytes());
            }
            None => bytes.push(b'\\'),
        }
    }
    crate::lossless::decode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_header_sides_split_asymmetric_and_quoted_headers() {
        assert_eq!(git_header_sides("a/x b/y"), Some(("x".into(), "y".into())));
        assert_eq!(
            git_header_sides("a/my file b/my file"),
            Some(("my file".into(), "my file".into()))
        );
        assert_eq!(
            git_header_sides("\"a/t\\303\\251 x\" \"b/y z\""),
            Some(("t\u{e9} x".into(), "y z".into()))
        );
        assert_eq!(
            git_header_sides("docs/new file.md docs/new file.md"),
            Some(("docs/new file.md".into(), "docs/new file.md".into()))
        );
        assert_eq!(git_header_sides("something"), None);
        // Found by fuzzing: the middle inside a multi-byte character.
        assert_eq!(git_header_sides("a\u{36c6c}bc"), None);
        assert_eq!(git_header_sides("a/x c/y"), None);
        assert_eq!(git_header_sides("a/x b/y extra"), None);
    }

    #[test]
    fn git_header_paths_split_only_when_symmetric() {
        assert_eq!(git_header_path("a/x y b/x y").as_deref(), Some("x y"));
        assert_eq!(
            git_header_path("a/src/lib.rs b/src/lib.rs").as_deref(),
            Some("src/lib.rs")
        );
        assert_eq!(git_header_path("a/old b/new"), None);
        assert_eq!(git_header_path("old new"), None);
    }

    #[test]
    fn epoch_timestamps_in_any_zone() {
        assert!(is_epoch("1970-01-01 00:00:00.000000000 +0000"));
        assert!(is_epoch("1969-12-31 19:00:00.000000000 -0500"));
        assert!(is_epoch("1970-01-01 05:30:00 +0530"));
        assert!(is_epoch("1970-01-01 00:00:00"));
        assert!(!is_epoch("2026-11-23 18:30:00.123456789 +0000"));
        assert!(!is_epoch("1970-01-01 00:00:01 +0000"));
        assert!(!is_epoch("Thu Jan  1 00:00:00 1970"));
        assert!(!is_epoch("garbage"));
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
    }

    #[test]
    fn quoted_paths_are_decoded() {
        assert_eq!(
            decode_path(r#""a/t\303\251st \"q\".txt""#),
            "a/tést \"q\".txt"
        );
        assert_eq!(decode_path("a/plain.txt  "), "a/plain.txt");
    }
}
