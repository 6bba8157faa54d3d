//! Bytes that are not UTF-8, carried through a `String` without loss.
//!
//! Patches and the files they edit are text to every grammar and to the
//! matcher, but real files hold Latin-1 comments, stray bytes and binary
//! blobs. Each byte of an invalid sequence becomes one character of a
//! reserved block (U+10FF80..=U+10FFFF, private use in plane 16: byte `b`
//! is U+10FF00 + `b`), so such a line matches, moves and is written back
//! byte for byte. A file that really holds one of those characters has its
//! UTF-8 bytes escaped the same way, so [`encode`] of [`decode`] is the
//! identity on every byte string.
//!
//! ASCII is never escaped, so line ends, prefixes and every keyword of every
//! format read as they are.

use crate::apply::Split;
use std::borrow::Cow;

/// The first character of the reserved block: byte `b` is `BASE + b`.
const BASE: u32 = 0x10_FF00;

/// Every reserved character is encoded in UTF-8 as `F4 8F BE xx` or
/// `F4 8F BF xx`; text without the byte `F4` has none.
const LEAD: u8 = 0xF4;

fn escape(out: &mut String, byte: u8) {
    out.push(char::from_u32(BASE + u32::from(byte)).expect("a valid code point"));
}

fn is_reserved(c: char) -> bool {
    (BASE + 0x80..=BASE + 0xFF).contains(&u32::from(c))
}

/// Text standing for `bytes`: valid UTF-8 as it is (not copied), the rest
/// escaped.
pub fn decode(bytes: Vec<u8>) -> String {
    decoded(bytes).text
}

/// Text decoded from bytes, and what the decoding learnt of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    /// The text (see [`decode`]).
    pub text: String,
    /// The bytes were UTF-8 without the reserved block's lead byte, so the
    /// text holds no escapes ([`has_escapes`] is `false`) and its bytes
    /// are its own: a writer need not search it again. `false` says
    /// nothing either way.
    pub plain: bool,
    /// The text's lines, where the read split them beside other work
    /// (`FileTree::read_ahead`) for the planner to take.
    pub lines: Option<Split>,
}

/// [`decode`], saying whether the text was found plain on the way.
pub fn decoded(bytes: Vec<u8>) -> Decoded {
    if crate::bytes::find(LEAD, &bytes).is_some() {
        return Decoded {
            text: decode_slow(&bytes),
            plain: false,
            lines: None,
        };
    }
    match String::from_utf8(bytes) {
        Ok(text) => Decoded {
            text,
            plain: true,
            lines: None,
        },
        Err(e) => Decoded {
            text: decode_slow(e.as_bytes()),
            plain: false,
            lines: None,
        },
    }
}

fn decode_slow(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() + bytes.len() / 8);
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            if is_reserved(c) {
                let mut buf = [0; 4];
                for &b in c.encode_utf8(&mut buf).as_bytes() {
                    escape(&mut out, b);
                }
            } else {
                out.push(c);
            }
        }
        for &b in chunk.invalid() {
            escape(&mut out, b);
        }
    }
    out
}

/// [`decode`] of bytes that arrive in pieces, such as a large file as it
/// is read: each piece is checked (UTF-8, no reserved lead byte) while it
/// is still in the cache and added to the text, where a whole-file decode
/// makes two more passes over memory once the read has left it. The first
/// piece that is not plain text hands everything to [`decoded`] at the
/// end, so the result is always `decoded` of all the bytes.
pub struct Decoder {
    /// The text of the pieces so far, while each was plain text.
    text: String,
    /// The start of a character the last piece ended inside (at most
    /// three bytes).
    held: Vec<u8>,
    /// Every byte so far, once a piece was not plain text.
    raw: Option<Vec<u8>>,
}

impl Decoder {
    /// A decoder whose text starts with room for `size` bytes, or an
    /// error where memory has none (not the abort of a failed allocation).
    pub fn with_capacity(size: usize) -> std::io::Result<Decoder> {
        let mut text = String::new();
        text.try_reserve_exact(size).map_err(|_| no_memory(size))?;
        Ok(Decoder {
            text,
            held: Vec::new(),
            raw: None,
        })
    }

