#!/usr/bin/env bash
# Benchmarks of the real-network runtime (not a test; figures go into
# docs/PERFORMANCE.md). Needs root for part 2; build first:
#   cargo build --release -p joulenet
#
# 1. loopback: one flow per protocol, no impairment, -t $LO_SECS.
# 2. a 10 Mbit/s link (tbf in a link namespace between two hosts) with
#    0/1/5/10/20% random loss in both directions, applied after the rate
#    limiter (scripts/netns-lib.sh): goodput of every joulenet protocol
#    beside Linux TCP (iperf3 with cubic, reno and bbr), same link, same
#    rules, one after the other in the same run.
#
# Goodput is measured the same way for both: application bytes the receiver
# got in the first $SECS s of the transfer, over $SECS s (joulenet: the
# server's per-second interval reports; iperf3: `end.sum_received`, whose
# sender also stops after -t $SECS). Both time the transfer from the end of
# the handshake, as iperf3 starts its test once its streams are connected;
# the time joulenet's handshakes took is written to $OUT/setup.tsv
# (protocol, loss %, the client's seconds from its first SYN to its first
# data), and to $OUT/energy.tsv the energy both ends' radios would have
# spent per delivered bit (the runtime's estimate, crates/runtime/src/
# energy.rs: µJ, whole run over the receiver's bytes). On
# loopback it is the receiver's goodput over the whole stream (bytes / time
# to its end).
#
# Prints one line per run: part, protocol, loss %, goodput Mbit/s; writes
# them to $OUT/results.tsv, each link run's two reports (the client's -J,
# the server's --json-stream: counters, diagnostic gauges, wake lateness)
# to $OUT/runs/, a Markdown table to $OUT/link.md and a plot to
# $OUT/link.png (matplotlib, if python3 has it).
# Env: JOULENET_BIN (default target/release/joulenet), LO_SECS (5), SECS (10),
#      LOSSES ("0 1 5 10 20"), PARTS ("loopback link"), PROTOS (all
#      joulenet protocols), KERNEL ("cubic reno bbr"), OUT (target/bench-runtime),
#      JN_OPTS (extra options for both joulenet ends, e.g. "--mss 1400"),
#      TAG (appended to the joulenet protocol names in the rows, e.g. "-1400")
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$(realpath "${JOULENET_BIN:-target/release/joulenet}")
LO_SECS=${LO_SECS:-5}
SECS=${SECS:-10}
LOSSES=${LOSSES:-0 1 5 10 20}
PARTS=${PARTS:-loopback link}
PROTOS=${PROTOS:-tahoe reno newreno sack cubic wwp e2tcp rcp rcp-stp}
KERNEL=${KERNEL:-cubic reno bbr}
OUT=${OUT:-target/bench-runtime}
read -r -a JN_OPTS <<< "${JN_OPTS:-}"
TAG=${TAG:-}
RATE_MBIT=10
mkdir -p "$OUT"
OUT=$(realpath "$OUT")
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
: > "$OUT/results.tsv"
: > "$OUT/setup.tsv"
: > "$OUT/energy.tsv"

goodput() { # json-file -> Mbit/s of the receiver's goodput
    python3 -c '
import json, sys
try:
    g = json.load(open(sys.argv[1]))["end"].get("goodput_bps")
except Exception:
    g = None
print("%.2f" % (g / 1e6) if g else "nan")' "$1"
}

window_goodput() { # json-stream-file secs -> Mbit/s the receiver got in [0, secs]
    # Whole intervals within the window; and a stream that ended inside it
    # (its sender stops after -t $SECS, counted from a start a few ms before
    # the receiver's first byte) has no interval for its last second — the
    # report ends before that tick — so then all it delivered counts.
    python3 -c '
import json, sys
secs = float(sys.argv[2])
got = 0
for line in open(sys.argv[1]):
    try:
        ev = json.loads(line)
    except ValueError:
        continue
    if ev.get("event") == "interval" and ev["data"]["sum"]["end"] <= secs + 1e-3:
        got += ev["data"]["sum"]["bytes"]
    if ev.get("event") == "end":
        e = ev["data"]
        start = e.get("transfer_start_s") or 0.0
        if e.get("bytes_delivered") and e["completion_time_s"] - start <= secs + 1e-3:
            got = max(got, e["bytes_delivered"])
print("%.2f" % (got * 8 / secs / 1e6))' "$1" "$2"
}

