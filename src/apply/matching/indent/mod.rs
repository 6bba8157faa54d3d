//! Added lines follow the file's indentation when a match had to ignore
//! leading whitespace, and the patch shows it differed. The old lines and
//! the file's lines they matched give pairs of indentation (patch, file);
//! only where some pair differs is there a mapping: a block shifted, tabs
//! written as spaces, or the reverse. An added line whose indentation is
//! one of the old lines' takes that line's file indentation; any other is
//! placed relative to the least indented old line, converted by the same
//! rule. Lines kept from the file keep the file's own text anyway.
//!
//! `decide.rs` reads the evidence into a rule; this file applies it.
//!
//! An added line has two readings where the mapping moves it: as written,
//! and mapped. The file decides between them only by the lines around the
//! added one (the old lines before and after it in the patch): a reading
//! that gives the indentation one of them has in the file fits its place.
//! Where only the written reading fits (the context was quoted at another
//! depth, the added lines at the file's), the lines are kept as written;
//! where only the mapped one does, they are mapped; where both fit, or the
//! added lines disagree, the patch is refused ([`Undecided`]): never a
//! guess.

mod decide;

use decide::words;
pub(crate) use decide::{file_indents, opens, relaxed, relaxed_by, Outside, Undecided};

use super::text::{FileText, Region};
use crate::apply::output::Builder;
use crate::ir::{Edit, Level, NewLine};
use crate::trim::is_blank;

/// How the patch's indentation becomes the file's, for one placed edit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Indent {
    /// The least indented old line: its indentation in the patch and in
    /// the file.
    patch: String,
    file: String,
    /// Every (patch, file) pair the old lines showed, one for each patch
    /// indentation (the first).
    pairs: Vec<(String, String)>,
    /// Every file indentation a patch indentation met, where the old lines
    /// showed several for one (the patch indents alike what the file does
    /// not).
    several: std::collections::HashMap<String, Vec<String>>,
    convert: Convert,
    /// Whether the rule gives every old line its file indentation; if not,
    /// only the pairs themselves are trusted.
    by_rule: bool,
    /// The lines a new block writes again exactly as old lines (ap's
    /// `content` writes its context so): each takes the file's
    /// indentation of the old line it copies.
    copies: std::collections::HashMap<String, String>,
    /// The added lines stay as written; only the copies are mapped.
    as_written: bool,
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

impl Indent {
    /// Lines written at column 0 that go where the file indents with `file`.
    pub fn from_column_zero(file: &str) -> Indent {
        Indent {
            patch: String::new(),
            file: file.to_string(),
            pairs: vec![],
            several: Default::default(),
            convert: Convert::Same,
            by_rule: true,
            copies: Default::default(),
            as_written: false,
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
        if self.as_written {
            return format!(
                "the added lines already have the file's indentation where they go, and stay as written; the lines the patch writes again became the file's ({} for {})",
                words(file),
                words(patch)
            );
        }
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

    /// Patch indentation `ws` of a line in a run whose first line (patch
    /// indentation `shift.1`) goes to `shift.0`: the same difference, or
    /// the mapping's reading where there is no one difference.
    fn moved_like(&self, ws: &str, shift: (&str, &str)) -> Option<String> {
        let (to, from) = shift;
        if let Some(extra) = ws.strip_prefix(from) {
            return Some(format!("{to}{extra}"));
        }
        self.readings(ws).into_iter().next()
    }

    /// `ws` as the patch writes it, in the file's characters where the two
    /// indent with different ones (tabs for spaces): the same columns, no
    /// shift. The reading "as written".
    fn restyled(&self, ws: &str) -> String {
        let (unit, to_tabs) = match self.convert {
            Convert::Same => return ws.to_string(),
            Convert::SpacesToTabs(unit) => (unit, true),
            Convert::TabsToSpaces(unit) => (unit, false),
        };
        let at: usize = ws.bytes().map(|b| if b == b'\t' { unit } else { 1 }).sum();
        match to_tabs {
            true => format!("{}{}", "\t".repeat(at / unit), " ".repeat(at % unit)),
            false => " ".repeat(at),
        }
    }

    /// Every indentation the mapping may give patch indentation `ws`: the
    /// file indentations the old lines showed for it, else the rule's.
    fn readings(&self, ws: &str) -> Vec<String> {
        if let Some(several) = self.several.get(ws) {
            return several.clone();
        }
        match self.pairs.iter().find(|(p, _)| p == ws) {
            Some((_, f)) => vec![f.clone()],
            None if self.by_rule => self.by_rule(ws).into_iter().collect(),
            None => vec![],
        }
    }

    /// The indentation `line` gets in the file, if the mapping applies to it.
    pub fn map(&self, line: &str) -> Option<String> {
        if let Some(ws) = self.copies.get(line) {
            return Some(ws.clone());
        }
        if self.as_written {
            return None;
        }
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

    /// A line opens a block by its last code, a trailing comment or not;
    /// a comment or a string alone never makes it open one less.
    #[test]
    fn a_block_opens_before_a_trailing_comment() {
        for line in [
            "def f(self):",
            "def f(self):  # why",
            "    if x:\t# why: because",
            "fn f() {  // why",
            "call(  # the arguments",
            "items = [ // first",
            "# a note:",
            "s = \"a #\" + b(",
        ] {
            assert!(opens(line), "{line:?}");
        }
        for line in [
            "return x",
            "return x  # why",
            "x = \"a:\"  # no",
            "url = \"http://host/\"",
            "f(a, b)  // done",
            "total += 1  // counted",
        ] {
            assert!(!opens(line), "{line:?}");
        }
    }
}
