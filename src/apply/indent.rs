//! Added lines follow the file's indentation when a match had to ignore
//! leading whitespace. The old lines and the file's lines they matched
//! give pairs of indentation (patch, file); from them comes a mapping: a
//! block shifted, tabs written as spaces, or the reverse. An added line
//! whose indentation is one of the old lines' takes that line's file
//! indentation; any other is placed relative to the least indented old
//! line, converted by the same rule. Lines kept from the file keep the
//! file's own text anyway.

use super::output::Builder;
use super::text::{FileText, Region};
use crate::ir::{Edit, Level, NewLine};
use crate::trim::is_blank;

/// How the patch's indentation becomes the file's, for one placed edit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Indent {
    /// The least indented old line: its indentation in the patch and in
    /// the file.
    patch: String,
    file: String,
    /// Every (patch, file) pair the old lines showed.
    pairs: Vec<(String, String)>,
    convert: Convert,
    /// Whether the rule gives every old line its file indentation; if not,
    /// only the pairs themselves are trusted.
    by_rule: bool,
}

/// How indentation beyond (or short of) the least indented line converts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Convert {
    Same,
    /// The patch writes this many spaces for each of the file's tabs.
    SpacesToTabs(usize),
    /// The patch writes a tab for this many of the file's spaces.
    TabsToSpaces(usize),
}

/// The spaces and tabs `s` starts with (counted as bytes: a pattern of
/// chars decoded each one, on every line of every match).
pub fn leading(s: &str) -> &str {
    let n = s.bytes().take_while(|&b| b == b' ' || b == b'\t').count();
    &s[..n]
}

/// The mapping a match at `level` implies, from the non-blank old lines
/// and the non-blank lines of `region` they matched, in order. `None`
/// when the level compared indentation, the edit adds nothing, or nothing
/// differs.
pub fn relaxed(file: &FileText, level: Level, region: Region, edit: &Edit) -> Option<Indent> {
    let mut lines = (region.start..region.end.min(file.len()))
        .map(|i| file.line(i))
        .filter(|l| !is_blank(l));
    relaxed_by(level, edit, |_| lines.next())
}

/// As [`relaxed`], with the file's line for the `k`-th non-blank old line
/// given by `line(k)`, called in order.
pub fn relaxed_by<'f>(
    level: Level,
    edit: &Edit,
    mut line: impl FnMut(usize) -> Option<&'f str>,
) -> Option<Indent> {
    let adds = edit
        .new
        .iter()
        .any(|n| matches!(n, NewLine::Add(l) if !is_blank(l.text)));
    let ignores_indent = matches!(
        level,
        Level::Trimmed | Level::Normalized | Level::BlankLinesIgnored | Level::SoftStart
    );
    if !adds || !ignores_indent {
        return None;
    }
    let mut pairs = vec![];
    for (k, old) in edit.old.iter().filter(|l| !is_blank(l.text)).enumerate() {
        let Some(have) = line(k) else { break };
        // A soft start matched the first line after a prefix: its
        // indentation says nothing.
        if k == 0 && level == Level::SoftStart {
            continue;
        }
        pairs.push((leading(old.text), leading(have)));
    }
    if !level.skips_blank_lines() {
        return Indent::from_pairs(pairs);
    }
    // ap's search ignores indentation by definition, and its values are
    // often copied from the first character of their first line: only the
    // lines after an unindented first line, indented other than the file,
    // and by one rule, say how the patch indents.
    if pairs.first().is_some_and(|(p, _)| p.is_empty()) {
        pairs.remove(0);
    }
    if pairs.iter().all(|(p, _)| p.is_empty()) {
        return None;
    }
    Indent::from_pairs(pairs).filter(|i| i.by_rule)
}

/// Indentation in words: `4 spaces`, `1 tab`, `1 tab and 2 spaces`.
fn words(ws: &str) -> String {
    let tabs = ws.bytes().filter(|&b| b == b'\t').count();
    let spaces = ws.len() - tabs;
    let n = |k: usize, what: &str| format!("{k} {what}{}", if k == 1 { "" } else { "s" });
    match (tabs, spaces) {
        (0, 0) => "no indentation".into(),
        (0, s) => n(s, "space"),
        (t, 0) => n(t, "tab"),
        (t, s) => format!("{} and {}", n(t, "tab"), n(s, "space")),
    }
}

