#!/usr/bin/env bash
# R²CP on real hosts beside its simulator twin (issue 20): runs
# scripts/netns-r2cp.sh RUNS times (root) and the twins in
# scenarios/runtime/r2cp-twin*.toml for seeds 1..RUNS, and prints each
# case's goodput (Mbit/s: min–max and mean) on both sides and the gap of the
# means. Real goodput is timed from the first pipe's establishment to the
# end of the stream, the simulator's from the flow's start (its handshake,
# about 1 ms here, included).
#
# Usage: sudo scripts/bench-r2cp.sh      Env: RUNS (3), JOULENET_BIN
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-3}
BIN=$(realpath "${JOULENET_BIN:-target/debug/joulenet}")
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# case -> Mbit/s, one line per run
for ((i = 1; i <= RUNS; i++)); do
    JOULENET_BIN=$BIN bash scripts/netns-r2cp.sh > "$WORK/real$i.txt" 2>&1 || {
        echo "netns-r2cp.sh failed in run $i:"; cat "$WORK/real$i.txt"; exit 1; }
    awk '/^ok   / { print $2, $3 }' "$WORK/real$i.txt" >> "$WORK/real.tsv"
done

sim() { # CASE SCENARIO [--set ...]
    local case=$1
    shift
    "$BIN" run "$@" --seeds "1..=$RUNS" --csv 2>/dev/null |
        awk -F, -v c="$case" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "goodput_bps") g = i; next }
                              g { printf "%s %.2f\n", c, $g / 1e6 }' >> "$WORK/sim.tsv"
}
T=scenarios/runtime
sim one-path-A $T/r2cp-twin-one-path.toml
sim one-path-B $T/r2cp-twin-one-path.toml --set link.rate=5Mbps --set link.queue=43 \
    --set link.loss.rate=0.005 --set link.loss_reverse.rate=0.005 --set flow.bytes=2812500
sim aggregation $T/r2cp-twin.toml
sim handoff $T/r2cp-twin.toml --set 'topology.interface0.down=["1.5s..3s"]' --set flow.bytes=10968750
sim two-server $T/r2cp-twin-two-servers.toml
sim migration $T/r2cp-twin-two-servers.toml --set flow.r2cp.aggregate=false \
    --set 'topology.interface1.down=["0s..1.5s"]' --set 'topology.interface0.down=["2.5s..1000s"]' \
    --set flow.bytes=5062500

stats() { # FILE CASE -> "min-max mean"
    awk -v c="$2" '$1 == c { n++; s += $2; if (n == 1 || $2 < lo) lo = $2; if ($2 > hi) hi = $2 }
                   END { if (n) printf "%.2f-%.2f %.2f", lo, hi, s / n; else print "- 0" }' "$1"
}
printf "%-12s %-18s %-18s %s\n" case "real Mbit/s" "sim Mbit/s" "real/sim"
for c in one-path-A one-path-B aggregation handoff two-server migration; do
    read -r rr rm <<< "$(stats "$WORK/real.tsv" "$c")"
    read -r sr sm <<< "$(stats "$WORK/sim.tsv" "$c")"
    printf "%-12s %-18s %-18s %s\n" "$c" "$rr ($rm)" "$sr ($sm)" \
        "$(awk -v a="$rm" -v b="$sm" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "-" }')"
done
grep -h "^ok   aggregation" "$WORK"/real*.txt | sed 's/^/real: /'
