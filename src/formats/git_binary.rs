//! git's binary hunks (`GIT binary patch`): `literal N` lines of base85
//! text holding N bytes deflated with zlib. `delta` hunks (a binary diff
//! against the old bytes) are not decoded; the caller refuses them.

use std::io::Read;

use crate::ir::TOO_LARGE;

/// One decoded hunk: `literal` bytes, or a `delta` left undecoded.
#[derive(Debug, PartialEq, Eq)]
pub enum Hunk {
    Literal(Vec<u8>),
    Delta,
}

/// The forward hunk (the new content) and, when present, the reverse one
/// (the old content), from the lines after `GIT binary patch`. A literal
/// declaring [`TOO_LARGE`] bytes or more is refused before it is inflated;
/// without `keep`, a literal is inflated only to check it (its bytes are
/// counted, not kept: `lint` without a tree), and comes back empty.
pub fn decode(lines: &[&str], keep: bool) -> Result<(Hunk, Option<Hunk>), String> {
    let mut hunks = vec![];
    let mut at = 0;
    while at < lines.len() {
        let head = lines[at].trim_end();
        at += 1;
        if head.is_empty() {
            continue;
        }
        let (kind, size) = head
            .split_once(' ')
            .ok_or_else(|| format!("expected `literal N` or `delta N`, found `{head}`"))?;
        let size: u64 = size
            .parse()
            .map_err(|_| format!("`{head}`: the size is not a number"))?;
        if size >= TOO_LARGE {
            return Err(format!(
                "`{head}`: a literal of 4 GiB or more, larger than any file grammar-patch patches"
            ));
        }
        let start = at;
        while at < lines.len() && !lines[at].trim_end().is_empty() {
            at += 1;
        }
        hunks.push(match kind {
            "literal" => {
                let mut deflated = vec![];
                for line in &lines[start..at] {
                    base85_line(line.trim_end(), &mut deflated)?;
                }
                Hunk::Literal(inflate(&deflated, size, keep)?)
            }
            "delta" => Hunk::Delta,
            other => return Err(format!("unknown binary hunk `{other}`")),
        });
    }
    let mut hunks = hunks.into_iter();
    let forward = hunks.next().ok_or("a binary patch without data")?;
    Ok((forward, hunks.next()))
}

const ALPHABET: &[u8; 85] =
    b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";

/// Each byte's base85 digit, or 0xFF for a byte that is not one: a lookup
/// per character instead of a search of the alphabet.
const DIGITS: [u8; 256] = {
    let mut table = [0xFF; 256];
    let mut i = 0;
    while i < ALPHABET.len() {
        table[ALPHABET[i] as usize] = i as u8;
        i += 1;
    }
    table
};

/// One data line: a length letter (`A`-`Z` 1-26, `a`-`z` 27-52 bytes),
/// then five base85 characters for every four bytes.
fn base85_line(line: &str, out: &mut Vec<u8>) -> Result<(), String> {
    let bytes = line.as_bytes();
    let len = match bytes.first() {
        Some(c @ b'A'..=b'Z') => (c - b'A' + 1) as usize,
        Some(c @ b'a'..=b'z') => (c - b'a' + 27) as usize,
        _ => {
            return Err(format!(
                "`{line}`: a binary data line starts with its length"
            ))
        }
    };
    let data = &bytes[1..];
    if data.len() != len.div_ceil(4) * 5 {
        return Err(format!(
            "`{line}`: {len} bytes need {} characters",
            len.div_ceil(4) * 5
        ));
    }
    let mut left = len;
    for group in data.chunks(5) {
        let mut value: u64 = 0;
        for &c in group {
            let digit = match DIGITS[c as usize] {
                0xFF => return Err(format!("`{line}`: `{}` is not a base85 digit", c as char)),
                d => d,
            };
            value = value * 85 + digit as u64;
        }
        let word = u32::try_from(value).map_err(|_| format!("`{line}`: a group overflows"))?;
        let take = left.min(4);
        out.extend_from_slice(&word.to_be_bytes()[..take]);
        left -= take;
    }
    Ok(())
}

/// zlib-inflates exactly `size` bytes (more is an error, not a bomb),
/// keeping them or only counting them.
fn inflate(deflated: &[u8], size: u64, keep: bool) -> Result<Vec<u8>, String> {
    let mut data = flate2::read::ZlibDecoder::new(deflated).take(size + 1);
    let failed = |e: std::io::Error| format!("the binary data does not inflate: {e}");
    let mut out = Vec::new();
    let got = if keep {
        out.try_reserve_exact(size as usize)
            .map_err(|_| format!("no memory for a literal of {size} bytes"))?;
        data.read_to_end(&mut out).map_err(failed)? as u64
    } else {
        std::io::copy(&mut data, &mut std::io::sink()).map_err(failed)?
    };
    if got != size {
        return Err(format!("the binary data holds {got} bytes, not {size}"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_kept(lines: &[&str]) -> Result<(Hunk, Option<Hunk>), String> {
        decode(lines, true)
    }

    /// Written by `git diff --binary` for a new 17-byte file.
    const NEW_FILE: &[&str] = &[
        "literal 17",
        "YcmeAS@N?(olHy`uNXpDhEUNqu03}uhE&u=k",
        "",
        "literal 0",
        "HcmV?d00001",
        "",
    ];

    #[test]
    fn git_literals_decode_to_their_bytes() {
        let (forward, reverse) = decode_kept(NEW_FILE).unwrap();
        assert_eq!(
            forward,
            Hunk::Literal(b"\x89PNG\r\n\x1a\n\x00\x00binary\xff".to_vec())
        );
        assert_eq!(reverse, Some(Hunk::Literal(vec![])));
    }

    #[test]
    fn malformed_data_is_an_error_not_a_panic() {
        assert!(decode_kept(&["literal 17", "Ycme"]).is_err());
        assert!(decode_kept(&["literal 5", "YcmeAS@N?(olHy`uNXpDhEUNqu03}uhE&u=k"]).is_err());
        assert!(decode_kept(&["literal x"]).is_err());
        assert!(decode_kept(&["literal 1", "A~~~~~"]).is_err());
        assert!(decode_kept(&[]).is_err());
        assert_eq!(
            decode_kept(&["delta 3", "Bcm"]).ok().map(|h| h.0),
            Some(Hunk::Delta)
        );
    }
}
