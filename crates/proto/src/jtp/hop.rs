//! What iJTP does to a data packet about to cross a link (§2.2.2, §3): the
//! rewrite every node applies, the source included (the paper runs iJTP
//! "whenever a packet is received or about to be transmitted").
//!
//! From the node's own view — hops left from [`Net::route`], the next link's
//! loss and available rate from [`Net::link`] — it sets the packet's link
//! attempts (equation 2), rewrites its loss tolerance (equation 3), stamps
//! the minimum effective available rate, adds the hop's expected energy to
//! the energy used, and counts the hop. A packet whose energy used would
//! exceed its budget is dropped before the link spends anything on it.

use joulenet_wire::jtp::{JtpPacket, Kind, LossTolerance};

use super::attempts::plan;
use super::config::JtpConfig;
use super::rate::{effective_available_rate, mean_attempts, stamp_min};
use crate::net::{Net, NodeId};

/// The outcome of [`rewrite`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum HopVerdict {
    /// Send it with this many link attempts.
    Send { link_attempts: u8 },
    /// Its energy budget is spent: drop it.
    OverBudget,
}

/// Rewrites the data packet in `bytes` (already checked to be a JTP data
/// packet) for the link toward `dst` from this node.
pub fn rewrite(net: &dyn Net, dst: NodeId, bytes: &mut [u8], cfg: &JtpConfig) -> HopVerdict {
    let mut p = JtpPacket::new_unchecked(bytes);
    debug_assert_eq!(p.kind(), Some(Kind::Data));
    let route = net.route(dst);
    let hops_left = route.map_or(1, |r| r.hops.max(1));
    let link = route.and_then(|r| net.link(r.next_hop));
    let loss = link.and_then(|l| l.loss_estimate).or(cfg.assumed_link_loss);
    let lt = p.loss_tolerance().fraction();
    let (attempts, next_lt, p_fail) = match loss {
        Some(p_fail) => {
            let h = plan(lt, hops_left, p_fail, cfg.max_attempts);
            (h.attempts, h.next_loss_tolerance, p_fail)
        }
        None => {
            // No estimate: the MAC's full effort; the tolerance is still
            // shared out over the hops left.
            let h = plan(lt, hops_left, 1.0, cfg.max_attempts);
            (cfg.max_attempts, h.next_loss_tolerance, 0.0)
        }
    };
    p.set_loss_tolerance(LossTolerance::from_fraction(next_lt));
    if let Some(avail) = link.and_then(|l| l.available_rate_bps) {
        let own = effective_available_rate(avail, p_fail, attempts);
        let stamped = stamp_min(p.available_rate(), own);
        p.set_available_rate(stamped);
    }
    let cost = (cfg.attempt_energy_uj as f64 * mean_attempts(p_fail, attempts)).ceil();
    let used = (p.energy_used() as f64 + cost).min(u32::MAX as f64) as u32;
    p.set_energy_used(used);
    p.set_hops(p.hops().saturating_add(1));
    if used > p.energy_budget() {
        return HopVerdict::OverBudget;
    }
    HopVerdict::Send {
        link_attempts: attempts,
    }
}
