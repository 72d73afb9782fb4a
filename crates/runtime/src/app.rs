//! The applications at the ends of a runtime connection: a traffic generator
//! (iperf-like), a counting sink, and a file sender / verifying file receiver.
//!
//! File transfer stream layout (all integers big endian):
//!
//! ```text
//! "JNF2" | name length u16 | name (UTF-8) | size u64 | SHA-256 (32 bytes) | offset u64 | file bytes from offset
//!
//! (`offset` > 0: the stream resumes a transfer whose first `offset` bytes
//! the receiver kept, `crate::resume`.)
//! ```
//!
//! The receiver writes to its connection's own partial file
//! (`crate::partial`) and renames it to `DIR/NAME` only after the stream
//! ended and the bytes on disk have the announced size and SHA-256; on any
//! failure (or when dropped unfinished) it deletes the partial file. A killed
//! receiver can leave only a dot-file named `*.partial` (removed when the
//! next `recv` starts), never a file that looks complete.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use joulenet_proto::{AppRead, Duration, Time};
use sha2::{Digest, Sha256};

use crate::frame::Verdict;

/// Where an agent's outgoing bytes come from.
pub trait AppSource: Send {
    /// Fill `buf` (see [`joulenet_proto::Net::app_read`]).
    fn read(&mut self, now: Time, buf: &mut [u8]) -> AppRead;
    /// When a source that answered `Pending` will have data again.
    fn next_ready(&self) -> Option<Time> {
        None
    }
    /// Bytes handed to the agent so far.
    fn bytes_read(&self) -> u64;
    /// Bytes the source will hand over in all, when known.
    fn total_bytes(&self) -> Option<u64> {
        None
    }
}

/// Where an agent's delivered bytes go.
pub trait AppSink: Send {
    fn deliver(&mut self, data: &[u8]);
    /// End of stream.
    fn finish(&mut self);
    fn bytes(&self) -> u64;
}

/// How long a generator sends.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Limit {
    Bytes(u64),
    /// For this long after the transport first takes data — iperf3's `-t`,
    /// whose clock starts once its streams are connected, so a handshake
    /// that waits out lost SYNs does not eat into the measured time.
    For(Duration),
}

/// iperf-like generator: zeros as fast as the agent takes them (or at
/// `rate_bps`), until a byte count or a time.
pub struct Generator {
    limit: Limit,
    rate_bps: Option<u64>,
    sent: u64,
    /// When the transport first took data.
    started: Option<Time>,
    /// Pacing: the time the next byte may go (rate-limited mode only).
    next_at: Time,
}

impl Generator {
    pub fn new(limit: Limit, rate_bps: Option<u64>) -> Generator {
        Generator {
            limit,
            rate_bps: rate_bps.filter(|&r| r > 0),
            sent: 0,
            started: None,
            next_at: Time::ZERO,
        }
    }

    fn room(&self, now: Time) -> u64 {
        match (self.limit, self.started) {
            (Limit::Bytes(total), _) => total.saturating_sub(self.sent),
            (Limit::For(length), Some(start)) if now >= start + length => 0,
            (Limit::For(_), _) => u64::MAX,
        }
    }
}

impl AppSource for Generator {
    fn read(&mut self, now: Time, buf: &mut [u8]) -> AppRead {
        let room = self.room(now);
        if room == 0 {
            return AppRead::Finished;
        }
        if buf.is_empty() {
            return AppRead::Pending;
        }
        self.started.get_or_insert(now);
        let mut n = (buf.len() as u64).min(room) as usize;
        if let Some(rate) = self.rate_bps {
            if now < self.next_at {
                return AppRead::Pending;
            }
            // One message per call when paced, so datagrams keep their size.
            n = n.min(1472);
            let gap_ns = (n as u128 * 8 * 1_000_000_000 / rate as u128) as u64;
            self.next_at = Time(self.next_at.0.max(now.0.saturating_sub(gap_ns)) + gap_ns);
        }
        buf[..n].fill(0);
        self.sent += n as u64;
        AppRead::Data(n)
    }
    fn next_ready(&self) -> Option<Time> {
        self.rate_bps.map(|_| self.next_at)
    }
    fn bytes_read(&self) -> u64 {
        self.sent
    }
    fn total_bytes(&self) -> Option<u64> {
        match self.limit {
            Limit::Bytes(n) => Some(n),
            Limit::For(_) => None,
        }
    }
}

