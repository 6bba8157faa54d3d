//! Deciding a run's indentation rule from the evidence: the pairs of
//! indentation (patch, file) a relaxed match showed, the lines around each
//! added line, and where the run stands.

use super::*;

/// The file's lines just outside a matched region: the last non-blank one
/// before it and the first after it, by their text.
#[derive(Debug, Clone, Copy, Default)]
pub struct Outside<'f> {
    pub before: Option<&'f str>,
    pub after: Option<&'f str>,
}

impl<'f> Outside<'f> {
    /// Around `region` of `file`.
    pub fn of(file: &FileText<'f>, region: Region) -> Outside<'f> {
        let line = |i: usize| Some(file.line(i)).filter(|l| !is_blank(l));
        Outside {
            before: (0..region.start.min(file.len())).rev().find_map(line),
            after: (region.end..file.len()).find_map(line),
        }
    }
}

/// Whether a line opens a block: what follows it belongs inside it. It
/// ends with `:` or an opening bracket, or its code does, before a
/// trailing comment (`def f(self):  # why`, `if (x) {  // why`).
pub(crate) fn opens(line: &str) -> bool {
    let ends_open = |l: &str| l.trim_end().ends_with([':', '{', '(', '[']);
    ends_open(line) || ends_open(before_comment(line))
}

/// `line` up to its first `#` or `//` that follows a blank: the code
/// before a trailing comment, as far as a line alone tells (a string
/// holding ` #` cuts short too, which can only make a line read as
/// opening a block, the reading that changes nothing).
fn before_comment(line: &str) -> &str {
    let bytes = line.as_bytes();
    let cut = (1..bytes.len()).find(|&i| {
        bytes[i - 1].is_ascii_whitespace() && (bytes[i] == b'#' || bytes[i..].starts_with(b"//"))
    });
    cut.map_or(line, |i| &line[..i])
}

/// Why the added lines of an edit are refused: they read two ways, and the
/// file fits both (or one added line fits each).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Undecided {
    /// An added line's indentation as the patch writes it, in words.
    pub written: String,
    /// Its indentation mapped as the old lines were, in words.
    pub mapped: String,
}

/// The mapping a match at `level` implies, from the non-blank old lines
/// and the non-blank lines of `region` they matched, in order. `None`
/// when the level compared indentation, the edit adds nothing, nothing
/// differs, or the added lines stay as written.
pub fn relaxed(
    file: &FileText,
    level: Level,
    region: Region,
    edit: &Edit,
) -> Result<Option<Indent>, Undecided> {
    let mut lines = (region.start..region.end.min(file.len()))
        .map(|i| file.line(i))
        .filter(|l| !is_blank(l));
    relaxed_by(level, edit, Outside::of(file, region), |_| lines.next())
}

/// The file's indentation of each old line of `edit`, matched at `region`
/// (the non-blank ones in order; blank ones are `None`).
pub fn file_indents<'f>(file: &FileText<'f>, region: Region, edit: &Edit) -> Vec<Option<&'f str>> {
    let mut lines = (region.start..region.end.min(file.len()))
        .map(|i| file.line(i))
        .filter(|l| !is_blank(l));
    edit.old
        .iter()
        .map(|l| match is_blank(l.text) {
            true => None,
            false => lines.next().map(leading),
        })
        .collect()
}

/// As [`relaxed`], with the file's line for the `k`-th non-blank old line
/// given by `line(k)`, called in order.
pub fn relaxed_by<'f>(
    level: Level,
    edit: &Edit,
    outside: Outside<'f>,
    line: impl FnMut(usize) -> Option<&'f str>,
) -> Result<Option<Indent>, Undecided> {
    let mut file_ws = vec![None; edit.old.len()];
    let Some(indent) = mapping(level, edit, line, &mut file_ws) else {
        return Ok(None);
    };
    indent.decide(edit, &file_ws, outside)
}

