#!/usr/bin/env bash
# Hop, JTP, ATP and DTN on real relays (issues 13 and 14): a 5-host namespace
# chain H0 ─ H1 ─ H2 ─ H3 ─ H4 (4 links, scripts/netns-lib.sh jn_chain),
# every link RATE (tbf) with LOSS% random loss (nftables numgen) in both
# directions, `joulenet relay --link-rate RATE` on H1..H3, the ends on H0
# and H4 (`send --link-rate RATE` paces the first link as the relays pace
# theirs: crates/runtime/src/pace.rs).
#
# 1. Files: each protocol of PROTOS sends a SIZE-byte file H0 → H4; the
#    SHA-256 is checked; goodput, bytes sent (UDP, all datagrams) and the
#    sender's radio energy per delivered bit are printed. Hop, JTP, ATP and
#    dtn run their relay agents on every relay (dtn's relays are custodians:
#    the sender's transport ends once relay 1 holds the file, so its goodput
#    is the first hop's, as hbh-tcp's); e2tcp is end to end (the relays
#    forward). With KERNEL=1 also Linux TCP (BBR, CUBIC; iperf3 -n SIZE)
#    over the same links, routed by the hosts' kernels.
# 2. Relay restart (RESTART=1): a Hop file while the middle relay (H2) is
#    killed (SIGKILL) mid-transfer and restarted 1 s later: the relay's
#    cache and the blocks it had acknowledged upstream are gone; the
#    source's end-to-end timeout sends a virtual retransmission, which
#    moves only what the restarted relay and those after it lack; the file
#    must still arrive verified. Then the same with the link H2 -> H3 cut
#    until the kill (at KILL_AT s, default 4), so that relay 2 surely dies
#    holding a block it acknowledged upstream: the source must count an
#    end-to-end timeout (the virtual retransmission that recovered it).
# 3. Lossy stream (STREAM=1): STREAM_BYTES generated with jtp10 and with
#    jtp0: jtp10 must deliver at least 90% of its packets while sending
#    fewer datagrams than jtp0, counted on every hop (source and relays).
#
# Usage: scripts/netns-multihop.sh     (root; exit 77 = skipped, not root
#        or a tool missing; under CI=true a missing tool is a failure)
# Env:   JOULENET_BIN (default target/debug/joulenet), SIZE (300000),
#        RATE (10mbit), LOSS (5), PROTOS ("hop jtp atp e2tcp dtn"), KERNEL (0),
#        RESTART (1), STREAM (1), STREAM_BYTES (300000), RUNS (1)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/netns-lib.sh
ci_or_skip() {
    local rc=$1
    if [ "$rc" = 77 ] && [ "${CI:-}" = true ]; then
        echo "FAIL: CI=true and the namespace tests cannot run (see above)"
        exit 1
    fi
    exit "$rc"
}
jn_need || ci_or_skip $?

BIN=$(realpath "${JOULENET_BIN:-target/debug/joulenet}")
SIZE=${SIZE:-300000}
RATE=${RATE:-10mbit}
LOSS=${LOSS:-5}
PROTOS=${PROTOS:-hop jtp atp e2tcp dtn}
KERNEL=${KERNEL:-0}
RESTART=${RESTART:-1}
STREAM=${STREAM:-1}
STREAM_BYTES=${STREAM_BYTES:-300000}
RUNS=${RUNS:-1}
[ -x "$BIN" ] || { echo "no binary at $BIN (cargo build -p joulenet)"; exit 1; }
if [ "$KERNEL" = 1 ] && ! command -v iperf3 >/dev/null 2>&1; then
    echo "SKIP: KERNEL=1 needs iperf3"
    ci_or_skip 77
fi
# tc's rate, as joulenet reads rates (10mbit -> 10Mbps).
LINK_RATE=$(echo "$RATE" | sed 's/mbit$/Mbps/; s/kbit$/kbps/; s/gbit$/Gbps/')

WORK=$(mktemp -d)
JN_RELAY_DIR=$WORK
# KEEP=DIR keeps the run's reports and logs (the ends' JSON and stderr, the
# relays' reports) in DIR, to read a failure afterwards.
trap 'jn_chain_relays_stop 2>/dev/null; jn_teardown; [ -n "${KEEP:-}" ] && mkdir -p "$KEEP" && cp -r "$WORK"/*.json "$WORK"/*.err "$KEEP"/ 2>/dev/null; rm -rf "$WORK"' EXIT
head -c "$SIZE" /dev/urandom > "$WORK/payload.bin"
WANT=$(sha256sum < "$WORK/payload.bin" | cut -d' ' -f1)

jn_chain 5 "$RATE"
jn_chain_loss "$LOSS"
LAST=4
SERVER=$(jn_chain_left $LAST)
FIRST_HOP=$(jn_chain_left 1):7000
failures=0

