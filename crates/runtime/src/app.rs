//! The applications at the ends of a runtime connection: a traffic generator
//! (iperf-like), a counting sink, and a file sender / verifying file receiver.
//!
//! File transfer stream layout (all integers big endian):
//!
//! ```text
//! "JNF1" | name length u16 | name (UTF-8) | size u64 | SHA-256 (32 bytes) | file bytes
//! ```
//!
//! The receiver writes to `DIR/.NAME.partial` and renames it to `DIR/NAME`
//! only after the stream ended, the size matches and the hash matches; on any
//! failure (or when dropped unfinished) it deletes the partial file. A killed
//! receiver can leave only a dot-file named `*.partial`, never a file that
//! looks complete.

use std::fs::File;
use std::io::{BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use joulenet_proto::{AppRead, Duration, Time};
use sha2::{Digest, Sha256};

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

const FILE_MAGIC: &[u8; 4] = b"JNF1";
/// Longest file name accepted, bytes.
pub const MAX_NAME: usize = 255;

/// The header that opens a file-transfer stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileHeader {
    pub name: String,
    pub size: u64,
    pub sha256: [u8; 32],
}

impl FileHeader {
    pub fn encode(&self) -> Vec<u8> {
        let name = self.name.as_bytes();
        let mut out = Vec::with_capacity(4 + 2 + name.len() + 8 + 32);
        out.extend_from_slice(FILE_MAGIC);
        out.extend_from_slice(&(name.len() as u16).to_be_bytes());
        out.extend_from_slice(name);
        out.extend_from_slice(&self.size.to_be_bytes());
        out.extend_from_slice(&self.sha256);
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
        let total = 6 + name_len + 8 + 32;
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
        sha256.copy_from_slice(&buf[14 + name_len..total]);
        Ok(Some((
            FileHeader {
                name,
                size: u64::from_be_bytes(size),
                sha256,
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
        let header = FileHeader { name, size, sha256 };
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

    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
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
    /// Verified and renamed into place.
    Complete {
        path: PathBuf,
        size: u64,
        sha256: String,
    },
    /// Rejected; nothing was left behind under the file's name.
    Failed(String),
}

/// Receives a file into a directory, verifying size and SHA-256.
pub struct FileSink {
    dir: PathBuf,
    head: Vec<u8>,
    header: Option<FileHeader>,
    partial: Option<(PathBuf, std::io::BufWriter<File>)>,
    hasher: Sha256,
    body: u64,
    bytes: u64,
    outcome: Arc<Mutex<FileOutcome>>,
}

impl FileSink {
    pub fn new(dir: &Path) -> (FileSink, Arc<Mutex<FileOutcome>>) {
        let outcome = Arc::new(Mutex::new(FileOutcome::InProgress));
        (
            FileSink {
                dir: dir.to_path_buf(),
                head: Vec::new(),
                header: None,
                partial: None,
                hasher: Sha256::new(),
                body: 0,
                bytes: 0,
                outcome: Arc::clone(&outcome),
            },
            outcome,
        )
    }

    fn failed(&self) -> bool {
        matches!(*self.outcome.lock().unwrap(), FileOutcome::Failed(_))
    }

    fn fail(&mut self, why: String) {
        if let Some((path, _)) = self.partial.take() {
            let _ = std::fs::remove_file(path);
        }
        let mut o = self.outcome.lock().unwrap();
        if *o == FileOutcome::InProgress {
            *o = FileOutcome::Failed(why);
        }
    }

    fn write_body(&mut self, data: &[u8]) {
        let Some(header) = &self.header else { return };
        if self.body + data.len() as u64 > header.size {
            return self.fail(format!(
                "more bytes than the announced size {}",
                header.size
            ));
        }
        self.hasher.update(data);
        self.body += data.len() as u64;
        if let Some((_, w)) = &mut self.partial {
            if let Err(e) = w.write_all(data) {
                self.fail(format!("writing the partial file: {e}"));
            }
        }
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
            Err(e) => self.fail(e),
            Ok(None) if self.head.len() >= need => self.fail("file header too long".into()),
            Ok(None) => {}
            Ok(Some((header, len))) => {
                let partial = self.dir.join(format!(".{}.partial", header.name));
                match File::create(&partial) {
                    Ok(f) => {
                        self.partial =
                            Some((partial, std::io::BufWriter::with_capacity(1 << 20, f)))
                    }
                    Err(e) => return self.fail(format!("{}: {e}", partial.display())),
                }
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
            return self.fail("stream ended before the file header".into());
        };
        if self.body != header.size {
            return self.fail(format!(
                "stream ended after {} of {} bytes",
                self.body, header.size
            ));
        }
        let digest: [u8; 32] = std::mem::take(&mut self.hasher).finalize().into();
        if digest != header.sha256 {
            return self.fail(format!(
                "SHA-256 mismatch: got {}, announced {}",
                hex(&digest),
                hex(&header.sha256)
            ));
        }
        let Some((partial, mut w)) = self.partial.take() else {
            return self.fail("no partial file".into());
        };
        let flushed = w
            .flush()
            .map_err(|e| e.to_string())
            .and_then(|_| w.get_ref().sync_all().map_err(|e| e.to_string()));
        drop(w);
        let target = self.dir.join(&header.name);
        if let Err(e) =
            flushed.and_then(|_| std::fs::rename(&partial, &target).map_err(|e| e.to_string()))
        {
            let _ = std::fs::remove_file(&partial);
            return self.fail(format!("finishing {}: {e}", target.display()));
        }
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

impl Drop for FileSink {
    /// An unfinished transfer leaves nothing behind.
    fn drop(&mut self) {
        if self.partial.is_some() {
            self.fail("transfer interrupted".into());
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
        let (mut sink, outcome) = FileSink::new(&out);
        pump(&mut src, &mut sink, 1000);
        assert!(!out.join("in.bin").exists(), "renamed before the end");
        sink.finish();
        assert!(matches!(
            *outcome.lock().unwrap(),
            FileOutcome::Complete { .. }
        ));
        assert_eq!(std::fs::read(out.join("in.bin")).unwrap(), data);
        assert!(!out.join(".in.bin.partial").exists());
    }

    #[test]
    fn truncated_or_corrupt_transfer_leaves_nothing() {
        let d = tmpdir("bad");
        let src_path = d.join("f.bin");
        std::fs::write(&src_path, vec![1u8; 10_000]).unwrap();
        let out = d.join("out");
        std::fs::create_dir_all(&out).unwrap();
        // Interrupted: dropped mid-stream.
        let (mut src, _) = FileSource::open(&src_path).unwrap();
        let (mut sink, outcome) = FileSink::new(&out);
        let mut buf = vec![0u8; 3000];
        for _ in 0..2 {
            if let AppRead::Data(n) = src.read(Time::ZERO, &mut buf) {
                sink.deliver(&buf[..n]);
            }
        }
        drop(sink);
        assert!(matches!(*outcome.lock().unwrap(), FileOutcome::Failed(_)));
        assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0);
        // Corrupted byte: hash mismatch.
        let (mut src, _) = FileSource::open(&src_path).unwrap();
        let (mut sink, outcome) = FileSink::new(&out);
        let mut first = true;
        while let AppRead::Data(n) = src.read(Time::ZERO, &mut buf) {
            if !first {
                buf[0] ^= 1;
            }
            first = false;
            sink.deliver(&buf[..n]);
        }
        sink.finish();
        assert!(matches!(*outcome.lock().unwrap(), FileOutcome::Failed(_)));
        assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0);
    }

    #[test]
    fn unsafe_names_are_refused() {
        for n in ["", ".hidden", "a/b", "..", "x\0y", "a\\b"] {
            assert!(check_name(n).is_err(), "{n:?}");
        }
        assert!(check_name("report-1.pdf").is_ok());
        // A header naming "../x" is rejected by the receiver.
        let mut h = FileHeader {
            name: "ok".into(),
            size: 0,
            sha256: [0; 32],
        }
        .encode();
        h[6] = b'.';
        assert!(FileHeader::decode(&h).is_err());
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
