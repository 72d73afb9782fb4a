//! The content of simulated application data.
//!
//! Byte `i` of every simulated stream is `TABLE[i mod PERIOD]`, a fixed
//! pseudo-random table with a prime period. Filling a packet and verifying a
//! delivery are then plain `memcpy`/`memcmp` of table slices, and any
//! reordering, duplication or loss of bytes by a transport (other than by a
//! multiple of the period) shows up as a mismatch.

use std::sync::OnceLock;

/// The largest prime below 2^16.
pub const PERIOD: usize = 65_521;

fn data() -> &'static [u8] {
    static DATA: OnceLock<Vec<u8>> = OnceLock::new();
    DATA.get_or_init(|| {
        let mut x: u64 = 0x243f_6a88_85a3_08d3;
        let mut v: Vec<u8> = (0..PERIOD)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 32) as u8
            })
            .collect();
        let head = v.clone();
        v.extend_from_slice(&head);
        v
    })
}

/// Write the stream bytes starting at `offset` into `out`.
pub fn fill(offset: u64, out: &mut [u8]) {
    let d = data();
    let mut pos = (offset % PERIOD as u64) as usize;
    let mut done = 0;
    while done < out.len() {
        let n = (out.len() - done).min(PERIOD);
        out[done..done + n].copy_from_slice(&d[pos..pos + n]);
        done += n;
        pos = (pos + n) % PERIOD;
    }
}

/// True if `bytes` are exactly the stream bytes starting at `offset`.
pub fn matches(offset: u64, bytes: &[u8]) -> bool {
    let d = data();
    let mut pos = (offset % PERIOD as u64) as usize;
    let mut done = 0;
    while done < bytes.len() {
        let n = (bytes.len() - done).min(PERIOD);
        if bytes[done..done + n] != d[pos..pos + n] {
            return false;
        }
        done += n;
        pos = (pos + n) % PERIOD;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_and_match_agree_across_the_period_boundary() {
        let mut buf = vec![0u8; 3000];
        let off = PERIOD as u64 - 1000;
        fill(off, &mut buf);
        assert!(matches(off, &buf));
        assert!(!matches(off + 1, &buf));
        buf[2500] ^= 1;
        assert!(!matches(off, &buf));
    }

    #[test]
    fn one_byte_shift_is_detected() {
        let mut a = vec![0u8; 1460];
        fill(10_000, &mut a);
        assert!(!matches(10_001, &a));
        assert!(!matches(10_000 - 1460, &a));
    }
}