/// A sink that counts and discards.
#[derive(Default)]
pub struct CountingSink {
    pub bytes: u64,
    pub finished: bool,
}

impl AppSink for CountingSink {
    fn deliver(&mut self, data: &[u8]) {
        self.bytes += data.len() as u64;
    }
    fn finish(&mut self) {
        self.finished = true;
    }
    fn bytes(&self) -> u64 {
        self.bytes
    }
}

const FILE_MAGIC: &[u8; 4] = b"JNF2";
/// Longest file name accepted, bytes.
pub const MAX_NAME: usize = 255;

/// The header that opens a file-transfer stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileHeader {
    pub name: String,
    pub size: u64,
    pub sha256: [u8; 32],
    /// The first file byte the stream carries (a resumed transfer's offset).
    pub offset: u64,
}

impl FileHeader {
    pub fn encode(&self) -> Vec<u8> {
        let name = self.name.as_bytes();
        let mut out = Vec::with_capacity(4 + 2 + name.len() + 8 + 32 + 8);
        out.extend_from_slice(FILE_MAGIC);
        out.extend_from_slice(&(name.len() as u16).to_be_bytes());
        out.extend_from_slice(name);
        out.extend_from_slice(&self.size.to_be_bytes());
        out.extend_from_slice(&self.sha256);
        out.extend_from_slice(&self.offset.to_be_bytes());
        out
    }

    /// Parses a header from the start of `buf`: `Ok(None)` if more bytes are
    /// needed, `Ok(Some((header, len)))` when complete.
    pub fn decode(buf: &[u8]) -> Result<Option<(FileHeader, usize)>, String> {
        if buf.len() < 6 {
            return Ok(None);
        }
        if &buf[0..4] != FILE_MAGIC {
            return Err("stream does not start with a joulenet file header".into());
        }
        let name_len = u16::from_be_bytes([buf[4], buf[5]]) as usize;
        if name_len == 0 || name_len > MAX_NAME {
            return Err(format!("file name length {name_len} out of range"));
        }
        let total = 6 + name_len + 8 + 32 + 8;
        if buf.len() < total {
            return Ok(None);
        }
        let name = std::str::from_utf8(&buf[6..6 + name_len])
            .map_err(|_| "file name is not UTF-8".to_string())?
            .to_string();
        check_name(&name)?;
        let mut size = [0u8; 8];
        size.copy_from_slice(&buf[6 + name_len..14 + name_len]);
        let mut sha256 = [0u8; 32];
        sha256.copy_from_slice(&buf[14 + name_len..total - 8]);
        let mut offset = [0u8; 8];
        offset.copy_from_slice(&buf[total - 8..total]);
        let (size, offset) = (u64::from_be_bytes(size), u64::from_be_bytes(offset));
        if offset > size {
            return Err(format!("offset {offset} beyond the file's {size} bytes"));
        }
        Ok(Some((
            FileHeader {
                name,
                size,
                sha256,
                offset,
            },
            total,
        )))
    }
}

/// A name must be one plain path component: no separators, no dot-files
/// (which also keeps it from colliding with partial files), no control bytes.
pub fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty()
        || name.starts_with('.')
        || name.contains(['/', '\\', '\0'])
        || name.chars().any(char::is_control)
    {
        return Err(format!("unsafe file name {name:?}"));
    }
    Ok(())
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// SHA-256 of a file, and its size.
pub fn hash_file(path: &Path) -> std::io::Result<([u8; 32], u64)> {
    let mut f = BufReader::with_capacity(1 << 20, File::open(path)?);
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut size = 0u64;
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        size += n as u64;
        h.update(&buf[..n]);
    }
    Ok((h.finalize().into(), size))
}

