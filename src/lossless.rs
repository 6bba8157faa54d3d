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
    if crate::bytes::find(LEAD, &bytes).is_some() {
        return decode_slow(&bytes);
    }
    match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => decode_slow(e.as_bytes()),
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
