//! Authenticated mode (`--psk-file`): every datagram of a connection sealed
//! with ChaCha20-Poly1305 (RFC 8439) under keys derived from a pre-shared
//! key (documented in `docs/wire.md`, "Sealed framing", and in the threat
//! model of `docs/runtime.md`).
//!
//! A sealed datagram is the runtime header with version 4 (two-party) or 5
//! (routed, followed by the route header), then an 8-byte packet number,
//! then — in a `Hello` or `Query` only — the client's 16-byte nonce and
//! the 16-byte address-validation token, then the payload of the kind
//! encrypted, then the 16-byte Poly1305 tag:
//!
//! ```text
//! header (16, v4/v5) | route (16, v5 only) | pn u64 | [nonce 16 | token 16] | ciphertext | tag 16
//! ```
//!
//! The associated data is everything in front of the ciphertext, with the
//! route header's hop limit read as 0 (relays decrement it on the way, as
//! IPsec's AH leaves the TTL out). The ciphertext is the version-2 payload
//! of the kind, except that a `Hello`'s and a `Query`'s token moved into
//! the associated data (the receiver needs it to pick the key).
//!
//! Key schedule (HKDF-SHA256, RFC 5869): `PRK = Extract("joulenet psk v1",
//! key file)`; per connection and direction (`c2s`, `s2c`):
//!
//! * opening keys, `Expand(PRK, "joulenet open " dir conn_id nonce)`: the
//!   client's `Query`s and `Hello`s before it holds a token, and the
//!   server's stateless answers (`Retry`, `Offer`, `Refused`, sent with a
//!   random packet number since the server keeps no state for them);
//! * connection keys, `Expand(PRK, "joulenet conn " dir conn_id nonce
//!   token)`: everything else. The token is the server's contribution: an
//!   HMAC under a key the server process drew at random when it started
//!   ([`crate::token`]), valid for at most 20 s.
//!
//! A server creates a connection only from a `Hello` that opens under the
//! connection keys of a token it issued itself, recently; what it acts on
//! afterwards opens under those keys, within a per-direction sliding
//! window of packet numbers ([`ReplayWindow`]). A session captured earlier
//! and replayed into a restarted server therefore gets nowhere: its
//! `Hello`s carry a token of the old process (answered by a `Retry` the
//! replayer cannot use without the key), and its later datagrams are
//! sealed under keys that no longer exist. No state survives a restart,
//! and none needs to.

use std::path::Path;

use chacha20poly1305::aead::{AeadInPlace, KeyInit};
use chacha20poly1305::{ChaCha20Poly1305, Nonce, Tag};
use hkdf::Hkdf;
use rand::TryRngCore;
use sha2::Sha256;

use crate::frame::{self, FrameError, Header, Kind, HEADER_LEN, TOKEN_LEN};
use crate::route::{RoutePacket, RouteRepr, ROUTE_LEN};

/// The runtime header's version byte of a sealed two-party datagram.
pub const SEALED_VERSION: u8 = 4;
/// The version byte of a sealed routed datagram.
pub const SEALED_ROUTED_VERSION: u8 = 5;
/// Packet number in front of the sealed payload.
pub const PN_LEN: usize = 8;
/// The client's nonce in a `Hello` or `Query`.
pub const NONCE_LEN: usize = 16;
/// Poly1305 tag at the end of a datagram.
pub const TAG_LEN: usize = 16;
/// Bytes sealing adds to every datagram (`Hello` and `Query` carry
/// [`NONCE_LEN`] more).
pub const OVERHEAD: usize = PN_LEN + TAG_LEN;
/// Fewest bytes a key file holds (256 bits of key).
pub const MIN_KEY: usize = 32;
/// Most bytes read from a key file.
pub const MAX_KEY: usize = 4096;
/// Packet numbers a receiver remembers below the highest it has seen;
/// older ones are dropped as replays.
pub const WINDOW: u64 = 4096;

/// The pre-shared key, extracted (HKDF-Extract) once.
#[derive(Clone)]
pub struct Psk {
    hkdf: Hkdf<Sha256>,
}

impl std::fmt::Debug for Psk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Psk(..)")
    }
}

