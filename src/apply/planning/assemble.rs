//! The new text of an edited file, described in one pass over the file and
//! the placed edits: unchanged stretches are ranges of the original, added
//! lines are slices of the patch text. Nothing is copied.

use crate::apply::matching::locate::Placed;
use crate::apply::matching::text::FileText;
use crate::apply::output::{Builder, Pieces};
use crate::ir::{Edit, Eol, Finish, NewLine};

/// How the lines of the written file end and look as a whole.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    /// Every line gets this ending (ap's `FILE` option).
    pub eol: Option<Eol>,
    pub finish: Finish,
}

/// The file's own line end for new lines: its first line's, or LF.
pub(crate) fn dominant(file: &FileText) -> &'static str {
    match (!file.is_empty()).then(|| file.eol(0)) {
        Some("\r\n") => "\r\n",
        Some("\r") => "\r",
        _ => "\n",
    }
}

/// Whether writing `file` in `shape` with nothing placed changes it.
pub fn reshapes(file: &FileText, shape: Shape) -> bool {
    let Some(eol) = shape.eol else {
        return false;
    };
    (0..file.len()).any(|i| !file.eol(i).is_empty() && file.eol(i) != eol.as_str())
}

/// The edited text: `placed` (sorted by place) applied to `file`. An
/// added line that the patch (`source`) ends as the output must is taken
/// with its ending, one piece.
pub fn assemble<'p>(
    file: &FileText,
    source: &'p str,
    edits: &'p [Edit<'_>],
    placed: &[Placed],
    shape: Shape,
) -> Pieces<'p> {
    let text = file.text;
    let n = file.len();
    let eol = shape.eol.map_or_else(|| dominant(file), Eol::as_str);
    let had_final_newline = n == 0 || !file.eol(n - 1).is_empty();
    // Room for an original stretch, a line end and the added lines (each
    // with its ending) of every edit: few more than a plain patch needs.
    let added: usize = placed.iter().map(|p| edits[p.edit()].new.len()).sum();
    let room = 2 * placed.len() + added + 4;
    let mut out = Out {
        b: Builder::joining(text, source, room),
        file,
        eol,
        whole: shape.eol.is_some() || shape.finish.strip_trailing_whitespace,
        strip: shape.finish.strip_trailing_whitespace,
        cr: NextCr::new(),
    };
    out.b.push_original(0, file.prefix_len());
    let mut cursor = 0;
    let mut final_newline = None;
    for p in placed {
        let at = p.at();
        out.original(cursor, at.start, false);
        let edit = &edits[p.edit()];
        let adds = !edit.new.is_empty() || p.blank_first;
        if at.start == n && n > 0 && !had_final_newline && adds && !out.whole {
            out.b.push_text(eol);
        }
        if p.blank_first {
            out.b.push_text(eol);
        }
        for new in edit.new {
            match new {
                &NewLine::Keep(from, count) => {
                    let from = at.start + from as usize;
                    out.original(from, from + count as usize, true)
                }
                NewLine::Add(line) => {
                    let end = if edit.own_eol && shape.eol.is_none() {
                        "\n"
                    } else {
                        eol
                    };
                    out.added(line, end, p.indent.as_deref(), source);
                }
            }
        }
        if at.end == n {
            final_newline = Some(if edit.old_no_eol != edit.new_no_eol {
                !edit.new_no_eol
            } else {
                had_final_newline
            });
        }
        cursor = at.end;
    }
    out.original(cursor, n, false);
    if shape.finish.final_newline {
        final_newline = Some(true);
    }
    let mut b = out.b;
    match final_newline {
        Some(false) => b.trim_final_eol(),
        Some(true) if !b.is_empty() && !b.ends_with_newline(eol) => b.push_text(eol),
        _ => {}
    }
    b.finish()
}

