#!/usr/bin/env bash
# Issue 18's whole comparison in one command (a measurement, not a test;
# figures go into docs/PERFORMANCE.md, "Issue 18's targets at a glance"):
#
# 1. ns-3 3.44 side by side (validation/ns3/speed.sh: interleaved pairs on
#    the 50 MB lossy wired link and the 4-hop 802.11b chain; ns-3 is built
#    from its PyPI wheel by validation/ns3/build.sh on first use);
# 2. instructions per simulated data packet on the wired bench (callgrind,
#    if valgrind is installed);
# 3. the scale benchmark at 1 and 1,000 flows (per-frame cost, peak RSS);
# 4. with root: the real 10 Mbit/s namespace link at 30% and 40% loss,
#    nackrate beside Linux TCP (scripts/bench-runtime.sh via
#    scripts/bench-highloss.sh).
#
# Usage: scripts/compare-speed.sh [PAIRS]   (PAIRS for ns-3, default 9)
# Env:   JOULENET_BIN (default target/release/joulenet; built if missing),
#        PARTS (default "ns3 callgrind scale links")
set -euo pipefail
cd "$(dirname "$0")/.."
PAIRS=${1:-9}
BIN=${JOULENET_BIN:-target/release/joulenet}
PARTS=${PARTS:-ns3 callgrind scale links}
if [ ! -x "$BIN" ]; then
    cargo build --release -p joulenet
fi
BIN=$(realpath "$BIN")
echo "# $(date -u +%FT%TZ) $(git rev-parse --short HEAD 2>/dev/null || echo '?') load: $(cut -d' ' -f1-3 /proc/loadavg)"
for part in $PARTS; do
    case $part in
    ns3)
        echo "== ns-3 side by side ($PAIRS interleaved pairs)"
        validation/ns3/speed.sh "$PAIRS" "$BIN"
        ;;
    callgrind)
        echo "== instructions per simulated data packet (wired bench, callgrind)"
        if command -v valgrind >/dev/null; then
            out=$(mktemp -d)
            valgrind --tool=callgrind --callgrind-out-file="$out/cg" \
                "$BIN" bench --medium wired --bytes 50MB --repeat 1 2>"$out/err" | tee "$out/bench"
            instructions=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$out/err")
            packets=$(sed -n 's/.* \([0-9]*\) data packets.*/\1/p' "$out/bench" | head -1)
            echo "instructions per simulated data packet: $((instructions / packets)) ($instructions / $packets, whole process)"
            rm -rf "$out"
        else
            echo "valgrind not installed: skipped"
        fi
        ;;
    scale)
        # 600 s, the benchmark's default: shorter runs flatter one flow
        # (60 s read 5.45 against 600 s's 6.67 µs per frame).
        echo "== scale benchmark: 1 and 1,000 flows on the 1,000-node mesh (600 s simulated)"
        "$BIN" bench --case mesh --nodes 1000 --flows 1,1000
        ;;
    links)
        echo "== real links at 30% and 40% loss (needs root)"
        if [ "$(id -u)" = 0 ]; then
            JOULENET_BIN="$BIN" ROUNDS=2 scripts/bench-highloss.sh
        else
            echo "not root: skipped"
        fi
        ;;
    *)
        echo "unknown part '$part' (expected ns3, callgrind, scale, links)" >&2
        exit 2
        ;;
    esac
done