/// The mapping alone, and the file's indentation of each old line it saw.
pub(crate) fn mapping<'f>(
    level: Level,
    edit: &Edit,
    mut line: impl FnMut(usize) -> Option<&'f str>,
    file_ws: &mut [Option<&'f str>],
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
    let non_blank = edit
        .old
        .iter()
        .enumerate()
        .filter(|(_, l)| !is_blank(l.text));
    for (k, (j, old)) in non_blank.enumerate() {
        let Some(have) = line(k) else { break };
        file_ws[j] = Some(leading(have));
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

/// A line of an edit's new block, and the old line it stands for.
#[derive(Clone, Copy)]
pub(crate) enum Entry<'e> {
    /// Old line `j`, kept from the file.
    Kept(usize),
    /// Old line `j` written again exactly (a format whose new block is
    /// whole writes its context so).
    Copy(usize, &'e str),
    /// A line the patch adds.
    Added(&'e str),
}

impl Entry<'_> {
    fn old(self) -> Option<usize> {
        match self {
            Entry::Kept(j) | Entry::Copy(j, _) => Some(j),
            Entry::Added(_) => None,
        }
    }
}

/// Each line of the new block, as kept, copied or added; where the new
/// block goes after (or before) the old block rather than in its place,
/// the old block is counted kept before (or after) it.
pub(crate) fn entries<'e>(edit: &'e Edit) -> Vec<Entry<'e>> {
    let around = match edit.place {
        crate::ir::Place::Replace => None,
        place => Some(place),
    };
    let mut out = vec![];
    if around == Some(crate::ir::Place::After) {
        out.extend((0..edit.old.len()).map(Entry::Kept));
    }
    let mut next = 0;
    for new in edit.new {
        match new {
            NewLine::Keep(from, count) => {
                let from = *from as usize;
                out.extend((from..from + *count as usize).map(Entry::Kept));
                next = from + *count as usize;
            }
            NewLine::Add(line) if around.is_some() => out.push(Entry::Added(line.text)),
            NewLine::Add(line) => {
                let again = (next..edit.old.len()).find(|&j| edit.old[j].text == line.text);
                match again {
                    Some(j) => {
                        out.push(Entry::Copy(j, line.text));
                        next = j + 1;
                    }
                    None => out.push(Entry::Added(line.text)),
                }
            }
        }
    }
    if around == Some(crate::ir::Place::Before) {
        out.extend((0..edit.old.len()).map(Entry::Kept));
    }
    out
}

/// Indentation in words: `4 spaces`, `1 tab`, `1 tab and 2 spaces`.
pub(crate) fn words(ws: &str) -> String {
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

pub(crate) fn only(ws: &str, c: u8) -> bool {
    ws.bytes().all(|b| b == c)
}

/// A run of added lines: where it stands among the placed entries, and its
/// lines that are not blank.
pub(crate) struct Run<'t> {
    start: usize,
    end: usize,
    lines: Vec<&'t str>,
}

/// What the runs of an edit showed: the first pair of readings seen for
/// each outcome, and the indentation chosen for lines that move.
#[derive(Default)]
pub(crate) struct Found {
    written: Option<(String, String)>,
    mapped: Option<(String, String)>,
    both: Option<(String, String)>,
    chosen: std::collections::HashMap<String, String>,
}

/// The file's indentations where a run stands: the first of the old lines
/// it replaces; where it replaces none, the lines just before and after it (in the
/// patch, else in the file); after a line that opens a block, the block's
/// own first line.
pub(crate) fn place_of<'a>(
    run: &Run,
    placed: &[Entry],
    edit: &Edit<'a>,
    file_ws: &[Option<&'a str>],
    outside: Outside<'a>,
) -> Vec<&'a str> {
    let before = placed[..run.start].iter().rev().find_map(|e| e.old());
    let after = placed[run.end..].iter().find_map(|e| e.old());
    let from = before.map_or(0, |b| b + 1);
    let to = after.unwrap_or(edit.old.len());
    let replaced: Vec<&str> = file_ws[from.min(to)..to]
        .iter()
        .flatten()
        .copied()
        .collect();
    let prev = match before {
        Some(b) => file_ws[b].map(|ws| (ws, opens(edit.old[b].text))),
        None => outside.before.map(|l| (leading(l), opens(l))),
    };
    let next = match after {
        Some(a) => file_ws[a],
        None => outside.after.map(leading),
    };
    match (replaced.first(), prev) {
        // The first line a run writes stands where the first line it
        // replaces stood.
        (Some(&first), _) => vec![first],
        (None, Some((_, true))) => next.into_iter().collect(),
        (None, _) => prev.map(|(ws, _)| ws).into_iter().chain(next).collect(),
    }
}

