#!/usr/bin/env bash
# Measurement, not a test: goodput over a 4-hop chain of network namespaces
# (5 hosts, scripts/netns-lib.sh jn_chain; every link RATE with LOSS% random
# loss in each direction, after its rate limiter) for
#
#   hbh-tcp           joulenet relay on the 3 middle hosts terminates the
#                     connection at every hop (NewReno ends and hops);
#   e2tcp, newreno    end to end, joulenet relay on the middle hosts only
#                     forwarding;
#   hop, jtp, atp     their relay agents on the 3 middle hosts (Hop takes
#                     each block hop by hop; iJTP and ATP stamp and forward),
#                     every relay and the client pacing their links at the
#                     link rate (--link-rate, crates/runtime/src/pace.rs);
#   linux-bbr, linux-cubic
#                     kernel TCP (iperf3) with the kernel routing on the
#                     same hosts and links.
#
# Every run lasts SECS seconds of sending (joulenet client -t, iperf3 -t).
# Goodput: joulenet — the receiver's transfer goodput (bytes delivered from
# its first byte to the end of the stream, iperf3's convention) and, in a
# fifth column, the same bytes over the time since the connection opened
# (for Hop, whose first byte arrives only with its first whole block, the
# two differ by that block's crossing; the others agree); iperf3 —
# end.sum_received.bits_per_second (in both columns).
#
# Usage: scripts/bench-relay.sh   (root)
# Env:   JOULENET_BIN (default target/release/joulenet), RUNS (3), SECS (20),
#        RATE (10mbit), LOSS (5), PROTOS ("hop jtp atp hbh-tcp e2tcp newreno"),
#        PACED ("hop jtp atp"),
#        KERNEL ("bbr cubic"), OUT (target/bench-relay)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/netns-lib.sh
jn_need || exit $?
command -v iperf3 >/dev/null || { echo "iperf3 missing (apt-get install iperf3)"; exit 1; }

BIN=$(realpath "${JOULENET_BIN:-target/release/joulenet}")
RUNS=${RUNS:-3}
SECS=${SECS:-20}
RATE=${RATE:-10mbit}
LOSS=${LOSS:-5}
PROTOS=${PROTOS:-hop jtp atp hbh-tcp e2tcp newreno}
# Protocols run with --link-rate (the link's rate, as tc gives it).
PACED=${PACED:-hop jtp atp}
LINK_RATE=$(echo "$RATE" | sed 's/mbit$/Mbps/; s/kbit$/kbps/; s/gbit$/Gbps/')
KERNEL=${KERNEL:-bbr cubic}
for p in $PROTOS; do
    case $p in linux-*)
        echo "PROTOS names joulenet protocols; Linux TCP runs by KERNEL=\"${p#linux-} …\"" >&2
        exit 2 ;;
    esac
done
OUT=${OUT:-target/bench-relay}
mkdir -p "$OUT"
TMP=$(mktemp -d)
JN_RELAY_DIR=$TMP
trap 'jn_chain_relays_stop 2>/dev/null; jn_teardown; rm -rf "$TMP"' EXIT

{
    echo "# $(date -u +%FT%TZ) $(git rev-parse --short HEAD 2>/dev/null)"
    echo "# machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
    echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "# chain: 5 hosts, 4 links of $RATE, $LOSS% loss per link each way; $SECS s per run"
} | tee "$OUT/results.tsv"
printf "run\tprotocol\tgoodput_mbps\tload1\tsince_open_mbps\n" >> "$OUT/results.tsv"

jn_chain 5 "$RATE"
jn_chain_loss "$LOSS"
SERVER=$(jn_chain_left 4)
FIRST=$(jn_chain_left 1):7000

jn_goodput() { # serve's -J output, KEY: transfer_goodput_bps or goodput_bps
    python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
s = d["end"]["summary"] if "summary" in d.get("end", {}) else d["end"]
g = s.get(sys.argv[2])
print("%.3f" % (g / 1e6) if g else "nan")' "$1" "$2" 2>/dev/null || echo nan
}

for run in $(seq 1 "$RUNS"); do
    for p in $PROTOS; do
        pace=()
        case " $PACED " in *" $p "*) pace=(--link-rate "$LINK_RATE") ;; esac
        jn_chain_relays "$BIN" "${pace[@]}"
        ip netns exec "${JN_NS}H4" timeout $((SECS + 120)) "$BIN" serve --bind "$SERVER:5201" --node 4 \
            -1 -J -i 0 --idle-timeout 30s > "$TMP/srv.json" 2>/dev/null &
        srv=$!
        sleep 0.3
        load=$(cut -d' ' -f1 /proc/loadavg)
        jn_x H0 timeout $((SECS + 60)) "$BIN" client "$FIRST" --node 0 --to-node 4 --proto "$p" \
            -t "$SECS" "${pace[@]}" -i 0 -J --idle-timeout 30s > "$TMP/cli.json" 2>/dev/null || true
        wait "$srv" 2>/dev/null || true
        jn_chain_relays_stop
        g=$(jn_goodput "$TMP/srv.json" transfer_goodput_bps)
        o=$(jn_goodput "$TMP/srv.json" goodput_bps)
        printf "%s\t%s\t%s\t%s\t%s\n" "$run" "$p" "$g" "$load" "$o" | tee -a "$OUT/results.tsv"
        cp "$TMP/srv.json" "$OUT/srv-$p-$run.json" 2>/dev/null || true
        cp "$TMP/relay2.json" "$OUT/relay2-$p-$run.json" 2>/dev/null || true
        cp "$TMP/cli.json" "$OUT/cli-$p-$run.json" 2>/dev/null || true
    done
    for cc in $KERNEL; do
        jn_x H4 iperf3 -s -1 -B "$SERVER" > /dev/null 2>&1 &
        srv=$!
        sleep 0.3
        load=$(cut -d' ' -f1 /proc/loadavg)
        jn_x H0 timeout $((SECS + 30)) iperf3 -c "$SERVER" -t "$SECS" -C "$cc" -J > "$TMP/ip.json" 2>/dev/null || true
        wait "$srv" 2>/dev/null || true
        g=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print("%.3f" % (d["end"]["sum_received"]["bits_per_second"] / 1e6))' "$TMP/ip.json" 2>/dev/null || echo nan)
        printf "%s\t%s\t%s\t%s\t%s\n" "$run" "linux-$cc" "$g" "$load" "$g" | tee -a "$OUT/results.tsv"
    done
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/results.tsv"
python3 - "$OUT/results.tsv" <<'PY'
import sys, statistics
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l[0] != "#" and not l.startswith("run")]
by = {}
for run, proto, g, load, since_open in rows:
    by.setdefault(proto, []).append((float(g), float(since_open)))
print("protocol\truns\tmedian\tmin\tmax (Mbit/s, from the first byte)\tmedian\tmin\tmax (since the connection opened)")
for proto, gs in by.items():
    cols = []
    for i in (0, 1):
        ok = [g[i] for g in gs if g[i] == g[i]]
        cols.append(f"{statistics.median(ok):.2f}\t{min(ok):.2f}\t{max(ok):.2f}" if ok else "nan\tnan\tnan")
    print(f"{proto}\t{len(gs)}\t{cols[0]}\t{cols[1]}")
PY
