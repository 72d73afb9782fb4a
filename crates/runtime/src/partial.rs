//! Partial files of `recv`: where a file is written until it is verified.
//!
//! Each connection writes its own, `DIR/.NAME.PID-CONNID.partial`, created
//! exclusively (`O_CREAT | O_EXCL`): two transfers of one name never share
//! a file, and a connection that expires removes only its own. The name
//! carries the owning process's id so that a receiver starting up can tell
//! what a killed predecessor left ([`remove_stale`]) from what another
//! receiver running on the same directory is writing now.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

const SUFFIX: &str = ".partial";

/// Bytes of the file's name kept in a partial file's name, so that the
/// whole stays within the 255-byte limit of common file systems.
const NAME_PART: usize = 200;

/// `name` cut to at most [`NAME_PART`] bytes at a character boundary.
pub(crate) fn name_part(name: &str) -> &str {
    let mut end = name.len().min(NAME_PART);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    &name[..end]
}

/// This process's partial file for `name` on connection `conn_id`.
pub fn path(dir: &Path, name: &str, conn_id: u64) -> PathBuf {
    dir.join(format!(
        ".{}.{}-{conn_id:016x}{SUFFIX}",
        name_part(name),
        std::process::id()
    ))
}

/// Creates this connection's partial file for `name` in `dir`, exclusively.
pub fn create(dir: &Path, name: &str, conn_id: u64) -> io::Result<(PathBuf, File)> {
    let path = path(dir, name, conn_id);
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)?;
    Ok((path, file))
}

/// The process id in a partial file's name, if it has the per-connection
/// layout (`.NAME.PID-CONNID.partial`).
fn owner(file_name: &str) -> Option<u32> {
    let stem = file_name.strip_prefix('.')?.strip_suffix(SUFFIX)?;
    let (_, tag) = stem.rsplit_once('.')?;
    let (pid, id) = tag.split_once('-')?;
    (id.len() == 16 && u64::from_str_radix(id, 16).is_ok())
        .then(|| pid.parse().ok())
        .flatten()
}

/// Whether a process with this id runs (signal 0 checks without sending).
fn alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // SAFETY: kill with signal 0 sends nothing; it only checks the pid.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Removes the partial files in `dir` that no running process owns: those
/// of the old shared layout (`.NAME.partial`), of processes that are gone,
/// and of an earlier process that had this process's id. Returns how many.
pub fn remove_stale(dir: &Path) -> io::Result<usize> {
    let me = std::process::id();
    let mut removed = 0;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if !name.starts_with('.') || !name.ends_with(SUFFIX) || !entry.file_type()?.is_file() {
            continue;
        }
        let stale = match owner(name) {
            Some(pid) => pid == me || !alive(pid),
            None => true,
        };
        if stale && std::fs::remove_file(entry.path()).is_ok() {
            removed += 1;
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_carry_the_owner_and_are_created_exclusively() {
        let d = std::env::temp_dir().join(format!("jn-partial-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        let (p, _) = create(&d, "a.bin", 0xab).unwrap();
        let n = p.file_name().unwrap().to_str().unwrap();
        assert_eq!(owner(n), Some(std::process::id()));
        assert!(create(&d, "a.bin", 0xab).is_err(), "created twice");
        assert!(create(&d, "a.bin", 0xac).is_ok());
        // A 255-byte name still gives a partial name within 255 bytes.
        let long = "é".repeat(127);
        let (p, _) = create(&d, &long, 1).unwrap();
        assert!(p.file_name().unwrap().len() <= 255);
        assert_eq!(owner(".x.bin.partial"), None);
        assert_eq!(owner(".x.12-00000000000000zz.partial"), None);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn only_files_no_running_process_owns_are_stale() {
        let d = std::env::temp_dir().join(format!("jn-stale-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        // pid 1 always runs; u32::MAX never does.
        let live = ".a.1-0000000000000001.partial";
        for f in [
            live,
            ".b.4294967295-0000000000000001.partial",
            ".c.partial",
            "d.bin",
        ] {
            std::fs::write(d.join(f), b"x").unwrap();
        }
        assert_eq!(remove_stale(&d).unwrap(), 2);
        let mut left: Vec<String> = std::fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(left, [live, "d.bin"]);
        let _ = std::fs::remove_dir_all(&d);
    }
}