impl Psk {
    /// From the key file's bytes (all of them are the key).
    pub fn from_bytes(key: &[u8]) -> Result<Psk, String> {
        if key.len() < MIN_KEY || key.len() > MAX_KEY {
            return Err(format!(
                "a pre-shared key file holds {MIN_KEY} to {MAX_KEY} bytes, this one {} \
                 (make one with: head -c 32 /dev/urandom > KEY)",
                key.len()
            ));
        }
        Ok(Psk {
            hkdf: Hkdf::<Sha256>::new(Some(b"joulenet psk v1"), key),
        })
    }

    /// Reads a key file (`--psk-file`).
    pub fn load(path: &Path) -> Result<Psk, String> {
        use std::io::Read;
        let f = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut key = Vec::new();
        f.take(MAX_KEY as u64 + 1)
            .read_to_end(&mut key)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        Psk::from_bytes(&key).map_err(|e| format!("{}: {e}", path.display()))
    }

    fn key(
        &self,
        stage: &[u8],
        dir: &[u8],
        conn_id: u64,
        nonce: &[u8; NONCE_LEN],
        token: Option<&[u8; TOKEN_LEN]>,
    ) -> ChaCha20Poly1305 {
        let mut info = Vec::with_capacity(64);
        info.extend_from_slice(stage);
        info.extend_from_slice(dir);
        info.extend_from_slice(&conn_id.to_be_bytes());
        info.extend_from_slice(nonce);
        if let Some(t) = token {
            info.extend_from_slice(t);
        }
        let mut k = [0u8; 32];
        // 32 bytes are far below HKDF-SHA256's limit of 255 × 32.
        let _ = self.hkdf.expand(&info, &mut k);
        ChaCha20Poly1305::new(&k.into())
    }

    /// Keys of a connection's opening and of the server's stateless answers.
    pub fn opening(&self, conn_id: u64, nonce: &[u8; NONCE_LEN]) -> Keys {
        Keys {
            c2s: self.key(b"joulenet open ", b"c2s", conn_id, nonce, None),
            s2c: self.key(b"joulenet open ", b"s2c", conn_id, nonce, None),
        }
    }

    /// Keys of the connection the server validated with `token`.
    pub fn connection(
        &self,
        conn_id: u64,
        nonce: &[u8; NONCE_LEN],
        token: &[u8; TOKEN_LEN],
    ) -> Keys {
        Keys {
            c2s: self.key(b"joulenet conn ", b"c2s", conn_id, nonce, Some(token)),
            s2c: self.key(b"joulenet conn ", b"s2c", conn_id, nonce, Some(token)),
        }
    }
}

/// One key per direction.
#[derive(Clone)]
pub struct Keys {
    pub c2s: ChaCha20Poly1305,
    pub s2c: ChaCha20Poly1305,
}

/// Why a sealed datagram was rejected.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SealError {
    /// Not version 4 or 5.
    NotSealed,
    Frame(FrameError),
    /// A routed datagram with a bad route header.
    BadRoute,
    /// Too short for its packet number, opening fields or tag.
    Truncated(usize),
    /// The tag does not match: another key, or altered bytes.
    Forged,
    /// A packet number seen already, or too far behind.
    Replayed,
}

impl std::fmt::Display for SealError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SealError::NotSealed => f.write_str("not a sealed datagram"),
            SealError::Frame(e) => e.fmt(f),
            SealError::BadRoute => f.write_str("bad route header"),
            SealError::Truncated(n) => write!(f, "sealed datagram of {n} bytes is truncated"),
            SealError::Forged => f.write_str("authentication failed"),
            SealError::Replayed => f.write_str("replayed packet number"),
        }
    }
}

impl std::error::Error for SealError {}

/// Whether a datagram claims the sealed format (its version byte).
pub fn is_sealed(d: &[u8]) -> bool {
    d.len() > 2 && (d[2] == SEALED_VERSION || d[2] == SEALED_ROUTED_VERSION)
}

