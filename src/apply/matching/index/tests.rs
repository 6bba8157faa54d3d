//! Every way the index answers, against a scan of the file.

use super::*;
use crate::apply::matching::text::hash_key;

/// Tells `file` the keys `hashes` of kind `kind`, each of `pivots` a
/// block of its own (which pivots on it) and the rest in a block that
/// pivots on none; returns each key's count as the first pass counts it.
fn expect_with(file: &FileText, kind: Key, hashes: &[u64], pivots: &[u64]) -> Vec<usize> {
    let mut keys = BlockKeys::default();
    keys.add(hashes.iter().copied(), hashes.len());
    for &p in pivots {
        assert!(hashes.contains(&p), "a pivot is one of the keys");
        keys.add(std::iter::once(p), 0);
    }
    let (counts, _) = file.count_expected(kind, &keys.numbers);
    let seen = hashes
        .iter()
        .map(|h| counts[keys.numbers[h] as usize] as usize)
        .collect();
    file.expect(kind, keys);
    seen
}

/// The oracle: the lines whose key of kind `kind` hashes as `key`,
/// by a scan of the file.
fn scan(f: &FileText, key: &str, kind: Key) -> Vec<usize> {
    let h = hash_key(key);
    (0..f.len())
        .filter(|&i| hash_key(&kind.of(f.line(i))) == h)
        .collect()
}

/// Every way a lookup is answered (the whole-file index, the pivots'
/// index, keys sought in a pass of their own, with and without pivots)
/// gives the oracle's lines, at every kind of key, on texts where keys
/// repeat and collide in buckets.
#[test]
fn every_way_of_answering_gives_the_lines_a_scan_gives() {
    let mut seed = 0x2545_f491_u64;
    let mut next = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let kinds = [
        Key::Exact,
        Key::TrailingWhitespace,
        Key::Trimmed,
        Key::Normalized,
        Key::Undecorated,
    ];
    for round in 0..6 {
        let lines = 200 + next(4000) as usize;
        let text: String = (0..lines)
            .map(|_| {
                let pad = [" ", "", "\t", "  "][next(4) as usize];
                let deco = ["", "# ", "- ", "1. "][next(4) as usize];
                let dash = ["-", "\u{2013}"][next(2) as usize];
                let tail = ["", " ", "\r"][next(3) as usize];
                format!("{pad}{deco}k{dash}{}{tail}\n", next(30))
            })
            .collect();
        let keys: Vec<String> = (0..30).map(|k| format!("k-{k}")).collect();
        for kind in kinds {
            let whole = FileText::new(&text);
            whole.index_whole(kind);
            let part = FileText::new(&text);
            let sought = FileText::new(&text);
            sought.seek(kind, keys.iter().step_by(4).map(|k| hash_key(&kind.of(k))));
            let hashes: Vec<u64> = keys
                .iter()
                .take(10)
                .map(|k| hash_key(&kind.of(k)))
                .collect();
            expect_with(&part, kind, &hashes, &hashes[..3]);
            for k in &keys {
                let key = kind.of(k);
                let want = scan(&whole, &key, kind);
                for f in [&whole, &part, &sought] {
                    let h = hash_key(&key);
                    assert_eq!(
                        f.positions(h, kind).collect::<Vec<_>>(),
                        want,
                        "round {round}, {kind:?}, {k}"
                    );
                    assert_eq!(f.count(h, kind), want.len(), "round {round}, {kind:?}, {k}");
                }
            }
        }
    }
}

/// The index sorts in place, which scrambles a bucket: small buckets
/// and one that a blank line fills must both come out in line order.
#[test]
fn the_index_keeps_lines_ascending_in_small_and_crowded_buckets() {
    let lines: Vec<String> = (0..20_000)
        .map(|i| {
            if i % 3 == 0 {
                String::new()
            } else {
                format!("line {i}")
            }
        })
        .collect();
    let text = lines.join("\n") + "\n";
    let f = FileText::new(&text);
    let mut want: std::collections::HashMap<&str, Vec<usize>> = Default::default();
    for (i, l) in lines.iter().enumerate() {
        want.entry(l).or_default().push(i);
    }
    for (key, at) in &want {
        let found: Vec<usize> = f
            .positions(hash_key(key), Key::Exact)
            .filter(|&i| f.line(i) == *key)
            .collect();
        assert_eq!(&found, at, "{key:?}");
    }
    assert_eq!(f.count(hash_key(""), Key::Exact), 6667);
}

#[test]
fn forgotten_indexes_are_built_again_with_the_same_answers() {
    let text: String = (0..3000).map(|i| format!("  line {}\n", i % 11)).collect();
    let mut f = FileText::new(&text);
    expect_with(
        &f,
        Key::Trimmed,
        &[hash_key("line 3")],
        &[hash_key("line 3")],
    );
    let ask = |f: &FileText, k: usize| -> Vec<usize> {
        f.positions(hash_key(&format!("line {k}")), Key::Trimmed)
            .collect()
    };
    // One key from the expected index, one from the whole-file one.
    let before = (ask(&f, 3), ask(&f, 4));
    assert_eq!(
        before.0,
        (0..3000).filter(|i| i % 11 == 3).collect::<Vec<_>>()
    );
    f.forget_indexes();
    assert_eq!((ask(&f, 3), ask(&f, 4)), before);
}

