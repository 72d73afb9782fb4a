//! Link-layer ARQ: with `arq = N` retries over a Bernoulli(p) link, a frame
//! is lost to the transport only if all N+1 attempts fail, so the residual
//! loss is p^(N+1); every extra attempt costs air time at both radios.
//! UDP CBR is used so the sender does not adapt to loss.

mod common;

use common::run;
use joulenet_sim::RunResult;

const P: f64 = 0.3;
const MESSAGE: u64 = 100;
/// One message per millisecond for 20 s.
const MESSAGES: u64 = 20_000;
const RATE_BPS: f64 = 11e6;
const ACK_BYTES: f64 = 14.0;

fn scenario(arq: u32, reverse: &str) -> String {
    format!(
        r#"
stop = "20.2s"
[link]
rate = "11Mbps"
delay = "10us"
radio = "ns3-wifi"
arq = {arq}
loss = {{ model = "bernoulli", rate = {P} }}
loss_reverse = {reverse}
[flow]
protocol = "udp"
app = "cbr"
rate = "800kbps"
message = {MESSAGE}
stop = "20s"
"#
    )
}

struct Observed {
    sent: u64,
    received: u64,
    r: RunResult,
}

fn observe(arq: u32, reverse: &str) -> Observed {
    let r = run(&scenario(arq, reverse));
    let f = &r.flows[0];
    assert_eq!(f.bytes_delivered % MESSAGE, 0, "datagrams arrive whole");
    let received = f.bytes_delivered / MESSAGE;
    let sent = f.data_packets;
    assert_eq!(sent, MESSAGES, "CBR sends rate x duration messages");
    let fwd = &r.links[0];
    assert_eq!(fwd.queue_drops, 0, "the link is not overloaded: {fwd:?}");
    Observed { sent, received, r }
}

/// Binomial 5-sigma bound on a count of `n` trials with probability `q`.
fn five_sigma(n: u64, q: f64) -> f64 {
    5.0 * (n as f64 * q * (1.0 - q)).sqrt() + 1.0
}

#[test]
fn residual_loss_is_p_to_the_attempts() {
    for retries in 0..=3u32 {
        let o = observe(retries, "\"none\"");
        let q = P.powi(retries as i32 + 1);
        let lost = (o.sent - o.received) as f64;
        let expected = o.sent as f64 * q;
        let tol = five_sigma(o.sent, q);
        assert!(
            (lost - expected).abs() <= tol,
            "arq = {retries}: {lost} of {} lost, expected {expected:.0} +- {tol:.0}",
            o.sent
        );
        // The link's own count of frames given up on is the transport's loss.
        let fwd = &o.r.links[0];
        assert_eq!(fwd.frames_lost, o.sent - o.received, "arq = {retries}");
        assert_eq!(fwd.frames_delivered, o.received);
    }
}

#[test]
fn attempts_acks_and_airtime_follow_the_retry_limit() {
    let mut previous: Option<(f64, f64, u64)> = None;
    for retries in 0..=3u32 {
        let o = observe(retries, "\"none\"");
        let (fwd, rev) = (&o.r.links[0], &o.r.links[1]);
        let (sender, receiver) = (&o.r.nodes[0], &o.r.nodes[1]);
        // Truncated geometric: E[attempts] = (1 - p^(N+1)) / (1 - p), with
        // variance below p / (1 - p)^2 per frame.
        let mean = (1.0 - P.powi(retries as i32 + 1)) / (1.0 - P);
        let sd = (P / (1.0 - P).powi(2) / o.sent as f64).sqrt();
        let per_frame = fwd.attempts as f64 / o.sent as f64;
        assert!(
            (per_frame - mean).abs() <= 5.0 * sd,
            "arq = {retries}: {per_frame} attempts per frame, expected {mean}"
        );
        assert_eq!(
            rev.attempts, 0,
            "UDP sends nothing back; ACKs are not attempts"
        );
        if retries == 0 {
            assert_eq!(fwd.link_acks, 0, "no ARQ, no link ACKs");
            assert_eq!(fwd.attempts, o.sent, "one attempt per frame without ARQ");
            assert_eq!(fwd.attempts_lost, fwd.frames_lost);
        } else {
            // ACKs never fail here: one ACK per delivered frame.
            assert_eq!(fwd.link_acks, fwd.frames_delivered, "arq = {retries}");
            assert!(fwd.attempts > o.sent);
        }
        // Air time: every attempt is a frame on the air at the sender and in
        // the receiver's radio; every ACK the other way.
        let frame_bytes = sender.bytes_on_air as f64 / fwd.attempts as f64;
        assert_eq!(frame_bytes, (MESSAGE + 8 + 20) as f64, "UDP + IPv4 headers");
        let t_frame = frame_bytes * 8.0 / RATE_BPS;
        let t_ack = ACK_BYTES * 8.0 / RATE_BPS;
        let close = |a: f64, b: f64, what: &str| {
            assert!(
                (a - b).abs() <= 1e-9 * fwd.attempts as f64 + 1e-9,
                "arq = {retries}: {what}: {a} vs {b}"
            )
        };
        close(sender.tx_s, fwd.attempts as f64 * t_frame, "sender tx time");
        close(
            receiver.rx_s,
            fwd.attempts as f64 * t_frame,
            "receiver rx time",
        );
        close(
            receiver.tx_s,
            fwd.link_acks as f64 * t_ack,
            "receiver ACK tx time",
        );
        close(
            sender.rx_s,
            fwd.link_acks as f64 * t_ack,
            "sender ACK rx time",
        );
        // More attempts, more energy at both ends.
        if let Some((tx_j, rx_j, attempts)) = previous {
            assert!(fwd.attempts > attempts);
            assert!(
                sender.tx_j > tx_j,
                "arq = {retries}: sender tx energy did not grow"
            );
            assert!(
                receiver.rx_j > rx_j,
                "arq = {retries}: receiver rx energy did not grow"
            );
        }
        previous = Some((sender.tx_j, receiver.rx_j, fwd.attempts));
    }
}

#[test]
fn lost_link_acks_cost_retransmissions_but_not_delivery() {
    // ACKs share the lossy channel: a lost ACK makes the sender send a frame
    // the receiver already has. Residual loss is still p^(N+1).
    let retries = 2;
    let o = observe(retries, "\"shared\"");
    let fwd = &o.r.links[0];
    let q = P.powi(retries as i32 + 1);
    let lost = (o.sent - o.received) as f64;
    assert!(
        (lost - o.sent as f64 * q).abs() <= five_sigma(o.sent, q),
        "{lost}"
    );
    assert!(
        fwd.link_acks > fwd.frames_delivered,
        "some ACKs were lost and re-sent: {fwd:?}"
    );
    // Duplicates are not delivered twice.
    assert_eq!(fwd.frames_delivered, o.received);
}