    /// The next piece of the bytes.
    pub fn push(&mut self, mut piece: &[u8]) {
        if self.raw.is_none() && !self.held.is_empty() {
            let want = char_len(self.held[0]);
            let take = (want - self.held.len()).min(piece.len());
            self.held.extend_from_slice(&piece[..take]);
            piece = &piece[take..];
            if self.held.len() < want {
                return;
            }
            let held = std::mem::take(&mut self.held);
            if !self.plain(&held, held.len()) {
                self.keep_raw(&held);
            }
        }
        if let Some(raw) = &mut self.raw {
            raw.extend_from_slice(piece);
            return;
        }
        let cut = whole_chars(piece);
        if self.plain(piece, cut) {
            self.held.extend_from_slice(&piece[cut..]);
        } else {
            self.keep_raw(piece);
        }
    }

    /// Adds `piece[..cut]` to the text where it is plain text (UTF-8
    /// without a reserved lead byte); whether it was.
    fn plain(&mut self, piece: &[u8], cut: usize) -> bool {
        let head = &piece[..cut];
        match std::str::from_utf8(head) {
            Ok(s) if crate::bytes::find(LEAD, head).is_none() => {
                self.text.push_str(s);
                true
            }
            _ => false,
        }
    }

    /// From here on every byte is kept as it came, `rest` first.
    fn keep_raw(&mut self, rest: &[u8]) {
        let mut raw = std::mem::take(&mut self.text).into_bytes();
        raw.append(&mut self.held);
        raw.extend_from_slice(rest);
        self.raw = Some(raw);
    }

    /// The text all the pieces stand for: [`decoded`] of their bytes.
    pub fn finish(mut self) -> Decoded {
        if !self.held.is_empty() {
            // The bytes ended inside a character.
            let held = std::mem::take(&mut self.held);
            self.keep_raw(&held);
        }
        match self.raw {
            Some(raw) => decoded(raw),
            None => Decoded {
                text: self.text,
                plain: true,
                lines: None,
            },
        }
    }
}

/// How much each read brings in: well inside a core's cache, so the
/// piece is checked there.
const PIECE: usize = 1 << 18;

/// A text of this many bytes or more is read a piece at a time
/// ([`read`]); a smaller one is read whole and decoded. Below it, the
/// two passes over a text the cache still holds cost less than the pieces'
/// buffer and copy: a patch of 1.7 MB linted 3% slower read in pieces and
/// one of 15 MB the same, where dry runs over a file of 83 MB ran 4%
/// faster (with the one-pass split of `text.rs`).
pub const PIECED: usize = 16 << 20;