fn only(ws: &str, c: u8) -> bool {
    ws.bytes().all(|b| b == c)
}

impl Indent {
    /// The pairs are borrowed: most matches indent as the patch does, and
    /// are answered before anything is copied.
    fn from_pairs(pairs: Vec<(&str, &str)>) -> Option<Indent> {
        if pairs.iter().all(|(p, f)| p == f) {
            return None;
        }
        let mut pairs: Vec<(String, String)> = pairs
            .into_iter()
            .map(|(p, f)| (p.to_string(), f.to_string()))
            .collect();
        // One file indentation for each patch indentation: the first old
        // line's, where the patch indents lines alike that the file does
        // not (its block was not merely shifted).
        let mut seen = std::collections::HashSet::new();
        pairs.retain(|(p, _)| seen.insert(p.clone()));
        let (patch, file) = pairs.iter().min_by_key(|(p, _)| p.len())?.clone();
        let all_patch = |c| pairs.iter().all(|(p, _)| only(p, c));
        // Tabs, then spaces (that align a continuation line).
        let tabbed = |f: &str| only(f.trim_start_matches('\t'), b' ');
        let kinds = if all_patch(b' ')
            && pairs.iter().all(|(_, f)| tabbed(f))
            && pairs.iter().any(|(_, f)| f.contains('\t'))
        {
            Some(Convert::SpacesToTabs as fn(usize) -> Convert)
        } else if pairs.iter().all(|(p, _)| tabbed(p))
            && pairs.iter().any(|(p, _)| p.contains('\t'))
            && pairs.iter().all(|(_, f)| only(f, b' '))
        {
            Some(Convert::TabsToSpaces as fn(usize) -> Convert)
        } else {
            None
        };
        let mut indent = Indent {
            patch,
            file,
            pairs,
            convert: Convert::Same,
            by_rule: true,
        };
        let fits = |indent: &Indent| {
            indent
                .pairs
                .iter()
                .all(|(p, f)| indent.by_rule(p).as_deref() == Some(f.as_str()))
        };
        // Columns per tab: a common width that gives every old line its
        // file indentation, one that keeps the columns (no shift) first.
        if let Some(kind) = kinds {
            let units = [4, 8, 2, 3];
            let same_columns = |indent: &Indent| {
                let unit = match indent.convert {
                    Convert::SpacesToTabs(u) | Convert::TabsToSpaces(u) => u,
                    Convert::Same => 1,
                };
                let columns = |s: &str| {
                    s.bytes()
                        .map(|b| if b == b'\t' { unit } else { 1 })
                        .sum::<usize>()
                };
                columns(&indent.patch) == columns(&indent.file)
            };
            let mut pick = |keep: bool| {
                units
                    .iter()
                    .find(|&&unit| {
                        indent.convert = kind(unit);
                        fits(&indent) && (!keep || same_columns(&indent))
                    })
                    .copied()
            };
            let unit = pick(true).or_else(|| pick(false)).unwrap_or(4);
            indent.convert = kind(unit);
        }
        indent.by_rule = fits(&indent);
        Some(indent)
    }

    /// Lines written at column 0 that go where the file indents with `file`.
    pub fn from_column_zero(file: &str) -> Indent {
        Indent {
            patch: String::new(),
            file: file.to_string(),
            pairs: vec![],
            convert: Convert::Same,
            by_rule: true,
        }
    }

    /// The file's indentation, in words.
    pub fn file_words(&self) -> String {
        words(&self.file)
    }

    /// The mapping, for a note: the first old line whose indentation
    /// differs.
    pub fn describe(&self) -> String {
        let (patch, file) = self
            .pairs
            .iter()
            .find(|(p, f)| p != f)
            .map_or((&self.patch, &self.file), |(p, f)| (p, f));
        format!(
            "added lines are indented as the file is: the patch's {} became the file's {}",
            words(patch),
            words(file)
        )
    }

