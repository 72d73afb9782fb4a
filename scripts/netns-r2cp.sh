#!/usr/bin/env bash
# R²CP on real hosts (issue 20): a multi-homed receiver M with two
# interfaces, each its own path (its own link namespace, rate and loss)
# to one server S1 (point-to-point) or to two servers S1 and S2:
#
#   M ─m1─[LA: RATE_A, LOSS_A]─ S1            (path A, 10.203.1.0/24)
#   M ─m2─[LB: RATE_B, LOSS_B]─ S1 or S2      (path B, 10.203.2.0/24)
#
# Each link namespace is an L2 bridge with a tbf on both egresses, so each
# path is one subnet and the kernel's routes come back by themselves when
# an interface comes back up. Loss is an nftables `numgen random` rule at
# both hosts' ends of each path, after the rate limiter (as netns-lib.sh's
# jn_set_loss, which keeps one rule per host; M needs one per interface).
# No propagation delay: this kernel has no netem (DESIGN.md), so a path's
# round trip is its queueing in tbf (up to 100 ms) and the hosts'.
#
# Cases (each a file pulled by `joulenet recv --proto r2cp`, served by
# `joulenet offer`, its SHA-256 checked by the receiver and again here):
#   one-path A, one-path B     each path alone: its goodput
#   aggregation                both paths to S1: goodput / (A + B) >= AGG_MIN
#   handoff                    both paths to S1; m1 `ip link set down` at
#                              DOWN_AT s and up again 1.5 s later: verified,
#                              path A taken down (no route) and back
#   two-server aggregation     path A to S1, path B to S2, both used
#   server migration           --handoff, m2 down at the start; m2 up at
#                              DOWN_AT s (the new pipe goes to S2 and takes
#                              over), m1 down 1 s later: verified, both
#                              servers sent data
#
# Usage: scripts/netns-r2cp.sh   (root; skips with exit 77 otherwise)
# Env:   JOULENET_BIN  binary (default target/debug/joulenet)
#        RATE_A RATE_B  (10mbit, 5mbit)   LOSS_A LOSS_B  (1, 0.5 percent)
#        SECONDS_PER_RUN  about how long each path-alone run lasts (5)
#        AGG_MIN  required aggregation ratio (0.90)   DOWN_AT (1.5)
#        CASES  (default "single aggregation handoff two-server migration")
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/netns-lib.sh
jn_need || exit $?

BIN=$(realpath "${JOULENET_BIN:-target/debug/joulenet}")
RATE_A=${RATE_A:-10mbit}
RATE_B=${RATE_B:-5mbit}
LOSS_A=${LOSS_A:-1}
LOSS_B=${LOSS_B:-0.5}
SECS=${SECONDS_PER_RUN:-5}
AGG_MIN=${AGG_MIN:-0.90}
DOWN_AT=${DOWN_AT:-1.5}
CASES=${CASES:-single aggregation handoff two-server migration}
[ -x "$BIN" ] || { echo "no binary at $BIN (cargo build -p joulenet)"; exit 1; }

WORK=$(mktemp -d)
trap 'jn_teardown; rm -rf "$WORK"' EXIT

mbit() { # tc rate (10mbit) -> Mbit/s
    awk -v r="$1" 'BEGIN { n = r + 0; if (r ~ /kbit/) n /= 1000; printf "%g", n }'
}
# A file that takes about SECS on a path of rate R Mbit/s (bytes).
size_for() { awk -v r="$1" -v s="$SECS" 'BEGIN { printf "%d", r * 1e6 / 8 * s * 0.9 }'; }

# mh_bridge_link L NS1 DEV1 ADDR1 NS2 DEV2 ADDR2 RATE: NS1 ─[L]─ NS2 on one
# subnet, L bridging with a tbf on both egresses.
mh_bridge_link() {
    local l=$1 rate=$8
    jn_ns "$l"
    ip link add "$JN_NS$3" type veth peer name "$JN_NS${l}a"
    ip link add "$JN_NS$6" type veth peer name "$JN_NS${l}b"
    ip link set "$JN_NS$3" netns "$JN_NS$2"
    ip link set "$JN_NS$6" netns "$JN_NS$5"
    ip link set "$JN_NS${l}a" netns "$JN_NS$l"
    ip link set "$JN_NS${l}b" netns "$JN_NS$l"
    jn_x "$l" ip link add br0 type bridge
    for d in "${l}a" "${l}b"; do
        jn_x "$l" ip link set "$JN_NS$d" master br0
        jn_x "$l" ip link set "$JN_NS$d" up
        jn_noofload "$l" "$JN_NS$d"
        jn_x "$l" tc qdisc replace dev "$JN_NS$d" root tbf rate "$rate" burst 16kb latency 100ms
    done
    jn_x "$l" ip link set br0 up
    jn_x "$2" ip addr add "$4/24" dev "$JN_NS$3"
    jn_x "$5" ip addr add "$7/24" dev "$JN_NS$6"
    jn_x "$2" ip link set "$JN_NS$3" up
    jn_x "$5" ip link set "$JN_NS$6" up
    jn_noofload "$2" "$JN_NS$3"
    jn_noofload "$5" "$JN_NS$6"
}

