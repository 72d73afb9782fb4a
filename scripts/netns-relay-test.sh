#!/usr/bin/env bash
# Files through chains of `joulenet relay` over real (namespaced) links:
# 3- and 5-host chains (scripts/netns-lib.sh, jn_chain), relays on every
# middle host, each link its own rate limiter and random loss (both ways).
#
# For each chain, protocol and loss level, a file goes from H0 to the last
# host and its SHA-256 is checked, and the relays' reports are checked:
#
# * hbh-tcp: every relay consumed datagrams and forwarded none of the
#   agents' packets (the connection is terminated at every hop), only issue
#   15's end-to-end datagrams (Query, Retry, Offer, the verdict's Close: a
#   few); the receiver hears only the last relay (hop limit 64), the sender
#   relay 1 (64) and the receiver's verdict, which crossed every relay;
# * e2tcp (end to end, forwarding relays) — the transit probe: every
#   datagram either end received arrived with hop limit 64 − relays (it was
#   seen and rewritten at every relay), no relay consumed anything, and at
#   0% loss every relay forwarded exactly the datagrams the ends sent (plus
#   the `Close`s they say at the end and issue 15's datagrams that no
#   connection counter counts: Query/Retry/Offer, verdicts, verdict asks).
#
# Usage: scripts/netns-relay-test.sh      (root; skips with exit 77 otherwise)
# Env:   JOULENET_BIN (default target/debug/joulenet), SIZE (default 300000),
#        RATE (default 50mbit), LOSSES (default "0 5"), CHAINS (default "3 5"),
#        PROTOS (default "hbh-tcp e2tcp")
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/netns-lib.sh
jn_need || exit $?

BIN=$(realpath "${JOULENET_BIN:-target/debug/joulenet}")
SIZE=${SIZE:-300000}
RATE=${RATE:-50mbit}
LOSSES=${LOSSES:-0 5}
CHAINS=${CHAINS:-3 5}
PROTOS=${PROTOS:-hbh-tcp e2tcp}
[ -x "$BIN" ] || { echo "no binary at $BIN (cargo build -p joulenet)"; exit 1; }

WORK=$(mktemp -d)
JN_RELAY_DIR=$WORK
trap 'jn_chain_relays_stop 2>/dev/null; jn_teardown; rm -rf "$WORK"' EXIT
head -c "$SIZE" /dev/urandom > "$WORK/payload.bin"
WANT=$(sha256sum < "$WORK/payload.bin" | cut -d' ' -f1)

# check PROTO RELAYS LOSS: the relays' and ends' reports, as described above.
check() {
    python3 - "$WORK" "$1" "$2" "$3" <<'PY'
import json, sys, glob
work, proto, relays, loss = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
def load(p):
    return json.load(open(p))
reps = [load(p) for p in sorted(glob.glob(work + "/relay*.json"))]
send, recv = load(work + "/send.json"), load(work + "/recv.json")
def summary(doc):
    return doc["end"]["summary"] if "summary" in doc.get("end", {}) else doc["end"]
errors = []
if len(reps) != relays:
    errors.append(f"{len(reps)} relay reports, {relays} relays")
# Issue 15's datagrams of one transfer outside the connections' counters.
INTEGRITY_EXTRA = 16
ends = {}
for name, doc in (("sender", send), ("receiver", recv)):
    s = summary(doc)
    route = s.get("route")
    if route is None:
        errors.append(f"{name}: no route in its summary")
        continue
    ends[name] = s
    hl = (route["hop_limit_min"], route["hop_limit_max"])
    want = 64 if proto == "hbh-tcp" else 64 - relays
    # Through terminating relays the receiver's verdict alone crosses them all.
    want_min = 64 - relays if (proto == "hbh-tcp" and name == "sender") else want
    if hl != (want_min, want):
        errors.append(f"{name}: hop limits {hl}, want {(want_min, want)}")
for r in reps:
    if proto == "hbh-tcp":
        if not (r["consumed"] > 0 and 0 < r["forwarded"] <= INTEGRITY_EXTRA):
            errors.append(f"relay {r['node']}: consumed {r['consumed']} forwarded {r['forwarded']}")
    else:
        if r["consumed"] != 0 or r["forwarded"] == 0:
            errors.append(f"relay {r['node']}: consumed {r['consumed']} forwarded {r['forwarded']}")
        if loss == 0 and len(ends) == 2:
            sent = ends["sender"]["datagrams_sent"] + ends["receiver"]["datagrams_sent"]
            if not sent <= r["forwarded"] <= sent + 4 + INTEGRITY_EXTRA:
                errors.append(f"relay {r['node']}: forwarded {r['forwarded']} of {sent} datagrams")
    if r["malformed"] or r["hop_limit_drops"] or r["no_route"]:
        errors.append(f"relay {r['node']}: {r}")
print("; ".join(errors) if errors else "relays ok: " + " ".join(
    f"{r['node']}:fwd={r['forwarded']},cons={r['consumed']}" for r in reps))
sys.exit(1 if errors else 0)
PY
}

failures=0
for n in $CHAINS; do
    jn_teardown
    jn_chain "$n" "$RATE"
    last=$((n - 1))
    server=$(jn_chain_left "$last")
    first_hop=$(jn_chain_left 1):7000
    for loss in $LOSSES; do
        jn_chain_loss "$loss"
        for proto in $PROTOS; do
            rm -f "$WORK"/relay*.json
            jn_chain_relays "$BIN"
            out="$WORK/out-$n-$loss-$proto"
            jn_x "H$last" timeout 120 "$BIN" recv --bind "$server:5201" --node "$last" --out "$out" \
                -1 -i 0 -J --idle-timeout 30s > "$WORK/recv.json" 2> "$WORK/recv.err" &
            srv=$!
            sleep 0.3
            t0=$(date +%s.%N)
            send_ok=1
            jn_x H0 timeout 120 "$BIN" send "$WORK/payload.bin" "$first_hop" --node 0 --to-node "$last" \
                --proto "$proto" -i 0 -J --idle-timeout 30s > "$WORK/send.json" 2> "$WORK/send.err" || send_ok=0
            recv_ok=1
            wait "$srv" || recv_ok=0
            t1=$(date +%s.%N)
            # A terminating relay holds its flow through TCP's TIME_WAIT (2 s).
            sleep 2.5
            jn_chain_relays_stop
            got=$(sha256sum < "$out/payload.bin" 2>/dev/null | cut -d' ' -f1 || true)
            secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
            probe=$(check "$proto" $((n - 2)) "$loss" 2>&1) && probe_ok=1 || probe_ok=0
            if [ "$send_ok" = 1 ] && [ "$recv_ok" = 1 ] && [ "$got" = "$WANT" ] && [ "$probe_ok" = 1 ]; then
                echo "ok   ${n}-host chain loss ${loss}% $proto ${secs}s; $probe"
            else
                echo "FAIL ${n}-host chain loss ${loss}% $proto ${secs}s (send $send_ok recv $recv_ok hash ${got:-none}); $probe"
                tail -3 "$WORK/send.err" "$WORK/recv.err" "$WORK"/relay*.err 2>/dev/null | sed 's/^/    /'
                failures=$((failures + 1))
            fi
        done
    done
done
if [ "$failures" -gt 0 ]; then
    echo "$failures relayed transfer(s) failed"
    exit 1
fi
echo "all relayed transfers verified"
