# Network-namespace topologies for joulenet's real-network tests and
# benchmarks. Source this file; needs root, iproute2 and nftables.
#
# Every link between two hosts is a *link namespace* routing between them:
# its egress toward each side has a tbf rate limiter, so shaping happens
# between the hosts, never on a sender's own interface. Offloads are off on
# every veth so loss and shaping act per packet.
#
#   two-host:    A ──[L1]── B
#   three-host:  A ──[L1]── R ──[L2]── B      (R runs `joulenet emulate`, a relay)
#
# Random loss is the link's: on link L1, in both directions (data and ACKs
# alike), and *after* the rate limiter — an nftables `numgen random` drop rule
# in the prerouting hook of each host at L1's ends, so a lost packet has
# already spent its time on the link (as a frame corrupted on the air has).
# Dropping before the limiter instead (in the link namespace's forward hook)
# hands the survivors the whole rate, and a loss-blind sender then exceeds
# (1 − p) × rate of goodput (seen with BBR: 8 Mbit/s at 20% on 10 Mbit/s).
#
# Addresses: A 10.201.1.1; L1 10.201.1.2 / 10.201.2.2; B (two-host) or R
# 10.201.2.1; R 10.201.3.1; L2 10.201.3.2 / 10.201.4.2; B (three-host) 10.201.4.1.
# Namespace names start with $JN_NS (default jn<pid>) so parallel runs differ.

JN_NS=${JN_NS:-jn$$}
JN_NAMESPACES=()

jn_need() {
    if [ "$(id -u)" != 0 ]; then
        echo "SKIP: network-namespace tests need root (ip netns, veth, tc, nft)"
        return 77
    fi
    if ! command -v nft >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
        echo "installing iproute2 and nftables" >&2
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq iproute2 nftables ethtool; } >/dev/null 2>&1 || true
    fi
    for t in ip tc nft; do
        if ! command -v "$t" >/dev/null 2>&1; then
            echo "SKIP: $t not installed (apt-get install iproute2 nftables)"
            return 77
        fi
    done
}

jn_ns() { # name
    ip netns add "$JN_NS$1"
    ip -n "$JN_NS$1" link set lo up
    JN_NAMESPACES+=("$JN_NS$1")
}

jn_x() { # ns cmd...
    local ns=$1
    shift
    ip netns exec "$JN_NS$ns" "$@"
}

jn_noofload() { # ns dev
    if command -v ethtool >/dev/null 2>&1; then
        jn_x "$1" ethtool -K "$2" tso off gso off gro off >/dev/null 2>&1 || true
    fi
}

# jn_veth NS1 DEV1 ADDR1/24 NS2 DEV2 ADDR2/24
jn_veth() {
    ip link add "$JN_NS$2" type veth peer name "$JN_NS$5"
    ip link set "$JN_NS$2" netns "$JN_NS$1"
    ip link set "$JN_NS$5" netns "$JN_NS$4"
    jn_x "$1" ip addr add "$3" dev "$JN_NS$2"
    jn_x "$4" ip addr add "$6" dev "$JN_NS$5"
    jn_x "$1" ip link set "$JN_NS$2" up
    jn_x "$4" ip link set "$JN_NS$5" up
    jn_noofload "$1" "$JN_NS$2"
    jn_noofload "$4" "$JN_NS$5"
}

# jn_router L: make L a router.
jn_router() {
    jn_x "$1" sysctl -qw net.ipv4.ip_forward=1
}

# jn_lossy_end NS: an nftables table in host NS for the loss of the links
# it ends (rules added by jn_set_loss).
jn_lossy_end() {
    jn_x "$1" nft add table inet jnloss
    jn_x "$1" nft add chain inet jnloss lossy '{ type filter hook prerouting priority -300; policy accept; }'
}