/// Sends a file: the header, then the file's bytes.
pub struct FileSource {
    header: Vec<u8>,
    header_pos: usize,
    file: BufReader<File>,
    total: u64,
    sent: u64,
    error: Option<String>,
}

impl FileSource {
    /// Hashes the file (one read pass) and opens it for sending.
    pub fn open(path: &Path) -> Result<(FileSource, FileHeader), String> {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| format!("{}: no usable file name", path.display()))?
            .to_string();
        check_name(&name)?;
        if name.len() > MAX_NAME {
            return Err(format!("file name longer than {MAX_NAME} bytes"));
        }
        let (sha256, size) = hash_file(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let header = FileHeader {
            name,
            size,
            sha256,
            offset: 0,
        };
        let file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let encoded = header.encode();
        Ok((
            FileSource {
                total: encoded.len() as u64 + size,
                header: encoded,
                header_pos: 0,
                file: BufReader::with_capacity(1 << 20, file),
                sent: 0,
                error: None,
            },
            header,
        ))
    }

    /// Opens the file again for another stream of the same header, without
    /// hashing it again (R²CP's senders: one stream per pipe). If the file
    /// changed since, the receiver's check on disk fails.
    pub fn reopen(path: &Path, header: &FileHeader) -> Result<FileSource, String> {
        let mut file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
        file.seek(SeekFrom::Start(header.offset))
            .map_err(|e| format!("{}: {e}", path.display()))?;
        let encoded = header.encode();
        Ok(FileSource {
            total: encoded.len() as u64 + header.size - header.offset,
            header: encoded,
            header_pos: 0,
            file: BufReader::with_capacity(1 << 20, file),
            sent: 0,
            error: None,
        })
    }

    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// Starts the stream at file byte `offset` (the receiver holds the bytes
    /// before it). Only before the first read.
    pub fn resume_from(&mut self, header: &mut FileHeader, offset: u64) -> Result<(), String> {
        if self.sent > 0 || offset > header.size {
            return Err(format!("cannot resume at {offset}"));
        }
        header.offset = offset;
        self.header = header.encode();
        self.total = self.header.len() as u64 + header.size - offset;
        self.file
            .seek(SeekFrom::Start(offset))
            .map_err(|e| e.to_string())?;
        Ok(())
    }
}

impl AppSource for FileSource {
    fn read(&mut self, _now: Time, buf: &mut [u8]) -> AppRead {
        if buf.is_empty() {
            return AppRead::Pending;
        }
        if self.header_pos < self.header.len() {
            let n = (self.header.len() - self.header_pos).min(buf.len());
            buf[..n].copy_from_slice(&self.header[self.header_pos..self.header_pos + n]);
            self.header_pos += n;
            self.sent += n as u64;
            return AppRead::Data(n);
        }
        if self.sent >= self.total || self.error.is_some() {
            return AppRead::Finished;
        }
        let want = ((self.total - self.sent) as usize).min(buf.len());
        match self.file.read(&mut buf[..want]) {
            Ok(0) => {
                // The file shrank while being sent: the receiver's size check fails.
                self.error = Some("file shrank while being sent".into());
                AppRead::Finished
            }
            Ok(n) => {
                self.sent += n as u64;
                AppRead::Data(n)
            }
            Err(e) => {
                self.error = Some(e.to_string());
                AppRead::Finished
            }
        }
    }
    fn bytes_read(&self) -> u64 {
        self.sent
    }
    fn total_bytes(&self) -> Option<u64> {
        Some(self.total)
    }
}

/// What became of a received file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum FileOutcome {
    #[default]
    InProgress,
    /// Verified on disk and renamed into place.
    Complete {
        path: PathBuf,
        size: u64,
        sha256: String,
    },
    /// Rejected; nothing was left behind under the file's name.
    Failed { verdict: Verdict, reason: String },
}

