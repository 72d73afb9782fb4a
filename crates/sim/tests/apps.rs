//! Applications generate the traffic they promise: CBR exactly, Poisson and
//! Pareto on/off on average within derived tolerances; flows start and stop
//! when told.

mod common;

use std::io::Cursor;

use common::run;
use pcap_file::pcap::PcapReader;

#[test]
fn cbr_over_udp_delivers_rate_times_duration() {
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
    let expected = 200_000.0 * 10.0 / 8.0;
    let got = f.bytes_delivered as f64;
    assert!(
        (got - expected).abs() <= 500.0,
        "delivered {got} B, expected {expected} B"
    );
    assert_eq!(f.data_packets, 500, "one message per 20 ms for 10 s");
    assert_eq!(f.corrupt_deliveries, 0);
}

#[test]
fn poisson_mean_rate_within_five_sigma() {
    // Messages in [0, T) of a Poisson process: mean T/m, sd sqrt(T/m).
    let (duration_s, interval_s, message): (f64, f64, f64) = (50.0, 0.01, 200.0);
    let r = run(r#"
stop = "50.5s"
[link]
rate = "10Mbps"
[flow]
protocol = "udp"
app = "poisson"
mean_interval = "10ms"
message = 200
stop = "50s"
"#);
    let f = &r.flows[0];
    let n = f.bytes_delivered as f64 / message;
    let mean = duration_s / interval_s;
    let tol = 5.0 * mean.sqrt();
    assert!(
        (n - mean).abs() <= tol,
        "{n} messages, expected {mean} +- {tol}"
    );
    assert_eq!(f.data_packets as f64, n, "lossless: every message arrives");
}

#[test]
fn pareto_on_off_long_run_rate() {
    // On/off lengths are Pareto with shape 2.5 (finite variance, so a CLT
    // tolerance exists; the default 1.5 has none). With on ~ (mean 0.1 s),
    // off ~ (mean 0.3 s), Var = mean^2 / (a (a - 2)) = 0.8 mean^2.
    // The on fraction R = 0.25 estimated over n cycles has (delta method)
    // var = ((1-R)^2 var_on + R^2 var_off) / (n (mean_on + mean_off)^2).
    // Messages are sent at the start of each 4 ms slot of an On period, so
    // the count over-reads by up to one slot per period: + 4 ms / 100 ms.
    let (rate, on, off, shape, duration): (f64, f64, f64, f64, f64) = (1e6, 0.1, 0.3, 2.5, 400.0);
    let r = run(r#"
stop = "400s"
[link]
rate = "10Mbps"
[flow]
protocol = "udp"
app = "pareto"
rate = "1Mbps"
message = 500
mean_on = "100ms"
mean_off = "300ms"
shape = 2.5
"#);
    let f = &r.flows[0];
    let ratio = on / (on + off);
    let expected = rate * ratio * duration / 8.0;
    // Var of a Pareto with mean m and shape a: m^2 / (a (a - 2)).
    let k = 1.0 / (shape * (shape - 2.0));
    let cycles = duration / (on + off);
    let var = ((1.0 - ratio).powi(2) * k * on * on + ratio.powi(2) * k * off * off)
        / (cycles * (on + off).powi(2));
    let rel_tol = 5.0 * var.sqrt() / ratio + 0.004 / on;
    let got = f.bytes_delivered as f64;
    println!(
        "pareto: {:.4} of expected, tolerance {rel_tol:.4}",
        got / expected
    );
    assert!(
        (got / expected - 1.0).abs() <= rel_tol,
        "delivered {got} B, expected {expected} B (relative tolerance {rel_tol:.3})"
    );
}

#[test]
fn a_late_flow_starts_at_its_start_time() {
    let r = run(r#"
[link]
rate = "5Mbps"
delay = "5ms"
[flow]
protocol = "reno"
bytes = "50kB"
start = "2s"
[output]
pcap = true
"#);
    let f = &r.flows[0];
    assert!(f.completed);
    assert_eq!(f.start_s, 2.0);
    let completion = f.completion_time_s.unwrap();
    assert!(
        completion < 1.0,
        "measured from the start, not from 0: {completion}"
    );
    assert!((r.summary.duration_s - 2.0 - f.close_time_s.unwrap()).abs() < 1e-9);
    let mut first = None::<std::time::Duration>;
    for (_, bytes) in r.pcap.unwrap().into_files() {
        let mut reader = PcapReader::new(Cursor::new(bytes)).unwrap();
        while let Some(p) = reader.next_packet() {
            let ts = p.unwrap().timestamp;
            first = Some(first.map_or(ts, |t| t.min(ts)));
        }
    }
    assert_eq!(
        first,
        Some(std::time::Duration::from_secs(2)),
        "the first packet (the SYN) leaves at the start time"
    );
}

#[test]
fn stop_ends_a_backlogged_tcp_flow_cleanly() {
    let rate = 2e6;
    let stop = 3.0;
    let r = run(r#"
[link]
rate = "2Mbps"
delay = "10ms"
[flow]
protocol = "newreno"
app = "backlogged"
stop = "3s"
"#);
    let f = &r.flows[0];
    assert!(
        !r.summary.stopped_by_limit,
        "the run ended because the flow closed"
    );
    assert!(f.completed, "{f:?}");
    assert!(!f.aborted);
    assert_eq!(f.corrupt_deliveries, 0);
    assert_eq!(f.bytes_requested, None);
    let closed = f.close_time_s.expect("both ends closed");
    // What was buffered at the stop drains, then FINs: a send buffer (256 KiB)
    // at 2 Mbit/s is about a second.
    assert!(closed > stop && closed < stop + 2.5, "closed at {closed} s");
    let delivered = f.bytes_delivered as f64;
    assert!(
        delivered <= rate / 8.0 * closed,
        "{delivered} B exceeds capacity"
    );
    assert!(
        delivered >= 0.8 * rate / 8.0 * stop,
        "a backlogged flow fills the link while it runs: {delivered} B"
    );
}