# jn_set_loss NS1 DEV1 NS2 DEV2 ... PERCENT: at each host NSi, drop PERCENT%
# of the packets arriving on its interface DEVi (the far end of a shaped
# link, so the loss comes after the rate limiter). Pass both ends of a link
# for loss in both directions.
jn_set_loss() {
    local args=("$@")
    local pct=${args[-1]}
    local n i
    n=$(awk -v p="$pct" 'BEGIN { printf "%d", p * 100 }')
    for ((i = 0; i + 1 < ${#args[@]} - 1; i += 2)); do
        jn_x "${args[i]}" nft flush chain inet jnloss lossy
        if [ "$n" -gt 0 ]; then
            jn_x "${args[i]}" nft add rule inet jnloss lossy iifname "$JN_NS${args[i+1]}" \
                numgen random mod 10000 '<' "$n" drop
        fi
    done
}

# jn_set_rate L DEV1 DEV2 RATE: tbf on both of L's egresses. Its bucket
# ($JN_TBF_BURST, 16kb) lets that many bytes through at once after an idle
# spell, and its queue holds RATE × 100 ms plus the bucket.
jn_set_rate() {
    local l=$1 rate=$4
    for dev in "$2" "$3"; do
        jn_x "$l" tc qdisc replace dev "$JN_NS$dev" root tbf rate "$rate" \
            burst "${JN_TBF_BURST:-16kb}" latency 100ms
    done
}

jn_two_host() { # RATE
    jn_ns A; jn_ns L1; jn_ns B
    jn_veth A a1 10.201.1.1/24 L1 la 10.201.1.2/24
    jn_veth L1 lb 10.201.2.2/24 B b1 10.201.2.1/24
    jn_x A ip route add default via 10.201.1.2
    jn_x B ip route add default via 10.201.2.2
    jn_router L1
    jn_set_rate L1 la lb "$1"
    jn_lossy_end A
    jn_lossy_end B
    JN_SERVER=10.201.2.1
    JN_TARGET=10.201.2.1:5201
    JN_LOSSY="A a1 B b1"    # L1's ends: loss in both directions
}

jn_three_host() { # RATE
    jn_ns A; jn_ns L1; jn_ns R; jn_ns L2; jn_ns B
    jn_veth A a1 10.201.1.1/24 L1 la 10.201.1.2/24
    jn_veth L1 lr 10.201.2.2/24 R r1 10.201.2.1/24
    jn_veth R r2 10.201.3.1/24 L2 ls 10.201.3.2/24
    jn_veth L2 lb 10.201.4.2/24 B b1 10.201.4.1/24
    jn_x A ip route add default via 10.201.1.2
    jn_x R ip route add 10.201.1.0/24 via 10.201.2.2
    jn_x R ip route add 10.201.4.0/24 via 10.201.3.2
    jn_x B ip route add default via 10.201.4.2
    jn_router L1
    jn_router L2
    jn_set_rate L1 la lr "$1"
    jn_set_rate L2 ls lb "$1"
    jn_lossy_end A
    jn_lossy_end R
    JN_SERVER=10.201.4.1
    JN_TARGET=10.201.2.1:6000   # the relay on R
    JN_LOSSY="A a1 R r1"    # L1's ends: loss in both directions (end-to-end = that link's)
}

jn_teardown() {
    local ns
    for ns in "${JN_NAMESPACES[@]}"; do
        ip netns pids "$ns" 2>/dev/null | xargs -r kill 2>/dev/null || true
        ip netns del "$ns" 2>/dev/null || true
    done
    JN_NAMESPACES=()
}

# jn_chain N RATE: an N-host chain for relays (N >= 2), every link its own
# link namespace with its own rate limiter and its own loss rule:
#
#   H0 ──[L1]── H1 ──[L2]── H2 ── … ──[L(N-1)]── H(N-1)
#
# H1 … H(N-2) run `joulenet relay` (or, for kernel TCP, forward IP: every
# host and link namespace routes every subnet of the chain). Link Li joins
# subnets 10.202.(2i-1).0/24 (H(i-1) .1, Li .2) and 10.202.(2i).0/24 (Li .2,
# H(i) .1). Host Hk's left address is jn_chain_left k, its right one
# jn_chain_right k. Loss: jn_chain_loss PERCENT, on every link, both ways.
jn_chain_left() { echo "10.202.$((2 * $1)).1"; }
jn_chain_right() { echo "10.202.$((2 * $1 + 1)).1"; }

jn_chain() { # N RATE
    local n=$1 rate=$2 k i j
    JN_CHAIN_N=$n
    for ((k = 0; k < n; k++)); do jn_ns "H$k"; done
    for ((i = 1; i < n; i++)); do
        jn_ns "L$i"
        jn_veth "H$((i - 1))" "h$((i - 1))r" "10.202.$((2 * i - 1)).1/24" "L$i" "l${i}a" "10.202.$((2 * i - 1)).2/24"
        jn_veth "L$i" "l${i}b" "10.202.$((2 * i)).2/24" "H$i" "h${i}l" "10.202.$((2 * i)).1/24"
        jn_router "L$i"
        jn_set_rate "L$i" "l${i}a" "l${i}b" "$rate"
        # Subnets left of Li go back through H(i-1), those right of it on through H(i).
        for ((j = 1; j <= 2 * (n - 1); j++)); do
            if ((j < 2 * i - 1)); then
                jn_x "L$i" ip route add "10.202.$j.0/24" via "10.202.$((2 * i - 1)).1"
            elif ((j > 2 * i)); then
                jn_x "L$i" ip route add "10.202.$j.0/24" via "10.202.$((2 * i)).1"
            fi
        done
    done
    for ((k = 0; k < n; k++)); do
        jn_router "H$k"
        jn_lossy_end "H$k"
        for ((j = 1; j <= 2 * (n - 1); j++)); do
            if ((j < 2 * k)); then
                jn_x "H$k" ip route add "10.202.$j.0/24" via "10.202.$((2 * k)).2"
            elif ((j > 2 * k + 1)); then
                jn_x "H$k" ip route add "10.202.$j.0/24" via "10.202.$((2 * k + 1)).2"
            fi
        done
    done
}

# jn_chain_loss PERCENT: drop PERCENT% of the packets arriving at every
# host on every chain interface (after the link's rate limiter, as
# jn_set_loss does): each link loses PERCENT% in each direction.
jn_chain_loss() {
    local pct=$1 n k dev
    n=$(awk -v p="$pct" 'BEGIN { printf "%d", p * 100 }')
    for ((k = 0; k < JN_CHAIN_N; k++)); do
        jn_x "H$k" nft flush chain inet jnloss lossy
        [ "$n" -gt 0 ] || continue
        for dev in "h${k}l" "h${k}r"; do
            if jn_x "H$k" ip link show "$JN_NS$dev" >/dev/null 2>&1; then
                jn_x "H$k" nft add rule inet jnloss lossy iifname "$JN_NS$dev" \
                    numgen random mod 10000 '<' "$n" drop
            fi
        done
    done
}

# jn_chain_relays BIN [ARGS...]: `joulenet relay` on H1 … H(N-2), each on
# port 7000 of both its addresses, routing toward lower nodes through the
# left neighbour and higher ones through the right (the server, node N-1,
# listens on 5201); reports (JSON) go to $JN_RELAY_DIR/relayK.json when the
# relay is stopped (jn_chain_relays_stop). Node ids are host indices.
jn_chain_relays() {
    local bin=$1 k
    shift
    JN_RELAY_PIDS=()
    for ((k = 1; k < JN_CHAIN_N - 1; k++)); do
        jn_chain_relay "$k" "$bin" "$@"
    done
}

# jn_chain_relay K BIN [ARGS...]: (re)starts the relay on HK alone (as
# jn_chain_relays does), its pid in JN_RELAY_PIDS[K-1]; its report goes to
# relayK$JN_RELAY_SUFFIX.json (a restarted relay's beside the first's).
jn_chain_relay() {
    local k=$1 bin=$2 j args
    shift 2
    args=()
    # The neighbours first: the first node routed via an address names it.
    args+=(--route "$((k - 1))=$(jn_chain_right $((k - 1))):7000")
    for ((j = k - 2; j >= 0; j--)); do
        args+=(--route "$j=$(jn_chain_right $((k - 1))):7000")
    done
    for ((j = k + 1; j < JN_CHAIN_N; j++)); do
        if ((k + 1 == JN_CHAIN_N - 1)); then
            args+=(--route "$j=$(jn_chain_left $((k + 1))):5201")
        else
            args+=(--route "$j=$(jn_chain_left $((k + 1))):7000")
        fi
    done
    # Not through jn_x: $! must be the relay itself, to stop it.
    ip netns exec "${JN_NS}H$k" "$bin" relay --bind "0.0.0.0:7000" --node "$k" \
        "${args[@]}" -J "$@" > "$JN_RELAY_DIR/relay$k${JN_RELAY_SUFFIX:-}.json" \
        2> "$JN_RELAY_DIR/relay$k${JN_RELAY_SUFFIX:-}.err" &
    JN_RELAY_PIDS[k - 1]=$!
}

jn_chain_relays_stop() { # SIGTERM: each relay prints its report and exits
    local p
    for p in "${JN_RELAY_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    for p in "${JN_RELAY_PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
    JN_RELAY_PIDS=()
}
