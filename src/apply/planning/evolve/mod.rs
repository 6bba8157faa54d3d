//! A file as a patch's earlier edits left it, for formats whose edits apply
//! one after the other (RepoPatch).
//!
//! Rebuilding the text after every edit would cost the file's size per
//! edit: 5,000 edits of a 200,000-line file is a billion line copies. So the
//! file is a doubly linked list of line nodes instead. Nodes `0..n` are the
//! original lines (and share the original file's line index); an edit
//! unlinks the nodes it removes and links new ones for the lines it adds,
//! which go into a small index of their own. Finding a block walks only the
//! live nodes whose text hashes like the block's rarest line, as
//! [`FileText::find_all`] does, so each edit costs its own size plus the
//! candidates of that line, whatever edits came before.
//!
//! Positions (line numbers) are not kept: they are needed only to explain a
//! failure, and [`Evolving::current`] writes the text out for that.

mod links;

use std::cell::RefCell;
use std::collections::HashMap;

use crate::apply::matching::indent::Indent;
use crate::apply::matching::text::{hash_key, FileText, Key};
use crate::apply::output::{Builder, Pieces};
use crate::ir::{Edit, Level, Line, NewLine};
use links::{Links, Node};

/// No node: the end of the list.
pub const NIL: u32 = u32::MAX;

/// A node's source: original line `src`, or with [`TEXT`] set, added node
/// `n + src - TEXT`'s patch line.
const TEXT: u32 = 1 << 31;
const DEAD: u32 = u32::MAX - 1;

/// The text of a kept line the matched lines lack (an empty line).
static EMPTY: Line<'static> = Line { text: "" };

/// The most lines a file may have here (the planner refuses more).
pub const MAX_LINES: usize = TEXT as usize;

/// Added nodes by the hash of their line's key: for each hash its last
/// node and how many there are, each node chained to the previous one
/// with its hash. 4 bytes a node and one entry a hash, where a list per
/// hash cost an allocation each.
///
/// Where the file indexed the pivots of this kind ([`FileText::expect`]),
/// only nodes whose key is a pivot are filed (`filtered`): a search of a
/// block with a pivot walks a pivot, and most lines a patch adds are
/// none. A search of a block without one files every node again,
/// unfiltered, first.
#[derive(Default)]
struct AddedIndex {
    /// Hash -> (last node with it, how many nodes have it).
    last: HashMap<u64, (u32, u32), foldhash::fast::FixedState>,
    /// For added node `n + i`, the node before it with the same hash: a
    /// list over every added node, or with `filtered`, a map over the few
    /// filed.
    before: Vec<u32>,
    filed_before: HashMap<u32, u32, foldhash::fast::FixedState>,
    filtered: bool,
}

impl AddedIndex {
    /// Files node `id` (the next added node filed) under `h`.
    fn push(&mut self, h: u64, id: u32) {
        let e = self.last.entry(h).or_insert((NIL, 0));
        match self.filtered {
            true => {
                self.filed_before.insert(id, e.0);
            }
            false => self.before.push(e.0),
        }
        *e = (id, e.1 + 1);
    }

    fn count(&self, h: u64) -> usize {
        self.last.get(&h).map_or(0, |e| e.1 as usize)
    }

    /// The added nodes filed under `h`, newest first; `n` is the number
    /// of original lines (the first added node's id).
    fn nodes(&self, h: u64, n: u32) -> impl Iterator<Item = u32> + '_ {
        let first = self.last.get(&h).map(|e| e.0);
        std::iter::successors(first, move |&id| {
            let before = match self.filtered {
                true => self.filed_before[&id],
                false => self.before[(id - n) as usize],
            };
            Some(before).filter(|&b| b != NIL)
        })
    }
}