/// The text of all `reader` holds (about `size` bytes, to reserve). From
/// [`PIECED`] bytes on it is read a piece at a time into one small buffer
/// and each piece decoded (see [`Decoder`]) before the next is read.
pub fn read(mut reader: impl std::io::Read, size: usize) -> std::io::Result<Decoded> {
    if size < PIECED {
        let mut bytes = Vec::new();
        bytes
            .try_reserve_exact(size.saturating_add(1))
            .map_err(|_| no_memory(size))?;
        crate::pages::populate_spare(&mut bytes);
        reader.read_to_end(&mut bytes)?;
        return Ok(decoded(bytes));
    }
    let mut text = Decoder::with_capacity(size.saturating_add(1))?;
    let mut piece = vec![0; PIECE];
    loop {
        match reader.read(&mut piece) {
            Ok(0) => break,
            Ok(n) => text.push(&piece[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(text.finish())
}

/// An error for an allocation of `size` bytes that memory has no room
/// for (not the abort of a failed allocation).
fn no_memory(size: usize) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::OutOfMemory,
        format!("no memory for {size} bytes"),
    )
}

/// How many bytes the UTF-8 character that `lead` starts takes (1 for a
/// byte that starts none; UTF-8 validation decides what it is).
fn char_len(lead: u8) -> usize {
    match lead {
        0xF0.. => 4,
        0xE0.. => 3,
        0xC0.. => 2,
        _ => 1,
    }
}

/// Where the last whole character of `bytes` ends: before a character
/// the bytes end inside of, else at their end.
fn whole_chars(bytes: &[u8]) -> usize {
    let tail = bytes.len().saturating_sub(3);
    match (tail..bytes.len()).rev().find(|&i| bytes[i] & 0xC0 != 0x80) {
        Some(i) if i + char_len(bytes[i]) > bytes.len() => i,
        _ => bytes.len(),
    }
}

/// Unicode text that carries no bytes (a JSON string, a Python `str`) as
/// the same text a file holding its UTF-8 bytes reads as: a character of
/// the reserved block is escaped like any other file's, so it is written
/// as its own UTF-8 bytes whatever carried the patch.
pub fn from_text(text: String) -> String {
    decode(text.into_bytes())
}

/// The bytes `text` stands for: its UTF-8 bytes (not copied) unless it
/// holds escaped bytes.
pub fn encode(text: &str) -> Cow<'_, [u8]> {
    if !has_escapes(text) {
        return Cow::Borrowed(text.as_bytes());
    }
    let mut out = Vec::with_capacity(text.len());
    for c in text.chars() {
        if is_reserved(c) {
            out.push((u32::from(c) - BASE) as u8);
        } else {
            let mut buf = [0; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
    }
    Cow::Owned(out)
}

/// Whether `text` stands for bytes that are not UTF-8 (or for a reserved
/// character), which a diagnostic may want to mention.
pub fn has_escapes(text: &str) -> bool {
    crate::bytes::find(LEAD, text.as_bytes()).is_some() && text.chars().any(is_reserved)
}

/// `text` for people: each escaped byte shown as `\xHH`, which takes the
/// same four bytes, so spans into the text stay valid.
pub fn visible(text: &str) -> Cow<'_, str> {
    if !has_escapes(text) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if is_reserved(c) {
            out.push_str(&format!("\\x{:02X}", u32::from(c) - BASE));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(bytes: &[u8]) {
        let text = decode(bytes.to_vec());
        assert_eq!(encode(&text), bytes, "{bytes:?}");
    }

    #[test]
    fn every_byte_string_comes_back() {
        round_trip(b"plain ascii\n");
        round_trip("caf\u{e9} \u{1f600}\n".as_bytes());
        round_trip(b"latin-1 caf\xe9\r\n\xff\xfe\x00\x80");
        // A reserved character in the file itself, and its lone bytes.
        round_trip("x\u{10ff80}y\u{10ffff}".as_bytes());
        round_trip(b"\xf4\x8f\xbe\x80 \xf4\x8f \xf4");
        // Every byte, and every pair of bytes.
        let all: Vec<u8> = (0..=255).collect();
        round_trip(&all);
        for a in [0x00, 0x7f, 0x80, 0xc3, 0xe2, 0xf0, 0xf4, 0xff] {
            for b in 0..=255u8 {
                round_trip(&[a, b, b'\n']);
            }
        }
    }

    /// `bytes` pushed into a decoder in pieces cut at `cuts` (ascending).
    fn in_pieces(bytes: &[u8], cuts: &[usize]) -> Decoded {
        let mut d = Decoder::with_capacity(bytes.len()).unwrap();
        let mut at = 0;
        for &c in cuts.iter().chain([&bytes.len()]) {
            d.push(&bytes[at..c]);
            at = c;
        }
        d.finish()
    }

    /// A text no memory holds is an error, not an abort, however large
    /// the reader says it is.
    #[test]
    fn a_read_with_no_room_fails() {
        let err = read(std::io::empty(), usize::MAX).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::OutOfMemory);
    }

    /// The bytes cut into pieces at every place (and at every pair of
    /// places for short ones) decode as the whole does: characters cut
    /// across pieces, cut at the end, invalid, reserved.
    #[test]
    fn pieces_decode_as_the_whole() {
        let samples: [&[u8]; 8] = [
            b"plain ascii\n",
            "caf\u{e9} \u{1f600}\n\u{20ac}".as_bytes(),
            b"latin-1 caf\xe9\r\n\xff\xfe\x00\x80",
            "x\u{10ff80}y\u{10ffff}".as_bytes(),
            b"\xf4\x8f\xbe\x80 \xf4\x8f \xf4",
            b"ends inside \xe2\x82",
            b"\xf0\x9f\x98",
            b"",
        ];
        for bytes in samples {
            let whole = decoded(bytes.to_vec());
            for a in 0..=bytes.len() {
                assert_eq!(in_pieces(bytes, &[a]), whole, "{bytes:?} at {a}");
                for b in a..=bytes.len() {
                    assert_eq!(in_pieces(bytes, &[a, b]), whole, "{bytes:?} at {a}, {b}");
                }
            }
            let ones: Vec<usize> = (0..=bytes.len()).collect();
            assert_eq!(in_pieces(bytes, &ones), whole, "{bytes:?} byte by byte");
        }
    }

    /// Text cut inside a character is still checked piece by piece: the
    /// cut character is carried to the next piece, not a reason to keep
    /// every byte for a decode at the end.
    #[test]
    fn plain_text_cut_inside_a_character_stays_plain() {
        let text = "\u{e9}\u{20ac}\u{1f600}a";
        for cut in 0..=text.len() {
            let mut d = Decoder::with_capacity(0).unwrap();
            d.push(&text.as_bytes()[..cut]);
            d.push(&text.as_bytes()[cut..]);
            assert!(d.raw.is_none(), "cut at {cut}");
            assert_eq!(
                d.finish(),
                Decoded {
                    text: text.to_string(),
                    plain: true,
                    lines: None,
                }
            );
        }
    }

    proptest::proptest! {
        /// Bytes of the kinds that make and break characters, cut into
        /// pieces anywhere, decode as the whole does.
        #[test]
        fn any_bytes_in_any_pieces_decode_as_the_whole(
            bytes in proptest::collection::vec(proptest::sample::select(vec![
                b'a', b'\n', 0x80, 0x8f, 0xbe, 0xbf, 0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0xf4, 0xff,
            ]), 0..48),
            mut cuts in proptest::collection::vec(0usize..48, 0..6),
        ) {
            cuts.iter_mut().for_each(|c| *c = (*c).min(bytes.len()));
            cuts.sort_unstable();
            let whole = decoded(bytes.clone());
            // Plain exactly where the bytes are UTF-8 without the lead
            // byte, and then without escapes.
            let utf8 = std::str::from_utf8(&bytes).is_ok();
            proptest::prop_assert_eq!(whole.plain, utf8 && !bytes.contains(&LEAD));
            proptest::prop_assert!(!whole.plain || !has_escapes(&whole.text));
            proptest::prop_assert_eq!(in_pieces(&bytes, &cuts), whole);
        }
    }

    #[test]
    fn text_without_escapes_is_not_copied() {
        let text = "caf\u{e9}\n";
        assert!(matches!(encode(text), Cow::Borrowed(_)));
        assert!(!has_escapes(text));
        assert!(has_escapes(&decode(b"\xe9".to_vec())));
    }

    #[test]
    fn escapes_are_shown_in_the_same_number_of_bytes() {
        let text = decode(b"caf\xe9 \xff!".to_vec());
        let shown = visible(&text);
        assert_eq!(shown, "caf\\xE9 \\xFF!");
        assert_eq!(shown.len(), text.len());
        assert!(matches!(visible("plain"), Cow::Borrowed(_)));
    }

    #[test]
    fn ascii_is_never_escaped() {
        let text = decode(b"\xff-line\r\n+\xfe\n".to_vec());
        assert!(text.contains("-line\r\n+"));
        assert_eq!(
            text.chars().count(),
            "\u{10ffff}-line\r\n+\u{10fffe}\n".chars().count()
        );
    }
}
