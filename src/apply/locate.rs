//! ap's locating and rewriting: the normalised search (§3.2), anchors,
//! ranges, blank-line inclusion, `scope_end`, file boundaries, the
//! sequential cursor, idempotency (§3.1) and the §3.6 heuristics. The
//! format module only lowers; everything that reads the target file is
//! here.
//!
//! The cursor makes this linear. A modification is searched for only after
//! the end of the previous one, so every search runs over the untouched
//! tail of the original text: the file is split once, its normalised
//! non-blank lines are indexed once, and the result is written out as the
//! searches go. Text the patch itself wrote lies before the cursor, so no
//! locator and no idempotency probe can ever match it (3.2 "self-written
//! text"). Finding a locator walks only the positions of its rarest line.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::collections::HashMap;
use std::sync::Arc;

use super::seek::FnvBuild;
use crate::error::{Code, Diagnostic, TargetLabel};
use crate::ir::{Base, Line, ModKind, Modification, Rewrite, Span, Target};
use crate::paths::RelPath;

/// How many candidates an ambiguity lists, and how many anchors are tried.
const LIST: usize = 8;
const ANCHORS: usize = 256;

/// The rewritten text, and whether anything changed.
pub struct Rewritten {
    pub text: String,
    pub changed: bool,
}

/// Applies `rw`'s modifications to `original` (the file's text; empty when
/// it does not exist). Warnings go to `warnings`; the first failing
/// modification is the error (later ones depend on where it would land).
/// With `keep_original`, the modifications start from `original` even
/// when the block creates the file (it exists with the same lines).
pub fn rewrite(
    original: &str,
    rw: &Rewrite<'_>,
    keep_original: bool,
    rel: &RelPath,
    warnings: &mut Vec<Diagnostic>,
) -> Result<Rewritten, Diagnostic> {
    let base: Cow<str> = match &rw.base {
        Base::Create(lines) | Base::Recreate(lines) if !keep_original => Cow::Owned(join(lines)),
        _ => Cow::Borrowed(original),
    };
    let mut e = Engine::new(&base, rel);
    let new_base = base != original;
    // How often each locator occurs: a repeated one addresses identical blocks in order.
    let keys: Vec<Option<String>> = rw.mods.iter().map(locator_key).collect();
    let mut uses: HashMap<&str, usize> = HashMap::new();
    for k in keys.iter().flatten() {
        *uses.entry(k).or_default() += 1;
    }
    for (i, m) in rw.mods.iter().enumerate() {
        let repeated = keys[i].as_deref().is_some_and(|k| uses[k] > 1);
        e.modification(i, m, repeated, rw, warnings)?;
    }
    let eol = rw.eol.map_or_else(|| detect_eol(original), |e| e.as_str());
    if !e.applied && !new_base {
        let same_eol = rw.eol.is_none_or(|_| e.all_eols(eol));
        if same_eol {
            return Ok(Rewritten {
                text: original.to_string(),
                changed: false,
            });
        }
    }
    let text = e.render(eol, rw.eol.is_some(), rw.strip_whole_file);
    if balanced(original) && !new_base && !balanced(&text) {
        warnings.push(
            Diagnostic::new(
                Code::UnbalancedBrackets,
                format!("`{rel}` had balanced brackets before the patch and does not after it"),
            )
            .path(rel.as_str())
            .hint("check that each modification replaced whole blocks: a range may have stopped one line short of a closing bracket"),
        );
    }
    let changed = text != original;
    Ok(Rewritten { text, changed })
}

fn join(lines: &[Line]) -> String {
    let mut s = String::new();
    for l in lines {
        s.push_str(&l.text);
        s.push('\n');
    }
    s
}

/// The first line ending in `text`, or LF.
fn detect_eol(text: &str) -> &'static str {
    match text.find(['\n', '\r']) {
        Some(i) if text[i..].starts_with("\r\n") => "\r\n",
        Some(i) if text[i..].starts_with('\r') => "\r",
        _ => "\n",
    }
}

/// Every kind of bracket opens as often as it closes.
fn balanced(text: &str) -> bool {
    let mut n = [0i64; 6];
    for &b in text.as_bytes() {
        let slot = match b {
            b'(' => 0,
            b')' => 1,
            b'[' => 2,
            b']' => 3,
            b'{' => 4,
            b'}' => 5,
            _ => continue,
        };
        n[slot] += 1;
    }
    n[0] == n[1] && n[2] == n[3] && n[4] == n[5]
}