#[test]
fn the_index_finds_every_line_of_a_key_in_order() {
    // Enough lines for many buckets, keys repeated at known lines.
    let text: String = (0..5000).map(|i| format!("line {}\n", i % 7)).collect();
    let f = FileText::new(&text);
    for k in 0..7 {
        let h = hash_key(&format!("line {k}"));
        let at: Vec<usize> = f.positions(h, Key::Exact).collect();
        let want: Vec<usize> = (0..5000).filter(|i| i % 7 == k).collect();
        assert_eq!(at, want, "key {k}");
        assert_eq!(f.count(h, Key::Exact), want.len());
    }
    assert_eq!(f.count(hash_key("line 7"), Key::Exact), 0);
    let trimmed = FileText::new("  a\nb\n\ta \n");
    let at: Vec<usize> = trimmed.positions(hash_key("a"), Key::Trimmed).collect();
    assert_eq!(at, [0, 2]);
}

/// Expected keys are counted while pivots are chosen; pivots are
/// indexed; other keys (expected or not) are sought, a block's in one
/// pass, up to `SCANS` passes; only then is the whole file indexed.
/// Every path answers as the whole-file index does.
#[test]
fn the_expected_index_answers_as_the_whole_file_index_does() {
    let keys = 20;
    let text: String = (0..3000)
        .map(|i| format!("{}line {}\n", " ".repeat(i % 3), i % (keys + 3)))
        .collect();
    let whole = FileText::new(&text);
    whole.index_whole(Key::Trimmed);
    let part = FileText::new(&text);
    let h = |k: usize| hash_key(&format!("line {k}"));
    let hashes: Vec<u64> = (0..keys).map(h).collect();
    let seen = expect_with(&part, Key::Trimmed, &hashes, &hashes[..2]);
    // The pivots were chosen from the file's true counts.
    let true_counts: Vec<usize> = (0..keys).map(|k| whole.count(h(k), Key::Trimmed)).collect();
    assert_eq!(seen, true_counts);
    let same = |k: usize| {
        let want: Vec<usize> = whole.positions(h(k), Key::Trimmed).collect();
        assert!(!want.is_empty());
        assert_eq!(part.count(h(k), Key::Trimmed), want.len(), "key {k}");
        assert_eq!(
            part.positions(h(k), Key::Trimmed).collect::<Vec<_>>(),
            want,
            "key {k}"
        );
    };
    // Pivots take no pass.
    for k in 0..2 {
        same(k);
    }
    assert!((0..2).all(|k| part.is_pivot(h(k), Key::Trimmed)));
    assert!(!part.is_pivot(h(2), Key::Trimmed));
    assert_eq!(part.beyond_pivots(Key::Trimmed), (0, false));
    // A block's keys, pivots among them, sought in one pass; one never
    // expected among them, and one the file lacks, known to be absent and
    // not sought again.
    part.seek(Key::Trimmed, (0..6).chain([99, keys + 1]).map(h));
    for k in (0..6).chain([keys + 1]) {
        same(k);
        same(k);
    }
    assert_eq!(part.count(h(99), Key::Trimmed), 0);
    assert_eq!(part.beyond_pivots(Key::Trimmed), (1, false));
    // Keys asked for alone take a pass each while passes are left.
    for k in (6..).take(SCANS - 1) {
        same(k);
        same(k);
    }
    assert_eq!(part.beyond_pivots(Key::Trimmed), (SCANS, false));
    // The next key takes the whole-file index, which answers the rest.
    same(6 + SCANS - 1);
    assert!(part.beyond_pivots(Key::Trimmed).1);
    for k in 0..keys + 3 {
        same(k);
    }
    // Another kind ignores the expectation.
    assert_eq!(part.count(h(1), Key::Exact), whole.count(h(1), Key::Exact));
}

/// A file of enough lines is counted and indexed in chunks on two
/// threads (`beside.rs`): the counts, the pivots' lines and their
/// order are those of the whole-file index.
#[test]
fn a_count_shared_with_a_thread_answers_as_the_whole_file_index_does() {
    let keys = 40;
    let lines = CHUNK * beside::SHARED + 1234;
    let text: String = (0..lines)
        .map(|i| format!("{}row {}\n", " ".repeat(i % 5), (i * 11) % (keys + 9)))
        .collect();
    let whole = FileText::new(&text);
    let part = FileText::new(&text);
    let h = |k: usize| hash_key(&format!("row {k}"));
    let hashes: Vec<u64> = (0..keys).map(h).collect();
    let pivots: Vec<u64> = hashes.iter().copied().step_by(3).collect();
    let seen = expect_with(&part, Key::Trimmed, &hashes, &pivots);
    let true_counts: Vec<usize> = (0..keys).map(|k| whole.count(h(k), Key::Trimmed)).collect();
    assert_eq!(seen, true_counts);
    assert!(true_counts.iter().all(|&c| c > lines / (keys + 9) - 2));
    for k in (0..keys).step_by(3) {
        assert!(part.is_pivot(h(k), Key::Trimmed));
        let want: Vec<usize> = whole.positions(h(k), Key::Trimmed).collect();
        assert_eq!(
            part.positions(h(k), Key::Trimmed).collect::<Vec<_>>(),
            want,
            "key {k}"
        );
    }
}

