#!/usr/bin/env bash
# Sim vs real: the same scenario (10 Mbit/s, Bernoulli loss on the link in
# both directions, a bulk transfer, the runtime's protocol settings) in the
# simulator (scenarios/runtime/sim-vs-real.toml, REPS seeds) and over
# namespaced veth links (scripts/netns-lib.sh: tbf 10mbit, nftables numgen
# loss after the limiter, both directions; REPS runs). Prints, per protocol
# and loss level, the mean goodput and the spread (min-max) of each, and the
# gap of the means; writes the rows to $OUT/sim-vs-real.tsv.
# Needs root; build first: cargo build --release -p joulenet
# Env: JOULENET_BIN, LOSSES (default "0 5 10 20"), REPS (3), PROTOS (every
#      reliable protocol), SIZES (bytes per loss level, default
#      "0:2MB 5:1MB 10:500KB 20:200KB": the Reno family crawls at 20%),
#      OUT (target/sim-vs-real)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$(realpath "${JOULENET_BIN:-target/release/joulenet}")
LOSSES=${LOSSES:-0 5 10 20}
REPS=${REPS:-3}
PROTOS=${PROTOS:-tahoe reno newreno sack cubic wwp e2tcp rcp rcp-stp}
SIZES=${SIZES:-0:2MB 5:1MB 10:500KB 20:200KB}
OUT=${OUT:-target/sim-vs-real}
mkdir -p "$OUT"
OUT=$(realpath "$OUT")
. scripts/netns-lib.sh
jn_need || exit $?
TMP=$(mktemp -d)
trap 'jn_teardown; rm -rf "$TMP"' EXIT
jn_two_host 10mbit
: > "$OUT/sim-vs-real.tsv"

size_for() { # loss -> size
    local kv
    for kv in $SIZES; do
        if [ "${kv%%:*}" = "$1" ]; then echo "${kv#*:}"; return; fi
    done
    echo 1MB
}

printf "%-8s %5s %7s %22s %22s %8s\n" protocol loss% size "sim Mbit/s (min-max)" "real Mbit/s (min-max)" "gap %"
for loss in $LOSSES; do
    size=$(size_for "$loss")
    rate=$(awk -v p="$loss" 'BEGIN { print p / 100 }')
    # shellcheck disable=SC2086
    jn_set_loss $JN_LOSSY "$loss"
    for p in $PROTOS; do
        "$BIN" run scenarios/runtime/sim-vs-real.toml --set "link.loss.rate=$rate" \
            --set "link.loss_reverse.rate=$rate" --set "flow.protocol=\"$p\"" \
            --set "flow.bytes=\"$size\"" --seeds "1..$((REPS + 1))" -q -j 1 --json > "$TMP/sim.json"
        : > "$TMP/real.txt"
        for _ in $(seq "$REPS"); do
            jn_x B "$BIN" serve --bind "$JN_SERVER:5201" -1 -J -i 0 > "$TMP/srv.json" &
            srv=$!
            sleep 0.2
            jn_x A "$BIN" client "$JN_TARGET" --proto "$p" -n "$size" -i 0 -J > /dev/null 2>&1 || true
            wait "$srv" || true
            python3 -c '
import json, sys
g = json.load(open(sys.argv[1]))["end"].get("goodput_bps")
print(g if g else "nan")' "$TMP/srv.json" >> "$TMP/real.txt" 2>/dev/null || echo nan >> "$TMP/real.txt"
        done
        python3 - "$TMP/sim.json" "$TMP/real.txt" "$p" "$loss" "$size" "$OUT/sim-vs-real.tsv" <<'PY'
import json, math, sys
sim = [f["goodput_bps"] / 1e6 for r in json.load(open(sys.argv[1]))["runs"] for f in r["flows"]
       if f.get("goodput_bps")]
real = [float(x) / 1e6 for x in open(sys.argv[2]).read().split() if x != "nan"]
mean = lambda v: sum(v) / len(v) if v else math.nan
ms, mr = mean(sim), mean(real)
gap = (mr - ms) / ms * 100 if ms else math.nan
span = lambda v: "%.2f-%.2f" % (min(v), max(v)) if v else "-"
p, loss, size = sys.argv[3], sys.argv[4], sys.argv[5]
print("%-8s %5s %7s %8.2f (%11s) %8.2f (%11s) %+8.1f" % (p, loss, size, ms, span(sim), mr, span(real), gap))
with open(sys.argv[6], "a") as f:
    f.write("\t".join([p, loss, size, "%.3f" % ms, span(sim), "%.3f" % mr, span(real), "%.1f" % gap,
                       str(len(sim)), str(len(real))]) + "\n")
PY
    done
done