/// A sealed datagram's readable parts, checked but not yet authenticated.
#[derive(Debug)]
pub struct Sealed<'a> {
    pub header: Header,
    /// `Some` for a routed (version 5) datagram.
    pub route: Option<RouteRepr>,
    pub pn: u64,
    /// A `Hello`'s or `Query`'s client nonce.
    pub nonce: Option<[u8; NONCE_LEN]>,
    /// A `Hello`'s or `Query`'s token (`None` when all zero).
    pub token: Option<[u8; TOKEN_LEN]>,
    /// The whole datagram; the associated data is `datagram[..ad_len]`.
    datagram: &'a [u8],
    ad_len: usize,
}

/// Whether a kind carries the opening fields (client nonce and token).
const fn opens(kind: Kind) -> bool {
    matches!(kind, Kind::Hello | Kind::Query)
}

/// Reads a sealed datagram's headers; never panics.
pub fn parse(d: &[u8]) -> Result<Sealed<'_>, SealError> {
    if !is_sealed(d) {
        return Err(SealError::NotSealed);
    }
    if d.len() < HEADER_LEN {
        return Err(SealError::Truncated(d.len()));
    }
    let routed = d[2] == SEALED_ROUTED_VERSION;
    let mut base = [0u8; HEADER_LEN];
    base.copy_from_slice(&d[..HEADER_LEN]);
    base[2] = frame::VERSION;
    let (header, _) = frame::parse(&base).map_err(SealError::Frame)?;
    let mut at = HEADER_LEN;
    let route = if routed {
        let p = RoutePacket::new_checked(&d[at..]).map_err(|_| SealError::BadRoute)?;
        at += ROUTE_LEN;
        Some(RouteRepr::parse(&p).map_err(|_| SealError::BadRoute)?)
    } else {
        None
    };
    let fixed = PN_LEN
        + if opens(header.kind) {
            NONCE_LEN + TOKEN_LEN
        } else {
            0
        };
    if d.len() < at + fixed + TAG_LEN {
        return Err(SealError::Truncated(d.len()));
    }
    let mut pn = [0u8; PN_LEN];
    pn.copy_from_slice(&d[at..at + PN_LEN]);
    at += PN_LEN;
    let (nonce, token) = if opens(header.kind) {
        let mut n = [0u8; NONCE_LEN];
        n.copy_from_slice(&d[at..at + NONCE_LEN]);
        let mut t = [0u8; TOKEN_LEN];
        t.copy_from_slice(&d[at + NONCE_LEN..at + NONCE_LEN + TOKEN_LEN]);
        at += NONCE_LEN + TOKEN_LEN;
        (Some(n), (t != [0; TOKEN_LEN]).then_some(t))
    } else {
        (None, None)
    };
    Ok(Sealed {
        header,
        route,
        pn: u64::from_be_bytes(pn),
        nonce,
        token,
        datagram: d,
        ad_len: at,
    })
}

fn aead_nonce(pn: u64) -> Nonce {
    let mut n = [0u8; 12];
    n[4..].copy_from_slice(&pn.to_be_bytes());
    n.into()
}

/// The associated data: the headers, with a routed datagram's hop limit
/// read as 0.
fn associated(prefix: &[u8], routed: bool, out: &mut [u8; 128]) -> usize {
    let n = prefix.len().min(out.len());
    out[..n].copy_from_slice(&prefix[..n]);
    if routed && n > HEADER_LEN + 12 {
        out[HEADER_LEN + 12] = 0;
    }
    n
}

impl Sealed<'_> {
    /// Authenticates and decrypts into `out` (cleared first): the payload
    /// of the kind as in version 2, a `Hello`'s or `Query`'s token put back
    /// in front. Nothing is written to `out` on failure but garbage.
    pub fn open(&self, key: &ChaCha20Poly1305, out: &mut Vec<u8>) -> Result<(), SealError> {
        let mut ad = [0u8; 128];
        let ad_n = associated(&self.datagram[..self.ad_len], self.route.is_some(), &mut ad);
        let body = &self.datagram[self.ad_len..];
        // `parse` checked that the tag fits.
        let (ct, tag) = body.split_at(body.len() - TAG_LEN);
        out.clear();
        let lead = if opens(self.header.kind) {
            out.extend_from_slice(&self.token.unwrap_or([0; TOKEN_LEN]));
            TOKEN_LEN
        } else {
            0
        };
        out.extend_from_slice(ct);
        key.decrypt_in_place_detached(
            &aead_nonce(self.pn),
            &ad[..ad_n],
            &mut out[lead..],
            Tag::from_slice(tag),
        )
        .map_err(|_| SealError::Forged)
    }

    /// The datagram's length.
    pub fn len(&self) -> usize {
        self.datagram.len()
    }

    pub fn is_empty(&self) -> bool {
        self.datagram.is_empty()
    }
}