/// Tens of thousands of expected keys, which set a good share of the
/// count's filter bits (40,000 keys, 2^18 bits), so that many lines without
/// a key pass it to the map: every key is still counted as the lines have
/// it, the absent ones as none, on two threads.
#[test]
fn many_expected_keys_are_counted_as_the_whole_file_index_counts_them() {
    let keys = 40_000;
    let lines = 30_000;
    // Line i holds key 2i (keys 0..60,000 even), with a filler line of
    // no key between; odd keys and keys past the file occur nowhere.
    let text: String = (0..lines)
        .map(|i| format!("key {}\nfiller {i}\n", 2 * i))
        .collect();
    let whole = FileText::new(&text);
    let part = FileText::new(&text);
    let h = |k: usize| hash_key(&format!("key {k}"));
    let hashes: Vec<u64> = (0..keys).map(h).collect();
    let seen = expect_with(&part, Key::Exact, &hashes, &[]);
    // The truth by the full hash of every line (the whole-file index
    // files lines under 32 bits, where two of these keys may meet).
    let mut lines_of: HashMap<u64, usize> = HashMap::new();
    for i in 0..whole.len() {
        *lines_of
            .entry(hash_key(&Key::Exact.of(whole.line(i))))
            .or_default() += 1;
    }
    let want: Vec<usize> = (0..keys)
        .map(|k| lines_of.get(&h(k)).copied().unwrap_or(0))
        .collect();
    assert_eq!(want.iter().filter(|&&c| c == 1).count(), keys / 2);
    assert_eq!(seen, want);
}

/// A blank line's key is empty: counted and indexed without a hash
/// where the empty key is expected, passed over where it is not, on
/// one thread and on two.
#[test]
fn blank_lines_count_under_the_empty_key() {
    for lines in [5000, CHUNK * beside::SHARED + 77] {
        let text: String = (0..lines)
            .map(|i| match i % 4 {
                0 => "\n".to_string(),
                1 => "  \t\r\n".to_string(),
                _ => format!("x {}\n", i % 7),
            })
            .collect();
        let whole = FileText::new(&text);
        let (empty, x) = (hash_key(""), hash_key("x 3"));
        let blanks = whole.count(empty, Key::Trimmed);
        assert_eq!(blanks, lines.div_ceil(4) + (lines + 2) / 4);
        for expected in [true, false] {
            let part = FileText::new(&text);
            let hashes = match expected {
                true => vec![x, empty],
                false => vec![x],
            };
            let seen = expect_with(&part, Key::Trimmed, &hashes, &hashes);
            let want = match expected {
                true => vec![whole.count(x, Key::Trimmed), blanks],
                false => vec![whole.count(x, Key::Trimmed)],
            };
            assert_eq!(seen, want, "{lines} lines, expected {expected}");
            assert_eq!(part.is_pivot(empty, Key::Trimmed), expected);
            for h in [empty, x] {
                assert_eq!(
                    part.positions(h, Key::Trimmed).collect::<Vec<_>>(),
                    whole.positions(h, Key::Trimmed).collect::<Vec<_>>()
                );
            }
        }
    }
}

/// Each block pivots on its rarest key in the file, the first of equals,
/// past the keys it skips (a soft first line); a block with none past
/// them pivots on none.
#[test]
fn each_block_pivots_on_its_rarest_key() {
    // Counts: a 5, b 2, c 2, d 9.
    let lines = ["a"; 5]
        .iter()
        .chain(&["b"; 2])
        .chain(&["c"; 2])
        .chain(&["d"; 9]);
    let text: String = lines.map(|l| format!("{l}\n")).collect();
    let f = FileText::new(&text);
    let h = |k: &str| hash_key(k);
    let mut keys = BlockKeys::default();
    keys.add(["a", "c", "b"].map(h).into_iter(), 0);
    keys.add(["d", "a"].map(h).into_iter(), 1);
    keys.add(["d"].map(h).into_iter(), 1);
    f.expect(Key::Exact, keys);
    let pivots: Vec<bool> = ["a", "b", "c", "d"]
        .map(|k| f.is_pivot(h(k), Key::Exact))
        .into();
    assert_eq!(pivots, [true, false, true, false]);
    assert_eq!(f.count(h("c"), Key::Exact), 2);
    assert_eq!(
        f.positions(h("a"), Key::Exact).collect::<Vec<_>>(),
        [0, 1, 2, 3, 4]
    );
}