/// Brackets a line opens minus those it closes.
fn depth(line: &str) -> i64 {
    line.chars()
        .map(|c| match c {
            '(' | '[' | '{' => 1,
            ')' | ']' | '}' => -1,
            _ => 0,
        })
        .sum()
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// Strips what carries no meaning at the start of a line: whitespace,
/// comment openers, bullets, diff markers and list numbering.
fn strip_decoration(s: &str) -> &str {
    let mut s = s;
    loop {
        let t = s.trim_start();
        let t = ["<!--", "//", "/*", "--", "#", ";", "*", "-", "+", "•", ">"]
            .iter()
            .find_map(|p| t.strip_prefix(p))
            .or_else(|| {
                let digits = t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit()).len();
                (digits > 0)
                    .then(|| t[digits..].strip_prefix(['.', ')']))
                    .flatten()
            })
            .unwrap_or(t);
        if t.len() == s.len() {
            return s;
        }
        s = t;
    }
}

/// The 3.6 soft start: `file` is `want` with decoration in front.
fn soft_eq(file: &str, want: &str) -> bool {
    file.len() > want.len()
        && file.ends_with(want)
        && strip_decoration(&file[..file.len() - want.len()]).is_empty()
}

/// A locator's normalised lines: blank ones dropped, the rest trimmed.
fn normalise<'a>(lines: &'a [Line]) -> Vec<&'a str> {
    lines
        .iter()
        .map(|l| l.text.trim())
        .filter(|t| !t.is_empty())
        .collect()
}

fn span_of(lines: &[Line]) -> Span {
    match (lines.first(), lines.last()) {
        (Some(a), Some(b)) => a.span.to(b.span),
        _ => Span::default(),
    }
}

/// A line of the result.
#[derive(Clone, Copy)]
enum Out<'r> {
    Orig(u32),
    New(&'r str),
}

/// Where a locator was found, in lines of the original text.
#[derive(Clone, Copy, Debug)]
struct Region {
    start: usize,
    end: usize,
}

/// Which locator of a modification a failure is about.
#[derive(Clone, Copy, PartialEq)]
enum Part {
    Anchor,
    Snippet,
    Tail,
}

impl Part {
    fn name(self) -> &'static str {
        match self {
            Part::Anchor => "anchor",
            Part::Snippet => "snippet",
            Part::Tail => "snippet_tail",
        }
    }
}

struct Engine<'f, 'r> {
    text: &'f str,
    rel: &'f RelPath,
    /// Per line: start, end of content, end with the line ending.
    lines: Vec<(usize, usize, usize)>,
    norm: Vec<&'f str>,
    /// The non-blank lines, by line index.
    nb: Vec<u32>,
    /// For each line index (and the end), the number of non-blank lines before it.
    nb_at: Vec<u32>,
    index: HashMap<&'f str, Vec<u32>, FnvBuild>,
    soft: OnceCell<HashMap<&'f str, Vec<u32>, FnvBuild>>,
    target_text: OnceCell<Arc<str>>,
    out: Vec<Out<'r>>,
    /// Everything from this line on is the original, untouched.
    cursor: usize,
    /// Original lines a modification removed: (start, end, modification).
    consumed: Vec<(usize, usize, usize, Span)>,
    applied: bool,
}

impl<'f, 'r> Engine<'f, 'r> {
    fn new(text: &'f str, rel: &'f RelPath) -> Self {
        let mut lines = vec![];
        let b = text.as_bytes();
        let mut start = 0;
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                b'\n' => {
                    lines.push((start, i, i + 1));
                    start = i + 1;
                }
                b'\r' => {
                    let end = if b.get(i + 1) == Some(&b'\n') {
                        i + 2
                    } else {
                        i + 1
                    };
                    lines.push((start, i, end));
                    start = end;
                    i = end;
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
        if start < b.len() {
            lines.push((start, b.len(), b.len()));
        }
        let norm: Vec<&str> = lines.iter().map(|&(s, e, _)| text[s..e].trim()).collect();
        let mut nb = vec![];
        let mut nb_at = Vec::with_capacity(norm.len() + 1);
        let mut index: HashMap<&str, Vec<u32>, FnvBuild> =
            HashMap::with_capacity_and_hasher(norm.len(), FnvBuild::default());
        for (i, n) in norm.iter().enumerate() {
            nb_at.push(nb.len() as u32);
            if !n.is_empty() {
                index.entry(n).or_default().push(nb.len() as u32);
                nb.push(i as u32);
            }
        }
        nb_at.push(nb.len() as u32);
        Engine {
            text,
            rel,
            lines,
            norm,
            nb,
            nb_at,
            index,
            soft: OnceCell::new(),
            target_text: OnceCell::new(),
            out: vec![],
            cursor: 0,
            consumed: vec![],
            applied: false,
        }
    }

    fn n(&self) -> usize {
        self.lines.len()
    }

    fn line(&self, i: usize) -> &'f str {
        let (s, e, _) = self.lines[i];
        &self.text[s..e]
    }

