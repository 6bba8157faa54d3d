//! What a file will contain, described rather than copied: a list of pieces,
//! each a range of the file's original text or a slice of the patch text.
//!
//! Planning must finish for every file before anything is written, so a
//! materialised copy of every new file would sit in memory beside every
//! original (which the rollback needs anyway). Pieces cost a few bytes per
//! edited line instead; the commit streams them to the file.

/// The new content of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output<'p> {
    /// The file's current text (empty for a new file): the source of
    /// [`Piece::Original`], and what the rollback restores.
    pub original: String,
    pieces: Vec<Piece<'p>>,
    /// Text computed in full (ap's rewrites), in place of the pieces.
    computed: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Piece<'p> {
    Original(usize, usize),
    Text(&'p str),
}

/// Pieces collected by a [`Builder`], ready to join their original text.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Pieces<'p>(Vec<Piece<'p>>);

/// Collects pieces while the original text is borrowed (by the line index).
pub struct Builder<'p, 'o> {
    original: &'o str,
    pieces: Vec<Piece<'p>>,
}

impl<'p, 'o> Builder<'p, 'o> {
    pub fn new(original: &'o str) -> Self {
        Builder {
            original,
            pieces: vec![],
        }
    }

    /// Appends `original[start..end]`, joining it to an adjacent original range.
    pub fn push_original(&mut self, start: usize, end: usize) {
        if start >= end {
            return;
        }
        if let Some(Piece::Original(_, last_end)) = self.pieces.last_mut() {
            if *last_end == start {
                *last_end = end;
                return;
            }
        }
        self.pieces.push(Piece::Original(start, end));
    }

    pub fn push_text(&mut self, text: &'p str) {
        if !text.is_empty() {
            self.pieces.push(Piece::Text(text));
        }
    }

    fn text(&self, piece: Piece<'p>) -> &str {
        match piece {
            Piece::Original(s, e) => &self.original[s..e],
            Piece::Text(t) => t,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.pieces.is_empty()
    }

    pub fn ends_with_newline(&self) -> bool {
        self.pieces
            .last()
            .is_some_and(|&p| self.text(p).ends_with('\n'))
    }

    /// Removes the final line end (`\n` or `\r\n`), if there is one.
    pub fn trim_final_eol(&mut self) {
        let Some(last) = self.pieces.pop() else {
            return;
        };
        let text = self.text(last);
        let kept = text
            .strip_suffix('\n')
            .map_or(text, |t| t.strip_suffix('\r').unwrap_or(t))
            .len();
        let trimmed = match last {
            Piece::Original(s, _) => Piece::Original(s, s + kept),
            Piece::Text(t) => Piece::Text(&t[..kept]),
        };
        if kept > 0 {
            self.pieces.push(trimmed);
        }
    }

    pub fn finish(self) -> Pieces<'p> {
        Pieces(self.pieces)
    }
}

impl<'p> Output<'p> {
    /// `pieces` must have been built over this same `original`.
    pub fn new(original: String, pieces: Pieces<'p>) -> Self {
        Output {
            original,
            pieces: pieces.0,
            computed: None,
        }
    }

    /// An output computed in full rather than described by pieces.
    pub fn computed(original: String, text: String) -> Self {
        Output {
            original,
            pieces: vec![],
            computed: Some(text),
        }
    }

    fn bytes(&self, piece: &Piece<'p>) -> &[u8] {
        match *piece {
            Piece::Original(s, e) => &self.original.as_bytes()[s..e],
            Piece::Text(t) => t.as_bytes(),
        }
    }

    /// The content, in order, as byte slices to write.
    pub fn chunks(&self) -> Vec<&[u8]> {
        match &self.computed {
            Some(text) => vec![text.as_bytes()],
            None => self.pieces.iter().map(|p| self.bytes(p)).collect(),
        }
    }

    pub fn len(&self) -> usize {
        self.chunks().iter().map(|c| c.len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the content equals `bytes`, without building it.
    pub fn equals(&self, bytes: &[u8]) -> bool {
        let mut at = 0;
        for chunk in self.chunks() {
            if bytes.get(at..at + chunk.len()) != Some(chunk) {
                return false;
            }
            at += chunk.len();
        }
        at == bytes.len()
    }

    /// Whether the content is the original text, unchanged.
    pub fn is_unchanged(&self) -> bool {
        self.equals(self.original.as_bytes())
    }

    /// The content as one buffer (for the in-memory tree and tests).
    pub fn to_vec(&self) -> Vec<u8> {
        self.chunks().concat()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_join_trim_and_compare() {
        let original = "a\r\nb\r\n".to_string();
        let mut b = Builder::new(&original);
        b.push_original(0, 3);
        b.push_original(3, 6);
        assert_eq!(b.pieces.len(), 1);
        b.push_text("c");
        b.push_text("\r\n");
        assert!(b.ends_with_newline());
        b.trim_final_eol();
        let pieces = b.finish();
        let out = Output::new(original.clone(), pieces);
        assert_eq!(out.to_vec(), b"a\r\nb\r\nc");
        assert_eq!(out.len(), 7);
        assert!(out.equals(b"a\r\nb\r\nc") && !out.equals(b"a\r\nb\r\nc\n") && !out.is_unchanged());
        let x = "x\n".to_string();
        let mut b = Builder::new(&x);
        b.push_original(0, 2);
        assert!(Output::new(x.clone(), b.finish()).is_unchanged());
        let mut b = Builder::new(&x);
        b.push_original(0, 2);
        b.trim_final_eol();
        assert_eq!(Output::new(x.clone(), b.finish()).to_vec(), b"x");
        assert!(Output::new(String::new(), Pieces::default()).is_empty());
    }
}
