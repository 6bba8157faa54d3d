//! `str::trim` for lines, faster on the lines code has: every line of a
//! file is trimmed to count an ap patch's keys, and again wherever a
//! candidate is compared or a block is checked for blank lines.

/// ASCII whitespace as a mask of the bytes below 64: one test a byte.
const WHITE: u64 = 1 << b' ' | 1 << b'\t' | 1 << b'\n' | 1 << b'\r' | 1 << 0x0b | 1 << 0x0c;

fn space(c: u8) -> bool {
    c < 64 && WHITE >> c & 1 == 1
}

/// `line.trim()`. Leading spaces are counted eight bytes at a time (the
/// first byte of a word that is not a space ends them), other ASCII
/// whitespace byte by byte, and `str::trim` (Unicode's whitespace) decides
/// only when the first byte kept on either side is not ASCII.
pub fn trim(line: &str) -> &str {
    let b = line.as_bytes();
    let mut start = 0;
    while let Some(word) = b.get(start..start + 8) {
        let other = u64::from_le_bytes(word.try_into().expect("eight bytes"))
            ^ u64::from_ne_bytes([b' '; 8]);
        if other != 0 {
            start += other.trailing_zeros() as usize / 8;
            break;
        }
        start += 8;
    }
    while start < b.len() && space(b[start]) {
        start += 1;
    }
    let mut end = b.len();
    while end > start && space(b[end - 1]) {
        end -= 1;
    }
    if b.get(start).is_some_and(|c| !c.is_ascii()) || (end > start && !b[end - 1].is_ascii()) {
        return line.trim();
    }
    &line[start..end]
}

/// Whether `line` is whitespace only: `line.trim().is_empty()`.
pub fn is_blank(line: &str) -> bool {
    trim(line).is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trim_is_str_trim() {
        for s in [
            "",
            " ",
            "\t a b \r",
            "x",
            "\u{a0}x\u{a0}",
            " \u{2003}y ",
            "é",
            " é ",
            "\u{85}",
            "a\u{3000}",
            "\x0b\x0cq\x0c",
            "        x",
            "                \tdef f():  \r",
            "                ",
            "        \u{2003}        y",
            "         ",
            "       z",
            "x        ",
            "   x    y   ",
            "           \t  é",
            "\u{3000}       ",
            "               return x",
            " \u{a0}      ",
        ] {
            assert_eq!(trim(s), s.trim(), "{s:?}");
            assert_eq!(is_blank(s), s.trim().is_empty(), "{s:?}");
        }
    }
}