# summary JSON FIELD...: the end summary's fields of a -J document.
summary() {
    python3 - "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["end"]["summary"] if "summary" in d.get("end", {}) else d["end"]
out = []
for f in sys.argv[2:]:
    v = s
    for k in f.split("."):
        v = v.get(k) if isinstance(v, dict) else None
    out.append("-" if v is None else str(v))
print(" ".join(out))
PY
}

# send_file PROTO TAG: one verified file H0 -> H4; prints a result line.
send_file() {
    # IDLE: how long either end waits hearing nothing. A recovery by
    # end-to-end timeouts (the forced case) may back off past 30 s: the
    # check is that the file arrives, not how soon.
    local proto=$1 tag=$2 out="$WORK/out-$2" ok=1 got idle=${IDLE:-30}
    local limit=$((idle * 4))
    jn_x "H$LAST" timeout "$limit" "$BIN" recv --bind "$SERVER:5201" --node $LAST --out "$out" \
        -1 -i 0 -J --idle-timeout "${idle}s" > "$WORK/recv.json" 2> "$WORK/recv.err" &
    local srv=$!
    sleep 0.3
    jn_x H0 timeout "$limit" "$BIN" send "$WORK/payload.bin" "$FIRST_HOP" --node 0 --to-node $LAST \
        --proto "$proto" --link-rate "$LINK_RATE" -i 0 -J --idle-timeout "${idle}s" \
        > "$WORK/send-$tag.json" 2> "$WORK/send.err" || ok=0
    wait "$srv" || ok=0
    got=$(sha256sum < "$out/payload.bin" 2>/dev/null | cut -d' ' -f1 || true)
    read -r gp sent energy < <(summary "$WORK/send-$tag.json" transfer_goodput_bps udp_bytes_sent energy.energy_j)
    local line
    line=$(awk -v g="$gp" -v b="$sent" -v e="$energy" -v n="$SIZE" 'BEGIN {
        printf "goodput %.2f Mbit/s, sent %.0f kB (%.2f x file), sender energy %.1f nJ/bit",
            g / 1e6, b / 1e3, b / n, (e == "-" ? 0 : e / (n * 8) * 1e9) }')
    if [ "$ok" = 1 ] && [ "$got" = "$WANT" ]; then
        echo "ok   $tag $proto: $line"
    else
        echo "FAIL $tag $proto (hash ${got:-none}): $line"
        tail -3 "$WORK/send.err" "$WORK/recv.err" "$WORK"/relay*.err 2>/dev/null | sed 's/^/    /'
        failures=$((failures + 1))
    fi
}

for ((run = 1; run <= RUNS; run++)); do
    for proto in $PROTOS; do
        JN_RELAY_SUFFIX=.file-$proto-$run jn_chain_relays "$BIN" --link-rate "$LINK_RATE"
        send_file "$proto" "file"
        jn_chain_relays_stop
    done
    if [ "$KERNEL" = 1 ]; then
        for cc in bbr cubic; do
            jn_x "H$LAST" iperf3 -s -1 -B "$SERVER" > /dev/null 2>&1 &
            srv=$!
            sleep 0.3
            if jn_x H0 timeout 60 iperf3 -c "$SERVER" -C "$cc" -n "$SIZE" -J > "$WORK/iperf-$cc.json" 2>&1; then
                python3 - "$WORK/iperf-$cc.json" "$cc" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
e = d["end"]
print(f"ok   kernel {sys.argv[2]}: goodput {e['sum_received']['bits_per_second'] / 1e6:.2f} Mbit/s, "
      f"retransmits {e['sum_sent'].get('retransmits', '-')}")
PY
            else
                echo "FAIL kernel $cc: $(tail -2 "$WORK/iperf-$cc.json")"
                failures=$((failures + 1))
            fi
            wait "$srv" 2>/dev/null || true
        done
    fi
done