mh_loss() { # NS DEV PERCENT: drop PERCENT% of what arrives on DEV
    local n
    n=$(awk -v p="$3" 'BEGIN { printf "%d", p * 100 }')
    [ "$n" -gt 0 ] || return 0
    jn_x "$1" nft add rule inet jnloss lossy iifname "$JN_NS$2" numgen random mod 10000 '<' "$n" drop
}

# mh_topology one|two: path A to S1, path B to S1 (one) or S2 (two).
mh_topology() {
    jn_teardown
    jn_ns M; jn_ns S1
    local far=S1
    if [ "$1" = two ]; then jn_ns S2; far=S2; fi
    mh_bridge_link LA M m1 10.203.1.1 S1 s1a 10.203.1.2 "$RATE_A"
    mh_bridge_link LB M m2 10.203.2.1 "$far" sb 10.203.2.2 "$RATE_B"
    for ns in M S1 $far; do jn_lossy_end "$ns" 2>/dev/null || true; done
    mh_loss M m1 "$LOSS_A"
    mh_loss S1 s1a "$LOSS_A"
    mh_loss M m2 "$LOSS_B"
    mh_loss "$far" sb "$LOSS_B"
    FAR_B=$far
}

OFFER_PIDS=()
mh_offer() { # NS NAME BIND...: `joulenet offer` of the file on NS
    local ns=$1 name=$2
    shift 2
    local binds=()
    for b in "$@"; do binds+=(--bind "$b"); done
    ip netns exec "$JN_NS$ns" "$BIN" offer "$WORK/file.bin" "${binds[@]}" -J \
        > "$WORK/offer-$name.json" 2> "$WORK/offer-$name.err" &
    OFFER_PIDS+=($!)
}
mh_offers_stop() {
    local p
    for p in "${OFFER_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    for p in "${OFFER_PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
    OFFER_PIDS=()
}

failures=0
declare -A GOODPUT
mh_file() { # SIZE: the file the next offers serve
    head -c "$1" /dev/urandom > "$WORK/file.bin"
    WANT=$(sha256sum < "$WORK/file.bin" | cut -d' ' -f1)
}
# mh_recv NAME ARGS...: pull the file; sets REPORT to the receiver's JSON
# report, RECV_OK and GOT (the received file's SHA-256).
mh_recv() {
    local name=$1
    shift
    rm -rf "$WORK/out-$name"
    RECV_OK=1
    jn_x M timeout 120 "$BIN" recv --proto r2cp --out "$WORK/out-$name" --idle-timeout 30s -J "$@" \
        > "$WORK/recv-$name.json" 2> "$WORK/recv-$name.err" || RECV_OK=0
    REPORT=$(cat "$WORK/recv-$name.json")
    GOT=$(sha256sum < "$WORK/out-$name/file.bin" 2>/dev/null | cut -d' ' -f1 || true)
}
field() { # JSON-KEY: a number or string from REPORT (top level)
    python3 -c 'import json,sys; v=json.loads(sys.argv[1])[sys.argv[2]]; print(v)' "$REPORT" "$1"
}
path_field() { # INDEX KEY
    python3 -c 'import json,sys; print(json.loads(sys.argv[1])["paths"][int(sys.argv[2])][sys.argv[3]])' "$REPORT" "$1" "$2"
}
offer_sent() { # NAME: data bytes the offer's pipes sent
    python3 -c 'import json,sys; print(sum(p["data_bytes_sent"] for p in json.load(open(sys.argv[1]))["pipes"]))' "$WORK/offer-$1.json"
}
verdict() { # NAME EXTRA-CONDITION(0/1) DETAIL
    local name=$1 extra=$2 detail=$3
    [ -z "${VERBOSE:-}" ] || echo "    report: $REPORT"
    if [ "$RECV_OK" = 1 ] && [ "$GOT" = "$WANT" ] && [ "$extra" = 1 ]; then
        echo "ok   $name $detail"
    else
        echo "FAIL $name $detail (recv $RECV_OK, hash ${GOT:-none})"
        tail -3 "$WORK/recv-$name.err" | sed 's/^/    recv: /'
        failures=$((failures + 1))
    fi
}
mbps() { awk -v b="$1" 'BEGIN { printf "%.2f", b / 1e6 }'; }

RA=$(mbit "$RATE_A"); RB=$(mbit "$RATE_B")
A=10.203.1.1:0; B=10.203.2.1:0
SA=10.203.1.2:5201; SB=10.203.2.2:5201

for c in $CASES; do
case $c in
single)
    mh_topology one
    for p in A B; do
        if [ $p = A ]; then r=$RA; args=(--bind $A --server $SA); else r=$RB; args=(--bind $B --server $SB); fi
        mh_file "$(size_for "$r")"
        mh_offer S1 "single-$p" 10.203.1.2:5201 10.203.2.2:5201
        sleep 0.3
        mh_recv "one-path-$p" "${args[@]}"
        mh_offers_stop
        GOODPUT[$p]=$(field goodput_bps)
        verdict "one-path-$p" 1 "$(mbps "${GOODPUT[$p]}") Mbit/s (link $r Mbit/s, loss $([ $p = A ] && echo "$LOSS_A" || echo "$LOSS_B")%)"
    done
    ;;