pub struct Evolving<'f, 'p> {
    file: FileText<'f>,
    nodes: Links,
    /// Added node `n + k`'s patch line, where the model keeps it (8 bytes
    /// a node, where a copy of the slice and the node's source took 20);
    /// `None` for the rare node that copies another's line, in `copies`.
    texts: Vec<Option<&'p Line<'p>>>,
    /// Added node `n + k` that copies a line: its source (see [`TEXT`]).
    copies: HashMap<u32, u32, foldhash::fast::FixedState>,
    /// The few of them re-indented as the file is (the match ignored
    /// indentation): the mapping in `indents`, and the result.
    indented: HashMap<u32, (usize, String), foldhash::fast::FixedState>,
    /// The patch text, where an added line that ends as the file's lines
    /// do is written with its ending, one piece.
    source: &'p str,
    /// The indentation mappings added lines were written with.
    indents: Vec<Indent>,
    head: u32,
    tail: u32,
    /// Lines added so far, by the hash of their key, for each kind of key
    /// a search used: built when a search first needs it (most edits match
    /// exactly, so the relaxed kinds seldom are), brought up to date before
    /// each search. With each, the first node not yet in it.
    added: RefCell<Vec<(Key, AddedIndex, u32)>>,
    /// Whether the text ends with a line end. While it does not, the last
    /// line is never empty: `x` and an empty line without an ending is the
    /// text `x\n`, one line, and the list must read like the text.
    final_newline: bool,
}

impl<'f, 'p> Evolving<'f, 'p> {
    /// The original file, ready for `edits`. Room for every node they can
    /// add is taken at once: growing the list of added nodes by doubling
    /// held both copies at the peak.
    pub fn new(file: FileText<'f>, source: &'p str, edits: &[Edit]) -> Self {
        let n = file.len() as u32;
        let new: usize = edits.iter().map(|e| e.new.len()).sum();
        let nodes = Links::new(n, new);
        let final_newline = n == 0 || !file.eol(n as usize - 1).is_empty();
        Evolving {
            file,
            nodes,
            texts: Vec::with_capacity(new),
            copies: HashMap::default(),
            indented: HashMap::default(),
            source,
            indents: vec![],
            head: if n == 0 { NIL } else { 0 },
            tail: if n == 0 { NIL } else { n - 1 },
            added: RefCell::new(vec![]),
            final_newline,
        }
    }

    fn src_text(&self, src: u32) -> &str {
        if src & TEXT == 0 {
            self.file.line(src as usize)
        } else {
            let k = src - TEXT;
            match self.indented.get(&k) {
                Some((_, s)) => s,
                None => self.texts[k as usize].map_or("", |l| l.text),
            }
        }
    }

    fn src(&self, id: u32) -> u32 {
        let n = self.file.len() as u32;
        if id < n {
            return id;
        }
        let k = id - n;
        match self.texts[k as usize] {
            Some(_) => TEXT | k,
            None => self.copies[&k],
        }
    }

    /// The text of node `id`'s line.
    pub fn line(&self, id: u32) -> &str {
        self.src_text(self.src(id))
    }

    fn alive(&self, id: u32) -> bool {
        self.nodes.get(id).prev != DEAD
    }

    fn unlink(&mut self, id: u32, by: usize) {
        self.nodes.kill(id, by as u32);
    }

    pub fn next(&self, id: u32) -> u32 {
        if id == NIL {
            self.head
        } else {
            self.nodes.get(id).next
        }
    }

    /// The live node before `id` (`NIL` at the start).
    pub fn prev(&self, id: u32) -> u32 {
        if id == NIL {
            NIL
        } else {
            self.nodes.get(id).prev
        }
    }

    /// The original line a node shows, if it is one.
    pub fn original_line(&self, id: u32) -> Option<usize> {
        if id as usize >= self.nodes.len() {
            return None;
        }
        let src = self.src(id);
        (src & TEXT == 0).then_some(src as usize)
    }

    /// The edit that removed original line `i`, if one did.
    pub fn removed_by(&self, i: usize) -> Option<usize> {
        self.nodes.removed_by(i as u32).map(|by| by as usize)
    }

