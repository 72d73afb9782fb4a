#!/usr/bin/env bash
# Sim vs real: the same scenario (10 Mbit/s, Bernoulli loss on the data path,
# 5 MB bulk transfer, the runtime's TCP settings) in the simulator
# (scenarios/runtime/sim-vs-real.toml) and over namespaced veth links
# (scripts/netns-lib.sh, tbf 10mbit, nftables numgen loss). Prints
# protocol, loss %, simulated and real goodput (Mbit/s) and their gap.
# Needs root; build first: cargo build --release -p joulenet
# Env: JOULENET_BIN, LOSSES (default "0 1 5"), SIZE (default 5MB)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$(realpath "${JOULENET_BIN:-target/release/joulenet}")
LOSSES=${LOSSES:-0 1 5}
SIZE=${SIZE:-5MB}
. scripts/netns-lib.sh
jn_need || exit $?
TMP=$(mktemp -d)
trap 'jn_teardown; rm -rf "$TMP"' EXIT
jn_two_host 10mbit
printf "%-8s %5s %10s %10s %8s\n" protocol loss% sim_Mbps real_Mbps gap%
for loss in $LOSSES; do
    rate=$(awk -v p="$loss" 'BEGIN { print p / 100 }')
    "$BIN" run scenarios/runtime/sim-vs-real.toml --set "link.loss.rate=$rate" \
        --set "flow.bytes=\"$SIZE\"" -q -j 1 --json > "$TMP/sim.json"
    # shellcheck disable=SC2086
    jn_set_loss $JN_LOSSY "$loss"
    for p in tahoe reno newreno sack cubic; do
        jn_x B "$BIN" serve --bind "$JN_SERVER:5201" -1 -J -i 0 > "$TMP/srv.json" &
        srv=$!
        sleep 0.2
        jn_x A "$BIN" client "$JN_TARGET" --proto "$p" -n "$SIZE" -i 0 -J > /dev/null 2>&1 || true
        wait "$srv" || true
        python3 - "$TMP/sim.json" "$TMP/srv.json" "$p" "$loss" <<'PY'
import json, sys
sim = json.load(open(sys.argv[1]))
g_sim = next(f["goodput_bps"] for r in sim["runs"] for f in r["flows"] if f["protocol"] == sys.argv[3])
g_real = json.load(open(sys.argv[2]))["end"].get("goodput_bps") or float("nan")
gap = (g_real - g_sim) / g_sim * 100 if g_sim else float("nan")
print("%-8s %5s %10.2f %10.2f %+8.1f" % (sys.argv[3], sys.argv[4], g_sim / 1e6, g_real / 1e6, gap))
PY
    done
done