/// Writes a sealed datagram into `out` (cleared first). `payload` is the
/// kind's version-2 payload; for a `Hello` or `Query` its leading token is
/// taken out of it and put with `nonce` in the associated data.
pub fn seal(
    key: &ChaCha20Poly1305,
    header: &Header,
    route: Option<&RouteRepr>,
    pn: u64,
    nonce: &[u8; NONCE_LEN],
    payload: &[u8],
    out: &mut Vec<u8>,
) {
    out.clear();
    let mut head = [0u8; HEADER_LEN];
    frame::write_header(header, &mut head);
    head[2] = if route.is_some() {
        SEALED_ROUTED_VERSION
    } else {
        SEALED_VERSION
    };
    out.extend_from_slice(&head);
    if let Some(r) = route {
        let mut rh = [0u8; ROUTE_LEN];
        // Cannot fail: the buffer is exactly ROUTE_LEN long.
        let _ = r.emit(&mut rh);
        out.extend_from_slice(&rh);
    }
    out.extend_from_slice(&pn.to_be_bytes());
    let body = if opens(header.kind) {
        out.extend_from_slice(nonce);
        let (token, rest) = payload.split_at(payload.len().min(TOKEN_LEN));
        let mut t = [0u8; TOKEN_LEN];
        t[..token.len()].copy_from_slice(token);
        out.extend_from_slice(&t);
        rest
    } else {
        payload
    };
    let ad_len = out.len();
    let mut ad = [0u8; 128];
    let ad_n = associated(&out[..ad_len], route.is_some(), &mut ad);
    out.extend_from_slice(body);
    // Encryption fails only beyond ChaCha20's 256 GiB per message.
    let tag = key
        .encrypt_in_place_detached(&aead_nonce(pn), &ad[..ad_n], &mut out[ad_len..])
        .unwrap_or_default();
    out.extend_from_slice(&tag);
}

/// A random client nonce, or a random packet number for a stateless answer.
pub fn random_nonce() -> Result<[u8; NONCE_LEN], String> {
    let mut n = [0u8; NONCE_LEN];
    rand::rngs::OsRng
        .try_fill_bytes(&mut n)
        .map_err(|e| format!("no OS randomness for a nonce: {e}"))?;
    Ok(n)
}

/// A server's stateless answer (`Retry`, `Offer`, `Refused`) to a sealed
/// opening: under the opening keys, with a random packet number (the
/// client keeps no window for these; a repeated one says the same again).
pub fn seal_answer(
    psk: &Psk,
    header: &Header,
    route: Option<&RouteRepr>,
    nonce: &[u8; NONCE_LEN],
    payload: &[u8],
) -> Vec<u8> {
    let key = psk.key(b"joulenet open ", b"s2c", header.conn_id, nonce, None);
    let pn = random_nonce().map_or(0, |n| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&n[..8]);
        u64::from_be_bytes(b)
    });
    let mut out = Vec::new();
    seal(&key, header, route, pn, nonce, payload, &mut out);
    out
}

/// The packet numbers a receiver has seen: the highest, and a bitmap of
/// the [`WINDOW`] below it. Anything older, or seen, is a replay.
#[derive(Clone)]
pub struct ReplayWindow {
    /// One more than the highest packet number seen; 0: none yet.
    top: u64,
    bits: Vec<u64>,
}

impl Default for ReplayWindow {
    fn default() -> Self {
        ReplayWindow {
            top: 0,
            bits: vec![0; (WINDOW / 64) as usize],
        }
    }
}

