//! Transmit energy by kind on the shared medium (`medium/tx_kind.rs`): the
//! kinds add up to each radio's transmit energy, and each is charged to
//! what made the frame — transport packets by the agent on the flow's
//! source, destination or a relay, link ACKs to link control, routing's
//! advertisements to the network.

mod common;

use common::run;
use joulenet_sim::RunResult;

/// A chain of `hops` on an 802.11b medium, one flow of 100 KB end to end.
fn chain(hops: u32, mac: &str, protocol: &str, extra: &str) -> String {
    format!(
        r#"
stop = "60s"
[topology]
kind = "chain"
hops = {hops}
spacing = 150
[medium]
mac = "{mac}"
standard = "802.11b"
range = 250
routing = "link_state"
routing_interval = "2s"
{extra}
[flow]
protocol = "{protocol}"
app = "bulk"
bytes = 100000
"#
    )
}

fn kinds_sum_to_tx(r: &RunResult) {
    for n in &r.nodes {
        let k = n.tx_by_kind.expect("a shared medium reports kinds");
        assert!(
            (k.total_j() - n.tx_j).abs() <= 1e-9 * n.tx_j.max(1e-12),
            "node {}: kinds {} vs tx {}",
            n.node,
            k.total_j(),
            n.tx_j
        );
    }
}

fn total(r: &RunResult, f: impl Fn(&joulenet_sim::TxByKind) -> f64) -> f64 {
    r.nodes.iter().map(|n| f(&n.tx_by_kind.unwrap())).sum()
}

#[test]
fn tcp_data_acks_link_acks_and_adverts_each_go_to_their_kind() {
    let r = run(&chain(3, "csma", "newreno", "routing_updates = \"air\""));
    assert_eq!(r.summary.bytes_delivered, 100_000);
    kinds_sum_to_tx(&r);
    let src = &r.nodes[0].tx_by_kind.unwrap();
    let dst = &r.nodes[3].tx_by_kind.unwrap();
    // The source node sends data, the destination node ACKs; each also
    // sends link ACKs for what it receives, and advertisements.
    assert!(src.source_j > 0.0 && src.destination_j == 0.0);
    assert!(dst.destination_j > 0.0 && dst.source_j == 0.0);
    assert!(src.source_j > 5.0 * dst.destination_j, "{src:?} {dst:?}");
    for n in &r.nodes {
        let k = n.tx_by_kind.unwrap();
        assert!(k.link_control_j > 0.0 && k.network_j > 0.0, "{k:?}");
        assert_eq!(k.relay_j, 0.0, "TCP runs no relays");
    }
    // The middle nodes forward both directions.
    let mid = r.nodes[1].tx_by_kind.unwrap();
    assert!(mid.source_j > 0.0 && mid.destination_j > 0.0);
}

#[test]
fn jtp_local_recoveries_are_charged_to_relays() {
    // TDMA with good/bad links: relays answer SNACKs from their caches.
    let fading = "reception = \"log_distance\"\nfading = { mean_good = \"5s\", mean_bad = \"1s\", extra_loss_db = 10 }";
    let r = run(&chain(4, "tdma", "jtp", fading));
    kinds_sum_to_tx(&r);
    assert!(total(&r, |k| k.relay_j) > 0.0, "no local recovery charged");
    assert_eq!(total(&r, |k| k.network_j), 0.0, "TDMA routing is instant");
    let transport = total(&r, |k| k.transport_j());
    let tx: f64 = r.nodes.iter().map(|n| n.tx_j).sum();
    assert!(
        transport > 0.5 * tx && transport < tx,
        "{transport} of {tx}"
    );
}
