//! The content of simulated application data.
//!
//! Byte `i` of every simulated stream is `TABLE[i mod PERIOD]`, a fixed
//! pseudo-random table with a prime period. Filling a packet and verifying a
//! delivery are then plain `memcpy`/`memcmp` of table slices, and any
//! reordering, duplication or loss of bytes by a transport (other than by a
//! multiple of the period) shows up as a mismatch.

/// The largest prime below 2^16.
pub const PERIOD: usize = 65_521;

/// Two periods of the table, so that any slice of up to one period starting
/// inside the first is contiguous. Built by the compiler: a run starts
/// without computing it (it was 40% of the instructions of a short run).
static DATA: [u8; 2 * PERIOD] = table();

const fn table() -> [u8; 2 * PERIOD] {
    let mut v = [0u8; 2 * PERIOD];
    let mut x: u64 = 0x243f_6a88_85a3_08d3;
    let mut i = 0;
    while i < PERIOD {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v[i] = (x >> 32) as u8;
        v[i + PERIOD] = v[i];
        i += 1;
    }
    v
}

fn data() -> &'static [u8] {
    &DATA
}

/// Bytes copied per `memcpy` call in [`fill`]. Transports pull tens of
/// kilobytes at a time; glibc copies anything above a few kilobytes with
/// `rep movsb`, which valgrind counts as one instruction per byte (a quarter
/// of all instructions of the `joulenet bench` run, docs/PERFORMANCE.md).
/// Below the threshold it uses its vector loop: the same bytes, 32 at a
/// time, at the same speed on real hardware.
const FILL_CHUNK: usize = 2048;

/// Write the stream bytes starting at `offset` into `out`.
pub fn fill(offset: u64, out: &mut [u8]) {
    let d = data();
    let mut pos = (offset % PERIOD as u64) as usize;
    for chunk in out.chunks_mut(FILL_CHUNK) {
        let n = chunk.len();
        // `data()` holds two periods, so `pos + n` stays inside it.
        chunk.copy_from_slice(&d[pos..pos + n]);
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
    fn fill_in_chunks_is_byte_i_of_the_table_across_periods() {
        // Longer than two periods, from an offset that is no multiple of
        // the chunk: every byte is the table's byte at its stream offset.
        let off = 3 * PERIOD as u64 + 777;
        let mut buf = vec![0u8; 2 * PERIOD + 5000];
        fill(off, &mut buf);
        let d = data();
        for (i, &b) in buf.iter().enumerate() {
            assert_eq!(b, d[(off as usize + i) % PERIOD], "byte {i}");
        }
        assert!(matches(off, &buf));
    }

    #[test]
    fn the_table_repeats_after_one_period_and_is_not_constant() {
        let d = data();
        assert_eq!(d[..PERIOD], d[PERIOD..]);
        assert!(d[..PERIOD].iter().any(|&b| b != d[0]));
    }

    #[test]
    fn one_byte_shift_is_detected() {
        let mut a = vec![0u8; 1460];
        fill(10_000, &mut a);
        assert!(!matches(10_001, &a));
        assert!(!matches(10_000 - 1460, &a));
    }
}
