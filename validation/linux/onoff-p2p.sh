#!/usr/bin/env bash
# Linux TCP as an independent reference (issue 16), on/off error phases:
# the link of lossy-p2p.sh (10 Mbit/s, tbf, nftables loss both ways) whose
# loss alternates between PCT % (On) and 0 (Off) every PHASE seconds,
# starting Off as the transfer starts. Writes
# validation/linux/results/onoff-p2p.csv; compare with
# `joulenet run validation/linux/onoff-p2p.toml`.
# Usage (root): nice -n 10 validation/linux/onoff-p2p.sh [RUNS] [BYTES] [PCT] [PHASE]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../scripts/netns-lib.sh"
# tbf's bucket one frame (not the lib's 16 kB): the simulator's link has no
# burst allowance, and the queue is then 10 Mbit/s × 100 ms + 1600 bytes =
# 83 frames of 1514 bytes, the scenario's `queue = 83`.
export JN_TBF_BURST=${JN_TBF_BURST:-1600}
runs=${1:-3}
bytes=${2:-4000000}
pct=${3:-20}
phase=${4:-1}
jn_need || exit $?
toggler=
stop_toggler() { if [ -n "$toggler" ]; then kill "$toggler" 2>/dev/null || true; wait "$toggler" 2>/dev/null || true; toggler=; fi; }
trap 'stop_toggler; jn_teardown' EXIT
jn_two_host 10mbit
out="$here/results/onoff-p2p.csv"
echo "on_loss_pct,phase_s,run,bytes,seconds,rto_timeouts,loss_probes" > "$out"
for r in $(seq 1 "$runs"); do
    # shellcheck disable=SC2086
    jn_set_loss $JN_LOSSY 0
    jn_x A nstat -n >/dev/null 2>&1 || true
    # Each run starts afresh: with tcp_no_metrics_save = 0 the kernel keeps
    # the last connection's RTT and reordering per destination.
    jn_x A ip tcp_metrics flush all 2>/dev/null || true
    jn_x B ip tcp_metrics flush all 2>/dev/null || true
    jn_x B python3 "$here/tcp_transfer.py" serve 5201 > "$here/results/.serve" &
    server=$!
    sleep 1
    (
        while true; do
            sleep "$phase"
            # shellcheck disable=SC2086
            jn_set_loss $JN_LOSSY "$pct"
            sleep "$phase"
            # shellcheck disable=SC2086
            jn_set_loss $JN_LOSSY 0
        done
    ) &
    toggler=$!
    jn_x A python3 "$here/tcp_transfer.py" send "$JN_SERVER" 5201 "$bytes" reno
    wait "$server"
    stop_toggler
    read -r n secs < "$here/results/.serve"
    counters=$(jn_x A nstat -az TcpExtTCPTimeouts TcpExtTCPLossProbes 2>/dev/null || true)
    rto=$(awk '$1 == "TcpExtTCPTimeouts" { print $2 }' <<<"$counters")
    tlp=$(awk '$1 == "TcpExtTCPLossProbes" { print $2 }' <<<"$counters")
    echo "$pct,$phase,$r,$n,$secs,${rto:-},${tlp:-}" | tee -a "$out"
done
rm -f "$here/results/.serve"
