//! `joulenet list`: what a scenario can name.

use joulenet_channel::battery::cells;
use joulenet_channel::radio::{serrano, FrameModel, FrameRole, RadioProfile};
use joulenet_sim::protocols::{entries, Wire};
use joulenet_sim::scenario::{LOSS_MODELS, TOPOLOGIES};

pub fn list() {
    println!("protocols (flow.protocol; `real` ones also run with joulenet send/recv --proto, \
        `multi` ones with joulenet recv --bind A --bind B and joulenet offer; `sim` ones only in the simulator):");
    for e in entries() {
        let hosts = match e.wire {
            Wire::Code(_) => "real",
            Wire::Multihomed(_) => "multi",
            Wire::Unavailable(_) => "sim ",
        };
        println!("  {:<16} {hosts:<5} {}", e.name, e.about);
        if let Wire::Unavailable(why) = e.wire {
            // Why a protocol stays in the simulator (rcp-eln: a UDP socket
            // never sees the link layer's corrupted frames).
            println!("  {:<16} {:<5}   not on real hosts: {why}", "", "");
        }
    }
    println!("\nloss models (link.loss.model):");
    for (name, what) in LOSS_MODELS {
        println!("  {name:<16} {what}");
    }
    println!("\nradio presets (link.radio):          tx W    rx W  idle W  sleep W  sleep->idle  off->on");
    for name in RadioProfile::preset_names() {
        let p = RadioProfile::preset(name).expect("listed presets exist");
        println!(
            "  {name:<16} {:>20.3} {:>7.3} {:>7.3} {:>8.3} {:>12} {:>8}",
            p.tx_w,
            p.rx_w,
            p.idle_w,
            p.sleep_w,
            format!("{}", p.sleep_to_idle),
            format!("{}", p.off_to_on)
        );
    }
    serrano_devices();
    println!("\ntopologies (topology.kind):");
    for (name, what) in TOPOLOGIES {
        println!("  {name:<16} {what}");
    }
    println!("\napplications (flow.app):");
    for (name, what) in [
        ("bulk", "send `bytes` as fast as the transport allows"),
        ("backlogged", "always data to send until `stop`"),
        ("cbr", "`message` bytes at `rate`"),
        (
            "poisson",
            "`message` bytes with exponential gaps of mean `mean_interval` (interactive)",
        ),
        (
            "pareto",
            "Pareto on/off at `rate` (`mean_on`, `mean_off`, `shape`), ns-2 style cross traffic",
        ),
    ] {
        println!("  {name:<16} {what}");
    }
    println!(
        "\nenergy policies (energy.policy): always_active, ideal, intermediate (active_weight)"
    );
    energy_models();
    println!("\ntime series (output.series): cwnd, ssthresh, srtt_ms, rto_ms, flight, rwnd, rate, goodput, delivered, queue, channel, energy, residual (per node)");
}

/// The devices Serrano et al. measured: radio presets at a measured
/// operating point, and their cross-factors.
fn serrano_devices() {
    println!(
        "\nmeasured devices (radio = {{ preset, mcs_mbps, txp_dbm }}; energy.cross_factor), \
         Serrano et al., IEEE/ACM ToN 2015, as transcribed in I. Ucar's thesis data:"
    );
    println!("  {:<22} idle W  tx W above idle (6..48 Mbit/s at 15 dBm)  rx W above idle (6..48)  cross-factor tx", "");
    for d in serrano::DEVICES {
        let tx: Vec<String> =
            d.tx.iter()
                .filter(|&&(_, p, _)| p == 15)
                .map(|&(_, _, w)| format!("{w:.3}"))
                .collect();
        let rx: Vec<String> = d.rx.iter().map(|&(_, w)| format!("{w:.3}")).collect();
        println!(
            "  {:<22} {:>6.3}  {:<41} {:<24} {:.4} mJ",
            d.name,
            d.idle_w,
            tx.join(" "),
            rx.join(" "),
            d.cross_factor_tx_j * 1e3
        );
        let rates: Vec<String> = d.rates_mbps().iter().map(u32::to_string).collect();
        println!(
            "  {:<22} {}; measured at {} Mbit/s and 6, 9, 12, 15 dBm",
            "",
            d.description,
            rates.join(", ")
        );
    }
}

/// Energy models (`energy.model`) with their per-frame lines, and the
/// battery models and cell presets (`[[batteries]]`).
fn energy_models() {
    println!("\nenergy models (energy.model):");
    println!("  {:<16} radio state x time; optional cross_factor = {{ tx, rx }} or a measured device's (\"serrano-linksys\") per data frame (Serrano et al.)", "state");
    println!(
        "  {:<16} idle power while active + m*size + b per frame (energy.per_packet preset)",
        "per_packet"
    );
    println!("\nper-packet presets (energy.per_packet):   m uJ/byte, b uJ per role");
    for name in FrameModel::preset_names() {
        let model = FrameModel::preset(name).expect("listed presets exist");
        let lines: Vec<String> = FrameRole::ALL
            .iter()
            .map(|&role| {
                let l = model.line(role);
                format!(
                    "{} {:.3}/{:.1}",
                    role.key(),
                    l.per_byte_j * 1e6,
                    l.fixed_j * 1e6
                )
            })
            .collect();
        println!("  {name:<16} {}", lines.join(", "));
    }
    println!("\nbattery models (batteries.model): ideal, kibam (c, k 1/s), peukert (exponent, rated_hours)");
    println!("\ncell presets (batteries.cell):        capacity     kibam c   kibam k 1/s  peukert n  rated h");
    for cell in cells::CELLS {
        let none = || "-".to_string();
        println!(
            "  {:<20} {:>12} {:>10} {:>12} {:>10} {:>8}   {}",
            cell.name,
            format!("{:.0} J", cell.capacity_j),
            cell.kibam.map_or_else(none, |k| format!("{:.3}", k.c)),
            cell.kibam.map_or_else(none, |k| format!("{:.3e}", k.k)),
            cell.peukert
                .map_or_else(none, |p| format!("{:.2}", p.exponent)),
            cell.peukert
                .map_or_else(none, |p| format!("{:.0}", p.rated_s / 3600.0)),
            cell.description
        );
        println!("  {:<20} source: {}", "", cell.source);
    }
}
