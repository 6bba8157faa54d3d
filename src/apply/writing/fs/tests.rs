//! The disk tree on a real directory: reads, refusals, stamps.

use super::*;

/// A file is read to its end whatever size it was said to have: the
/// size of a pipe (0), a file that grew since `fstat`, a large one.
#[test]
fn a_sized_read_takes_the_whole_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    for len in [0, 1, 4095, 4096, 300_000] {
        let bytes: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        for (said, pages) in [0, len / 2, len]
            .into_iter()
            .zip([Pages::Mapped, Pages::Faulted, Pages::Mapped])
            .chain([(len, Pages::Faulted)])
        {
            let file = std::fs::File::open(&path).unwrap();
            assert_eq!(
                read_sized(&file, said, pages).unwrap(),
                bytes,
                "{len} {said}"
            );
        }
    }
}

/// More pieces than one `writev` takes, empty ones among them, land
/// in order and are counted.
#[test]
fn pieces_are_written_in_batches_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out");
    let lines: Vec<String> = (0..3 * IOV_BATCH + 7)
        .map(|i| format!("line {i}\n"))
        .collect();
    let mut chunks: Vec<&[u8]> = vec![];
    for (i, l) in lines.iter().enumerate() {
        chunks.push(l.as_bytes());
        if i % 5 == 0 {
            chunks.push(b"");
        }
    }
    let file = std::fs::File::create(&path).unwrap();
    let len = write_chunks(&file, &chunks).unwrap();
    let want = lines.concat();
    assert_eq!(len, want.len() as u64);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), want);
}

/// Bytes no two pages of which are alike, so a page lost, zeroed or
/// moved shows.
fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 31 + i / 4096) as u8).collect()
}

/// A size no memory holds is an error, not an abort.
#[test]
fn a_sized_read_with_no_room_fails() {
    let file = tempfile::tempfile().unwrap();
    let err = read_sized(&file, usize::MAX, Pages::Mapped).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::OutOfMemory);
}

/// A file of several megabytes, not a multiple of any page size, reads
/// back byte for byte, its last byte included.
#[test]
fn a_large_file_reads_back_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let want = pattern((9 << 20) + 12345);
    std::fs::write(tmp.path().join("big"), &want).unwrap();
    let tree = DiskTree::new(tmp.path()).unwrap();
    let got = tree.read(&RelPath::new("big").unwrap(), u64::MAX).unwrap();
    assert!(got == want);
}

/// A file large enough to be read as text a piece at a time reads as the
/// decode of its bytes: characters across the pieces' ends, and a byte
/// that is not UTF-8 after megabytes of plain text, at its start, or none.
#[test]
fn a_large_file_reads_as_the_text_its_bytes_decode_to() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = DiskTree::new(tmp.path()).unwrap();
    // 17 bytes: the pieces (a power of two) end inside characters.
    let line = "caf\u{e9} \u{20ac}\u{1f600} xy\n";
    assert_eq!(line.len(), 17);
    let plain = line.repeat(crate::lossless::PIECED / line.len() + 1000);
    let mut late = plain.clone().into_bytes();
    late.extend_from_slice(b"latin-1 \xe9\n");
    late.extend_from_slice(plain.as_bytes());
    let early = [b"\xff".as_slice(), plain.as_bytes()].concat();
    for (name, bytes) in [
        ("plain", plain.into_bytes()),
        ("late", late),
        ("early", early),
    ] {
        std::fs::write(tmp.path().join(name), &bytes).unwrap();
        let got = tree
            .read_text(&RelPath::new(name).unwrap(), u64::MAX)
            .unwrap();
        assert!(bytes.len() >= crate::lossless::PIECED, "{name}");
        assert_eq!(got.plain, name == "plain");
        assert!(got == crate::lossless::decoded(bytes), "{name}");
    }
}

/// A file of the reader's limit or more is refused, on disk and in
/// memory alike; one byte under it is read.
#[test]
fn a_read_refuses_a_file_at_its_limit() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("f"), "four").unwrap();
    let disk = DiskTree::new(tmp.path()).unwrap();
    let mem = crate::apply::MemTree::default().with_file("f", "four");
    let f = RelPath::new("f").unwrap();
    for tree in [&disk as &dyn FileTree, &mem] {
        let e = tree.read(&f, 4).unwrap_err();
        assert_eq!(refusal(&e), Some(Refusal::TooLarge), "{e}");
        assert_eq!(tree.read(&f, 5).unwrap(), b"four");
    }
}