    fn all_eols(&self, eol: &str) -> bool {
        self.lines
            .iter()
            .all(|&(_, e, end)| end == e || &self.text[e..end] == eol)
    }

    /// The region of `count` non-blank lines starting at non-blank index `s`.
    fn region(&self, s: usize, count: usize) -> Region {
        Region {
            start: self.nb[s] as usize,
            end: self.nb[s + count - 1] as usize + 1,
        }
    }

    /// Up to `limit` matches of `want` starting at non-blank indices in
    /// `[from, to)`, in order: exact matches, or else soft-start ones.
    fn find(&self, want: &[&str], from: usize, to: usize, limit: usize) -> (Vec<usize>, bool) {
        let exact = self.find_with(want, from, to, limit, false);
        if !exact.is_empty() {
            return (exact, false);
        }
        (self.find_with(want, from, to, limit, true), true)
    }

    fn find_with(
        &self,
        want: &[&str],
        from: usize,
        to: usize,
        limit: usize,
        soft: bool,
    ) -> Vec<usize> {
        let m = want.len();
        let to = to.min(self.nb.len());
        if m == 0 || from + m > to {
            return vec![];
        }
        let soft_index;
        let lists: Vec<(usize, &[u32])> = if soft && m == 1 {
            soft_index = self.soft.get_or_init(|| {
                let mut map: HashMap<&str, Vec<u32>, FnvBuild> = HashMap::default();
                for (k, &line) in self.nb.iter().enumerate() {
                    map.entry(strip_decoration(self.norm[line as usize]))
                        .or_default()
                        .push(k as u32);
                }
                map
            });
            vec![(
                0,
                soft_index
                    .get(strip_decoration(want[0]))
                    .map_or(&[][..], |v| v),
            )]
        } else {
            let skip = usize::from(soft);
            (skip..m)
                .map(|k| (k, self.index.get(want[k]).map_or(&[][..], |v| &v[..])))
                .collect()
        };
        let Some(&(k, list)) = lists.iter().min_by_key(|(_, l)| l.len()) else {
            return vec![];
        };
        let lo = list.partition_point(|&p| (p as usize) < from + k);
        let mut found = vec![];
        for &p in &list[lo..] {
            let s = p as usize - k;
            if s + m > to {
                break;
            }
            let ok = want.iter().enumerate().all(|(j, w)| {
                let f = self.norm[self.nb[s + j] as usize];
                if j == 0 && soft {
                    soft_eq(f, w)
                } else {
                    f == *w
                }
            });
            if ok {
                found.push(s);
                if found.len() >= limit {
                    break;
                }
            }
        }
        found
    }

