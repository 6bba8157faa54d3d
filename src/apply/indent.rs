//! Added lines follow the file's indentation when a match had to ignore
//! leading whitespace: the difference between the patch's first old line
//! and the file's line it matched is a mapping (block re-indented, tabs
//! written as spaces, or the reverse), applied to every added line whose
//! indentation starts with the patch's. Lines kept from the file keep the
//! file's own text anyway.

use super::output::Builder;
use super::text::{FileText, Region};
use crate::ir::{Edit, Level, NewLine};

/// The patch's indentation and the file's, for one placed edit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Indent {
    patch: String,
    file: String,
}

pub fn leading(s: &str) -> &str {
    &s[..s.len() - s.trim_start_matches([' ', '\t']).len()]
}

/// The mapping a match at `level` implies: from the first non-blank old
/// line that the file indents otherwise. `None` when the level compared
/// indentation, or nothing differs.
pub fn relaxed(file: &FileText, level: Level, region: Region, edit: &Edit) -> Option<Indent> {
    relaxed_by(level, edit, |j| {
        let at = region.start + j;
        (at < region.end).then(|| file.line(at))
    })
}

/// As [`relaxed`], with the file's line for old line `j` given by `line`.
pub fn relaxed_by<'f>(
    level: Level,
    edit: &Edit,
    line: impl Fn(usize) -> Option<&'f str>,
) -> Option<Indent> {
    let adds = edit
        .new
        .iter()
        .any(|n| matches!(n, NewLine::Add(l) if !l.text.trim().is_empty()));
    if !adds || !matches!(level, Level::Trimmed | Level::Normalized) {
        return None;
    }
    edit.old.iter().enumerate().find_map(|(j, l)| {
        let have = line(j)?;
        if l.text.trim().is_empty() {
            return None;
        }
        let (patch, have) = (leading(&l.text), leading(have));
        (patch != have).then(|| Indent {
            patch: patch.to_string(),
            file: have.to_string(),
        })
    })
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

impl Indent {
    /// Lines written at column 0 that go where the file indents with `file`.
    pub fn from_column_zero(file: &str) -> Indent {
        Indent {
            patch: String::new(),
            file: file.to_string(),
        }
    }

    /// The file's indentation, in words.
    pub fn file_words(&self) -> String {
        words(&self.file)
    }

    /// The mapping, for a note.
    pub fn describe(&self) -> String {
        format!(
            "added lines are indented as the file is: the patch's {} became the file's {}",
            words(&self.patch),
            words(&self.file)
        )
    }

    /// The indentation `line` gets in the file, if the mapping applies to it.
    fn map(&self, line: &str) -> Option<String> {
        let ws = leading(line);
        let rest = ws.strip_prefix(self.patch.as_str())?;
        let (p, f) = (self.patch.as_str(), self.file.as_str());
        let spaces_to_tabs = !p.is_empty()
            && !f.is_empty()
            && p.bytes().all(|b| b == b' ')
            && f.bytes().all(|b| b == b'\t')
            && p.len() % f.len() == 0;
        let tabs_to_spaces = !p.is_empty()
            && !f.is_empty()
            && p.bytes().all(|b| b == b'\t')
            && f.bytes().all(|b| b == b' ')
            && f.len() % p.len() == 0;
        let rest = if spaces_to_tabs {
            let unit = p.len() / f.len();
            let spaces = rest.len() - rest.trim_start_matches(' ').len();
            format!(
                "{}{}{}",
                "\t".repeat(spaces / unit),
                " ".repeat(spaces % unit),
                &rest[spaces..]
            )
        } else if tabs_to_spaces {
            rest.replace('\t', &" ".repeat(f.len() / p.len()))
        } else {
            rest.to_string()
        };
        Some(format!("{f}{rest}"))
    }

    /// `line` with its indentation mapped, when the mapping applies.
    pub fn mapped(&self, line: &str) -> Option<String> {
        if line.trim().is_empty() {
            return None;
        }
        let ws = self.map(line)?;
        Some(format!("{ws}{}", &line[leading(line).len()..]))
    }

    /// Writes `line` with its indentation mapped (unchanged when the
    /// mapping does not apply, or the line is blank).
    pub fn push<'p>(&self, b: &mut Builder<'p, '_>, line: &'p str) {
        let mapped = (!line.trim().is_empty()).then(|| self.map(line)).flatten();
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

    fn indent(patch: &str, file: &str) -> Indent {
        Indent {
            patch: patch.into(),
            file: file.into(),
        }
    }

    #[test]
    fn spaces_become_tabs_and_blocks_shift() {
        // The new leading whitespace of each line.
        let map = |p: &str, f: &str, line: &str| indent(p, f).map(line);
        assert_eq!(map("    ", "\t", "        x()").as_deref(), Some("\t\t"));
        assert_eq!(map("    ", "\t", "      x()").as_deref(), Some("\t  "));
        assert_eq!(map("\t", "  ", "\t\tx()").as_deref(), Some("    "));
        assert_eq!(map("  ", "      ", "    x()").as_deref(), Some("        "));
        assert_eq!(map("", "  ", "x()").as_deref(), Some("  "));
        assert_eq!(map("    ", "\t", "x()"), None);
        let out = "a\n".to_string();
        let mut b = Builder::new(&out);
        indent("    ", "\t").push(&mut b, "        x()");
        let text = crate::apply::output::Output::new(out.clone(), b.finish()).to_text();
        assert_eq!(text, "\t\tx()");
    }
}
