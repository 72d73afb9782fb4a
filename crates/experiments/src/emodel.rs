//! The E-model of ITU-T Recommendation G.107 (06/2015), "The E-model: a
//! computational model for use in transmission planning": the rating
//! factor R = Ro − Is − Id − Ie,eff + A from a connection's parameters
//! (§7.1–§7.7 of the Recommendation, its formulas (7-1)–(7-30)), and the
//! estimated mean opinion score from R (its Annex B, (B-4)). The Hop paper
//! scores its VoIP calls this way (§5.8).
//!
//! Every parameter but the delays and the codec's keeps the default of
//! G.107's Table 2, so a connection with no delay, no loss and no codec
//! impairment rates R = 93.2, as the Recommendation says (§7.1).

/// The parameters of one connection that vary here; the rest are Table 2's
/// defaults.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Connection {
    /// Absolute one-way delay (mouth to ear), ms: Ta.
    pub ta_ms: f64,
    /// Mean one-way delay of the echo path, ms: T (Ta on a connection
    /// without delay-adding echo cancellation).
    pub t_ms: f64,
    /// Round-trip delay of the four-wire loop, ms: Tr (2·T).
    pub tr_ms: f64,
    /// The codec's equipment impairment factor, Ie (ITU-T G.113 App. I).
    pub ie: f64,
    /// The codec's packet-loss robustness factor, Bpl (G.113 App. I).
    pub bpl: f64,
    /// Packets lost, percent: Ppl.
    pub ppl: f64,
    /// Burst ratio: 1 for random loss, above 1 for bursty loss.
    pub burst_r: f64,
}

impl Connection {
    /// A connection whose only delay is the one-way `delay_ms` (T = Ta,
    /// Tr = 2T) with the codec `(ie, bpl)` and `loss` (a fraction).
    pub fn voice(delay_ms: f64, (ie, bpl): (f64, f64), loss: f64, burst_r: f64) -> Connection {
        Connection {
            ta_ms: delay_ms,
            t_ms: delay_ms,
            tr_ms: 2.0 * delay_ms,
            ie,
            bpl,
            ppl: loss * 100.0,
            burst_r,
        }
    }
}

/// G.729A with voice activity detection, the 8 kbit/s codec of the
/// paper's 20-byte, 20 ms packets: Ie = 11, Bpl = 19 (ITU-T G.113
/// Appendix I, Tables I.1 and I.3).
pub const G729A: (f64, f64) = (11.0, 19.0);

/// Table 2's defaults (dB, dBr, dBmp, dB(A) as G.107 gives them).
const SLR: f64 = 8.0;
const RLR: f64 = 2.0;
const STMR: f64 = 15.0;
const LSTR: f64 = 18.0;
const DS: f64 = 3.0;
const TELR: f64 = 65.0;
const WEPL: f64 = 110.0;
const QDU: f64 = 1.0;
const NC: f64 = -70.0;
const NFOR: f64 = -64.0;
const PS: f64 = 35.0;
const PR: f64 = 35.0;
const A: f64 = 0.0;

fn db_sum(levels: &[f64]) -> f64 {
    10.0 * levels
        .iter()
        .map(|l| 10f64.powf(l / 10.0))
        .sum::<f64>()
        .log10()
}

/// The total noise power No, dBm0p, (7-3)–(7-7).
fn noise() -> f64 {
    let olr = SLR + RLR;
    let nos = PS - SLR - DS - 100.0 + 0.004 * (PS - olr - DS - 14.0).powi(2);
    let pre = PR + 10.0 * (1.0 + 10f64.powf((10.0 - LSTR) / 10.0)).log10();
    let nor = RLR - 121.0 + pre + 0.008 * (pre - 35.0).powi(2);
    let nfo = NFOR + RLR;
    db_sum(&[NC, nos, nor, nfo])
}

/// The basic signal-to-noise ratio Ro, (7-2).
fn ro(no: f64) -> f64 {
    15.0 - 1.5 * (SLR + no)
}

/// The simultaneous impairment factor Is = Iolr + Ist + Iq, (7-8)–(7-16).
fn is(no: f64, ro: f64, t_ms: f64) -> f64 {
    let olr = SLR + RLR;
    let xolr = olr + 0.2 * (64.0 + no - RLR);
    let iolr = 20.0 * ((1.0 + (xolr / 8.0).powi(8)).powf(1.0 / 8.0) - xolr / 8.0);
    let stmro =
        -10.0 * (10f64.powf(-STMR / 10.0) + (-t_ms / 4.0).exp() * 10f64.powf(-TELR / 10.0)).log10();
    let ist = 12.0 * (1.0 + ((stmro - 13.0) / 6.0).powi(8)).powf(1.0 / 8.0)
        - 28.0 * (1.0 + ((stmro + 1.0) / 19.4).powi(35)).powf(1.0 / 35.0)
        - 13.0 * (1.0 + ((stmro - 3.0) / 33.0).powi(13)).powf(1.0 / 13.0)
        + 29.0;
    let q = 37.0 - 15.0 * QDU.log10();
    let g = 1.07 + 0.258 * q + 0.0602 * q * q;
    let y = (ro - 100.0) / 15.0 + 46.0 / 8.4 - g / 9.0;
    let z = 46.0 / 30.0 - g / 40.0;
    let iq = 15.0 * (1.0 + 10f64.powf(y) + 10f64.powf(z)).log10();
    iolr + ist + iq
}