    /// The first node of every place `block` (non-empty) matches at
    /// `level` (a consecutive one), in no particular order, up to `limit`.
    pub fn find_all(&self, block: &[Line], level: Level, limit: usize) -> Vec<u32> {
        let kind = Key::at(level);
        let mut indexes = self.added.borrow_mut();
        let n = self.file.len() as u32;
        let fresh = || AddedIndex {
            filtered: self.file.has_pivots(kind),
            ..AddedIndex::default()
        };
        let k = match indexes.iter().position(|(key, ..)| *key == kind) {
            Some(k) => k,
            None => {
                indexes.push((kind, fresh(), n));
                indexes.len() - 1
            }
        };
        let keys: Vec<_> = block.iter().map(|l| kind.of(l.text)).collect();
        let hashes: Vec<u64> = keys.iter().map(|k| hash_key(k)).collect();
        let is_pivot = |h: u64| self.file.is_pivot(h, kind);
        let (_, added, done) = &mut indexes[k];
        // A block without a pivot is searched by a line the filtered index
        // may have left out: it files every line again first.
        if added.filtered && !hashes.iter().any(|&h| is_pivot(h)) {
            (*added, *done) = (AddedIndex::default(), n);
        }
        for id in *done..self.nodes.len() as u32 {
            let h = hash_key(&kind.of(self.line(id)));
            if !added.filtered || is_pivot(h) {
                added.push(h, id);
            }
        }
        *done = self.nodes.len() as u32;
        let added = &*added;
        // The rarest line, among the pivots the file indexed when the block
        // has one (its rarest in the original: lines earlier edits added
        // may make another rarer, and every other key would be scanned for).
        let rank = |&(_, h): &(usize, u64)| self.file.count(h, kind) + added.count(h);
        let hashed = || hashes.iter().copied().enumerate();
        let Some((pivot, h)) = hashed()
            .filter(|&(_, h)| is_pivot(h))
            .min_by_key(rank)
            .or_else(|| {
                self.file.seek(kind, hashes.iter().copied());
                hashed().min_by_key(rank)
            })
        else {
            return vec![];
        };
        let orig = self.file.positions(h, kind).map(|i| i as u32);
        let ids = orig.chain(added.nodes(h, self.file.len() as u32));
        ids.filter(|&c| self.alive(c))
            .filter_map(|c| {
                let mut start = c;
                for _ in 0..pivot {
                    start = self.nodes.get(start).prev;
                    if start == NIL {
                        return None;
                    }
                }
                let mut at = start;
                for k in &keys {
                    if at == NIL || kind.of(self.line(at)) != *k {
                        return None;
                    }
                    at = self.nodes.get(at).next;
                }
                Some(start)
            })
            .take(limit)
            .collect()
    }

    /// The `len` live nodes from `start` on.
    pub fn run(&self, start: u32, len: usize) -> Vec<u32> {
        let mut out = Vec::with_capacity(len);
        let mut at = start;
        while out.len() < len && at != NIL {
            out.push(at);
            at = self.nodes.get(at).next;
        }
        out
    }

    /// A new node showing `line`, or copying the line of source `src`.
    fn push_node(&mut self, line: Option<&'p Line<'p>>, src: u32) -> u32 {
        let id = self.nodes.push(Node {
            prev: NIL,
            next: NIL,
        });
        let k = self.texts.len() as u32;
        self.texts.push(line);
        if line.is_none() {
            self.copies.insert(k, src);
        }
        id
    }

    /// A node for a patch line, re-indented by mapping `indent` (an index
    /// into `indents`) when it applies.
    fn push_text(&mut self, line: &'p Line<'p>, indent: Option<usize>) -> u32 {
        let k = self.texts.len() as u32;
        if let Some(s) = indent.and_then(|i| Some((i, self.indents[i].mapped(line.text)?))) {
            self.indented.insert(k, s);
        }
        self.push_node(Some(line), 0)
    }

    fn link(&mut self, a: u32, b: u32) {
        if a == NIL {
            self.head = b;
        } else {
            self.nodes.set_next(a, b);
        }
        if b == NIL {
            self.tail = a;
        } else {
            self.nodes.set_prev(b, a);
        }
    }