# The relays' measured link loss (crates/runtime/src/link_loss.rs): each
# relay's link toward the server, over the file runs (marks answered by the
# next relay or the server), pooled per link. With n datagrams measured,
# the estimate's standard deviation is sqrt(p(1-p)/n): each link must be
# within 4 standard deviations of LOSS% (and within 5 points at most).
links_verdict=$(python3 - "$WORK" "$LOSS" <<'PY'
import glob, json, math, sys
work, p = sys.argv[1], float(sys.argv[2]) / 100
pooled = {}
for f in glob.glob(f"{work}/relay*.file-*.json"):
    try:
        r = json.load(open(f))
    except ValueError:
        continue
    for l in r.get("links", []):
        # Downstream: toward the next relay, or the server (node LAST).
        if l["node"] != r["node"] + 1:
            continue
        s, h = pooled.get(r["node"], (0, 0))
        pooled[r["node"]] = (s + l["measured_sent"], h + l["measured_heard"])
bad, parts = 0, []
for node in sorted(pooled):
    s, h = pooled[node]
    if s == 0:
        bad += 1
        parts.append(f"relay {node}: nothing measured")
        continue
    est = 1 - h / s
    tol = min(0.05, 4 * math.sqrt(p * (1 - p) / s))
    bad += abs(est - p) > tol
    parts.append(f"relay {node} -> next: {est:.1%} over {s} datagrams (±{tol:.1%})")
ok = bad == 0 and len(pooled) >= 3
print(("ok  " if ok else "FAIL") + f" link loss ({p:.0%} set): " + "; ".join(parts))
PY
) || links_verdict="FAIL link loss: no relay reports"
echo "$links_verdict"
case "$links_verdict" in ok*) ;; *) failures=$((failures + 1)) ;; esac

if [ "$RESTART" = 1 ]; then
    # A transfer long enough to be killed in the middle of: 2 s at the rate.
    big=$((SIZE > 2500000 ? SIZE : 2500000))
    head -c "$big" /dev/urandom > "$WORK/payload.bin"
    WANT=$(sha256sum < "$WORK/payload.bin" | cut -d' ' -f1)
    SIZE=$big
    jn_chain_relays "$BIN" --link-rate "$LINK_RATE"
    (
        sleep 1.2
        kill -KILL "${JN_RELAY_PIDS[1]}" 2>/dev/null
        sleep 1
        JN_RELAY_SUFFIX=.restarted jn_chain_relay 2 "$BIN" --link-rate "$LINK_RATE"
        echo "${JN_RELAY_PIDS[1]}" > "$WORK/restarted.pid"
    ) &
    killer=$!
    send_file hop "restart"
    wait "$killer" || true
    kill -TERM "$(cat "$WORK/restarted.pid")" 2>/dev/null || true
    jn_chain_relays_stop
    # The restarted relay took part: it carried Hop datagrams.
    carried=$(python3 -c "import json; r = json.load(open('$WORK/relay2.restarted.json')); print(r['consumed'])" 2>/dev/null || echo 0)
    vrtx=$(summary "$WORK/send-restart.json" timeouts)
    if [ "$carried" -gt 0 ]; then
        echo "ok   restart: relay 2 killed at 1.2 s and restarted at 2.2 s consumed $carried datagrams; source end-to-end timeouts $vrtx"
    else
        echo "FAIL restart: the restarted relay carried nothing (consumed $carried)"
        failures=$((failures + 1))
    fi

    # 2b. A relay dies holding a block it has acknowledged upstream: the
    # link H2 -> H3 is cut from the start, so relay 2 takes the first
    # 1 MB block whole (its BACK tells relay 1 the block has moved on) and
    # cannot pass it on; relay 2 is killed at KILL_AT s, the link restored
    # and relay 2 restarted 1 s later. Nothing hop by hop can bring that
    # block back (relay 1 has moved it on, relay 3 never saw it whole): only
    # the source's end-to-end timeout and a virtual retransmission, which
    # relay 1 answers from its cache, so the source must count at least
    # one end-to-end timeout.
    KILL_AT=${KILL_AT:-4}
    jn_x H3 nft add table inet jncut
    jn_x H3 nft add chain inet jncut cut '{ type filter hook prerouting priority -301; policy accept; }'
    jn_x H3 nft add rule inet jncut cut iifname "${JN_NS}h3l" drop
    jn_chain_relays "$BIN" --link-rate "$LINK_RATE"
    (
        sleep "$KILL_AT"
        kill -KILL "${JN_RELAY_PIDS[1]}" 2>/dev/null
        jn_x H3 nft delete table inet jncut
        sleep 1
        JN_RELAY_SUFFIX=.forced jn_chain_relay 2 "$BIN" --link-rate "$LINK_RATE"
        echo "${JN_RELAY_PIDS[1]}" > "$WORK/forced.pid"
    ) &
    killer=$!
    IDLE=90 send_file hop "forced"
    wait "$killer" || true
    kill -TERM "$(cat "$WORK/forced.pid")" 2>/dev/null || true
    jn_chain_relays_stop
    vrtx=$(summary "$WORK/send-forced.json" timeouts)
    if [ "${vrtx:-0}" != - ] && [ "${vrtx:-0}" -gt 0 ]; then
        echo "ok   forced: relay 2 killed at $KILL_AT s holding a block acknowledged upstream; recovered by $vrtx end-to-end timeout(s) (virtual retransmission)"
    else
        echo "FAIL forced: no end-to-end timeout at the source (timeouts $vrtx): the lost block was not recovered by virtual retransmission"
        failures=$((failures + 1))
    fi
