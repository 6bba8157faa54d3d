//! The journal as bytes: a header naming the root it was written for, and
//! records, each checksummed; reading it back checks every byte and every
//! name a record gives.

use super::*;

pub(super) const MAGIC: &[u8; 8] = b"GPJRNL01";

/// Magic, root device, inode, birth time (seconds, nanoseconds), nonce,
/// checksum.
pub(super) const HEADER: usize = 8 + 8 + 8 + 8 + 4 + 8 + 8;

/// FNV-1a: a torn or corrupted record from a whole one.
pub(super) fn checksum(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

pub(super) fn header(root: RootId, nonce: u64) -> Vec<u8> {
    let mut h = MAGIC.to_vec();
    h.extend(root.dev.to_le_bytes());
    h.extend(root.ino.to_le_bytes());
    h.extend(root.born.0.to_le_bytes());
    h.extend(root.born.1.to_le_bytes());
    h.extend(nonce.to_le_bytes());
    let sum = checksum(&h);
    h.extend(sum.to_le_bytes());
    h
}

/// The record's bytes: kind, body length, body, checksum of those.
pub(super) fn encode(record: &Record) -> Vec<u8> {
    let mut body = Body::default();
    let kind = match record {
        Record::Staged { tmp } => {
            body.path(tmp);
            1
        }
        Record::Swapped {
            path,
            tmp,
            old,
            new,
        } => {
            body.path(path);
            body.path(tmp);
            body.ident(old);
            body.ident(new);
            2
        }
        Record::Moved { from, to, ident } => {
            body.path(from);
            body.path(to);
            body.ident(ident);
            3
        }
        Record::Linked { path, target } => {
            body.path(path);
            body.text(target);
            4
        }
        Record::MadeDir { path } => {
            body.path(path);
            5
        }
        Record::Committed { dirs } => {
            body.u32(dirs.len() as u32);
            for d in dirs {
                body.path(d);
            }
            6
        }
        Record::Undone { index } => {
            body.u32(*index);
            7
        }
    };
    let mut out = vec![kind];
    out.extend((body.0.len() as u32).to_le_bytes());
    out.extend(&body.0);
    let sum = checksum(&out);
    out.extend(sum.to_le_bytes());
    out
}

#[derive(Default)]
pub(super) struct Body(Vec<u8>);

impl Body {
    fn u32(&mut self, n: u32) {
        self.0.extend(n.to_le_bytes());
    }
    fn text(&mut self, s: &str) {
        self.u32(s.len() as u32);
        self.0.extend(s.as_bytes());
    }
    fn path(&mut self, p: &RelPath) {
        self.text(p.as_str());
    }
    fn ident(&mut self, i: &Ident) {
        for n in [i.dev, i.ino, i.size, i.mtime.0 as u64] {
            self.0.extend(n.to_le_bytes());
        }
        self.u32(i.mtime.1);
        self.u32(i.mode);
    }
}

/// Reads a record's body; every read is checked against what is left, so
/// no length, however large, reads past the end or allocates.
pub(super) struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.0.len() {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn text(&mut self) -> Option<&'a str> {
        let n = self.u32()? as usize;
        std::str::from_utf8(self.take(n)?).ok()
    }
    /// A path exactly as `RelPath` writes it.
    fn path(&mut self) -> Option<RelPath> {
        let s = self.text()?;
        RelPath::new(s).filter(|p| p.as_str() == s)
    }
    fn ident(&mut self) -> Option<Ident> {
        let (dev, ino, size, secs) = (self.u64()?, self.u64()?, self.u64()?, self.u64()?);
        let (nanos, mode) = (self.u32()?, self.u32()?);
        Some(Ident {
            dev,
            ino,
            size,
            mtime: (secs as i64, nanos),
            mode,
            uid: 0,
            gid: 0,
            nlink: 0,
        })
    }
}