    /// Replaces the nodes `matched` (consecutive and live; empty for a pure
    /// insertion after `after`, `NIL` for the start) with `edit`'s new
    /// block, its added lines re-indented by `indent` when given. Returns
    /// the last node of the new block, or the node before it when the block
    /// is empty.
    pub fn splice(
        &mut self,
        after: u32,
        matched: &[u32],
        edit: &'p Edit<'_>,
        index: usize,
        indent: Option<Indent>,
    ) -> u32 {
        let indent = indent.map(|i| {
            self.indents.push(i);
            self.indents.len() - 1
        });
        let before = matched.first().map_or(after, |&m| self.nodes.get(m).prev);
        let following = match matched.last() {
            Some(&m) => self.nodes.get(m).next,
            None => self.next(after),
        };
        let mut kept = vec![false; matched.len()];
        let mut last_kept = None;
        let mut seq = Vec::with_capacity(edit.new.len());
        for new in edit.new {
            let (from, count) = match *new {
                NewLine::Keep(from, count) => (from as usize, count as usize),
                NewLine::Add(ref line) => {
                    seq.push(self.push_text(line, indent));
                    continue;
                }
            };
            for j in from..from + count {
                let id = match (matched.get(j), kept.get_mut(j)) {
                    (Some(&m), Some(k)) if last_kept.is_none_or(|l| j > l) => {
                        *k = true;
                        last_kept = Some(j);
                        m
                    }
                    (Some(&m), _) => self.push_node(None, self.src(m)),
                    (None, _) => self.push_text(&EMPTY, None),
                };
                seq.push(id);
            }
        }
        for (j, &m) in matched.iter().enumerate() {
            if !kept[j] {
                self.unlink(m, index);
            }
        }
        let mut prev = before;
        for &id in &seq {
            self.link(prev, id);
            prev = id;
        }
        self.link(prev, following);
        let tail = self.tail;
        if !self.final_newline && tail != NIL && self.line(tail).is_empty() {
            // An empty last line without a line end is no line: its
            // predecessor's line end now ends the text.
            let before_tail = self.nodes.get(tail).prev;
            self.unlink(tail, index);
            self.link(before_tail, NIL);
            self.final_newline = true;
            if prev == tail {
                prev = before_tail;
            }
        }
        prev
    }

    /// The last node, `NIL` for an empty file.
    #[cfg(test)]
    pub fn tail(&self) -> u32 {
        self.tail
    }

    /// Writes the current text out: each line with its own ending, added
    /// lines (and a last line that is no longer last) with the file's
    /// dominant one, and the final-newline state kept. Calls `line` with each node as its line is written.
    fn write_out(&self, out: &mut Builder<'p, '_>, mut line: impl FnMut(u32)) {
        let file = &self.file;
        let n = file.len();
        let dominant: &'static str = if n > 0 && file.eol(0) == "\r\n" {
            "\r\n"
        } else {
            "\n"
        };
        out.push_original(0, file.prefix_len());
        let mut at = self.head;
        while at != NIL {
            // A run of original lines no edit touched, written as one piece.
            let end = match at < n as u32 {
                true => self.nodes.unchanged_until(at),
                false => at,
            };
            if end > at {
                (at..end).for_each(&mut line);
                out.push_original(file.start(at as usize), file.start(end as usize));
                let last = end as usize == n;
                if last && file.eol(n - 1).is_empty() {
                    out.push_text(dominant);
                }
                at = if last { NIL } else { end };
                continue;
            }
            line(at);
            let node = self.nodes.get(at);
            let src = self.src(at);
            if src & TEXT == 0 {
                let i = src as usize;
                out.push_original(file.start(i), file.start(i + 1));
                // Only the last line can lack an ending.
                if i + 1 == n && file.eol(i).is_empty() {
                    out.push_text(dominant);
                }
            } else {
                let k = src - TEXT;
                let line = self.texts[k as usize].map_or("", |l| l.text);
                match self.indented.get(&k) {
                    Some(&(i, _)) => self.indents[i].push(out, line),
                    None => match Line::of(line).with_eol(self.source, dominant) {
                        Some(whole) => {
                            out.push_text(whole);
                            at = node.next;
                            continue;
                        }
                        None => out.push_text(line),
                    },
                }
                out.push_text(dominant);
            }
            at = node.next;
        }
        if !self.final_newline {
            out.trim_final_eol();
        }
    }

    /// The original file, as the list reads it.
    pub fn file(&self) -> &FileText<'f> {
        &self.file
    }

    /// The new text, as pieces of the original and of the patch. The
    /// searches are over: their indexes go first, so that they and the
    /// pieces never peak together.
    pub fn pieces(mut self) -> Pieces<'p> {
        self.file.forget_indexes();
        self.added = RefCell::default();
        let mut out = Builder::new(self.file.text);
        self.write_out(&mut out, |_| {});
        out.finish()
    }

    /// The current text, and the node of each of its lines (to explain a
    /// failure against the file as it is at that point).
    pub fn current(&self) -> (String, Vec<u32>) {
        let mut out = Builder::new(self.file.text);
        let mut order = vec![];
        self.write_out(&mut out, |id| order.push(id));
        let pieces = out.finish();
        let text = crate::apply::output::Output::new(self.file.text.to_string(), pieces).to_text();
        (text, order)
    }
}

#[cfg(test)]
mod tests;