impl<'p> Out<'p, '_> {
    /// An added line ended by `end`, re-indented by `indent` if given: one
    /// piece of the patch when the patch ends the line as the output must
    /// and stripping leaves it as it is.
    fn added(
        &mut self,
        line: &crate::ir::Line<'p>,
        end: &'static str,
        indent: Option<&crate::apply::matching::indent::Indent>,
        source: &'p str,
    ) {
        let stripped = self.strip && line.text.ends_with([' ', '\t']);
        let whole = (!stripped && indent.is_none())
            .then(|| line.with_eol(source, end))
            .flatten();
        if let Some(whole) = whole {
            self.b.push_text(whole);
            return;
        }
        let text: &'p str = if self.strip {
            line.text.trim_end_matches([' ', '\t'])
        } else {
            line.text
        };
        match indent {
            Some(indent) => indent.push(&mut self.b, text),
            None => self.b.push_text(text),
        }
        self.b.push_text(end);
    }
}

/// The builder, and how original lines are written.
struct Out<'p, 'f> {
    b: Builder<'p, 'f>,
    file: &'f FileText<'f>,
    eol: &'static str,
    /// Each original line is written on its own (reshaped), not as a range.
    whole: bool,
    strip: bool,
    cr: NextCr,
}

/// Where the next `\r` at or after a point of the file is, so that the
/// ranges [`Out::original`] asks about, one for each kept run of lines
/// (hundreds of thousands in a large apply), are not each searched: a
/// search runs from a range's start to the next `\r` or the file's end,
/// and the ranges after it up to there need none.
struct NextCr {
    /// `at` is the first `\r` in `from..`, or the text's length; nothing
    /// is known before the first search.
    from: usize,
    at: usize,
}

impl NextCr {
    fn new() -> Self {
        NextCr {
            from: usize::MAX,
            at: 0,
        }
    }

    /// Whether `text[start..end]` holds a `\r`.
    fn within(&mut self, text: &[u8], start: usize, end: usize) -> bool {
        if start < self.from || self.at < start {
            self.from = start;
            self.at = crate::bytes::find(b'\r', &text[start..]).map_or(text.len(), |i| start + i);
        }
        self.at < end
    }
}

impl Out<'_, '_> {
    /// Original lines `from..to`: as they are, or with the forced ending
    /// and without trailing whitespace. With `then_eol`, a last line
    /// without an ending gets one (more text follows it).
    fn original(&mut self, from: usize, to: usize, then_eol: bool) {
        let file = self.file;
        if from >= to {
            return;
        }
        if !self.whole {
            self.b.push_original(file.start(from), file.start(to));
            // Only the file's last line can lack an ending: asking of
            // any other line reads the text at a place nothing else reads.
            if then_eol && to == file.len() && file.eol(to - 1).is_empty() {
                self.b.push_text(self.eol);
            }
            return;
        }
        // A line already as it should be (its ending is `eol`, nothing to
        // strip) extends the run of original text before it; only a line
        // to reshape ends the run, and no line gets a piece of its own:
        // ap 3.1 writes every file this way. Where every break is `\n`,
        // the lines to reshape are searched for.
        let (start, end) = (file.start(from), file.start(to));
        let cr_free = file.has_no_cr() || !self.cr.within(file.text.as_bytes(), start, end);
        if self.eol == "\n" && cr_free {
            self.lf_only(start, end);
        } else {
            self.by_line(from, to);
        }
    }

    /// [`Out::original`], whole, one line at a time: byte checks on the
    /// line starts.
    fn by_line(&mut self, from: usize, to: usize) {
        let file = self.file;
        let text = file.text.as_bytes();
        let eol = self.eol.as_bytes();
        let mut run = file.start(from);
        for i in from..to {
            let (s, e) = (file.start(i), file.start(i + 1));
            let raw = &text[s..e];
            let ready = raw.strip_suffix(eol).is_some_and(|line| {
                let last = line.last().copied();
                let crlf = eol == b"\n" && last == Some(b'\r');
                let trailing = self.strip && matches!(last, Some(b' ' | b'\t'));
                !crlf && !trailing
            });
            if ready {
                continue;
            }
            self.b.push_original(run, s);
            let line = file.line(i);
            let kept = if self.strip {
                line.trim_end_matches([' ', '\t'])
            } else {
                line
            };
            self.b.push_original(s, s + kept.len());
            self.b.push_text(self.eol);
            run = e;
        }
        self.b.push_original(run, file.start(to));
    }