aggregation)
    mh_topology one
    mh_file "$(size_for "$(awk -v a="$RA" -v b="$RB" 'BEGIN { print a + b }')")"
    mh_offer S1 agg 10.203.1.2:5201 10.203.2.2:5201
    sleep 0.3
    mh_recv aggregation --bind $A --bind $B --server $SA --server $SB
    g=$(field goodput_bps)
    sum=$(awk -v a="${GOODPUT[A]:-0}" -v b="${GOODPUT[B]:-0}" 'BEGIN { print a + b }')
    ratio=$(awk -v g="$g" -v s="$sum" 'BEGIN { if (s > 0) printf "%.3f", g / s; else print "nan" }')
    okr=$(awk -v r="$ratio" -v m="$AGG_MIN" 'BEGIN { print (r != "nan" && r + 0 >= m) ? 1 : 0 }')
    both=$(awk -v a="$(path_field 0 bytes_received)" -v b="$(path_field 1 bytes_received)" 'BEGIN { print (a > 0 && b > 0) ? 1 : 0 }')
    [ "$both" = 1 ] || okr=0
    verdict aggregation "$okr" "$(mbps "$g") Mbit/s = $ratio of the one-path sum $(mbps "$sum") (path bytes $(path_field 0 bytes_received) + $(path_field 1 bytes_received))"
    mh_offers_stop
    ;;
handoff)
    mh_topology one
    mh_file "$(size_for "$(awk -v a="$RA" -v b="$RB" 'BEGIN { print (a + b) * 1.3 }')")"
    mh_offer S1 handoff 10.203.1.2:5201 10.203.2.2:5201
    sleep 0.3
    ( sleep "$DOWN_AT"; jn_x M ip link set "${JN_NS}m1" down; sleep 1.5; jn_x M ip link set "${JN_NS}m1" up ) &
    flap=$!
    mh_recv handoff --bind $A --bind $B --server $SA --server $SB
    wait $flap || true
    downs=$(path_field 0 downs); why=$(path_field 0 last_down); ups=$(path_field 0 ups)
    okh=$([ "$downs" -ge 1 ] && [ "$ups" -ge 2 ] && echo 1 || echo 0)
    verdict handoff "$okh" "$(mbps "$(field goodput_bps)") Mbit/s; path A down $downs time(s) ($why), up $ups; pipes opened $(field pipes_opened)"
    mh_offers_stop
    ;;
two-server)
    mh_topology two
    mh_file "$(size_for "$(awk -v a="$RA" -v b="$RB" 'BEGIN { print a + b }')")"
    mh_offer S1 two-s1 10.203.1.2:5201
    mh_offer S2 two-s2 10.203.2.2:5201
    sleep 0.3
    mh_recv two-server --bind $A --bind $B --server $SA --server $SB
    mh_offers_stop
    s1=$(offer_sent two-s1); s2=$(offer_sent two-s2)
    g=$(field goodput_bps)
    sum=$(awk -v a="${GOODPUT[A]:-0}" -v b="${GOODPUT[B]:-0}" 'BEGIN { print a + b }')
    ratio=$(awk -v g="$g" -v s="$sum" 'BEGIN { if (s > 0) printf "%.3f", g / s; else print "nan" }')
    verdict two-server "$([ "$s1" -gt 0 ] && [ "$s2" -gt 0 ] && echo 1 || echo 0)" \
        "$(mbps "$g") Mbit/s = $ratio of the one-path sum; S1 sent $s1, S2 sent $s2 data bytes"
    ;;
migration)
    mh_topology two
    mh_file "$(size_for "$(awk -v b="$RB" -v a="$RA" 'BEGIN { print b * 1.2 + a * 0.3 }')")"
    mh_offer S1 mig-s1 10.203.1.2:5201
    mh_offer S2 mig-s2 10.203.2.2:5201
    jn_x M ip link set "${JN_NS}m2" down
    sleep 0.3
    ( sleep "$DOWN_AT"; jn_x M ip link set "${JN_NS}m2" up; sleep 1; jn_x M ip link set "${JN_NS}m1" down ) &
    flap=$!
    mh_recv migration --handoff --bind $A --bind $B --server $SA --server $SB
    wait $flap || true
    mh_offers_stop
    s1=$(offer_sent mig-s1); s2=$(offer_sent mig-s2)
    verdict migration "$([ "$s1" -gt 0 ] && [ "$s2" -gt 0 ] && echo 1 || echo 0)" \
        "$(mbps "$(field goodput_bps)") Mbit/s; S1 sent $s1, S2 sent $s2 data bytes; pipes opened $(field pipes_opened)"
    ;;
*) echo "unknown case $c"; exit 2 ;;
esac
done
if [ "$failures" -gt 0 ]; then
    echo "$failures R²CP case(s) failed"
    exit 1
fi
echo "all R²CP cases verified"