    fn modification(
        &mut self,
        idx: usize,
        m: &'r Modification<'r>,
        repeated: bool,
        rw: &Rewrite,
        warnings: &mut Vec<Diagnostic>,
    ) -> Result<(), Diagnostic> {
        let content = normalise(&m.content);
        let from = self.nb_at[self.cursor] as usize;
        let total = self.nb.len();
        // The scope: after the anchor, or the whole rest of the file.
        let mut scoped = false;
        let mut scope = from;
        let snippet_want = match &m.snippet {
            Target::Lines(l) => normalise(l),
            _ => vec![],
        };
        if let Some(anchor) = &m.anchor {
            let want = normalise(anchor);
            let (hits, soft) = self.find(&want, from, total, ANCHORS);
            if soft && !hits.is_empty() {
                warnings.push(self.soft_warning(anchor, Part::Anchor, hits[0], want.len()));
            }
            let pick = match hits.len() {
                0 => return Err(self.miss(idx, m, Part::Anchor, &want, from, span_of(anchor))),
                1 => hits[0],
                _ => {
                    // §3.6: the anchor whose own stretch holds the snippet.
                    let holding: Vec<usize> = hits
                        .iter()
                        .enumerate()
                        .filter(|&(i, &h)| {
                            let start = self.anchor_scope(h, want.len(), &want, &snippet_want);
                            let end = hits.get(i + 1).copied().unwrap_or(total);
                            !snippet_want.is_empty()
                                && !self
                                    .find(&snippet_want, start, end.max(start), 1)
                                    .0
                                    .is_empty()
                        })
                        .map(|(_, &h)| h)
                        .collect();
                    match holding[..] {
                        [one] => {
                            warnings.push(
                                Diagnostic::new(
                                    Code::AnchorDisambiguated,
                                    format!(
                                        "the anchor occurs {} times in `{}`; the one followed by the snippet is used",
                                        hits.len(),
                                        self.rel
                                    ),
                                )
                                .at(span_of(anchor), "ambiguous anchor")
                                .path(self.rel.as_str())
                                .target(self.label(self.region(one, want.len()), "this occurrence".into())),
                            );
                            one
                        }
                        _ => {
                            let shown: Vec<usize> = if holding.is_empty() {
                                hits.clone()
                            } else {
                                holding
                            };
                            return Err(self.ambiguous(
                                m,
                                Part::Anchor,
                                anchor,
                                &shown,
                                want.len(),
                            ));
                        }
                    }
                }
            };
            scope = self.anchor_scope(pick, want.len(), &want, &snippet_want);
            scoped = true;
        }
        // The snippet.
        let mut region = match &m.snippet {
            Target::Start => {
                if self.cursor > 0 {
                    return Err(self.before_cursor(m, "`^` (the start of the file)"));
                }
                Region { start: 0, end: 0 }
            }
            Target::End => Region {
                start: self.n(),
                end: self.n(),
            },
            Target::Lines(lines) => {
                let want = &snippet_want;
                let limit = if scoped { 1 } else { LIST };
                let (hits, soft) = self.find(want, scope, total, limit);
                match hits.len() {
                    0 => {
                        return self.not_found(idx, m, &content, scope, warnings);
                    }
                    1 => {}
                    _ if repeated => {}
                    _ => return Err(self.ambiguous(m, Part::Snippet, lines, &hits, want.len())),
                }
                if soft {
                    warnings.push(self.soft_warning(lines, Part::Snippet, hits[0], want.len()));
                }
                self.region(hits[0], want.len())
            }
        };
        // The range end.
        if let Some(tail) = &m.tail {
            let tail_region = match tail {
                Target::End => Some(self.n()),
                Target::Start => None,
                Target::Lines(lines) => {
                    let want = normalise(lines);
                    if snippet_want.ends_with(&want) {
                        warnings.push(
                            Diagnostic::new(Code::RangeAutoCorrected, "the `snippet_tail` is the end of the `snippet`; the snippet alone is the region")
                                .at(span_of(lines), "already inside the snippet")
                                .path(self.rel.as_str())
                                .hint("give `snippet_tail` only when the range runs past the snippet"),
                        );
                        Some(region.end)
                    } else {
                        let after = self.nb_at[region.end] as usize;
                        let (hits, soft) = self.find(&want, after, total, 1);
                        match hits.first() {
                            Some(&h) => {
                                if soft {
                                    warnings.push(self.soft_warning(
                                        lines,
                                        Part::Tail,
                                        h,
                                        want.len(),
                                    ));
                                }
                                Some(self.region(h, want.len()).end)
                            }
                            None if want == content => {
                                warnings.push(
                                    Diagnostic::new(Code::RangeAutoCorrected, "the `snippet_tail` is the new `content`, not text of the file; the snippet alone is the region")
                                        .at(span_of(lines), "this is the content")
                                        .path(self.rel.as_str()),
                                );
                                Some(region.end)
                            }
                            None => {
                                return Err(self.miss(
                                    idx,
                                    m,
                                    Part::Tail,
                                    &want,
                                    after,
                                    span_of(lines),
                                ))
                            }
                        }
                    }
                }
            };
            if let Some(end) = tail_region {
                region.end = end;
            }
        }
        if m.scope_end {
            // An empty region (`^`, `$`) has no last line to open a block.
            let end = (region.end > region.start)
                .then(|| self.block_end(region.end - 1))
                .flatten();
            match end {
                Some(end) => region.end = end.max(region.end),
                None => warnings.push(
                    Diagnostic::new(
                        Code::ScopeEndIgnored,
                        "`scope_end` is ignored: the snippet's last line opens no block",
                    )
                    .at(m.span, "no block to extend to")
                    .path(self.rel.as_str())
                    .hint(
                        "point the snippet at a line that opens a block (`fn f() {`, `def f():`)",
                    ),
                ),
            }
        }
        for _ in 0..m.leading_blank {
            if region.start > self.cursor && self.norm[region.start - 1].is_empty() {
                region.start -= 1;
            }
        }
        for _ in 0..m.trailing_blank {
            if region.end < self.n() && self.norm[region.end].is_empty() {
                region.end += 1;
            }
        }
        self.act(idx, m, region, &content, rw, warnings)
    }