/// A read ahead is the read it stands for: the same text (bytes that are
/// not UTF-8 carried along), and the file's stamp recorded as that read
/// records it; with it, the text's lines as the planner would split it.
#[test]
fn a_read_ahead_is_the_read_it_stands_for() {
    let tmp = tempfile::tempdir().unwrap();
    let bytes = [b"one\ntwo \xff\n".repeat(1000), b"last".to_vec()].concat();
    std::fs::write(tmp.path().join("f"), &bytes).unwrap();
    let f = RelPath::new("f").unwrap();
    let tree = DiskTree::new(tmp.path()).unwrap();
    tree.read_ahead(&f, 1 << 20);
    let ahead = tree.read_text(&f, 1 << 20).unwrap();
    assert!(
        tree.ahead.borrow().is_none(),
        "the read ahead was not taken"
    );
    let fresh = DiskTree::new(tmp.path()).unwrap();
    let read = fresh.read_text(&f, 1 << 20).unwrap();
    assert!(read.lines.is_none());
    let lines = Some(crate::apply::Split::of(&read.text, true, true));
    assert!(ahead == crate::lossless::Decoded { lines, ..read });
    let ahead = crate::lossless::Decoded {
        lines: None,
        ..ahead
    };
    assert!(ahead == crate::lossless::decoded(bytes));
    assert_eq!(
        tree.stamps.borrow().get("f"),
        fresh.stamps.borrow().get("f")
    );
}

/// A read ahead answers only the read of its own path with its own limit:
/// any other reads the disk as if there had been none (a file at the
/// other read's limit is refused; another path is its own text), and the
/// read ahead is let go.
#[test]
fn a_read_ahead_answers_only_its_own_read() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("a"), "four").unwrap();
    std::fs::write(tmp.path().join("b"), "bee\n").unwrap();
    let (a, b) = (RelPath::new("a").unwrap(), RelPath::new("b").unwrap());
    let tree = DiskTree::new(tmp.path()).unwrap();
    assert!(!tree.reads_ahead(&a));
    tree.read_ahead(&a, 100);
    assert!(tree.reads_ahead(&a) && !tree.reads_ahead(&b));
    let e = tree.read_text(&a, 4).unwrap_err();
    assert_eq!(refusal(&e), Some(Refusal::TooLarge), "{e}");
    assert!(
        !tree.reads_ahead(&a),
        "a read ahead let go is not under way"
    );
    tree.read_ahead(&a, 100);
    assert_eq!(tree.read_text(&b, 100).unwrap().text, "bee\n");
    assert!(tree.ahead.borrow().is_none());
    assert_eq!(tree.read_text(&a, 100).unwrap().text, "four");
}

/// A read ahead that failed is not the answer: the read is made again,
/// and says what it finds then (a file made since; a FIFO refused, never
/// waited on).
#[test]
fn a_read_ahead_that_failed_is_made_again() {
    let tmp = tempfile::tempdir().unwrap();
    let f = RelPath::new("f").unwrap();
    let tree = DiskTree::new(tmp.path()).unwrap();
    tree.read_ahead(&f, 100);
    // The read ahead fails (no file yet), whenever it runs.
    while !tree.ahead.borrow().as_ref().unwrap().read.is_finished() {
        std::thread::yield_now();
    }
    std::fs::write(tmp.path().join("f"), "made since\n").unwrap();
    assert_eq!(tree.read_text(&f, 100).unwrap().text, "made since\n");
    let fifo = RelPath::new("fifo").unwrap();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        tmp.path().join("fifo"),
        rustix::fs::FileType::Fifo,
        Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    tree.read_ahead(&fifo, 100);
    let e = tree.read_text(&fifo, 100).unwrap_err();
    assert_eq!(refusal(&e), Some(Refusal::Special), "{e}");
}

/// A file read ahead, then changed by another process before the planner
/// takes that read: the planner works on the text as it was read, so the
/// commit must refuse as for any read the file changed after
/// (`target_changed`), and the other process's text stays.
#[test]
fn a_file_changed_after_its_read_ahead_is_never_overwritten() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("a.txt"), "one\ntwo\n").unwrap();
    let mut tree = DiskTree::new(tmp.path()).unwrap();
    tree.read_ahead(&RelPath::new("a.txt").unwrap(), crate::ir::TOO_LARGE);
    while !tree.ahead.borrow().as_ref().unwrap().read.is_finished() {
        std::thread::yield_now();
    }
    std::fs::write(tmp.path().join("a.txt"), "one\nTWO, longer\n").unwrap();
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** End Patch\n";
    let apply = crate::Mode::Apply { dry_run: false };
    let outcome = crate::run(
        patch,
        Some(crate::Format::Codex),
        apply,
        Some(&mut tree),
        None,
    );
    let codes: Vec<_> = outcome.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, [crate::error::Code::TargetChanged], "{outcome:?}");
    let now = std::fs::read_to_string(tmp.path().join("a.txt")).unwrap();
    assert_eq!(now, "one\nTWO, longer\n");
}