impl ReplayWindow {
    fn slot(pn: u64) -> (usize, u64) {
        let i = pn % WINDOW;
        ((i / 64) as usize, 1 << (i % 64))
    }

    /// Whether `pn` would be accepted (not seen, not too old).
    pub fn fresh(&self, pn: u64) -> bool {
        if pn == u64::MAX {
            return false;
        }
        if pn >= self.top {
            return true;
        }
        if self.top - pn > WINDOW {
            return false;
        }
        let (w, b) = ReplayWindow::slot(pn);
        self.bits[w] & b == 0
    }

    /// Records `pn` (call only after it authenticated, and was fresh).
    pub fn mark(&mut self, pn: u64) {
        if pn == u64::MAX {
            return;
        }
        if pn >= self.top {
            if pn - self.top >= WINDOW {
                self.bits.fill(0);
            } else {
                for p in self.top..=pn {
                    let (w, b) = ReplayWindow::slot(p);
                    self.bits[w] &= !b;
                }
            }
            self.top = pn + 1;
        }
        let (w, b) = ReplayWindow::slot(pn);
        self.bits[w] |= b;
    }
}

/// One connection's sealing state: its keys, the packet number it sends
/// next, and the window of those it received.
#[derive(Clone)]
pub struct ConnSeal {
    psk: Psk,
    is_client: bool,
    conn_id: u64,
    /// The client's nonce.
    nonce: [u8; NONCE_LEN],
    opening: Keys,
    /// The token of `conn`.
    token: Option<[u8; TOKEN_LEN]>,
    /// The connection keys of the current token (the server's: of the
    /// token that made the connection).
    conn: Option<Keys>,
    /// A client's: the connection keys of earlier tokens (a second `Retry`
    /// may have crossed the server's creation of the connection), tried
    /// until a datagram of the connection opened.
    earlier: Vec<Keys>,
    next_pn: u64,
    window: ReplayWindow,
    /// Datagrams that did not open, or replayed ones.
    pub rejected: u64,
}

/// Earlier tokens' keys a client keeps.
const EARLIER: usize = 4;

impl ConnSeal {
    /// A client's, with a fresh nonce.
    pub fn client(psk: &Psk, conn_id: u64) -> Result<ConnSeal, String> {
        let nonce = random_nonce()?;
        Ok(ConnSeal {
            psk: psk.clone(),
            is_client: true,
            conn_id,
            nonce,
            opening: psk.opening(conn_id, &nonce),
            token: None,
            conn: None,
            earlier: Vec::new(),
            next_pn: 0,
            window: ReplayWindow::default(),
            rejected: 0,
        })
    }

    /// A server's, made from the client's `Hello` (its nonce and token);
    /// `first_pn`: that `Hello`'s packet number.
    pub fn server(
        psk: &Psk,
        conn_id: u64,
        nonce: [u8; NONCE_LEN],
        token: &[u8; TOKEN_LEN],
        first_pn: u64,
    ) -> ConnSeal {
        let mut window = ReplayWindow::default();
        window.mark(first_pn);
        ConnSeal {
            psk: psk.clone(),
            is_client: false,
            conn_id,
            nonce,
            opening: psk.opening(conn_id, &nonce),
            token: Some(*token),
            conn: Some(psk.connection(conn_id, &nonce, token)),
            earlier: Vec::new(),
            next_pn: 0,
            window,
            rejected: 0,
        }
    }

    /// The client's token changed (a `Retry`, or one from a `Query`).
    pub fn set_token(&mut self, token: &[u8; TOKEN_LEN]) {
        if self.token == Some(*token) {
            return;
        }
        self.token = Some(*token);
        if let Some(old) = self.conn.take() {
            if self.earlier.len() < EARLIER {
                self.earlier.push(old);
            }
        }
        self.conn = Some(self.psk.connection(self.conn_id, &self.nonce, token));
    }

