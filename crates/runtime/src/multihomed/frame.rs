//! The datagrams of R²CP's pipes: the runtime's version-2 header
//! (`crate::frame`, docs/wire.md "Runtime framing") with kind `Data`, the
//! protocol's code (r2cp 28, r2cp-s 29, r2cp-stripe 30) and the receiver's
//! connection id, followed by the RCP packet unchanged. [`parse`] returns an
//! error, never panics, on any input.

use joulenet_registry::Wire;

use crate::frame::{Kind, HEADER_LEN, MAGIC, VERSION};

/// The R²CP protocols' codes in the header, from the registry.
pub fn code_of(name: &str) -> Option<u8> {
    match joulenet_registry::entry(name)?.wire {
        Wire::Multihomed(c) => Some(c),
        _ => None,
    }
}

/// The registry's spelling of a multi-homed protocol's name.
pub fn multihomed_name(name: &str) -> Option<&'static str> {
    let e = joulenet_registry::entry(name)?;
    matches!(e.wire, Wire::Multihomed(_)).then_some(e.name)
}

fn is_r2cp_code(code: u8) -> bool {
    joulenet_registry::entries().any(|e| e.wire == Wire::Multihomed(code))
}

/// Appends the header for `conn_id` to `out`.
pub fn write_header(code: u8, conn_id: u64, out: &mut Vec<u8>) {
    out.extend_from_slice(&MAGIC);
    out.push(VERSION);
    out.push(Kind::Data.code());
    out.push(code);
    out.extend_from_slice(&[0, 0, 0]);
    out.extend_from_slice(&conn_id.to_be_bytes());
}

/// A pipe datagram's connection id and RCP packet.
pub fn parse(datagram: &[u8]) -> Result<(u64, &[u8]), &'static str> {
    if datagram.len() < HEADER_LEN {
        return Err("shorter than the runtime header");
    }
    if datagram[0..2] != MAGIC || datagram[2] != VERSION {
        return Err("not a joulenet version-2 datagram");
    }
    if datagram[3] != Kind::Data.code() || !is_r2cp_code(datagram[4]) {
        return Err("not an R²CP pipe datagram");
    }
    let mut id = [0u8; 8];
    id.copy_from_slice(&datagram[8..16]);
    Ok((u64::from_be_bytes(id), &datagram[HEADER_LEN..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trips_and_garbage_is_an_error() {
        let code = code_of("r2cp").unwrap();
        assert_eq!(code_of("rcp"), None, "rcp runs two-party");
        let mut d = Vec::new();
        write_header(code, 0xdead_beef_0102_0304, &mut d);
        d.extend_from_slice(b"rcp packet");
        assert_eq!(parse(&d), Ok((0xdead_beef_0102_0304, &b"rcp packet"[..])));
        for cut in 0..HEADER_LEN {
            assert!(parse(&d[..cut]).is_err());
        }
        let mut other = d.clone();
        other[4] = 19; // rcp's code: a two-party connection's datagram
        assert!(parse(&other).is_err());
        let mut x = 1u64;
        for _ in 0..5000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let junk: Vec<u8> = (0..(x % 40) as usize)
                .map(|i| (x >> (i % 8)) as u8)
                .collect();
            let _ = parse(&junk);
        }
    }
}