impl FileOutcome {
    /// The verdict for the sender (`Incomplete` while in progress).
    pub fn verdict(&self) -> Verdict {
        match self {
            FileOutcome::InProgress => Verdict::Incomplete,
            FileOutcome::Complete { .. } => Verdict::Verified,
            FileOutcome::Failed { verdict, .. } => *verdict,
        }
    }

    /// The SHA-256 of the verified file.
    pub fn digest(&self) -> Option<[u8; 32]> {
        let FileOutcome::Complete { sha256, .. } = self else {
            return None;
        };
        let mut out = [0u8; 32];
        for (i, b) in out.iter_mut().enumerate() {
            *b = u8::from_str_radix(sha256.get(2 * i..2 * i + 2)?, 16).ok()?;
        }
        Some(out)
    }

    pub fn reason(&self) -> &str {
        match self {
            FileOutcome::InProgress => "the stream did not end",
            FileOutcome::Complete { .. } => "",
            FileOutcome::Failed { reason, .. } => reason,
        }
    }
}

/// Receives a file into a directory. The bytes go to this connection's own
/// partial file ([`crate::partial`]); at the end of the stream the file on
/// disk — not the stream — is hashed, and only if its size and SHA-256 are
/// the announced ones is it renamed into place.
pub struct FileSink {
    dir: PathBuf,
    conn_id: u64,
    head: Vec<u8>,
    header: Option<FileHeader>,
    partial: Option<(PathBuf, std::io::BufWriter<File>)>,
    body: u64,
    bytes: u64,
    /// SHA-256 of the file on disk, once verified.
    digest: Option<[u8; 32]>,
    outcome: Arc<Mutex<FileOutcome>>,
}

impl FileSink {
    /// A sink for connection `conn_id` (which names its partial file).
    pub fn new(dir: &Path, conn_id: u64) -> (FileSink, Arc<Mutex<FileOutcome>>) {
        let outcome = Arc::new(Mutex::new(FileOutcome::InProgress));
        (
            FileSink {
                dir: dir.to_path_buf(),
                conn_id,
                head: Vec::new(),
                header: None,
                partial: None,
                body: 0,
                bytes: 0,
                digest: None,
                outcome: Arc::clone(&outcome),
            },
            outcome,
        )
    }

    /// The SHA-256 of the file on disk, once it was verified.
    pub fn digest(&self) -> Option<[u8; 32]> {
        self.digest
    }

    fn failed(&self) -> bool {
        matches!(*self.outcome.lock().unwrap(), FileOutcome::Failed { .. })
    }

    fn fail(&mut self, verdict: Verdict, reason: String) {
        if let Some((path, w)) = self.partial.take() {
            // An interrupted stream's bytes are good as far as they go: kept
            // for the next transfer of the same file to resume from. Any
            // other failure (a mismatch, a refused or unwritable file)
            // leaves nothing.
            let kept = verdict == Verdict::Incomplete
                && w.into_inner().is_ok()
                && self.header.as_ref().is_some_and(|h| {
                    crate::resume::keep(&path, &self.dir, &h.name, &h.sha256).is_ok()
                });
            if !kept {
                let _ = std::fs::remove_file(path);
            }
        }
        let mut o = self.outcome.lock().unwrap();
        if *o == FileOutcome::InProgress {
            *o = FileOutcome::Failed { verdict, reason };
        }
    }

    fn write_body(&mut self, data: &[u8]) {
        let Some(header) = &self.header else { return };
        if self.body + data.len() as u64 > header.size {
            return self.fail(
                Verdict::Mismatch,
                format!("more bytes than the announced size {}", header.size),
            );
        }
        self.body += data.len() as u64;
        if let Some((_, w)) = &mut self.partial {
            if let Err(e) = w.write_all(data) {
                self.fail(
                    Verdict::WriteFailed,
                    format!("writing the partial file: {e}"),
                );
            }
        }
    }