/// The delay impairment factor Id = Idte + Idle + Idd, (7-17)–(7-27).
fn id(no: f64, ro: f64, c: &Connection) -> f64 {
    let t = c.t_ms;
    // Talker echo (STMR ≥ 9 dB, so TERV needs no sidetone correction).
    let terv =
        TELR - 40.0 * ((1.0 + t / 10.0) / (1.0 + t / 150.0)).log10() + 6.0 * (-0.3 * t * t).exp();
    let roe = -1.5 * (no - RLR);
    let re = 80.0 + 2.5 * (terv - 14.0);
    let idte =
        ((roe - re) / 2.0 + ((roe - re).powi(2) / 4.0 + 100.0).sqrt() - 1.0) * (1.0 - (-t).exp());
    // Listener echo.
    let rle = 10.5 * (WEPL + 7.0) * (c.tr_ms + 1.0).powf(-0.25);
    let idle = (ro - rle) / 2.0 + ((ro - rle).powi(2) / 4.0 + 169.0).sqrt();
    // Absolute delay (mT = 100 ms, sT = 1: the defaults).
    let idd = if c.ta_ms <= 100.0 {
        0.0
    } else {
        let x = (c.ta_ms / 100.0).log10() / 2f64.log10();
        25.0 * ((1.0 + x.powi(6)).powf(1.0 / 6.0) - 3.0 * (1.0 + (x / 3.0).powi(6)).powf(1.0 / 6.0)
            + 2.0)
    };
    idte + idle + idd
}

/// The effective equipment impairment factor under packet loss, (7-29).
fn ie_eff(c: &Connection) -> f64 {
    c.ie + (95.0 - c.ie) * c.ppl / (c.ppl / c.burst_r + c.bpl)
}

/// The rating factor R of a connection, (7-1).
pub fn rating(c: &Connection) -> f64 {
    let no = noise();
    let ro = ro(no);
    ro - is(no, ro, c.t_ms) - id(no, ro, c) - ie_eff(c) + A
}

/// The estimated mean opinion score (conversational quality) of R,
/// G.107 Annex B (B-4).
pub fn mos(r: f64) -> f64 {
    if r <= 0.0 {
        1.0
    } else if r >= 100.0 {
        4.5
    } else {
        1.0 + 0.035 * r + r * (r - 60.0) * (100.0 - r) * 7e-6
    }
}

/// The burst ratio of a loss process with loss rate `p` whose conditional
/// loss probability is `clp` (a two-state Markov model: G.107's BurstR =
/// 1 / (p01 + p10) with p01 = p (1 − clp) / (1 − p), p10 = 1 − clp);
/// 1 when the losses are independent (clp = p).
pub fn burst_ratio(p: f64, clp: f64) -> f64 {
    if p <= 0.0 || p >= 1.0 {
        return 1.0;
    }
    let p10 = 1.0 - clp;
    let p01 = p * p10 / (1.0 - p);
    if p01 + p10 <= 0.0 {
        return 1.0;
    }
    1.0 / (p01 + p10)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    /// G.107 §7.1: "the default values … result in a very high quality
    /// with a rating factor of R = 93.2".
    #[test]
    fn the_default_connection_rates_93_2() {
        let r = rating(&Connection::voice(0.0, (0.0, 1.0), 0.0, 1.0));
        assert!(close(r, 93.2, 0.05), "R = {r}");
    }

    /// G.107 Annex B, (B-4) at the user-satisfaction boundaries of its
    /// Table B.1 (R 90, 80, 70, 60, 50 → MOS 4.34, 4.02, 3.60, 3.10, 2.58,
    /// to two places); and the clamps.
    #[test]
    fn mos_follows_annex_b() {
        for (r, m) in [
            (90.0, 4.34),
            (80.0, 4.02),
            (70.0, 3.60),
            (60.0, 3.10),
            (50.0, 2.58),
        ] {
            assert!(close(mos(r), m, 0.006), "MOS({r}) = {}", mos(r));
        }
        assert_eq!(mos(-5.0), 1.0);
        assert_eq!(mos(120.0), 4.5);
        assert!(close(mos(93.2), 4.41, 0.005));
    }

    /// Delay costs nothing below Ta = 100 ms beyond echo, and more with
    /// every further millisecond; loss costs more when bursty.
    #[test]
    fn delay_and_loss_lower_r_as_the_standard_has_it() {
        let r = |d: f64, loss: f64, b: f64| rating(&Connection::voice(d, G729A, loss, b));
        // G.729A alone (Ie = 11) from the default 93.2.
        assert!(
            close(r(0.0, 0.0, 1.0), 93.2 - 11.0, 0.1),
            "{}",
            r(0.0, 0.0, 1.0)
        );
        assert!(r(50.0, 0.0, 1.0) > r(150.0, 0.0, 1.0));
        assert!(r(150.0, 0.0, 1.0) > r(300.0, 0.0, 1.0));
        // Ie,eff at 2% random loss: 11 + 84 · 2 / (2 + 19) = 19.0.
        assert!(close(r(0.0, 0.0, 1.0) - r(0.0, 0.02, 1.0), 8.0, 0.01));
        assert!(r(0.0, 0.05, 2.0) < r(0.0, 0.05, 1.0));
    }

    #[test]
    fn burst_ratio_is_one_for_independent_losses() {
        assert!(close(burst_ratio(0.1, 0.1), 1.0, 1e-12));
        assert!(burst_ratio(0.1, 0.5) > 1.0);
        assert_eq!(burst_ratio(0.0, 0.0), 1.0);
    }
}