    /// Seals a datagram of this connection into `out`. `payload` is the
    /// kind's version-2 payload (a `Hello`'s and `Query`'s with its token).
    pub fn seal(
        &mut self,
        header: &Header,
        route: Option<&RouteRepr>,
        payload: &[u8],
        out: &mut Vec<u8>,
    ) {
        let zero_token =
            opens(header.kind) && payload.get(..TOKEN_LEN).is_none_or(|t| t == [0; TOKEN_LEN]);
        let keys = match &self.conn {
            Some(k) if !zero_token => k,
            _ => &self.opening,
        };
        let key = if self.is_client { &keys.c2s } else { &keys.s2c };
        let pn = self.next_pn;
        self.next_pn += 1;
        seal(key, header, route, pn, &self.nonce, payload, out);
    }

    /// Opens a datagram from the peer into `out`, or says why not.
    /// Stateless answers (a server's `Retry`, `Offer`, `Refused`) open under
    /// the opening keys and skip the window; everything else opens under
    /// the connection keys, once.
    pub fn open(&mut self, s: &Sealed<'_>, out: &mut Vec<u8>) -> Result<(), SealError> {
        let r = self.open_inner(s, out);
        if r.is_err() {
            self.rejected += 1;
        }
        r
    }

    fn open_inner(&mut self, s: &Sealed<'_>, out: &mut Vec<u8>) -> Result<(), SealError> {
        if s.header.conn_id != self.conn_id {
            return Err(SealError::Forged);
        }
        let stateless = matches!(s.header.kind, Kind::Retry | Kind::Offer | Kind::Refused);
        if self.is_client && stateless {
            return s.open(&self.opening.s2c, out);
        }
        if !self.is_client && opens(s.header.kind) && s.nonce != Some(self.nonce) {
            return Err(SealError::Forged);
        }
        if !self.window.fresh(s.pn) {
            return Err(SealError::Replayed);
        }
        let dir = |k: &Keys| {
            if self.is_client {
                k.s2c.clone()
            } else {
                k.c2s.clone()
            }
        };
        let current = self.conn.as_ref().map(dir);
        let opened = match current {
            Some(k) if s.open(&k, out).is_ok() => true,
            _ if self.is_client => {
                // An earlier token's keys: the server made the connection
                // with it; they become the connection's.
                let found = self
                    .earlier
                    .iter()
                    .position(|k| s.open(&k.s2c, out).is_ok());
                if let Some(i) = found {
                    let k = self.earlier.remove(i);
                    self.conn = Some(k);
                }
                found.is_some()
            }
            _ => false,
        };
        if !opened {
            return Err(SealError::Forged);
        }
        if self.is_client {
            self.earlier.clear();
        }
        self.window.mark(s.pn);
        Ok(())
    }
}