    /// Flushes and syncs the partial file, then hashes what is on disk
    /// through the same open file (so the bytes judged are the bytes that
    /// will be renamed, whatever else happens to the directory).
    fn verify_on_disk(w: std::io::BufWriter<File>) -> Result<(File, [u8; 32], u64), String> {
        let mut f = w.into_inner().map_err(|e| e.error().to_string())?;
        f.sync_all().map_err(|e| e.to_string())?;
        f.seek(SeekFrom::Start(0)).map_err(|e| e.to_string())?;
        let mut h = Sha256::new();
        let mut buf = vec![0u8; 1 << 20];
        let mut size = 0u64;
        loop {
            let n = f.read(&mut buf).map_err(|e| e.to_string())?;
            if n == 0 {
                break;
            }
            size += n as u64;
            h.update(&buf[..n]);
        }
        Ok((f, h.finalize().into(), size))
    }
}

impl AppSink for FileSink {
    fn deliver(&mut self, data: &[u8]) {
        self.bytes += data.len() as u64;
        if self.failed() {
            return;
        }
        if self.header.is_some() {
            return self.write_body(data);
        }
        // Accumulate the header (bounded: at most one header's length).
        let need = 6 + MAX_NAME + 40;
        let take = data.len().min(need.saturating_sub(self.head.len()));
        self.head.extend_from_slice(&data[..take]);
        match FileHeader::decode(&self.head) {
            Err(e) => self.fail(Verdict::Refused, e),
            Ok(None) if self.head.len() >= need => {
                self.fail(Verdict::Refused, "file header too long".into())
            }
            Ok(None) => {}
            Ok(Some((header, len))) => {
                let opened = if header.offset > 0 {
                    crate::resume::claim(
                        &self.dir,
                        &header.name,
                        &header.sha256,
                        self.conn_id,
                        header.offset,
                    )
                } else {
                    crate::partial::create(&self.dir, &header.name, self.conn_id)
                };
                match opened {
                    Ok((path, f)) => {
                        self.partial = Some((path, std::io::BufWriter::with_capacity(1 << 20, f)))
                    }
                    Err(e) if header.offset > 0 => {
                        return self.fail(
                            Verdict::Refused,
                            format!("cannot resume at byte {}: {e}", header.offset),
                        )
                    }
                    Err(e) => {
                        return self.fail(
                            Verdict::WriteFailed,
                            format!("creating a partial file in {}: {e}", self.dir.display()),
                        )
                    }
                }
                self.body = header.offset;
                self.header = Some(header);
                let rest_in_head = self.head.split_off(len);
                let rest_in_data = data[take..].to_vec();
                self.write_body(&rest_in_head);
                self.write_body(&rest_in_data);
            }
        }
    }

    fn finish(&mut self) {
        if self.failed() {
            return;
        }
        let Some(header) = self.header.clone() else {
            return self.fail(
                Verdict::Incomplete,
                "stream ended before the file header".into(),
            );
        };
        if self.body != header.size {
            return self.fail(
                Verdict::Mismatch,
                format!("stream ended after {} of {} bytes", self.body, header.size),
            );
        }
        let Some((partial, w)) = self.partial.take() else {
            return self.fail(Verdict::WriteFailed, "no partial file".into());
        };
        let (file, digest, size) = match FileSink::verify_on_disk(w) {
            Ok(v) => v,
            Err(e) => {
                let _ = std::fs::remove_file(&partial);
                return self.fail(Verdict::WriteFailed, format!("{}: {e}", partial.display()));
            }
        };
        if size != header.size || digest != header.sha256 {
            let _ = std::fs::remove_file(&partial);
            return self.fail(
                Verdict::Mismatch,
                format!(
                    "SHA-256 mismatch: the {size} bytes on disk hash to {}, the sender announced {} bytes hashing to {}",
                    hex(&digest),
                    header.size,
                    hex(&header.sha256)
                ),
            );
        }
        let target = self.dir.join(&header.name);
        if let Err(e) = std::fs::rename(&partial, &target) {
            let _ = std::fs::remove_file(&partial);
            return self.fail(
                Verdict::RenameFailed,
                format!("rename to {}: {e}", target.display()),
            );
        }
        if !same_file(&file, &target) {
            // Something replaced the file between our rename and this check:
            // we cannot vouch for what the name holds now.
            return self.fail(
                Verdict::RenameFailed,
                format!("{} was replaced right after the rename", target.display()),
            );
        }
        crate::resume::forget(&self.dir, &header.name, &header.sha256);
        self.digest = Some(digest);
        *self.outcome.lock().unwrap() = FileOutcome::Complete {
            path: target,
            size: header.size,
            sha256: hex(&digest),
        };
    }