    /// [`Out::original`] for the text `start..end`, whose every line ends
    /// with `\n` (but perhaps the file's last), the ending to write: only
    /// trailing blanks (or no ending) make a line to reshape. Those are
    /// looked up among the file's blank-ended lines, not found by visiting
    /// each line.
    fn lf_only(&mut self, start: usize, end: usize) {
        let text = self.file.text;
        let bytes = &text.as_bytes()[start..end];
        // The `\n`s after a blank in `start..end`, from the file's list of
        // them (noted by its split): the ranges asked about, one for each
        // kept run of lines, are many and mostly short.
        let blank_ends = match self.strip {
            true => {
                let all = self.file.blank_ended();
                let from = all.partition_point(|&i| (i as usize) < start);
                &all[from..all.partition_point(|&i| (i as usize) < end)]
            }
            false => &[],
        };
        // A last line without an ending gets one. `start..end` is whole
        // lines, so only the file's last can lack one.
        let unended = bytes.last().is_some_and(|&b| b != b'\n').then_some(end);
        let mut run = start;
        for stop in blank_ends.iter().map(|&i| i as usize).chain(unended) {
            let line = crate::bytes::rfind(b'\n', &text.as_bytes()[start..stop])
                .map_or(start, |at| start + at + 1);
            let kept = match self.strip {
                true => text[line..stop].trim_end_matches([' ', '\t']),
                false => &text[line..stop],
            };
            self.b.push_original(run, line);
            self.b.push_original(line, line + kept.len());
            self.b.push_text(self.eol);
            run = (stop + 1).min(end);
        }
        self.b.push_original(run, end);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apply::output::Output;

    /// The next `\r` answers as a search of each range would, the ranges
    /// taken forward, backward, overlapping and empty.
    #[test]
    fn next_cr_answers_as_a_search_of_each_range() {
        let text = b"ab\r\ncd\n\r\ref\n\ngh\rij";
        let n = text.len();
        let ranges: Vec<(usize, usize)> =
            (0..=n).flat_map(|s| (s..=n).map(move |e| (s, e))).collect();
        // Every range after every other, in both orders.
        for (i, &(s1, e1)) in ranges.iter().enumerate() {
            for &(s2, e2) in ranges[i..].iter().chain(&ranges[..i]).step_by(7) {
                let mut cr = NextCr::new();
                for (s, e) in [(s1, e1), (s2, e2), (s1, e1)] {
                    let want = text[s..e].contains(&b'\r');
                    assert_eq!(cr.within(text, s, e), want, "{s}..{e} after {s1}..{e1}");
                }
            }
        }
        let mut cr = NextCr::new();
        assert!(!cr.within(b"no returns", 0, 10));
    }

    /// The walk over line feeds writes what the walk over each line does,
    /// for every range of lines, stripped or not.
    #[test]
    fn lf_only_writes_what_each_line_does() {
        let texts = [
            "",
            "a\n",
            "a \n\tb\t\n\n  \nc",
            "x\ny  \n",
            "   ",
            "a\n\n",
            "\u{feff}a \nb\n",
            "tab\t\t\nend \t",
            " \t \n\n\t",
        ];
        for text in texts {
            let file = FileText::with_breaks(text, false);
            for strip in [true, false] {
                for from in 0..=file.len() {
                    for to in from..=file.len() {
                        let write = |fast: bool| {
                            let mut out = Out {
                                b: Builder::new(text),
                                file: &file,
                                eol: "\n",
                                whole: true,
                                strip,
                                cr: NextCr::new(),
                            };
                            let (start, end) = (file.start(from), file.start(to));
                            match fast {
                                true => out.lf_only(start, end),
                                false => out.by_line(from, to),
                            }
                            Output::new(text.to_string(), out.b.finish()).to_text()
                        };
                        let want = write(false);
                        assert_eq!(write(true), want, "{text:?} {from}..{to} strip {strip}");
                    }
                }
            }
        }
    }
}
