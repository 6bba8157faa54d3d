//! How far an edit's region reaches once its block is found: to the end
//! of a range (ap `snippet_tail`, or the end of the file), to the end of
//! the block its last line opens (`scope_end`), and over the blank lines
//! around it the edit takes in.

use super::find::Want;
use super::locate::{new_lines, Locating, Miss, Part};
use super::text::Region;
use crate::error::{Code, Diagnostic};
use crate::ir::{Edit, Level, Line, RangeEnd};

impl Locating<'_, '_> {
    /// The region after the range end, `scope_end` and blank-line widening.
    pub(crate) fn extend(&mut self, edit: &Edit, mut region: Region) -> Result<Region, Miss> {
        let loc = &edit.locator;
        let n = self.file.len();
        match loc.range_end() {
            None => {}
            Some(RangeEnd::Eof) => region.end = n,
            Some(RangeEnd::Lines(tail)) => region.end = self.range_end(edit, tail, region)?,
        }
        if loc.scope_end() {
            // An empty region (`^`, `$`) has no last line to open a block.
            match (!region.is_empty())
                .then(|| self.block_end(region.end - 1))
                .flatten()
            {
                Some(end) => region.end = end.max(region.end),
                None => self.warnings.push(
                    Diagnostic::new(
                        Code::ScopeEndIgnored,
                        "`scope_end` is ignored: the snippet's last line opens no block",
                    )
                    .at(edit.span, "no block to extend to")
                    .path(self.rel.as_str())
                    .hint(
                        "point the snippet at a line that opens a block (`fn f() {`, `def f():`)",
                    ),
                ),
            }
        }
        for _ in 0..loc.widen().0 {
            if region.start > self.cursor && self.file.is_blank(region.start - 1) {
                region.start -= 1;
            }
        }
        for _ in 0..loc.widen().1 {
            if region.end < n && self.file.is_blank(region.end) {
                region.end += 1;
            }
        }
        Ok(region)
    }

    /// Where the range that starts with `region` ends.
    fn range_end(&mut self, edit: &Edit, tail: &[Line], region: Region) -> Result<usize, Miss> {
        let level = Level::BlankLinesIgnored;
        let want = Want::new(tail, level);
        let corrected = |why: &str, label: &str| {
            Diagnostic::new(
                Code::RangeAutoCorrected,
                format!("the `snippet_tail` is {why}; the snippet alone is the region"),
            )
            .at(self.lines_span(tail), label.to_string())
        };
        if self.policy.correct_ranges && Want::new(edit.old, level).keys().ends_with(want.keys()) {
            let d = corrected("the end of the `snippet`", "already inside the snippet")
                .path(self.rel.as_str())
                .hint("give `snippet_tail` only when the range runs past the snippet");
            self.warnings.push(d);
            return Ok(region.end);
        }
        match self.search(
            tail,
            edit.locator.levels,
            region.end,
            true,
            false,
            Part::RangeEnd,
        ) {
            Ok((r, level)) => {
                if level.is_slip() {
                    self.slip(edit, Part::RangeEnd, r, level, None);
                }
                Ok(r.end)
            }
            Err(_)
                if self.policy.correct_ranges
                    && want.keys() == Want::new(&new_lines(edit), level).keys() =>
            {
                let d = corrected(
                    "the new `content`, not text of the file",
                    "this is the content",
                )
                .path(self.rel.as_str());
                self.warnings.push(d);
                Ok(region.end)
            }
            Err(_) => Err(Miss::NotFound {
                part: Part::RangeEnd,
                from: region.end,
            }),
        }
    }

    /// The end (exclusive) of the block that line `l` opens: by bracket
    /// nesting, else by indentation.
    pub(crate) fn block_end(&self, l: usize) -> Option<usize> {
        let file = self.file;
        let mut d = depth(file.line(l));
        if d > 0 {
            for j in l + 1..file.len() {
                d += depth(file.line(j));
                if d <= 0 {
                    return Some(j + 1);
                }
            }
            return None;
        }
        let base = indent(file.line(l));
        let mut last = l;
        for j in l + 1..file.len() {
            if file.is_blank(j) {
                continue;
            }
            if indent(file.line(j)) > base {
                last = j;
            } else {
                break;
            }
        }
        (last > l).then_some(last + 1)
    }
}

/// Brackets a line opens minus those it closes.
pub(crate) fn depth(line: &str) -> i64 {
    line.chars()
        .map(|c| match c {
            '(' | '[' | '{' => 1,
            ')' | ']' | '}' => -1,
            _ => 0,
        })
        .sum()
}

pub(crate) fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}