/// Opens a client's `Hello` or `Query` for which the server has no
/// connection: under the connection keys of its token, or the opening keys
/// when it has none. Returns the version-2 payload in `out`.
pub fn open_opening(psk: &Psk, s: &Sealed<'_>, out: &mut Vec<u8>) -> Result<(), SealError> {
    let Some(nonce) = s.nonce else {
        return Err(SealError::Forged);
    };
    // One key derived, not both directions': this runs for every opening a
    // stranger sends.
    let key = match &s.token {
        Some(t) => psk.key(b"joulenet conn ", b"c2s", s.header.conn_id, &nonce, Some(t)),
        None => psk.key(b"joulenet open ", b"c2s", s.header.conn_id, &nonce, None),
    };
    s.open(&key, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::Protocol;
    use joulenet_proto::Addr;
    use proptest::prelude::*;

    fn psk(b: u8) -> Psk {
        Psk::from_bytes(&[b; 32]).unwrap()
    }

    fn header(kind: Kind) -> Header {
        Header {
            kind,
            protocol: Protocol::named("udp"),
            conn_id: 0x0102_0304_0506_0708,
        }
    }

    /// The layout, byte for byte, of a sealed `Data` with a fixed key: the
    /// header in the clear (version 4), the packet number, the ciphertext
    /// (RFC 8439's ChaCha20-Poly1305 under the derived key) and the tag.
    /// The expected bytes were computed independently, with Python's
    /// `hmac`/`hashlib` (HKDF by hand) and `cryptography`'s ChaCha20Poly1305.
    #[test]
    fn golden_sealed_data() {
        let keys = psk(7).connection(0x0102_0304_0506_0708, &[1; 16], &[2; 16]);
        let mut d = Vec::new();
        seal(
            &keys.c2s,
            &header(Kind::Data),
            None,
            5,
            &[1; 16],
            b"hello",
            &mut d,
        );
        assert_eq!(d.len(), HEADER_LEN + OVERHEAD + 5);
        assert_eq!(
            &d[..16],
            &[b'J', b'N', 4, 2, 16, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8]
        );
        assert_eq!(&d[16..24], &[0, 0, 0, 0, 0, 0, 0, 5]);
        assert_ne!(&d[24..29], b"hello", "the payload is encrypted");
        assert_eq!(
            crate::app::hex(&d[24..]),
            "e0e442b193ea45c84e05239958dd97bf946b135f30"
        );
        let s = parse(&d).unwrap();
        assert_eq!(
            (s.header, s.pn, s.route, s.nonce),
            (header(Kind::Data), 5, None, None)
        );
        let mut out = Vec::new();
        s.open(&keys.c2s, &mut out).unwrap();
        assert_eq!(out, b"hello");
        // The other direction's key, another token, another key file: no.
        assert_eq!(s.open(&keys.s2c, &mut out), Err(SealError::Forged));
        let other = psk(7).connection(0x0102_0304_0506_0708, &[1; 16], &[3; 16]);
        assert_eq!(s.open(&other.c2s, &mut out), Err(SealError::Forged));
        let other = psk(8).connection(0x0102_0304_0506_0708, &[1; 16], &[2; 16]);
        assert_eq!(s.open(&other.c2s, &mut out), Err(SealError::Forged));
    }

    /// Every bit of a sealed datagram matters, but for a routed
    /// datagram's hop limit, which relays rewrite.
    #[test]
    fn every_flipped_bit_is_caught_but_the_hop_limit() {
        let keys = psk(1).opening(9, &[4; 16]);
        let route = RouteRepr::new(Addr::new(1, 40000), Addr::new(3, 5201));
        let h = Header {
            kind: Kind::Hello,
            protocol: Protocol::named("rcp"),
            conn_id: 9,
        };
        let mut payload = vec![0u8; TOKEN_LEN];
        payload.extend_from_slice(b"agent packet");
        let mut d = Vec::new();
        seal(&keys.c2s, &h, Some(&route), 77, &[4; 16], &payload, &mut d);
        assert_eq!(
            d.len(),
            HEADER_LEN + ROUTE_LEN + OVERHEAD + NONCE_LEN + TOKEN_LEN + 12
        );
        let mut out = Vec::new();
        let s = parse(&d).unwrap();
        assert_eq!(
            (s.route, s.nonce, s.token),
            (Some(route), Some([4; 16]), None)
        );
        s.open(&keys.c2s, &mut out).unwrap();
        assert_eq!(out, payload, "the token is back in front");
        for i in 0..d.len() * 8 {
            let mut t = d.clone();
            t[i / 8] ^= 1 << (i % 8);
            let opened = parse(&t).and_then(|s| s.open(&keys.c2s, &mut out));
            if i / 8 == HEADER_LEN + 12 {
                assert!(opened.is_ok(), "the hop limit is not authenticated");
            } else {
                assert!(opened.is_err(), "bit {i} flipped and still opened");
            }
        }
    }

    #[test]
    fn a_connection_opens_each_packet_once_and_only_its_own() {
        let p = psk(2);
        let mut client = ConnSeal::client(&p, 42).unwrap();
        let token = [9u8; TOKEN_LEN];
        client.set_token(&token);
        let mut hello = token.to_vec();
        hello.extend_from_slice(b"syn");
        let mut d = Vec::new();
        let h = Header {
            kind: Kind::Hello,
            protocol: Protocol::named("udp"),
            conn_id: 42,
        };
        client.seal(&h, None, &hello, &mut d);
        let s = parse(&d).unwrap();
        let mut out = Vec::new();
        open_opening(&p, &s, &mut out).unwrap();
        assert_eq!(out, hello);
        let mut server = ConnSeal::server(&p, 42, s.nonce.unwrap(), &token, s.pn);
        // The `Hello` that made the connection does not open twice.
        assert_eq!(server.open(&s, &mut out), Err(SealError::Replayed));
        let data = Header {
            kind: Kind::Data,
            ..h
        };
        for i in 0..3u8 {
            client.seal(&data, None, &[i], &mut d);
            let s = parse(&d).unwrap();
            server.open(&s, &mut out).unwrap();
            assert_eq!(out, [i]);
            assert_eq!(server.open(&s, &mut out), Err(SealError::Replayed));
        }
        // The server's answer opens at the client, once.
        server.seal(
            &Header {
                kind: Kind::Close,
                ..h
            },
            None,
            b"",
            &mut d,
        );
        let s = parse(&d).unwrap();
        client.open(&s, &mut out).unwrap();
        assert_eq!(client.open(&s, &mut out), Err(SealError::Replayed));
        // A stateless answer opens under the opening keys, as often as it comes.
        let retry = seal_answer(
            &p,
            &Header {
                kind: Kind::Retry,
                ..h
            },
            None,
            &s_nonce(&client),
            &[5; 16],
        );
        let s = parse(&retry).unwrap();
        client.open(&s, &mut out).unwrap();
        client.open(&s, &mut out).unwrap();
        assert_eq!(out, [5; 16]);
        // Another connection's keys do not open this one's datagrams.
        let mut stranger = ConnSeal::client(&p, 42).unwrap();
        stranger.set_token(&token);
        assert!(stranger.open(&s, &mut out).is_err());
    }

    fn s_nonce(c: &ConnSeal) -> [u8; NONCE_LEN] {
        c.nonce
    }

    #[test]
    fn the_window_takes_late_packets_once_and_drops_old_ones() {
        let mut w = ReplayWindow::default();
        for pn in [0, 5, 3, 4, 1, 2] {
            assert!(w.fresh(pn));
            w.mark(pn);
            assert!(!w.fresh(pn));
        }
        w.mark(10_000);
        assert!(!w.fresh(5), "long past");
        assert!(w.fresh(10_000 - 1));
        assert!(!w.fresh(10_000 - WINDOW - 1));
        assert!(w.fresh(10_000 - WINDOW + 1));
        w.mark(10_001);
        assert!(!w.fresh(10_000) && !w.fresh(10_001));
        assert!(!w.fresh(u64::MAX));
    }

    #[test]
    fn key_files_are_checked() {
        assert!(Psk::from_bytes(&[1; 31]).is_err());
        assert!(Psk::from_bytes(&[1; MAX_KEY + 1]).is_err());
        assert!(Psk::load(Path::new("/no/such/key")).is_err());
    }

    proptest! {
        #[test]
        fn parse_and_open_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..120), v in 4u8..=5) {
            let mut b = bytes;
            if b.len() > 2 { b[2] = v; b[0] = b'J'; b[1] = b'N'; }
            if let Ok(s) = parse(&b) {
                let mut out = Vec::new();
                let _ = s.open(&psk(1).opening(1, &[0; 16]).c2s, &mut out);
                let _ = open_opening(&psk(1), &s, &mut out);
            }
        }

        #[test]
        fn seal_open_round_trip(kind in 1u8..=7, payload in proptest::collection::vec(any::<u8>(), 0..300), pn in 0u64..u64::MAX, routed in any::<bool>()) {
            let h = Header { kind: Kind::from_code(kind).unwrap(), protocol: Protocol::named("wwp"), conn_id: 3 };
            let keys = psk(3).opening(3, &[6; 16]);
            let route = RouteRepr::new(Addr::new(1, 2), Addr::new(3, 4));
            let mut d = Vec::new();
            seal(&keys.s2c, &h, routed.then_some(&route), pn, &[6; 16], &payload, &mut d);
            let s = parse(&d).unwrap();
            let mut out = Vec::new();
            s.open(&keys.s2c, &mut out).unwrap();
            if opens(h.kind) && payload.len() < TOKEN_LEN {
                // A short opening payload is padded to a whole token.
                prop_assert_eq!(&out[..payload.len()], &payload[..]);
            } else {
                prop_assert_eq!(out, payload);
            }
        }
    }
}
