//! Lark's spelling of literals and regexes: a quoted string, an escaped
//! character, and the regex for the rest of a line that does not start
//! with a given prefix.

/// A regex for the rest of a line that does not start with `units` (one
/// character class each): it stops short of the prefix or leaves it at a
/// character outside the class.
pub(crate) fn prefix_complement(units: &[String]) -> String {
    let mut inner = String::new();
    for (k, unit) in units.iter().enumerate().rev() {
        let leave = format!("[^{unit}\\n][^\\n]*");
        inner = if k + 1 == units.len() {
            format!("({leave})?")
        } else {
            format!("({leave}|[{unit}]{inner})?")
        };
    }
    inner
}

/// [`prefix_complement`] for a line of at least one character, the first
/// not in `first` (a class disjoint from the prefix's first unit).
pub(crate) fn first_unit_complement(units: &[String], first: &str) -> String {
    let unit = &units[0];
    let leave = format!("[^{unit}{first}\\n][^\\n]*");
    if units.len() == 1 {
        return leave;
    }
    let rest = prefix_complement(&units[1..]);
    format!("({leave}|[{unit}]{rest})")
}

/// A Lark string literal.
pub(crate) fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

pub(crate) fn class_escape_str(s: &str) -> String {
    s.chars().map(regex_escape).collect()
}

/// Escapes one character for use in a Lark `/regex/`, inside or outside a class.
pub(crate) fn regex_escape(c: char) -> String {
    match c {
        '\n' => "\\n".into(),
        '\r' => "\\r".into(),
        '\t' => "\\t".into(),
        '/' => "\\/".into(),
        c if "\\^$.|?*+()[]{}-".contains(c) => format!("\\{c}"),
        c => c.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line not starting with `ab`: empty, or leaving the prefix at its
    /// first character, or `a` and then not `b`.
    #[test]
    fn a_line_not_starting_with_a_prefix() {
        let units = ["a".to_string(), "b".to_string()];
        assert_eq!(
            prefix_complement(&units),
            "([^a\\n][^\\n]*|[a]([^b\\n][^\\n]*)?)?"
        );
        // At least one character, and the first not in `#` either.
        assert_eq!(
            first_unit_complement(&units, "#"),
            "([^a#\\n][^\\n]*|[a]([^b\\n][^\\n]*)?)"
        );
        assert_eq!(first_unit_complement(&units[..1], "#"), "[^a#\\n][^\\n]*");
    }

    #[test]
    fn literals_and_regex_characters_are_escaped() {
        assert_eq!(quote("a\"b\\c\n\r\t"), "\"a\\\"b\\\\c\\n\\r\\t\"");
        assert_eq!(class_escape_str("a-z/"), "a\\-z\\/");
        assert_eq!(regex_escape('^'), "\\^");
        assert_eq!(regex_escape('x'), "x");
    }
}