    /// The file indentation for patch indentation `ws` by the rule: the
    /// least indented old line's, plus or minus the difference (counted in
    /// columns where one side indents with tabs and the other with spaces).
    fn by_rule(&self, ws: &str) -> Option<String> {
        let (unit, to_tabs) = match self.convert {
            Convert::Same => {
                if let Some(extra) = ws.strip_prefix(self.patch.as_str()) {
                    return Some(format!("{}{extra}", self.file));
                }
                let short = self.patch.strip_prefix(ws)?;
                return self.file.strip_suffix(short).map(str::to_string);
            }
            Convert::SpacesToTabs(unit) => (unit, true),
            Convert::TabsToSpaces(unit) => (unit, false),
        };
        let columns = |s: &str| {
            s.bytes()
                .map(|b| if b == b'\t' { unit } else { 1 })
                .sum::<usize>()
        };
        let at = (columns(ws) + columns(&self.file)).checked_sub(columns(&self.patch))?;
        Some(if to_tabs {
            format!("{}{}", "\t".repeat(at / unit), " ".repeat(at % unit))
        } else {
            " ".repeat(at)
        })
    }

    /// The indentation `line` gets in the file, if the mapping applies to it.
    fn map(&self, line: &str) -> Option<String> {
        let ws = leading(line);
        match self.pairs.iter().find(|(p, _)| p == ws) {
            Some((_, f)) => Some(f.clone()),
            None if self.by_rule => self.by_rule(ws),
            None => None,
        }
    }

    /// `line` with its indentation mapped, when the mapping applies.
    pub fn mapped(&self, line: &str) -> Option<String> {
        if is_blank(line) {
            return None;
        }
        let ws = self.map(line)?;
        Some(format!("{ws}{}", &line[leading(line).len()..]))
    }

    /// Writes `line` with its indentation mapped (unchanged when the
    /// mapping does not apply, or the line is blank).
    pub fn push<'p>(&self, b: &mut Builder<'p, '_>, line: &'p str) {
        let mapped = (!is_blank(line)).then(|| self.map(line)).flatten();
        let Some(ws) = mapped else {
            b.push_text(line);
            return;
        };
        // Indentation is tabs and spaces: written from static runs.
        const TABS: &str = "\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t";
        const SPACES: &str = "                                ";
        let mut chars = ws.as_bytes();
        while let Some(&c) = chars.first() {
            let run = chars.iter().take_while(|&&x| x == c).count();
            let src = if c == b'\t' { TABS } else { SPACES };
            let n = run.min(src.len());
            b.push_text(&src[..n]);
            chars = &chars[n..];
        }
        b.push_text(&line[leading(line).len()..]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(p: &[(&str, &str)]) -> Indent {
        Indent::from_pairs(p.to_vec()).expect("a mapping")
    }

    #[test]
    fn spaces_become_tabs_and_blocks_shift() {
        // The new leading whitespace of each line.
        let map = |p: &[(&str, &str)], line: &str| pairs(p).map(line);
        let four = &[("    ", "\t")][..];
        assert_eq!(map(four, "        x()").as_deref(), Some("\t\t"));
        assert_eq!(map(four, "      x()").as_deref(), Some("\t  "));
        assert_eq!(map(four, "x()").as_deref(), Some(""));
        assert_eq!(map(&[("\t", "  ")], "\t\tx()").as_deref(), Some("    "));
        assert_eq!(
            map(&[("  ", "      ")], "    x()").as_deref(),
            Some("        ")
        );
        assert_eq!(map(&[("", "  ")], "x()").as_deref(), Some("  "));
        let out = "a\n".to_string();
        let mut b = Builder::new(&out);
        pairs(four).push(&mut b, "        x()");
        let text = crate::apply::output::Output::new(out.clone(), b.finish()).to_text();
        assert_eq!(text, "\t\tx()");
    }

    #[test]
    fn the_least_indented_old_line_anchors_the_rule() {
        // The first old line is the deepest: a shallower added line still
        // maps (Python's `_compression.py`, written with spaces for tabs).
        let tabs = pairs(&[("                ", "\t\t\t\t"), ("            ", "\t\t\t")]);
        assert_eq!(tabs.map("            x").as_deref(), Some("\t\t\t"));
        assert_eq!(tabs.map("        x").as_deref(), Some("\t\t"));
        // A block quoted at column 0.
        let shifted = pairs(&[("    ", "                "), ("", "            ")]);
        assert_eq!(shifted.map("  x").as_deref(), Some("              "));
        // No rule fits both pairs: only they are mapped.
        let odd = pairs(&[("  ", "    "), ("    ", "\t\t")]);
        assert_eq!(odd.map("  x").as_deref(), Some("    "));
        assert_eq!(odd.map("      x"), None);
        assert!(Indent::from_pairs(vec![("  ", "  ")]).is_none());
    }
}
