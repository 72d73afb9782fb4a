//! Stateless address validation, in the spirit of QUIC's Retry (RFC 9000
//! §8.1) and SYN cookies: the server answers a `Hello` without a valid
//! token with a `Retry` carrying one, and keeps no state until a `Hello`
//! comes back with it. Only a client that receives datagrams at its source
//! address can send that second `Hello`, so spoofed datagrams cannot fill
//! the connection table or draw answers toward an address that never asked.
//!
//! The token is HMAC-SHA256 (per-process random key) over the peer's
//! address and port, the connection id, the protocol and a time bucket,
//! cut to 16 bytes; it is valid in its bucket and the next
//! ([`BUCKET_SECS`] to twice that). A restarted server has a new key:
//! tokens from before the restart are worthless.

use std::net::SocketAddr;

use hmac::{Hmac, Mac};
use rand::TryRngCore;
use sha2::Sha256;

use crate::frame::TOKEN_LEN;

/// Width of a token's time bucket, seconds.
pub const BUCKET_SECS: u64 = 10;

pub struct TokenKey {
    key: [u8; 32],
}

impl TokenKey {
    /// A key from the operating system's random source.
    pub fn random() -> Result<TokenKey, String> {
        let mut key = [0u8; 32];
        rand::rngs::OsRng
            .try_fill_bytes(&mut key)
            .map_err(|e| format!("no OS randomness for the token key: {e}"))?;
        Ok(TokenKey { key })
    }

    /// A fixed key (tests).
    pub fn from_bytes(key: [u8; 32]) -> TokenKey {
        TokenKey { key }
    }

    fn mac(&self, peer: SocketAddr, conn_id: u64, protocol: u8, bucket: u64) -> [u8; TOKEN_LEN] {
        let mut m = Hmac::<Sha256>::new_from_slice(&self.key).expect("HMAC takes any key length");
        let ip = match peer.ip() {
            std::net::IpAddr::V4(v4) => v4.to_ipv6_mapped(),
            std::net::IpAddr::V6(v6) => v6,
        };
        m.update(b"joulenet retry v2");
        m.update(&ip.octets());
        m.update(&peer.port().to_be_bytes());
        m.update(&conn_id.to_be_bytes());
        m.update(&[protocol]);
        m.update(&bucket.to_be_bytes());
        let full = m.finalize().into_bytes();
        let mut t = [0u8; TOKEN_LEN];
        t.copy_from_slice(&full[..TOKEN_LEN]);
        t
    }

    /// The token for this peer and connection at `unix_secs`.
    pub fn issue(
        &self,
        peer: SocketAddr,
        conn_id: u64,
        protocol: u8,
        unix_secs: u64,
    ) -> [u8; TOKEN_LEN] {
        self.mac(peer, conn_id, protocol, unix_secs / BUCKET_SECS)
    }

    /// Whether `token` was issued to this peer and connection in this
    /// bucket or the one before (compared in constant time).
    pub fn check(
        &self,
        token: &[u8; TOKEN_LEN],
        peer: SocketAddr,
        conn_id: u64,
        protocol: u8,
        unix_secs: u64,
    ) -> bool {
        let bucket = unix_secs / BUCKET_SECS;
        [bucket, bucket.wrapping_sub(1)].into_iter().any(|b| {
            let want = self.mac(peer, conn_id, protocol, b);
            want.iter()
                .zip(token)
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0
        })
    }
}

/// Seconds since the Unix epoch (0 if the clock is before it).
pub fn unix_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_bound_to_address_port_id_protocol_and_time() {
        let k = TokenKey::from_bytes([7; 32]);
        let a: SocketAddr = "10.0.0.1:4000".parse().unwrap();
        let t = k.issue(a, 42, 4, 1000);
        assert!(k.check(&t, a, 42, 4, 1000));
        assert!(k.check(&t, a, 42, 4, 1000 + BUCKET_SECS)); // the next bucket
        assert!(!k.check(&t, a, 42, 4, 1000 + 2 * BUCKET_SECS)); // expired
        assert!(!k.check(&t, "10.0.0.2:4000".parse().unwrap(), 42, 4, 1000));
        assert!(!k.check(&t, "10.0.0.1:4001".parse().unwrap(), 42, 4, 1000));
        assert!(!k.check(&t, a, 43, 4, 1000));
        assert!(!k.check(&t, a, 42, 5, 1000));
        // Another process's key (a restarted server) does not accept it.
        assert!(!TokenKey::from_bytes([8; 32]).check(&t, a, 42, 4, 1000));
        assert!(!k.check(&[0; TOKEN_LEN], a, 42, 4, 1000));
    }

    #[test]
    fn hmac_sha256_matches_rfc_4231_case_2() {
        // The MAC under the token is the standard one.
        let mut m = Hmac::<Sha256>::new_from_slice(b"Jefe").unwrap();
        m.update(b"what do ya want for nothing?");
        let out = m.finalize().into_bytes();
        assert_eq!(
            crate::app::hex(&out),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }
}