    /// Where the snippet search starts after an anchor at non-blank index
    /// `at`: after it, or at its start when anchor and snippet overlap (3.2).
    fn anchor_scope(&self, at: usize, len: usize, anchor: &[&str], snippet: &[&str]) -> usize {
        let overlap = !snippet.is_empty()
            && ((1..=anchor.len().min(snippet.len()))
                .any(|k| anchor[anchor.len() - k..] == snippet[..k])
                || anchor.windows(snippet.len()).any(|w| w == snippet)
                || snippet.windows(anchor.len()).any(|w| w == anchor));
        if overlap {
            at
        } else {
            at + len
        }
    }

    /// The end (exclusive) of the block that line `l` opens: by bracket
    /// nesting, else by indentation.
    fn block_end(&self, l: usize) -> Option<usize> {
        let mut d = depth(self.line(l));
        if d > 0 {
            for j in l + 1..self.n() {
                d += depth(self.line(j));
                if d <= 0 {
                    return Some(j + 1);
                }
            }
            return None;
        }
        let base = indent(self.line(l));
        let mut last = l;
        for j in l + 1..self.n() {
            if self.norm[j].is_empty() {
                continue;
            }
            if indent(self.line(j)) > base {
                last = j;
            } else {
                break;
            }
        }
        (last > l).then_some(last + 1)
    }

    /// Carries out a located modification, or skips it when done already.
    fn act(
        &mut self,
        idx: usize,
        m: &'r Modification<'r>,
        mut region: Region,
        content: &[&str],
        rw: &Rewrite,
        warnings: &mut Vec<Diagnostic>,
    ) -> Result<(), Diagnostic> {
        let inserted: Vec<&'r str> = m.content.iter().map(|l| &*l.text).collect();
        match m.kind {
            ModKind::Replace | ModKind::Delete => {
                if m.kind == ModKind::Replace && self.normalised(region) == content {
                    self.skip(
                        m,
                        region.end,
                        warnings,
                        "the target already reads as the content",
                    );
                    return Ok(());
                }
                self.copy_to(region.start);
                self.out.extend(inserted.iter().map(|t| Out::New(t)));
                self.consumed.push((region.start, region.end, idx, m.span));
                self.cursor = region.end;
            }
            ModKind::InsertAfter => {
                if content.is_empty() {
                    return Ok(());
                }
                // The nesting guard may move the insertion past the block.
                let moved = (rw.nesting_guard
                    && region.end > region.start
                    && self.guard(region, &m.content))
                .then(|| self.block_end(region.end - 1))
                .flatten();
                for end in [Some(region.end), moved].into_iter().flatten() {
                    let after = self.nb_at[end] as usize;
                    if self.nb_matches(after, content) {
                        let to = self.region(after, content.len()).end;
                        self.skip(m, to, warnings, "the content already follows the snippet");
                        return Ok(());
                    }
                }
                if let Some(end) = moved {
                    if !rw.tolerant {
                        return Err(Diagnostic::new(
                            Code::ContextNotFound,
                            "INSERT_AFTER would put a top-level declaration inside the block its snippet opens",
                        )
                        .at(m.span, "inserts after a line that opens a block")
                        .path(self.rel.as_str())
                        .target(self.label(region, "this line opens a block".into()))
                        .hint("to add it after the whole construct, add `<ID> scope_end 1` (or apply with --tolerant)"));
                    }
                    warnings.push(
                        Diagnostic::new(Code::NestingGuardMoved, "the content is a top-level declaration; it goes after the block the snippet opens, not inside it")
                            .at(m.span, "moved past the block")
                            .path(self.rel.as_str())
                            .target(self.label(Region { start: region.start, end }, "this block".into())),
                    );
                    region.end = end;
                }
                self.copy_to(region.end);
                if moved.is_some() {
                    self.out.push(Out::New(""));
                }
                self.out.extend(inserted.iter().map(|t| Out::New(t)));
                self.cursor = region.end;
            }
            ModKind::InsertBefore => {
                if content.is_empty() {
                    return Ok(());
                }
                if self.precedes(region.start, content) {
                    self.skip(
                        m,
                        region.start,
                        warnings,
                        "the content already precedes the snippet",
                    );
                    return Ok(());
                }
                self.copy_to(region.start);
                self.out.extend(inserted.iter().map(|t| Out::New(t)));
            }
        }
        self.applied = true;
        Ok(())
    }