pub(super) fn decode(kind: u8, body: &[u8]) -> Option<Record> {
    let mut r = Reader(body);
    let record = match kind {
        1 => Record::Staged { tmp: r.path()? },
        2 => Record::Swapped {
            path: r.path()?,
            tmp: r.path()?,
            old: r.ident()?,
            new: r.ident()?,
        },
        3 => Record::Moved {
            from: r.path()?,
            to: r.path()?,
            ident: r.ident()?,
        },
        4 => Record::Linked {
            path: r.path()?,
            target: r.text()?.to_string(),
        },
        5 => Record::MadeDir { path: r.path()? },
        6 => {
            let n = r.u32()?;
            let mut dirs = vec![];
            for _ in 0..n {
                dirs.push(r.path()?);
            }
            Record::Committed { dirs }
        }
        7 => Record::Undone { index: r.u32()? },
        _ => return None,
    };
    r.0.is_empty().then_some(record)
}

/// A journal read back: its records, up to a torn tail.
#[derive(Debug)]
pub(super) struct Read {
    pub(super) records: Vec<Record>,
}

/// What a journal's bytes hold, or why it is not one to replay here.
pub(super) enum Parsed {
    /// The header itself is torn: killed as the journal was begun.
    NeverStarted,
    Journal(Read),
}

pub(super) fn parse(bytes: &[u8], root: RootId) -> Result<Parsed, String> {
    if bytes.len() < HEADER {
        return if MAGIC.starts_with(&bytes[..bytes.len().min(MAGIC.len())]) {
            Ok(Parsed::NeverStarted)
        } else {
            Err("it is not a grammar-patch journal".into())
        };
    }
    let (head, mut rest) = bytes.split_at(HEADER);
    let sum = u64::from_le_bytes(head[HEADER - 8..].try_into().expect("8 bytes"));
    if &head[..8] != MAGIC || checksum(&head[..HEADER - 8]) != sum {
        return Err("it is not a grammar-patch journal".into());
    }
    let nonce = u64::from_le_bytes(head[36..44].try_into().expect("8 bytes"));
    if head[..36] != header(root, nonce)[..36] {
        return Err("it was written for another directory".into());
    }
    let mut records = vec![];
    while rest.len() >= 5 {
        let kind = rest[0];
        let len = u32::from_le_bytes(rest[1..5].try_into().expect("4 bytes")) as usize;
        let Some(total) = len.checked_add(5 + 8).filter(|&t| t <= rest.len()) else {
            break; // torn: its step never ran
        };
        let sum = u64::from_le_bytes(rest[5 + len..total].try_into().expect("8 bytes"));
        if checksum(&rest[..5 + len]) != sum {
            break;
        }
        let record = decode(kind, &rest[5..5 + len])
            .ok_or_else(|| format!("record {} is not one grammar-patch writes", records.len()))?;
        check(&record, nonce, records.len())?;
        records.push(record);
        rest = &rest[total..];
    }
    Ok(Parsed::Journal(Read { records }))
}

/// A record this tool could have written: temporary names only where a
/// step puts one, and no other path naming `.git` or a journal's name.
/// Anything else means the journal is not ours, and nothing in it is done.
pub(super) fn check(record: &Record, nonce: u64, at: usize) -> Result<(), String> {
    let plain = |p: &RelPath| paths::is_plain(p.as_str());
    let temp = |p: &RelPath| is_temp(p, nonce);
    let ok = match record {
        Record::Staged { tmp } => temp(tmp),
        Record::Swapped { path, tmp, .. } => plain(path) && temp(tmp),
        Record::Moved { from, to, .. } => {
            (plain(from) || temp(from)) && (plain(to) || temp(to)) && !(temp(from) && temp(to))
        }
        Record::Linked { path, .. } | Record::MadeDir { path } => plain(path),
        Record::Committed { dirs } => dirs.iter().all(plain),
        Record::Undone { index } => (*index as usize) < at,
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "record {at} names a path grammar-patch never writes"
        ))
    }
}
