#!/usr/bin/env bash
# ns-3 3.44 as an independent reference for the `ns3` TCP profile (issue 16).
# Builds validation/ns3/*.cc (build.sh), runs them for SEEDS seeds, runs the
# matching joulenet scenarios for the same seeds, writes
# validation/ns3/results/{ns3,joulenet}-{p2p-lossy,p2p-onoff,wifi-chain}.csv
# and prints the comparison tables of docs/validation.md (summarize.py).
# Usage: nice -n 10 validation/ns3/run.sh [SEEDS] [JOULENET]
#   SEEDS: seeds per point-to-point point (30); the chain takes CHAIN_SEEDS (10)
#   JOULENET: the joulenet binary (default target/debug/joulenet, built here)
#   PARTS="p2p-lossy p2p-onoff wifi-chain" (the default) chooses the checks.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
seeds=${1:-30}
chain_seeds=${CHAIN_SEEDS:-10}
jn=${2:-}
if [ -z "$jn" ]; then
    (cd "$root" && cargo build -q -p joulenet)
    jn="$root/target/debug/joulenet"
fi
"$here/build.sh"
out="$here/results"
mkdir -p "$out"
parts=${PARTS:-p2p-lossy p2p-onoff wifi-chain}
want() { [[ " $parts " == *" $1 "* ]]; }

# Constant loss both ways: NewReno without SACK, CUBIC with SACK (joulenet's
# `cubic` recovers with SACK), no timestamps.
want p2p-lossy && {
csv="$out/ns3-p2p-lossy.csv"
echo "tcp,sack,loss,on_s,off_s,seed,bytes,completion_s,wall_s,loss_entries,retransmissions,timeouts,fast_recoveries" > "$csv"
for p in 0 0.01 0.05 0.1; do
    for s in $(seq 1 "$seeds"); do
        "$here/bin/p2p-tcp" --tcp=NewReno --sack=0 --loss=$p --seed="$s" >> "$csv"
        "$here/bin/p2p-tcp" --tcp=Cubic --sack=1 --loss=$p --seed="$s" >> "$csv"
    done
done
}

# On/off error phases: 20% loss in 1 s On phases, none in 1 s Off phases, 4 MB.
want p2p-onoff && {
csv="$out/ns3-p2p-onoff.csv"
echo "tcp,sack,loss,on_s,off_s,seed,bytes,completion_s,wall_s,loss_entries,retransmissions,timeouts,fast_recoveries" > "$csv"
for s in $(seq 1 "$seeds"); do
    "$here/bin/p2p-tcp" --tcp=NewReno --sack=0 --loss=0.2 --on=1 --off=1 --bytes=4000000 --seed="$s" >> "$csv"
    "$here/bin/p2p-tcp" --tcp=Cubic --sack=1 --loss=0.2 --on=1 --off=1 --bytes=4000000 --seed="$s" >> "$csv"
done
}

# 802.11b chain of 1-7 hops.
want wifi-chain && {
csv="$out/ns3-wifi-chain.csv"
echo "hops,seed,bytes,completion_s,wall_s,retransmissions" > "$csv"
for h in 1 2 3 4 5 6 7; do
    for s in $(seq 1 "$chain_seeds"); do
        "$here/bin/wifi-chain" --hops=$h --seed="$s" >> "$csv"
    done
done
}

for t in $parts; do
    n=$seeds
    [ "$t" = wifi-chain ] && n=$chain_seeds
    "$jn" run "$here/$t.toml" --seeds "1..=$n" --csv -q > "$out/joulenet-$t.csv"
done
python3 "$here/summarize.py" "$out"
