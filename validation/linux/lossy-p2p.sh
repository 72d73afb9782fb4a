#!/usr/bin/env bash
# Linux TCP as an independent reference (issue 16): kernel TCP Reno (SACK
# and timestamps on, as Linux ships) over a 10 Mbit/s point-to-point link
# built of network namespaces (scripts/netns-lib.sh: tbf for the rate,
# nftables numgen for random loss both ways, no netem), for p = 0, 1, 5,
# 10 %. Writes validation/linux/results/lossy-p2p.csv (p, run, seconds);
# compare with `joulenet run validation/linux/lossy-p2p.toml`.
# Usage (root): nice -n 10 validation/linux/lossy-p2p.sh [RUNS] [BYTES]
# Environment: LOSSES ("0 1 5 10"), SENDER_SYSCTL / RECEIVER_SYSCTL
# (space-separated key=value, set in the sender's / receiver's namespace,
# e.g. SENDER_SYSCTL="net.ipv4.tcp_frto=0" to measure what a kernel rule is
# worth), OUT (the CSV, results/lossy-p2p.csv), CC (reno: the congestion
# control the sender sets, e.g. cubic).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../scripts/netns-lib.sh"
# tbf's bucket one frame (not the lib's 16 kB): the simulator's link has no
# burst allowance, and the queue is then 10 Mbit/s × 100 ms + 1600 bytes =
# 83 frames of 1514 bytes, the scenario's `queue = 83`.
export JN_TBF_BURST=${JN_TBF_BURST:-1600}
runs=${1:-3}
bytes=${2:-2000000}
jn_need || exit $?
trap jn_teardown EXIT
jn_two_host 10mbit
for kv in ${SENDER_SYSCTL:-}; do jn_x A sysctl -qw "$kv"; done
for kv in ${RECEIVER_SYSCTL:-}; do jn_x B sysctl -qw "$kv"; done
out=${OUT:-$here/results/lossy-p2p.csv}
echo "loss_pct,run,bytes,seconds,rto_timeouts,loss_probes,spurious_rtos,loss_undos" > "$out"
for p in ${LOSSES:-0 1 5 10}; do
    # shellcheck disable=SC2086
    jn_set_loss $JN_LOSSY "$p"
    for r in $(seq 1 "$runs"); do
        jn_x A nstat -n >/dev/null 2>&1 || true
        # Each run starts afresh: with tcp_no_metrics_save = 0 the kernel keeps
        # the last connection's RTT and reordering per destination.
        jn_x A ip tcp_metrics flush all 2>/dev/null || true
        jn_x B ip tcp_metrics flush all 2>/dev/null || true
        jn_x B python3 "$here/tcp_transfer.py" serve 5201 > "$here/results/.serve" &
        server=$!
        sleep 0.3
        jn_x A python3 "$here/tcp_transfer.py" send "$JN_SERVER" 5201 "$bytes" "${CC:-reno}"
        wait "$server"
        read -r n secs < "$here/results/.serve"
        # The sender's RTOs, tail loss probes, and timeouts F-RTO found
        # spurious (TCPSpuriousRTOs) or any loss state undone (TCPLossUndo).
        counters=$(jn_x A nstat -az TcpExtTCPTimeouts TcpExtTCPLossProbes \
            TcpExtTCPSpuriousRTOs TcpExtTCPLossUndo 2>/dev/null || true)
        rto=$(awk '$1 == "TcpExtTCPTimeouts" { print $2 }' <<<"$counters")
        tlp=$(awk '$1 == "TcpExtTCPLossProbes" { print $2 }' <<<"$counters")
        spur=$(awk '$1 == "TcpExtTCPSpuriousRTOs" { print $2 }' <<<"$counters")
        undo=$(awk '$1 == "TcpExtTCPLossUndo" { print $2 }' <<<"$counters")
        echo "$p,$r,$n,$secs,${rto:-},${tlp:-},${spur:-},${undo:-}" | tee -a "$out"
    done
done
rm -f "$here/results/.serve"