    fn bytes(&self) -> u64 {
        self.bytes
    }
}

/// Whether `path` names the file `file` is open on.
#[cfg(unix)]
fn same_file(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_file(_: &File, path: &Path) -> bool {
    path.is_file()
}

impl Drop for FileSink {
    /// An unfinished transfer leaves nothing behind.
    fn drop(&mut self) {
        if self.partial.is_some() {
            self.fail(Verdict::Incomplete, "transfer interrupted".into());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmpdir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("jn-app-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn pump(src: &mut FileSource, sink: &mut FileSink, chunk: usize) {
        let mut buf = vec![0u8; chunk];
        loop {
            match src.read(Time::ZERO, &mut buf) {
                AppRead::Data(n) => sink.deliver(&buf[..n]),
                AppRead::Finished => break,
                AppRead::Pending => unreachable!(),
            }
        }
    }

    #[test]
    fn file_round_trip_renames_only_when_verified() {
        let d = tmpdir("ok");
        let src_path = d.join("in.bin");
        let data: Vec<u8> = (0..100_000u32).map(|i| (i * 7) as u8).collect();
        std::fs::write(&src_path, &data).unwrap();
        let out = d.join("out");
        std::fs::create_dir_all(&out).unwrap();
        let (mut src, _) = FileSource::open(&src_path).unwrap();
        let (mut sink, outcome) = FileSink::new(&out, 1);
        pump(&mut src, &mut sink, 1000);
        assert!(!out.join("in.bin").exists(), "renamed before the end");
        sink.finish();
        assert!(matches!(
            *outcome.lock().unwrap(),
            FileOutcome::Complete { .. }
        ));
        assert_eq!(std::fs::read(out.join("in.bin")).unwrap(), data);
        assert_eq!(
            std::fs::read_dir(&out).unwrap().count(),
            1,
            "a partial file is left"
        );
    }

    #[test]
    fn truncated_or_corrupt_transfer_leaves_nothing_under_the_name() {
        let d = tmpdir("bad");
        let src_path = d.join("f.bin");
        std::fs::write(&src_path, vec![1u8; 10_000]).unwrap();
        let out = d.join("out");
        std::fs::create_dir_all(&out).unwrap();
        // Interrupted: dropped mid-stream.
        let (mut src, _) = FileSource::open(&src_path).unwrap();
        let (mut sink, outcome) = FileSink::new(&out, 1);
        let mut buf = vec![0u8; 3000];
        for _ in 0..2 {
            if let AppRead::Data(n) = src.read(Time::ZERO, &mut buf) {
                sink.deliver(&buf[..n]);
            }
        }
        drop(sink);
        assert!(matches!(
            *outcome.lock().unwrap(),
            FileOutcome::Failed { .. }
        ));
        // Only the received prefix, kept to resume from (crate::resume).
        let left: Vec<_> = std::fs::read_dir(&out).unwrap().flatten().collect();
        assert_eq!(left.len(), 1);
        let kept = left[0].file_name().into_string().unwrap();
        assert!(
            kept.starts_with(".f.bin.") && kept.ends_with(".resume"),
            "{kept}"
        );
        std::fs::remove_file(left[0].path()).unwrap();
        // Corrupted byte: hash mismatch.
        let (mut src, _) = FileSource::open(&src_path).unwrap();
        let (mut sink, outcome) = FileSink::new(&out, 1);
        let mut first = true;
        while let AppRead::Data(n) = src.read(Time::ZERO, &mut buf) {
            if !first {
                buf[0] ^= 1;
            }
            first = false;
            sink.deliver(&buf[..n]);
        }
        sink.finish();
        assert!(matches!(
            *outcome.lock().unwrap(),
            FileOutcome::Failed { .. }
        ));
        assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0);
    }

    /// The verdict is on the bytes on disk: a partial file changed under the
    /// receiver (here: its first byte, flushed early by the 1 MiB buffer)
    /// fails the check even though the stream itself was intact.
    #[test]
    fn the_hash_is_checked_over_the_file_on_disk() {
        let d = tmpdir("disk");
        let src_path = d.join("big.bin");
        let data: Vec<u8> = (0..3_000_000u32).map(|i| (i * 13) as u8).collect();
        std::fs::write(&src_path, &data).unwrap();
        let out = d.join("out");
        std::fs::create_dir_all(&out).unwrap();
        let (mut src, _) = FileSource::open(&src_path).unwrap();
        let (mut sink, outcome) = FileSink::new(&out, 9);
        pump(&mut src, &mut sink, 1400);
        let partial = std::fs::read_dir(&out)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        let mut on_disk = std::fs::read(&partial).unwrap();
        assert_eq!(on_disk[0], data[0], "the first bytes were not flushed");
        on_disk[0] ^= 1;
        std::fs::OpenOptions::new()
            .write(true)
            .open(&partial)
            .unwrap()
            .write_all(&on_disk[..1])
            .unwrap();
        sink.finish();
        let o = outcome.lock().unwrap().clone();
        assert_eq!(o.verdict(), Verdict::Mismatch, "{o:?}");
        assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0);
        assert!(sink.digest().is_none());
    }

    #[test]
    fn unsafe_names_are_refused() {
        for n in ["", ".hidden", "a/b", "..", "x\0y", "a\\b"] {
            assert!(check_name(n).is_err(), "{n:?}");
        }
        assert!(check_name("report-1.pdf").is_ok());
        // A header naming "../x" is rejected by the receiver.
        let header = FileHeader {
            name: "ok".into(),
            size: 10,
            sha256: [0; 32],
            offset: 0,
        };
        let mut h = header.encode();
        assert_eq!(FileHeader::decode(&h), Ok(Some((header.clone(), h.len()))));
        h[6] = b'.';
        assert!(FileHeader::decode(&h).is_err());
        // An offset beyond the file is refused.
        let beyond = FileHeader {
            offset: 11,
            ..header
        };
        assert!(FileHeader::decode(&beyond.encode()).is_err());
    }

    #[test]
    fn generator_limits() {
        let mut g = Generator::new(Limit::Bytes(2500), None);
        let mut buf = vec![0u8; 1000];
        let mut total = 0;
        while let AppRead::Data(n) = g.read(Time::ZERO, &mut buf) {
            total += n;
        }
        assert_eq!(total, 2500);
        // `-t` counts from the first byte taken, not from the generator's
        // creation: a connection that spent 3 s on its handshake still
        // sends for the whole second.
        let mut g = Generator::new(Limit::For(Duration::from_secs(1)), None);
        assert_eq!(g.read(Time::from_secs(3), &mut []), AppRead::Pending);
        assert!(matches!(
            g.read(Time::from_secs(3), &mut buf),
            AppRead::Data(1000)
        ));
        assert!(matches!(
            g.read(Time::from_millis(3999), &mut buf),
            AppRead::Data(1000)
        ));
        assert_eq!(g.read(Time::from_secs(4), &mut buf), AppRead::Finished);
    }
}
