//! A node whose battery runs out dies mid-run: its lifetime is reported, is
//! what the capacity and radio powers predict, and the run carries on.
//!
//! Observed behaviour this file pins down: when the battery check finds the
//! battery empty, the node's radios are switched off and its queues dropped,
//! but activity already registered with its radio ledger (a reception whose
//! frame was already on the air, a link ACK) is still charged, because
//! registered activity dominates every radio mode. So a dead node's energy
//! can exceed its capacity, by at most that already-scheduled air time.

mod common;

use common::run;

// ns3-wifi preset powers.
const TX_W: f64 = 1.14;
const RX_W: f64 = 0.939;
const IDLE_W: f64 = 0.819;
const CAPACITY_J: f64 = 5.0;

fn scenario(capacity: f64) -> String {
    format!(
        r#"
stop = "30s"
[link]
rate = "2Mbps"
delay = "5ms"
radio = "ns3-wifi"
[[batteries]]
node = 1
capacity = {capacity}
[flow]
protocol = "newreno"
app = "cbr"
rate = "8kbps"   # one 100-byte message every 100 ms: the radio mostly idles
message = 100
stop = "20s"
"#
    )
}

#[test]
fn a_small_battery_dies_near_its_idle_lifetime() {
    let r = run(&scenario(CAPACITY_J));
    let (alive, dead) = (&r.nodes[0], &r.nodes[1]);
    assert_eq!(alive.died_at_s, None);
    assert_eq!(alive.battery_j, None);
    assert_eq!(dead.battery_j, Some(CAPACITY_J));
    let died = dead.died_at_s.expect("the battery should have run out");

    // Energy = idle·t_idle + tx·t_tx + rx·t_rx with t_idle + t_tx + t_rx =
    // lifetime, so the lifetime falls short of capacity / idle power by
    // exactly the busy time weighted by its excess power over idling.
    let busy = dead.tx_s + dead.rx_s;
    let analytic = CAPACITY_J / IDLE_W;
    let shortfall = ((TX_W - IDLE_W) * dead.tx_s + (RX_W - IDLE_W) * dead.rx_s) / IDLE_W;
    assert!(
        busy > 0.0 && busy < 0.05 * died,
        "mostly idle: busy {busy} s"
    );
    assert!(
        (analytic - shortfall - died).abs() < 1e-6,
        "died at {died} s; idle lifetime {analytic} s less busy excess {shortfall} s"
    );
    assert!(died <= analytic && analytic - died <= (TX_W - IDLE_W) / IDLE_W * busy + 1e-6);
    // Always-active radio: awake the whole life, then off (0 W) after it.
    assert!(
        (dead.tx_s + dead.rx_s + dead.idle_s - died).abs() < 0.01,
        "radio time {} vs lifetime {died}",
        dead.tx_s + dead.rx_s + dead.idle_s
    );

    // Energy reaches the capacity and exceeds it by no more than activity
    // already on the air at the moment of death: one maximal data frame
    // received plus a link-layer-free TCP ACK sent (bounded by two 1500-byte
    // frames at the highest power).
    let max_frame_s = 1500.0 * 8.0 / 2e6;
    let overshoot = dead.energy_j - CAPACITY_J;
    println!(
        "died at {died:.6} s (analytic {analytic:.6} s); energy {:.9} J, overshoot {overshoot:.3e} J",
        dead.energy_j
    );
    assert!(
        overshoot >= -TX_W * 1e-9 * 2.0,
        "died early: {overshoot} J left"
    );
    assert!(
        overshoot <= 2.0 * TX_W * max_frame_s,
        "overshoot {overshoot} J"
    );

    // The run survived and went on past the death; the flow did not finish.
    assert!(r.summary.duration_s > died);
    let f = &r.flows[0];
    assert!(!f.completed, "the receiver died, the flow cannot complete");
    assert_eq!(f.close_time_s, None, "the dead end never closes");
    assert_eq!(f.corrupt_deliveries, 0);
    // Nothing was delivered after death: at most the messages generated
    // while the receiver lived.
    let generated_while_alive = ((died / 0.1).floor() as u64 + 1) * 100;
    assert!(
        f.bytes_delivered <= generated_while_alive,
        "{}",
        f.bytes_delivered
    );
    assert!(
        f.bytes_delivered >= generated_while_alive - 300,
        "{}",
        f.bytes_delivered
    );
    // Frames sent after death were not received.
    let to_dead = r.links.iter().find(|l| l.to == 1).unwrap();
    assert!(
        to_dead.attempts > to_dead.frames_delivered,
        "the sender kept trying after the death: {to_dead:?}"
    );
}

#[test]
fn a_large_battery_outlives_the_run() {
    let r = run(&scenario(1000.0));
    let n = &r.nodes[1];
    assert_eq!(n.died_at_s, None);
    assert!(n.energy_j < 1000.0);
    assert!(r.flows[0].completed, "{:?}", r.flows[0]);
    assert!(r.flows[0].close_time_s.is_some());
}
