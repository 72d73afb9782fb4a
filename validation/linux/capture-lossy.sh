#!/usr/bin/env bash
# One kernel TCP transfer on validation/linux's lossy link with every frame's
# fate recorded, for validation/linux/tracediff-linux.py (issue 16).
# Usage (root): validation/linux/capture-lossy.sh OUTDIR LOSS_PCT [BYTES] [CC]
# The loss rule of scripts/netns-lib.sh (nftables numgen, prerouting, both
# ends of the link) is replaced by one that also logs: every frame reaching
# a host from the link goes to NFLOG group 5 with prefix "lost" (dropped)
# or "kept", captured per host (OUTDIR/{A,B}-fates.pcap, A: ACKs, B: data),
# in the order the link delivered them (NFLOG's own times are those of the
# capture's reads, so times come from OUTDIR/A-link.pcap, the sender's
# interface both ways (ACKs as they arrive, before the loss rule), and
# OUTDIR/B-egress.pcap, the receiver's ACKs as sent). OUTDIR/probe.txt the
# sender's tcp:tcp_probe and tcp:tcp_cong_state_set tracepoints (cwnd,
# ssthresh, srtt and congestion state per ACK). Per-destination TCP
# metrics are flushed first (tcp_no_metrics_save = 0 caches RTT and
# reordering across connections).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../scripts/netns-lib.sh"
# tbf's bucket one frame (not the lib's 16 kB): the simulator's link has no
# burst allowance, and the queue is then 10 Mbit/s × 100 ms + 1600 bytes =
# 83 frames of 1514 bytes, the scenario's `queue = 83`.
export JN_TBF_BURST=${JN_TBF_BURST:-1600}
out=$1
pct=$2
bytes=${3:-2000000}
cc=${4:-reno}
port=5201
mkdir -p "$out"
jn_need || exit $?
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    if [ -d /sys/kernel/tracing/events/tcp ]; then
        echo 0 > /sys/kernel/tracing/events/tcp/tcp_probe/enable || true
        echo 0 > /sys/kernel/tracing/events/tcp/tcp_cong_state_set/enable || true
        echo 0 > /sys/kernel/tracing/events/tcp/tcp_probe/filter || true
    fi
    jn_teardown
}
trap cleanup EXIT
jn_two_host 10mbit
n=$(awk -v p="$pct" 'BEGIN { printf "%d", p * 100 }')
for end in "A a1" "B b1"; do
    read -r ns dev <<<"$end"
    jn_x "$ns" nft flush chain inet jnloss lossy
    if [ "$n" -gt 0 ]; then
        jn_x "$ns" nft add rule inet jnloss lossy iifname "$JN_NS$dev" \
            numgen random mod 10000 '<' "$n" log prefix '"lost"' group 5 drop
    fi
    jn_x "$ns" nft add rule inet jnloss lossy iifname "$JN_NS$dev" log prefix '"kept"' group 5
    jn_x "$ns" ip tcp_metrics flush all 2>/dev/null || true
    jn_x "$ns" tcpdump -q -U --immediate-mode -i nflog:5 -w "$out/$ns-fates.pcap" 2>/dev/null &
    pids+=($!)
done
jn_x A tcpdump -q -U --immediate-mode -i "${JN_NS}a1" -s 128 -w "$out/A-link.pcap" tcp 2>/dev/null &
pids+=($!)
jn_x B tcpdump -q -U --immediate-mode -i "${JN_NS}b1" -s 128 -w "$out/B-egress.pcap" "tcp and src host 10.201.2.1" 2>/dev/null &
pids+=($!)
tr=/sys/kernel/tracing
if [ -d "$tr/events/tcp" ] || mount -t tracefs nodev "$tr" 2>/dev/null; then
    echo > "$tr/trace"
    echo "dport == $port" > "$tr/events/tcp/tcp_probe/filter"
    echo 1 > "$tr/events/tcp/tcp_probe/enable"
    echo 1 > "$tr/events/tcp/tcp_cong_state_set/enable"
    cat "$tr/trace_pipe" > "$out/probe.txt" &
    pids+=($!)
fi
sleep 1
jn_x B python3 "$here/tcp_transfer.py" serve $port > "$out/serve.txt" &
server=$!
sleep 0.3
jn_x A python3 "$here/tcp_transfer.py" send "$JN_SERVER" $port "$bytes" "$cc"
wait "$server"
sleep 1.5
cat "$out/serve.txt"