impl Indent {
    /// Which reading of the added lines the file shows (see the module's
    /// doc): the mapping, as written (`None`), or neither for sure.
    /// `file_ws`: the file's indentation of each old line, where known.
    pub fn decide(
        self,
        edit: &Edit,
        file_ws: &[Option<&str>],
        outside: Outside,
    ) -> Result<Option<Indent>, Undecided> {
        let placed = entries(edit);
        let mut found = Found::default();
        // A run of added lines is read one way: by its first line that is
        // not blank; the others keep their place relative to it.
        let mut i = 0;
        while i < placed.len() {
            if !matches!(placed[i], Entry::Added(_)) {
                i += 1;
                continue;
            }
            let start = i;
            while i < placed.len() && matches!(placed[i], Entry::Added(_)) {
                i += 1;
            }
            let run = Run {
                start,
                end: i,
                lines: placed[start..i]
                    .iter()
                    .filter_map(|e| match *e {
                        Entry::Added(l) if !is_blank(l) => Some(l),
                        _ => None,
                    })
                    .collect(),
            };
            self.read_run(&run, &placed, edit, file_ws, outside, &mut found);
        }
        self.verdict(&placed, file_ws, found)
    }

    /// What one run of added lines shows, into `found`.
    pub(super) fn read_run(
        &self,
        run: &Run,
        placed: &[Entry],
        edit: &Edit,
        file_ws: &[Option<&str>],
        outside: Outside,
        found: &mut Found,
    ) {
        let Some(&first) = run.lines.first() else {
            return;
        };
        let restyled = self.restyled(leading(first));
        let as_written = restyled.as_str();
        let readings = self.readings(leading(first));
        let moves = |l: &&str| {
            self.readings(leading(l))
                .iter()
                .any(|r| *r != self.restyled(leading(l)))
        };
        let pair = |m: &str| (words(as_written), words(m));
        if readings.is_empty() {
            // The mapping cannot place the run's first line: the run stays
            // as written, or, where the mapping would move another of its
            // lines, reads two ways.
            if run.lines.iter().any(moves) {
                let shift = "a shift it cannot take".to_string();
                found.both.get_or_insert((words(as_written), shift));
            }
            return;
        }
        let unplaced = run
            .lines
            .iter()
            .any(|l| self.readings(leading(l)).is_empty());
        if readings == [as_written] || unplaced {
            if run.lines.iter().any(moves) && readings != [as_written] {
                found.both.get_or_insert(pair(&readings[0]));
            }
            return;
        }
        let around = place_of(run, placed, edit, file_ws, outside);
        let fits = |ws: &str| around.contains(&ws);
        let fitting: Vec<&String> = readings
            .iter()
            .filter(|r| r.as_str() != as_written && fits(r))
            .collect();
        match (fits(as_written), fitting.as_slice()) {
            (true, []) => {
                found.written.get_or_insert(pair(&readings[0]));
            }
            (false, [one]) => {
                // The run moves as its first line does.
                let shift = (one.as_str(), leading(first));
                for l in &run.lines {
                    if let Some(ws) = self.moved_like(leading(l), shift) {
                        found.chosen.insert(l.to_string(), ws);
                    }
                }
                found.mapped.get_or_insert(pair(one));
            }
            // Neither fits: the patch's own structure decides, unless the
            // run stands at column 0 (its indentation dropped, perhaps,
            // rather than shifted).
            (false, []) if readings.len() == 1 && !as_written.is_empty() => {}
            (_, fitting) => {
                found
                    .both
                    .get_or_insert(pair(fitting.first().map_or(&readings[0], |r| *r)));
            }
        }
    }