energy_per_bit() { # client -J file, server json-stream file -> µJ per delivered bit, both ends
    python3 -c '
import json, sys
try:
    c = json.load(open(sys.argv[1]))["end"]
    s = [json.loads(l) for l in open(sys.argv[2]) if l.startswith("{")]
    s = [e["data"] for e in s if e.get("event") == "end"][-1]
    j = c["energy"]["energy_j"] + s["energy"]["energy_j"]
    print("%.3f" % (j / (s["bytes_delivered"] * 8) * 1e6))
except Exception:
    print("nan")' "$1" "$2"
}

setup_time() { # client -J file -> seconds from the connection's start to its transfer's
    python3 -c '
import json, sys
try:
    t = json.load(open(sys.argv[1]))["end"].get("transfer_start_s")
except Exception:
    t = None
print("nan" if t is None else "%.3f" % t)' "$1"
}

row() { # part proto loss goodput
    echo "$1 $2 $3 $4"
    printf "%s\t%s\t%s\t%s\n" "$1" "$2" "$3" "$4" >> "$OUT/results.tsv"
}

echo "# $(date -u +%FT%TZ) $(uname -r) $(nproc) cores; binary $BIN"
if [[ " $PARTS " == *" loopback "* ]]; then
    port=5600
    for p in $PROTOS; do
        port=$((port + 1))
        "$BIN" serve --bind 127.0.0.1:$port -1 -J -i 0 "${JN_OPTS[@]}" > "$TMP/srv.json" &
        srv=$!
        sleep 0.2
        "$BIN" client 127.0.0.1:$port --proto "$p" -t "$LO_SECS" -i 0 -J "${JN_OPTS[@]}" \
            > "$TMP/cli.json" || true
        wait "$srv" || true
        row loopback "$p$TAG" 0 "$(goodput "$TMP/srv.json")"
    done
fi

if [[ " $PARTS " == *" link "* ]]; then
    . scripts/netns-lib.sh
    jn_need || exit $?
    trap 'jn_teardown; rm -rf "$TMP"' EXIT
    jn_two_host ${RATE_MBIT}mbit
    for loss in $LOSSES; do
        # shellcheck disable=SC2086
        jn_set_loss $JN_LOSSY "$loss"
        for p in $PROTOS udp; do
            rate=()
            [ "$p" = udp ] && rate=(-b 10Mbps)
            # Not through jn_x: $! must be the server itself, to stop it.
            ip netns exec "${JN_NS}B" "$BIN" serve --bind "$JN_SERVER:5201" -1 --json-stream \
                -i 1 --idle-timeout 20s "${JN_OPTS[@]}" > "$TMP/srv.jsonl" &
            srv=$!
            sleep 0.2
            # The sender's buffer may hold seconds of data at a slow rate:
            # stop it after the window, as iperf3 stops after -t — which
            # counts from the end of a handshake that may have waited out
            # lost SYNs (1 + 2 + 4 + 8 s at most before this cuts it off).
            jn_x A timeout -s INT $((SECS + 16)) "$BIN" client "$JN_TARGET" --proto "$p" \
                -t "$SECS" -i 0 -J "${rate[@]}" "${JN_OPTS[@]}" > "$TMP/cli.json" 2>/dev/null || true
            sleep 0.5
            kill "$srv" 2>/dev/null || true
            wait "$srv" 2>/dev/null || true
            row link "$p$TAG" "$loss" "$(window_goodput "$TMP/srv.jsonl" "$SECS")"
            # Both ends' reports, kept for their counters (the agents'
            # diagnostic gauges, the event loops' wake lateness).
            mkdir -p "$OUT/runs"
            cp "$TMP/cli.json" "$OUT/runs/$p$TAG-$loss-client.json"
            cp "$TMP/srv.jsonl" "$OUT/runs/$p$TAG-$loss-server.jsonl"
            printf "%s\t%s\t%s\n" "$p$TAG" "$loss" "$(setup_time "$TMP/cli.json")" >> "$OUT/setup.tsv"
            printf "%s\t%s\t%s\n" "$p$TAG" "$loss" "$(energy_per_bit "$TMP/cli.json" "$TMP/srv.jsonl")" >> "$OUT/energy.tsv"
        done
        for cc in $KERNEL; do
            jn_x B iperf3 -s -1 -B "$JN_SERVER" > /dev/null 2>&1 &
            srv=$!
            sleep 0.3
            jn_x A iperf3 -c "$JN_SERVER" -t "$SECS" -C "$cc" -J > "$TMP/ip.json" 2>/dev/null || true
            wait "$srv" || true
            g=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print("%.2f" % (d["end"]["sum_received"]["bits_per_second"] / 1e6))' "$TMP/ip.json" 2>/dev/null || echo nan)
            row link "linux-$cc" "$loss" "$g"
        done
    done
    python3 scripts/plot_bench_runtime.py "$OUT/results.tsv" "$RATE_MBIT" "$OUT" || true
fi