fi

if [ "$STREAM" = 1 ]; then
    for proto in jtp0 jtp10; do
        JN_RELAY_SUFFIX=.stream-$proto jn_chain_relays "$BIN" --link-rate "$LINK_RATE"
        jn_x "H$LAST" timeout 120 "$BIN" serve --bind "$SERVER:5201" --node $LAST -1 -i 0 -J \
            --idle-timeout 20s > "$WORK/serve-$proto.json" 2> "$WORK/serve.err" &
        srv=$!
        sleep 0.3
        jn_x H0 timeout 120 "$BIN" client "$FIRST_HOP" --node 0 --to-node $LAST --proto "$proto" \
            -n "$STREAM_BYTES" --link-rate "$LINK_RATE" -i 0 -J --idle-timeout 20s \
            > "$WORK/client-$proto.json" 2> "$WORK/client.err" || true
        wait "$srv" || true
        jn_chain_relays_stop
    done
    verdict=$(python3 - "$WORK" "$STREAM_BYTES" <<'PY'
import json, sys
work, n = sys.argv[1], int(sys.argv[2])
def end(p):
    d = json.load(open(p))
    return d["end"]["summary"] if "summary" in d.get("end", {}) else d["end"]
def relayed(proto):
    # What the relays sent: forwarded, and originated (iJTP's resends from
    # its cache, which repair jtp0's losses without the source).
    total = 0
    for k in (1, 2, 3):
        r = json.load(open(f"{work}/relay{k}.stream-{proto}.json"))
        total += r["forwarded"] + r["originated"]
    return total
res = {}
for proto in ("jtp0", "jtp10"):
    c, s = end(f"{work}/client-{proto}.json"), end(f"{work}/serve-{proto}.json")
    res[proto] = (s["bytes_delivered"] / n, c["datagrams_sent"], c["datagrams_sent"] + relayed(proto))
(d0, n0, t0), (d10, n10, t10) = res["jtp0"], res["jtp10"]
# "Sending fewer" counts every hop's transmissions: jtp0's losses are
# mostly repaired by the relays' caches, so the source alone can send as
# many datagrams for both (222 and 222 in one run).
ok = d10 >= 0.9 and t10 < t0 and d0 >= 0.999
print(("ok  " if ok else "FAIL") + f" stream: jtp10 delivered {d10:.1%} with {t10} transmissions "
      f"on the path ({n10} by the source); jtp0 delivered {d0:.1%} with {t0} ({n0} by the source)")
PY
) || verdict="FAIL stream: no reports ($(tail -2 "$WORK/client.err" "$WORK/serve.err" | tr '\n' ' '))"
    echo "$verdict"
    case "$verdict" in ok*) ;; *) failures=$((failures + 1)) ;; esac
    # iJTP's link attempts on hosts follow the measured loss: jtp0 (no loss
    # tolerated) asks the MAC's most (5) of a link whose estimate is above
    # 0, and 1 while the last 3.2 s window happens to show no loss (a
    # lossless link needs no second attempt; at 1-5% loss and 50-100
    # datagrams a window, such windows are common): only 1 or 5, and some
    # 5s. jtp10's tolerance, shared over the hops left (learned from hop
    # limits), asks 2 of a 5% link (equation 2) once the link is measured,
    # and 5 before: most of its packets must go with fewer than 5.
    attempts=$(python3 - "$WORK" <<'PY'
import json, sys
work = sys.argv[1]
ok, parts = True, []
for proto in ("jtp0", "jtp10"):
    for k in (1, 2, 3):
        try:
            r = json.load(open(f"{work}/relay{k}.stream-{proto}.json"))
        except (OSError, ValueError):
            ok = False
            parts.append(f"{proto} relay {k}: no report")
            continue
        l = next((l for l in r["links"] if l["node"] == k + 1), None)
        hist = l["attempts"] if l else []
        n = sum(hist)
        below = sum(hist[:5])
        loss = "-" if l is None or l["loss_run"] is None else f"{l['loss_run']:.1%}"
        parts.append(f"{proto} relay {k} (loss {loss}): attempts {hist[1:]}")
        middle = sum(hist[2:5])  # 2, 3 or 4 attempts
        if n == 0 or (proto == "jtp0" and (middle > 0 or hist[5] == 0)) or (proto == "jtp10" and below * 2 <= n):
            ok = False
print(("ok  " if ok else "FAIL") + " attempts: " + "; ".join(parts))
PY
) || attempts="FAIL attempts: no relay reports"
    echo "$attempts"
    case "$attempts" in ok*) ;; *) failures=$((failures + 1)) ;; esac
fi

if [ "$failures" -gt 0 ]; then
    echo "$failures multihop check(s) failed"
    exit 1
fi
echo "all multihop checks passed"
