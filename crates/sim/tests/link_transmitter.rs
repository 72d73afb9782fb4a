//! A link direction's transmitter: frames start at once on a free link
//! with no event for the end of their transmission, and wait their turn
//! behind a busy one, never overlapping it (docs/PERFORMANCE.md, issue 18).

mod common;

use common::run;

#[test]
fn an_idle_link_sends_at_once_with_two_events_a_frame() {
    // One 500-byte message per 20 ms on 10 Mbit/s: each frame is on the
    // air for 0.4 ms, so none ever finds the transmitter busy.
    let r = run(r#"
stop = "10.5s"
[link]
rate = "10Mbps"
[flow]
protocol = "udp"
app = "cbr"
rate = "200kbps"
message = 500
stop = "10s"
"#);
    let f = &r.flows[0];
    assert_eq!(f.data_packets, 500);
    assert_eq!(f.bytes_delivered, 500 * 500);
    assert_eq!(r.links[0].peak_queue, 0, "no frame ever waited");
    // Per frame the application's wake-up and the arrival; the end of a
    // transmission nobody waits for is no event (it used to be a third).
    assert!(
        r.summary.events <= 2 * 500 + 10,
        "{} events for 500 frames",
        r.summary.events
    );
}

#[test]
fn a_saturated_link_sends_back_to_back_without_overlap() {
    // Twice the link's rate: the queue fills and the transmitter never
    // rests, and never sends two frames at once.
    let r = run(r#"
stop = "10s"
[link]
rate = "1Mbps"
queue = 20
[flow]
protocol = "udp"
app = "cbr"
rate = "2Mbps"
message = 1000
stop = "10s"
"#);
    let link = &r.links[0];
    assert_eq!(link.peak_queue, 20, "the queue filled to its limit");
    assert!(link.queue_drops > 0);
    assert!(
        link.utilisation > 0.99 && link.utilisation <= 1.0,
        "utilisation {}",
        link.utilisation
    );
    // Delivered no faster than the link can carry its frames.
    let carried_bps = r.flows[0].bytes_delivered as f64 * 8.0 / 10.0;
    assert!(carried_bps < 1_000_000.0, "{carried_bps} bit/s");
    assert!(carried_bps > 900_000.0, "{carried_bps} bit/s");
}