    /// The nesting guard (3.2 §3.6): INSERT_AFTER on a line that opens a
    /// block, with content that is itself a block-opening declaration
    /// written no deeper than that line.
    fn guard(&self, region: Region, content: &[Line]) -> bool {
        let line = self.line(region.end - 1);
        let opens = |l: &str| depth(l) > 0 || l.trim_end().ends_with(':');
        let Some(first) = content.iter().find(|l| !l.text.trim().is_empty()) else {
            return false;
        };
        opens(line)
            && opens(&first.text)
            && indent(&first.text) <= indent(line)
            && indent(&first.text) == 0
            && self.block_end(region.end - 1).is_some()
    }

    fn skip(&mut self, m: &Modification, to: usize, warnings: &mut Vec<Diagnostic>, why: &str) {
        warnings.push(
            Diagnostic::new(
                Code::AlreadyApplied,
                format!("{} skipped: {why}", m.kind.keyword()),
            )
            .at(m.span, "already applied")
            .path(self.rel.as_str()),
        );
        self.copy_to(to);
    }

    /// Moves the cursor to `to`, copying the original lines on the way.
    fn copy_to(&mut self, to: usize) {
        if to > self.cursor {
            self.out
                .extend((self.cursor..to).map(|i| Out::Orig(i as u32)));
            self.cursor = to;
        }
    }

