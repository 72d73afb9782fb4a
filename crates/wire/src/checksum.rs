//! The internet checksum (RFC 1071): ones' complement sum of 16-bit words.

/// Ones' complement sum of `data` as big-endian 16-bit words, unfolded.
/// An odd trailing byte is padded with a zero byte, as RFC 1071 says.
pub fn sum(data: &[u8]) -> u32 {
    let mut acc: u32 = 0;
    let mut chunks = data.chunks_exact(2);
    for word in &mut chunks {
        acc = add(acc, u16::from_be_bytes([word[0], word[1]]) as u32);
    }
    if let [last] = chunks.remainder() {
        acc = add(acc, (*last as u32) << 8);
    }
    acc
}

/// Adds with end-around carry so the accumulator never overflows.
fn add(acc: u32, word: u32) -> u32 {
    let s = acc + word;
    (s & 0xffff) + (s >> 16)
}

/// Folds partial sums into the final 16-bit checksum (complemented).
pub fn finish(partials: &[u32]) -> u16 {
    let mut acc: u32 = 0;
    for p in partials {
        acc = add(acc, p & 0xffff);
        acc = add(acc, p >> 16);
    }
    !(acc as u16)
}

/// The checksum of `data` alone.
pub fn data(data: &[u8]) -> u16 {
    finish(&[sum(data)])
}

/// Partial sum of the IPv4 pseudo-header used by TCP and UDP (RFC 9293 §3.1).
pub fn ipv4_pseudo_header(src: [u8; 4], dst: [u8; 4], protocol: u8, length: u16) -> u32 {
    let mut pseudo = [0u8; 12];
    pseudo[0..4].copy_from_slice(&src);
    pseudo[4..8].copy_from_slice(&dst);
    pseudo[9] = protocol;
    pseudo[10..12].copy_from_slice(&length.to_be_bytes());
    sum(&pseudo)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc1071_example() {
        // RFC 1071 §3: words 0001 f203 f4f5 f6f7 sum to ddf2 (before complement).
        let bytes = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        assert_eq!(data(&bytes), !0xddf2);
    }

    #[test]
    fn odd_length_pads_with_zero() {
        assert_eq!(data(&[0x12, 0x34, 0x56]), data(&[0x12, 0x34, 0x56, 0x00]));
    }

    #[test]
    fn buffer_with_its_checksum_sums_to_zero() {
        let mut bytes = vec![0x45, 0x00, 0x00, 0x1c, 0xab, 0xcd, 0x00, 0x00, 0x00, 0x00];
        let c = data(&bytes);
        bytes[8..10].copy_from_slice(&c.to_be_bytes());
        assert_eq!(data(&bytes), 0);
    }

    #[test]
    fn empty_is_all_ones() {
        assert_eq!(data(&[]), 0xffff);
    }
}
