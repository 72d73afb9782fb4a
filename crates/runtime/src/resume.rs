//! What `recv` keeps of an interrupted transfer so that the next one
//! resumes from it: the received prefix of the file, named after the file
//! and the SHA-256 the sender announced for the whole of it,
//! `DIR/.NAME.HASH.resume` (HASH: the first 32 hex digits).
//!
//! A sender asks before it sends (`Query`); the receiver offers the
//! prefix's length and SHA-256 (`Offer`); the sender checks that hash
//! against the same prefix of its own file and, if they agree, starts its
//! stream at that offset. The connection that resumes takes the file over
//! by renaming it to its own partial file (so two resumers never share
//! it); the whole file is verified on disk at the end as always. The prefix
//! is never trusted on its own: a wrong one only makes the final check fail.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::app::{check_name, hex};
use crate::frame::OfferRepr;
use crate::partial;

const SUFFIX: &str = ".resume";

/// Where the prefix of the file `name` with this SHA-256 is kept.
pub fn path(dir: &Path, name: &str, sha256: &[u8; 32]) -> PathBuf {
    dir.join(format!(
        ".{}.{}{SUFFIX}",
        partial::name_part(name),
        &hex(sha256)[..32]
    ))
}

/// SHA-256 of the first `len` bytes of `f`.
fn hash_prefix(f: &mut File, len: u64) -> io::Result<[u8; 32]> {
    f.seek(SeekFrom::Start(0))?;
    let mut h = Sha256::new();
    let mut left = len;
    let mut buf = vec![0u8; 1 << 20];
    while left > 0 {
        let want = (buf.len() as u64).min(left) as usize;
        let n = f.read(&mut buf[..want])?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "file shorter than its prefix",
            ));
        }
        h.update(&buf[..n]);
        left -= n as u64;
    }
    Ok(h.finalize().into())
}

/// SHA-256 of the first `len` bytes of the file at `p` (the sender's check).
pub fn hash_file_prefix(p: &Path, len: u64) -> io::Result<[u8; 32]> {
    hash_prefix(&mut File::open(p)?, len)
}

/// What the receiver can offer for this file: the prefix it holds (shorter
/// than the whole file, never empty) and its hash.
pub fn lookup(dir: &Path, name: &str, size: u64, sha256: &[u8; 32]) -> Option<OfferRepr> {
    check_name(name).ok()?;
    let mut f = File::open(path(dir, name, sha256)).ok()?;
    let len = f.metadata().ok()?.len();
    if len == 0 || len >= size {
        return None;
    }
    let prefix_sha256 = hash_prefix(&mut f, len).ok()?;
    Some(OfferRepr {
        prefix_len: len,
        prefix_sha256,
    })
}

/// Keeps an interrupted connection's partial file for a later resume,
/// unless a longer prefix of the same file is kept already.
pub fn keep(partial: &Path, dir: &Path, name: &str, sha256: &[u8; 32]) -> io::Result<()> {
    let target = path(dir, name, sha256);
    let ours = std::fs::metadata(partial)?.len();
    let theirs = std::fs::metadata(&target).map_or(0, |m| m.len());
    if ours == 0 || theirs >= ours {
        return std::fs::remove_file(partial);
    }
    std::fs::rename(partial, target)
}

/// Takes the kept prefix over as connection `conn_id`'s partial file, cut
/// to `offset` bytes and open for appending.
pub fn claim(
    dir: &Path,
    name: &str,
    sha256: &[u8; 32],
    conn_id: u64,
    offset: u64,
) -> io::Result<(PathBuf, File)> {
    let ours = partial::path(dir, name, conn_id);
    std::fs::rename(path(dir, name, sha256), &ours)?;
    let mut f = OpenOptions::new().read(true).write(true).open(&ours)?;
    if f.metadata()?.len() < offset {
        let _ = std::fs::remove_file(&ours);
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!("the kept prefix is shorter than offset {offset}"),
        ));
    }
    f.set_len(offset)?;
    f.seek(SeekFrom::End(0))?;
    Ok((ours, f))
}

/// How long a kept prefix waits for its sender to come back. A prefix is
/// worth keeping across receiver restarts (that is what it is for), but
/// not for ever: one no sender resumed within this long is removed when
/// `recv` starts ([`remove_expired`]).
pub const HORIZON: std::time::Duration = std::time::Duration::from_secs(7 * 24 * 3600);

/// Removes the kept prefixes in `dir` last written longer than `horizon`
/// ago; returns how many. Younger ones stay, so that a transfer
/// interrupted by a crash or restart still resumes.
pub fn remove_expired(dir: &Path, horizon: std::time::Duration) -> io::Result<usize> {
    let now = std::time::SystemTime::now();
    let mut removed = 0;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if !name.starts_with('.') || !name.ends_with(SUFFIX) || !entry.file_type()?.is_file() {
            continue;
        }
        let age = entry
            .metadata()?
            .modified()
            .ok()
            .and_then(|m| now.duration_since(m).ok());
        if age.is_some_and(|a| a > horizon) && std::fs::remove_file(entry.path()).is_ok() {
            removed += 1;
        }
    }
    Ok(removed)
}

/// A verified transfer of the file makes its kept prefix useless.
pub fn forget(dir: &Path, name: &str, sha256: &[u8; 32]) {
    let _ = std::fs::remove_file(path(dir, name, sha256));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keep_lookup_claim() {
        let d = std::env::temp_dir().join(format!("jn-resume-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        let sha = [3u8; 32];
        let p = d.join("p");
        std::fs::write(&p, b"hello world").unwrap();
        keep(&p, &d, "f.bin", &sha).unwrap();
        assert!(!p.exists());
        let o = lookup(&d, "f.bin", 100, &sha).unwrap();
        assert_eq!(o.prefix_len, 11);
        assert_eq!(
            o.prefix_sha256,
            <[u8; 32]>::from(Sha256::digest(b"hello world"))
        );
        // Not for another hash, a file no longer than the prefix, or a bad name.
        assert!(lookup(&d, "f.bin", 100, &[4; 32]).is_none());
        assert!(lookup(&d, "f.bin", 11, &sha).is_none());
        assert!(lookup(&d, "../f.bin", 100, &sha).is_none());
        // A shorter prefix does not replace a longer one.
        std::fs::write(&p, b"hello").unwrap();
        keep(&p, &d, "f.bin", &sha).unwrap();
        assert_eq!(lookup(&d, "f.bin", 100, &sha).unwrap().prefix_len, 11);
        // Claimed: cut to the offset, moved out of the way of other resumers.
        let (ours, _) = claim(&d, "f.bin", &sha, 7, 6).unwrap();
        assert_eq!(std::fs::read(&ours).unwrap(), b"hello ");
        assert!(lookup(&d, "f.bin", 100, &sha).is_none());
        assert!(claim(&d, "f.bin", &sha, 8, 6).is_err());
        let _ = std::fs::remove_dir_all(&d);
    }
}
