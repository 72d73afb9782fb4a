#!/usr/bin/env bash
# File transfers over real (namespaced) links: every reliable joulenet
# protocol (the TCP family, WWP, E2TCP, RCP, RCP-STP) at 0%, 5% and 20%
# random loss on link L1 (both directions, after the rate limiter; see
# scripts/netns-lib.sh), over a two-host topology and a three-host one with
# `joulenet emulate` relaying in the middle; each received file's SHA-256 is
# checked against the original.
#
# Usage: scripts/netns-test.sh            (root; skips with exit 77 otherwise)
# Env:   JOULENET_BIN  binary (default target/debug/joulenet)
#        SIZE          bytes per file (default 1000000)
#        RATE          link rate (default 50mbit)
#        LOSSES        loss percentages (default "0 5 20")
#        PROTOS        protocols (default: all reliable ones)
#        TOPOLOGIES    (default "two three")
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/netns-lib.sh
jn_need || exit $?

BIN=$(realpath "${JOULENET_BIN:-target/debug/joulenet}")
SIZE=${SIZE:-1000000}
RATE=${RATE:-50mbit}
LOSSES=${LOSSES:-0 5 20}
PROTOS=${PROTOS:-tahoe reno newreno sack cubic wwp e2tcp rcp rcp-stp}
TOPOLOGIES=${TOPOLOGIES:-two three}
[ -x "$BIN" ] || { echo "no binary at $BIN (cargo build -p joulenet)"; exit 1; }

WORK=$(mktemp -d)
trap 'jn_teardown; rm -rf "$WORK"' EXIT
head -c "$SIZE" /dev/urandom > "$WORK/payload.bin"
WANT=$(sha256sum < "$WORK/payload.bin" | cut -d' ' -f1)

failures=0
for topo in $TOPOLOGIES; do
    jn_teardown
    "jn_${topo}_host" "$RATE"
    relay_pid=
    if [ "$topo" = three ]; then
        jn_x R "$BIN" emulate --listen 10.201.2.1:6000 --forward "$JN_SERVER:5201" --loss none \
            2>/dev/null >/dev/null &
        relay_pid=$!
    fi
    for loss in $LOSSES; do
        # shellcheck disable=SC2086
        jn_set_loss $JN_LOSSY "$loss"
        # Both ends outwait TCP's RFC 6298 back-off: at 20% per link over
        # two links four losses in a row push the RTO past the default 60 s
        # idle timeout, and an end that gives up fails a transfer its peer
        # is still retrying (seen twice in clean-clone runs).
        idle=240s
        for proto in $PROTOS; do
            out="$WORK/out-$topo-$loss-$proto"
            jn_x B timeout 300 "$BIN" recv --bind "$JN_SERVER:5201" --out "$out" -1 -i 0 \
                --idle-timeout "$idle" --proto "$proto" > "$WORK/recv.log" 2>&1 &
            srv=$!
            sleep 0.2
            t0=$(date +%s.%N)
            send_ok=1
            jn_x A timeout 300 "$BIN" send "$WORK/payload.bin" "$JN_TARGET" --proto "$proto" -i 0 \
                --idle-timeout "$idle" > "$WORK/send.log" 2>&1 || send_ok=0
            recv_ok=1
            wait "$srv" || recv_ok=0
            t1=$(date +%s.%N)
            got=$(sha256sum < "$out/payload.bin" 2>/dev/null | cut -d' ' -f1 || true)
            secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
            if [ "$send_ok" = 1 ] && [ "$recv_ok" = 1 ] && [ "$got" = "$WANT" ]; then
                echo "ok   ${topo}-host loss ${loss}% $proto ${secs}s"
            else
                echo "FAIL ${topo}-host loss ${loss}% $proto ${secs}s (send $send_ok recv $recv_ok hash ${got:-none})"
                sed 's/^/    send: /' "$WORK/send.log" | tail -5
                sed 's/^/    recv: /' "$WORK/recv.log" | tail -5
                failures=$((failures + 1))
            fi
        done
    done
    if [ -n "$relay_pid" ]; then kill "$relay_pid" 2>/dev/null || true; wait "$relay_pid" 2>/dev/null || true; fi
done
if [ "$failures" -gt 0 ]; then
    echo "$failures transfer(s) failed"
    exit 1
fi
echo "all transfers verified"
