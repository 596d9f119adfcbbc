//! The index file's byte-level pieces: its checksum, and the writers and bounds-checked
//! [`Reader`] of varints, strings and stamps that the layout in [`super`] is made of.

use crate::domain::store::Stamp;

/// A 64-bit checksum of the index body: four lanes of multiply-xorshift over 8-byte words
/// (a few tenths of a millisecond per megabyte). Any change within one word always changes
/// it, since each step is a bijection of the lane; it guards against torn and damaged files,
/// not against forgery.
pub fn checksum(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut lanes = [K, K ^ 0x5555, K ^ 0xAAAA, K ^ 0xFFFF];
    let mut chunks = bytes.chunks_exact(32);
    for chunk in &mut chunks {
        for (lane, word) in lanes.iter_mut().zip(chunk.chunks_exact(8)) {
            let mut w = [0u8; 8];
            w.copy_from_slice(word);
            *lane = mix(*lane ^ u64::from_le_bytes(w));
        }
    }
    let mut h = bytes.len() as u64;
    for lane in lanes {
        h = mix(h ^ lane);
    }
    for &byte in chunks.remainder() {
        h = mix(h ^ u64::from(byte));
    }
    h
}

fn mix(x: u64) -> u64 {
    let x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^ (x >> 31)
}

pub(super) fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

pub(super) fn put_str(out: &mut Vec<u8>, text: &str) {
    put_varint(out, text.len() as u64);
    out.extend_from_slice(text.as_bytes());
}

pub(super) fn put_stamp(out: &mut Vec<u8>, stamp: &Stamp) {
    put_varint(out, stamp.size);
    out.extend_from_slice(&stamp.mtime_ns.to_le_bytes());
    out.extend_from_slice(&stamp.ctime_ns.to_le_bytes());
    put_varint(out, stamp.ino);
}

/// Bounds-checked reading: every read past the end is `None`, never a panic.
#[derive(Debug, Clone)]
pub(super) struct Reader<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) at: usize,
}

impl<'a> Reader<'a> {
    pub(super) fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n)?;
        let out = self.bytes.get(self.at..end)?;
        self.at = end;
        Some(out)
    }

    pub(super) fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }

    pub(super) fn u64(&mut self) -> Option<u64> {
        let mut w = [0u8; 8];
        w.copy_from_slice(self.take(8)?);
        Some(u64::from_le_bytes(w))
    }

    pub(super) fn varint(&mut self) -> Option<u64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = self.u8()?;
            value |= u64::from(byte & 0x7F) << shift;
            if byte & 0x80 == 0 {
                return Some(value);
            }
        }
        None
    }

    /// A count of items that each take at least one byte: never more than the bytes left.
    pub(super) fn count(&mut self) -> Option<usize> {
        let n = usize::try_from(self.varint()?).ok()?;
        (n <= self.bytes.len() - self.at).then_some(n)
    }

    pub(super) fn str(&mut self) -> Option<&'a str> {
        let n = usize::try_from(self.varint()?).ok()?;
        std::str::from_utf8(self.take(n)?).ok()
    }

    pub(super) fn stamp(&mut self) -> Option<Stamp> {
        Some(Stamp {
            size: self.varint()?,
            mtime_ns: self.u64()? as i64,
            ctime_ns: self.u64()? as i64,
            ino: self.varint()?,
        })
    }
}
