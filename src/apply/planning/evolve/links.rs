//! The evolving file's links: a doubly linked list of line nodes whose
//! original lines keep implicit links until an edit changes them.

use std::collections::HashMap;

use super::{DEAD, NIL};

/// A line node: its neighbours. Node `i < n` shows original line `i`
/// (its links implicit until an edit changes them, see [`Links`]); a later
/// node shows its patch line (`texts[i - n]`), or the line it copies.
#[derive(Debug, Clone, Copy)]
pub(super) struct Node {
    /// The previous node, [`NIL`] for the first, [`DEAD`] once unlinked.
    pub(super) prev: u32,
    pub(super) next: u32,
}

/// The list's links. An original line's are implicit (`i - 1`, `i + 1`)
/// until an edit changes them; then they are kept in `changed`, with a
/// bit in `touched` saying so. A removed original line is a bit in
/// `removed`, and the edits that removed lines are runs in `removals`
/// (asked only to explain a failure). An added node's are in `added`. A
/// node per original line would cost 8 bytes a line where an edit
/// relinks two, and an entry in `changed` per removed line would be most
/// of that map.
pub(super) struct Links {
    /// The number of original lines.
    n: u32,
    touched: Vec<u64>,
    changed: HashMap<u32, Node, foldhash::fast::FixedState>,
    removed: Vec<u64>,
    /// `(first, end, edit)`: edit `edit` removed original lines
    /// `first..end` (some of them may have been removed before).
    removals: Vec<(u32, u32, u32)>,
    added: Vec<Node>,
}

/// Whether bit `i` of `bits` is set.
pub(super) fn bit(bits: &[u64], i: u32) -> bool {
    bits[i as usize / 64] >> (i % 64) & 1 == 1
}

impl Links {
    pub(super) fn new(n: u32, room: usize) -> Links {
        let words = (n as usize).div_ceil(64);
        Links {
            n,
            touched: vec![0; words],
            changed: HashMap::default(),
            removed: vec![0; words],
            removals: vec![],
            added: Vec::with_capacity(room),
        }
    }

    pub(super) fn len(&self) -> usize {
        self.n as usize + self.added.len()
    }

    pub(super) fn get(&self, id: u32) -> Node {
        if id >= self.n {
            return self.added[(id - self.n) as usize];
        }
        if bit(&self.removed, id) {
            return Node {
                prev: DEAD,
                next: NIL,
            };
        }
        if bit(&self.touched, id) {
            return self.changed[&id];
        }
        Node {
            prev: id.checked_sub(1).unwrap_or(NIL),
            next: if id + 1 == self.n { NIL } else { id + 1 },
        }
    }

    /// The first original line at or after `id` whose links an edit
    /// changed, or `n`. From an unchanged `id` the list runs `id, id + 1,
    /// …` up to it: a line before it that an edit had removed, or linked
    /// elsewhere, would have changed its neighbour's links too.
    pub(super) fn unchanged_until(&self, id: u32) -> u32 {
        let changed = |w: usize| self.touched[w] | self.removed[w];
        let mut w = id as usize / 64;
        let mut bits = changed(w) & (!0u64 << (id % 64));
        while bits == 0 {
            w += 1;
            if w == self.touched.len() {
                return self.n;
            }
            bits = changed(w);
        }
        (w as u32 * 64 + bits.trailing_zeros()).min(self.n)
    }

    pub(super) fn get_mut(&mut self, id: u32) -> &mut Node {
        if id >= self.n {
            return &mut self.added[(id - self.n) as usize];
        }
        let now = self.get(id);
        self.touched[id as usize / 64] |= 1 << (id % 64);
        self.changed.entry(id).or_insert(now)
    }

    /// Takes node `id` out of the list, removed by edit `by` (its
    /// neighbours are relinked apart).
    pub(super) fn kill(&mut self, id: u32, by: u32) {
        if id >= self.n {
            self.added[(id - self.n) as usize].prev = DEAD;
            return;
        }
        self.removed[id as usize / 64] |= 1 << (id % 64);
        if bit(&self.touched, id) {
            self.touched[id as usize / 64] &= !(1 << (id % 64));
            self.changed.remove(&id);
        }
        match self.removals.last_mut() {
            Some((_, end, edit)) if *end == id && *edit == by => *end += 1,
            _ => self.removals.push((id, id + 1, by)),
        }
    }

    /// The edit that removed original line `id`, if one did (the last
    /// run that names it: a line is removed once).
    pub(super) fn removed_by(&self, id: u32) -> Option<u32> {
        if id >= self.n || !bit(&self.removed, id) {
            return None;
        }
        self.removals
            .iter()
            .rev()
            .find(|&&(first, end, _)| (first..end).contains(&id))
            .map(|&(_, _, by)| by)
    }

    pub(super) fn set_next(&mut self, id: u32, next: u32) {
        debug_assert!(
            self.get(id).prev != DEAD,
            "a removed node is never relinked"
        );
        if self.get(id).next != next {
            self.get_mut(id).next = next;
        }
    }

    pub(super) fn set_prev(&mut self, id: u32, prev: u32) {
        debug_assert!(
            self.get(id).prev != DEAD,
            "a removed node is never relinked"
        );
        if self.get(id).prev != prev {
            self.get_mut(id).prev = prev;
        }
    }

    pub(super) fn push(&mut self, node: Node) -> u32 {
        self.added.push(node);
        self.len() as u32 - 1
    }
}