    /// The decision, from what the runs showed.
    pub(super) fn verdict(
        self,
        placed: &[Entry],
        file_ws: &[Option<&str>],
        found: Found,
    ) -> Result<Option<Indent>, Undecided> {
        let undecided = |(written, mapped): (String, String)| Undecided { written, mapped };
        let copies = placed
            .iter()
            .filter_map(|e| match *e {
                Entry::Copy(j, text) => Some((text.to_string(), file_ws[j]?.to_string())),
                _ => None,
            })
            .collect();
        let mut indent = Indent { copies, ..self };
        indent.copies.extend(found.chosen);
        // Nothing the mapping would move: as written (and the format's own
        // repairs, such as ap's dropped indent, may still apply).
        let moves_any = placed.iter().any(|e| match *e {
            Entry::Added(l) => !is_blank(l) && indent.map(l).is_some_and(|ws| ws != leading(l)),
            Entry::Copy(_, l) => indent.map(l).is_some_and(|ws| ws != leading(l)),
            Entry::Kept(_) => false,
        });
        if !moves_any && found.both.is_none() {
            return Ok(None);
        }
        match (found.written, found.mapped, found.both) {
            (Some(w), Some(_), _) => Err(undecided(w)),
            (Some(_), None, _) if !indent.copies.is_empty() => Ok(Some(Indent {
                as_written: true,
                ..indent
            })),
            (Some(_), None, _) => Ok(None),
            (None, None, Some(b)) => Err(undecided(b)),
            _ => Ok(Some(indent)),
        }
    }

    /// The pairs are borrowed: most matches indent as the patch does, and
    /// are answered before anything is copied.
    pub(super) fn from_pairs(pairs: Vec<(&str, &str)>) -> Option<Indent> {
        if pairs.iter().all(|(p, f)| p == f) {
            return None;
        }
        let mut pairs: Vec<(String, String)> = pairs
            .into_iter()
            .map(|(p, f)| (p.to_string(), f.to_string()))
            .collect();
        // One file indentation for each patch indentation: the first old
        // line's, where the patch indents lines alike that the file does
        // not (its block was not merely shifted); the others are kept, for
        // the added lines a file's place decides.
        let mut several: std::collections::HashMap<String, Vec<String>> = Default::default();
        for (p, f) in &pairs {
            let seen = several.entry(p.clone()).or_default();
            if !seen.contains(f) {
                seen.push(f.clone());
            }
        }
        several.retain(|_, fs| fs.len() > 1);
        let mut seen = std::collections::HashSet::new();
        pairs.retain(|(p, _)| seen.insert(p.clone()));
        let (patch, file) = pairs.iter().min_by_key(|(p, _)| p.len())?.clone();
        let kinds = conversion(&pairs);
        let mut indent = Indent {
            patch,
            file,
            pairs,
            several,
            convert: Convert::Same,
            by_rule: true,
            copies: Default::default(),
            as_written: false,
        };
        if let Some(kind) = kinds {
            indent.convert_by(kind);
        }
        indent.by_rule = indent.fits();
        Some(indent)
    }

    /// Whether the rule gives every old line its file indentation.
    fn fits(&self) -> bool {
        self.pairs
            .iter()
            .all(|(p, f)| self.by_rule(p).as_deref() == Some(f.as_str()))
    }

    /// Converts by `kind`, at the columns per tab that give every old line
    /// its file indentation: one that keeps the columns (no shift) first,
    /// else any; 4 where none does.
    fn convert_by(&mut self, kind: fn(usize) -> Convert) {
        let same_columns = |indent: &Indent, unit: usize| {
            let columns = |s: &str| {
                s.bytes()
                    .map(|b| if b == b'\t' { unit } else { 1 })
                    .sum::<usize>()
            };
            columns(&indent.patch) == columns(&indent.file)
        };
        let mut pick = |keep: bool| {
            [4, 8, 2, 3].into_iter().find(|&unit| {
                self.convert = kind(unit);
                self.fits() && (!keep || same_columns(self, unit))
            })
        };
        let unit = pick(true).or_else(|| pick(false)).unwrap_or(4);
        self.convert = kind(unit);
    }
}

/// Which conversion the pairs show, if any: spaces in the patch for the
/// file's tabs (then spaces that align a continuation line), or the
/// reverse.
fn conversion(pairs: &[(String, String)]) -> Option<fn(usize) -> Convert> {
    let all_patch = |c| pairs.iter().all(|(p, _)| only(p, c));
    // Tabs, then spaces (that align a continuation line).
    let tabbed = |f: &str| only(f.trim_start_matches('\t'), b' ');
    if all_patch(b' ')
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
    }
}
