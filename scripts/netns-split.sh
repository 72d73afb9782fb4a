#!/usr/bin/env bash
# The E2TCP split proxy on `joulenet relay` (issue 20): a 3-host chain
#
#   H0 (wired sender) ─[L1: WIRED_RATE, no loss]─ H1 (base station) ─[L2: RATE, LOSS% both ways]─ H2 (mobile)
#
# H1 runs `joulenet relay`; with `--proto e2tcp-split` its relay agent is
# the simulator's split proxy: it terminates the sender's TCP (joulenet's
# TCP over UDP) and carries the bytes on over E2TCP through a bounded relay
# buffer (256 KiB) whose free space is the TCP receiver's window. The file
# is verified by the receiver (SHA-256 on disk) and again here, and the
# relay's report must show it consumed the sender's TCP (it terminated the
# connection) and sent E2TCP of its own. `e2tcp` end to end over the same
# chain is run beside it for comparison.
#
# Usage: scripts/netns-split.sh  (root; skips with exit 77 otherwise)
# Env:   JOULENET_BIN, SIZE (1000000), WIRED_RATE (50mbit), RATE (5mbit),
#        LOSS (5, percent), PROTOS ("e2tcp-split e2tcp")
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/netns-lib.sh
jn_need || exit $?

BIN=$(realpath "${JOULENET_BIN:-target/debug/joulenet}")
SIZE=${SIZE:-1000000}
WIRED_RATE=${WIRED_RATE:-50mbit}
RATE=${RATE:-5mbit}
LOSS=${LOSS:-5}
PROTOS=${PROTOS:-e2tcp-split e2tcp}
[ -x "$BIN" ] || { echo "no binary at $BIN (cargo build -p joulenet)"; exit 1; }

WORK=$(mktemp -d)
JN_RELAY_DIR=$WORK
trap 'jn_chain_relays_stop 2>/dev/null; jn_teardown; rm -rf "$WORK"' EXIT
head -c "$SIZE" /dev/urandom > "$WORK/payload.bin"
WANT=$(sha256sum < "$WORK/payload.bin" | cut -d' ' -f1)

jn_chain 3 "$WIRED_RATE"
jn_set_rate L2 l2a l2b "$RATE"
n=$(awk -v p="$LOSS" 'BEGIN { printf "%d", p * 100 }')
if [ "$n" -gt 0 ]; then
    jn_x H1 nft add rule inet jnloss lossy iifname "${JN_NS}h1r" numgen random mod 10000 '<' "$n" drop
    jn_x H2 nft add rule inet jnloss lossy iifname "${JN_NS}h2l" numgen random mod 10000 '<' "$n" drop
fi
server=$(jn_chain_left 2)
failures=0
for proto in $PROTOS; do
    out="$WORK/out-$proto"
    jn_chain_relays "$BIN"
    jn_x H2 timeout 120 "$BIN" recv --bind "$server:5201" --node 2 --out "$out" -1 -i 0 -J \
        --idle-timeout 30s > "$WORK/recv.json" 2> "$WORK/recv.err" &
    srv=$!
    sleep 0.3
    t0=$(date +%s.%N)
    send_ok=1
    jn_x H0 timeout 120 "$BIN" send "$WORK/payload.bin" "$(jn_chain_left 1):7000" --node 0 --to-node 2 \
        --proto "$proto" -i 0 -J --idle-timeout 30s > "$WORK/send.json" 2> "$WORK/send.err" || send_ok=0
    recv_ok=1
    wait "$srv" || recv_ok=0
    t1=$(date +%s.%N)
    jn_chain_relays_stop
    got=$(sha256sum < "$out/payload.bin" 2>/dev/null | cut -d' ' -f1 || true)
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
    # The receiver's goodput (from its connection's opening to the end of
    # the stream; the wall time above also holds recv -1's 2 s linger).
    rate=$(python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["end"]; s=e.get("summary", e); print("%.2f" % ((s.get("goodput_bps") or 0) / 1e6))' "$WORK/recv.json" 2>/dev/null || echo "?")
    relay=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r.get("consumed",0), r.get("originated",0), r.get("forwarded",0))' "$WORK/relay1.json" 2>/dev/null || echo "? ? ?")
    read -r consumed originated forwarded <<< "$relay"
    split_ok=1
    if [ "$proto" = e2tcp-split ]; then
        # The relay terminated the sender's TCP and sent E2TCP of its own.
        { [ "$consumed" -gt 0 ] && [ "$originated" -gt 0 ]; } 2>/dev/null || split_ok=0
    fi
    detail="${SIZE} B, goodput ${rate} Mbit/s (wall ${secs}s), relay consumed $consumed originated $originated forwarded $forwarded"
    if [ "$send_ok" = 1 ] && [ "$recv_ok" = 1 ] && [ "$got" = "$WANT" ] && [ "$split_ok" = 1 ]; then
        echo "ok   $proto wireless loss ${LOSS}% $detail"
    else
        echo "FAIL $proto wireless loss ${LOSS}% $detail (send $send_ok recv $recv_ok hash ${got:-none} split $split_ok)"
        tail -3 "$WORK/send.err" "$WORK/recv.err" "$WORK"/relay*.err 2>/dev/null | sed 's/^/    /'
        failures=$((failures + 1))
    fi
done
if [ "$failures" -gt 0 ]; then
    echo "$failures split transfer(s) failed"
    exit 1
fi
echo "all split transfers verified"