    fn normalised(&self, r: Region) -> Vec<&'f str> {
        (r.start..r.end)
            .map(|i| self.norm[i])
            .filter(|t| !t.is_empty())
            .collect()
    }

    /// The non-blank lines from non-blank index `at` on read as `want`.
    fn nb_matches(&self, at: usize, want: &[&str]) -> bool {
        at + want.len() <= self.nb.len()
            && want
                .iter()
                .enumerate()
                .all(|(j, w)| self.norm[self.nb[at + j] as usize] == *w)
    }

    /// The text just before line `at` (the written result, then the
    /// original from the cursor) ends with `want`, blank lines aside.
    fn precedes(&self, at: usize, want: &[&str]) -> bool {
        let orig = (self.cursor..at).rev().map(|i| self.norm[i]);
        let out = self.out.iter().rev().map(|o| match *o {
            Out::Orig(i) => self.norm[i as usize],
            Out::New(t) => t.trim(),
        });
        let before = orig.chain(out).filter(|t| !t.is_empty());
        want.iter()
            .rev()
            .zip(before)
            .filter(|(w, b)| *w == b)
            .count()
            == want.len()
    }

    /// A snippet that is not there: done already (DELETE; REPLACE whose
    /// content is present), or an error.
    fn not_found(
        &mut self,
        idx: usize,
        m: &Modification,
        content: &[&str],
        scope: usize,
        warnings: &mut Vec<Diagnostic>,
    ) -> Result<(), Diagnostic> {
        let Target::Lines(lines) = &m.snippet else {
            unreachable!("boundaries are always found")
        };
        let want = normalise(lines);
        if m.kind == ModKind::Delete && self.consumed_by(&want).is_none() {
            self.skip(m, self.cursor, warnings, "the snippet is not in the file");
            return Ok(());
        }
        if m.kind == ModKind::Replace && !content.is_empty() {
            if let Some(&at) = self
                .find_with(content, scope, self.nb.len(), 1, false)
                .first()
            {
                let end = self.region(at, content.len()).end;
                self.skip(
                    m,
                    end,
                    warnings,
                    "the snippet is gone and the content is there",
                );
                return Ok(());
            }
        }
        Err(self.miss(idx, m, Part::Snippet, &want, scope, span_of(lines)))
    }

    /// The earlier modification that removed `want` from the file, if one did.
    fn consumed_by(&self, want: &[&str]) -> Option<(usize, Span)> {
        let upto = self.nb_at[self.cursor] as usize;
        let hits = self.find_with(want, 0, upto, LIST, false);
        hits.iter().find_map(|&h| {
            let r = self.region(h, want.len());
            self.consumed
                .iter()
                .find(|c| r.start < c.1 && c.0 < r.end)
                .map(|c| (c.2, c.3))
        })
    }

    fn label(&self, r: Region, message: String) -> TargetLabel {
        let text = self
            .target_text
            .get_or_init(|| Arc::from(self.text))
            .clone();
        let start = self.lines.get(r.start).map_or(self.text.len(), |l| l.0);
        let end = if r.end > r.start {
            self.lines[r.end - 1].1
        } else {
            start
        };
        TargetLabel {
            path: self.rel.to_string(),
            text,
            span: Span::new(start, end),
            message,
        }
    }

    fn soft_warning(&self, lines: &[Line], part: Part, at: usize, len: usize) -> Diagnostic {
        Diagnostic::new(
            Code::SoftStartMatch,
            format!("the {}'s first line matched only after a prefix (numbering, bullet or comment marker) in `{}`", part.name(), self.rel),
        )
        .at(span_of(lines), "matched with a prefix dropped")
        .path(self.rel.as_str())
        .target(self.label(self.region(at, len), "matched here".into()))
        .hint("copy the first line exactly as the file has it")
    }

    fn before_cursor(&self, m: &Modification, what: &str) -> Diagnostic {
        Diagnostic::new(
            Code::ContextNotFound,
            format!(
                "{what} lies before text an earlier modification of `{}` already changed",
                self.rel
            ),
        )
        .at(m.span, "out of order")
        .path(self.rel.as_str())
        .hint("modifications of one file apply top to bottom: move this one first")
    }

    fn ambiguous(
        &self,
        m: &Modification,
        part: Part,
        lines: &[Line],
        hits: &[usize],
        len: usize,
    ) -> Diagnostic {
        let mut d = Diagnostic::new(
            Code::AmbiguousContext,
            format!(
                "the {} occurs {} times in `{}`{}",
                part.name(),
                if hits.len() >= LIST {
                    format!("{}+", hits.len())
                } else {
                    hits.len().to_string()
                },
                self.rel,
                if self.cursor > 0 {
                    " after the previous modification"
                } else {
                    ""
                }
            ),
        )
        .at(span_of(lines), "matches more than one place")
        .secondary(m.span, "in this modification")
        .path(self.rel.as_str());
        for &h in hits.iter().take(LIST) {
            let r = self.region(h, len);
            d = d.target(self.label(r, format!("candidate at line {}", r.start + 1)));
        }
        if let Some(a) = self.unique_line_above(self.region(hits[0], len).start) {
            d = d.hint(format!(
                "add an `anchor` that occurs once, above the intended place; for the first candidate, line {} would do: `{}`",
                a + 1,
                self.norm[a]
            ));
        } else {
            d = d.hint("add an `anchor`: a line above the intended place that occurs only once in the file");
        }
        d
    }

    /// The nearest line above `at` (and after the cursor) that occurs once in the file.
    fn unique_line_above(&self, at: usize) -> Option<usize> {
        (self.cursor..at).rev().find(|&i| {
            !self.norm[i].is_empty() && self.index.get(self.norm[i]).is_some_and(|v| v.len() == 1)
        })
    }

    /// A locator that is not there: where the nearest text is and what an
    /// earlier modification did to it.
    fn miss(
        &self,
        _idx: usize,
        m: &Modification,
        part: Part,
        want: &[&str],
        from: usize,
        at: Span,
    ) -> Diagnostic {
        let mut d = Diagnostic::new(
            Code::ContextNotFound,
            format!(
                "the {} is not in `{}`{}",
                part.name(),
                self.rel,
                if self.cursor > 0 {
                    " after the previous modification"
                } else {
                    ""
                }
            ),
        )
        .at(
            at,
            if want.len() == 1 {
                "this line does not occur"
            } else {
                "these lines do not occur together"
            },
        )
        .secondary(m.span, "in this modification")
        .path(self.rel.as_str())
        .note("lines are compared with surrounding whitespace and blank lines ignored");
        if let Some((k, span)) = self.consumed_by(want) {
            return d
                .secondary(span, format!("modification {} changed these lines", k + 1))
                .note(format!("it was in the file, but modification {} of this file already replaced or removed it", k + 1))
                .hint("fold the two changes into one modification, or locate this one by text that is still there");
        }
        if !self.find_with(want, 0, from, 1, false).is_empty() {
            return match part {
                Part::Tail => d
                    .note("it occurs before the snippet: a range runs down from the snippet to the first match of its tail")
                    .hint("swap `snippet` and `snippet_tail`, or pick a tail below the snippet"),
                _ if self.cursor > 0 && self.find_with(want, self.nb_at[self.cursor] as usize, from, 1, false).is_empty() => d
                    .note("it occurs above the point where the previous modification ended; modifications of one file apply top to bottom")
                    .hint("order the modifications of this file as their targets appear in it"),
                _ => d
                    .note("it occurs above the anchor; the snippet is sought below the anchor")
                    .hint("choose an anchor above the snippet"),
            };
        }
        match self.nearest(want, from) {
            Some((s, votes)) => {
                let len = want.len().min(self.nb.len() - s);
                let r = self.region(s, len.max(1));
                d = d.target(self.label(r, "the nearest text".into()));
                let first = self.norm[self.nb[s] as usize];
                d.hint(if want.len() == 1 && first.contains(want[0]) {
                    format!("a locator is whole lines: write the full line `{first}`")
                } else if votes > 0 {
                    "some of these lines are in the file (see the nearest text): copy the others exactly as the file has them".to_string()
                } else {
                    "no line of it occurs in the file as written: copy the nearest line shown exactly, or re-read the file".to_string()
                })
            }
            None => {
                d.hint("re-read the file: nothing after the previous modification resembles it")
            }
        }
    }

    /// The non-blank start from `from` on where most lines of `want` agree,
    /// or else the line most like its first line.
    fn nearest(&self, want: &[&str], from: usize) -> Option<(usize, usize)> {
        let total = self.nb.len();
        if from >= total || want.is_empty() {
            return None;
        }
        let mut votes: HashMap<usize, usize> = HashMap::new();
        for (k, w) in want.iter().enumerate() {
            for &p in self.index.get(w).map_or(&[][..], |v| v) {
                let p = p as usize;
                if p >= from + k {
                    *votes.entry(p - k).or_default() += 1;
                }
            }
        }
        if let Some((&s, &n)) = votes
            .iter()
            .max_by_key(|(&s, &n)| (n, std::cmp::Reverse(s)))
        {
            return Some((s, n));
        }
        let score = |line: &str| -> usize {
            let a = want[0];
            let common = line
                .chars()
                .zip(a.chars())
                .take_while(|(x, y)| x == y)
                .count()
                + line
                    .chars()
                    .rev()
                    .zip(a.chars().rev())
                    .take_while(|(x, y)| x == y)
                    .count();
            if line.contains(a) || a.contains(line) {
                common + a.len()
            } else {
                common
            }
        };
        (from..total)
            .map(|k| (k, score(self.norm[self.nb[k] as usize])))
            .max_by_key(|&(k, s)| (s, std::cmp::Reverse(k)))
            .filter(|&(_, s)| s > 0)
            .map(|(k, _)| (k, 0))
    }

    /// The result: original lines with their own ending (or the forced
    /// one), new lines with `eol`, trailing whitespace stripped where the
    /// version says, and a final line ending.
    fn render(mut self, eol: &str, force: bool, strip: bool) -> String {
        self.copy_to(self.n());
        let mut s = String::with_capacity(self.text.len() + 64);
        for o in &self.out {
            let (line, end) = match *o {
                Out::Orig(i) => {
                    let (a, b, c) = self.lines[i as usize];
                    let own = &self.text[b..c];
                    (
                        &self.text[a..b],
                        if force || own.is_empty() { eol } else { own },
                    )
                }
                Out::New(t) => (t, eol),
            };
            s.push_str(if strip {
                line.trim_end_matches([' ', '\t'])
            } else {
                line
            });
            s.push_str(end);
        }
        s
    }
}

/// What a modification's locator says, normalised: two modifications with
/// the same key name the same place, the documented way to address N
/// identical blocks in order (each takes the next one).
fn locator_key(m: &Modification) -> Option<String> {
    let Target::Lines(lines) = &m.snippet else {
        return None;
    };
    let anchor = m.anchor.as_deref().map(normalise).unwrap_or_default();
    Some(format!(
        "{}\0{}",
        anchor.join("\n"),
        normalise(lines).join("\n")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoration_is_numbering_bullets_and_comment_markers_only() {
        assert!(soft_eq("# 1. First item", "First item"));
        assert!(soft_eq("- [x]", "[x]"));
        assert!(soft_eq("// 2) step", "step"));
        assert!(!soft_eq("self.count = 0", "count = 0"));
        assert!(!soft_eq("x", "x"));
        assert_eq!(strip_decoration("  * 12. foo"), "foo");
    }

    #[test]
    fn brackets_and_line_endings() {
        assert!(balanced("f() { [a] }"));
        assert!(!balanced("f() {"));
        assert_eq!(detect_eol("a\r\nb\n"), "\r\n");
        assert_eq!(detect_eol("a\rb"), "\r");
        assert_eq!(detect_eol("ab"), "\n");
    }
}
