#!/usr/bin/env bash
# nackrate on the 10 Mbit/s namespace link at high loss, repeated (issue 18;
# not a test — figures for docs/PERFORMANCE.md § Real links at high loss).
# Runs scripts/bench-runtime.sh's link part ROUNDS times over $LOSSES, then
# once over $ONCE, recording the load (`uptime`) before and after each round,
# and prints one row per run: loss, goodput, its fraction of the target
# 0.9 × (1 − p) × 10 Mbit/s, energy per delivered bit (both ends, µJ), and
# the sender's late-wake counters (its event loop's wakes over 10 ms late,
# the pacer's, the allowance, sending time lost, time held by the cap).
# Needs root; build first: cargo build --release -p joulenet
# Env: JOULENET_BIN (target/release/joulenet), ROUNDS (8), LOSSES ("30 40"),
#      ONCE ("5 10 20"), PROTO (nackrate), SECS (10), OUT (target/bench-highloss)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-8}
LOSSES=${LOSSES:-30 40}
ONCE=${ONCE:-5 10 20}
PROTO=${PROTO:-nackrate}
OUT=${OUT:-target/bench-highloss}
mkdir -p "$OUT"
OUT=$(realpath "$OUT")
: > "$OUT/rows.tsv"

round() { # name losses
    local load0 load1
    load0=$(cut -d' ' -f1 /proc/loadavg)
    JN_NS=${JN_NS:-jnhl$$} PARTS=link LOSSES="$2" PROTOS="$PROTO" KERNEL=" " \
        OUT="$OUT/$1" scripts/bench-runtime.sh > "$OUT/$1.log" 2>&1 || true
    load1=$(cut -d' ' -f1 /proc/loadavg)
    python3 - "$OUT/$1" "$1" "$load0" "$load1" "$PROTO" >> "$OUT/rows.tsv" <<'EOF'
import json, sys
d, name, l0, l1, proto = sys.argv[1:]
goodput = {}
for line in open(f"{d}/results.tsv"):
    part, p, loss, g = line.split("\t")
    if p == proto:
        goodput[loss] = float(g)
energy = {l.split("\t")[1]: l.split("\t")[2].strip() for l in open(f"{d}/energy.tsv") if l.startswith(proto + "\t")}
for loss, g in goodput.items():
    target = 0.9 * (1 - int(loss) / 100) * 10
    try:
        end = json.load(open(f"{d}/runs/{proto}-{loss}-client.json"))["end"]
    except (OSError, ValueError, KeyError):
        end = {}
    gg = end.get("gauges", {})
    wake = end.get("wake_late") or {}
    over10 = sum((wake.get("histogram") or [0] * 8)[6:])
    print("\t".join(str(x) for x in [
        name, loss, f"{g:.2f}", f"{g / target:.3f}", energy.get(loss, "nan"),
        over10, int(gg.get("pace_late_10ms", -1)), f"{gg.get('late_wake_ms', float('nan')):.1f}",
        f"{gg.get('pace_lost_ms', float('nan')):.0f}", f"{gg.get('capped_ms', float('nan')):.0f}",
        int(gg.get("timeouts", -1)), f"{l0}->{l1}",
    ]))
EOF
    tail -n "$(echo "$2" | wc -w)" "$OUT/rows.tsv"
}

echo "# $(date -u +%FT%TZ) $(nproc) cores; round, loss %, Mbit/s, of target, µJ/bit, loop wakes >10 ms late, pacer wakes >10 ms late, allowance ms, pace lost ms, capped ms, timeouts, load"
for i in $(seq 1 "$ROUNDS"); do
    round "r$i" "$LOSSES"
done
[ -n "${ONCE// }" ] && round once "$ONCE"
python3 - "$OUT/rows.tsv" <<'EOF'
import sys, collections
by = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split("\t")
    by[int(f[1])].append((float(f[2]), float(f[3]), float(f[4])))
for loss in sorted(by):
    rs = by[loss]
    met = sum(1 for r in rs if r[1] >= 1.0)
    g = sorted(r[0] for r in rs)
    e = [r[2] for r in rs if r[2] == r[2]]  # runs whose two reports both came
    print(f"loss {loss}%: met {met} of {len(rs)}; goodput {g[0]:.2f}-{g[-1]:.2f} Mbit/s, "
          f"mean {sum(g) / len(g):.2f}; energy {sum(e) / max(len(e), 1):.3f} µJ/bit "
          f"(mean of {len(e)} runs)")
EOF
