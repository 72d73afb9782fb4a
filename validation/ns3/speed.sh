#!/usr/bin/env bash
# Issue 18's speed comparison: wall time of ns-3 3.44 against `joulenet run`
# on the same two scenarios, run in interleaved pairs (ns-3, joulenet, ns-3,
# …) so that a drift in the shared machine's speed hits both alike:
#   p2p:   50 MB NewReno, 10 Mbit/s, 50 ms, 1% loss on the data direction
#          (speed-p2p.toml; `joulenet bench --medium wired`'s scenario)
#   chain: 5 MB NewReno over a 4-hop 802.11b chain (speed-chain.toml)
# Prints, per scenario, each side's median, min and max wall seconds (the
# whole process, start-up included), the median ratio ns-3/joulenet of the
# pairs, and both programs' simulated completion times (they must agree
# roughly for the comparison to be fair); then both sides' median CPU time
# (user + system) and its ratio, less disturbed by a loaded host.
# Results: docs/PERFORMANCE.md.
# Usage: nice -n 10 validation/ns3/speed.sh [PAIRS] [JOULENET]
#   JOULENET: the joulenet binary (default target/debug/joulenet, the
#   optimised dev profile, built here)
#   SCENARIOS="p2p" (environment): only these scenarios (default both)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
pairs=${1:-5}
jn=${2:-}
if [ -z "$jn" ]; then
    (cd "$root" && cargo build -q -p joulenet)
    jn="$root/target/debug/joulenet"
fi
progs=""
for s in ${SCENARIOS:-p2p chain}; do
    case $s in p2p) progs+=" p2p-tcp" ;; chain) progs+=" wifi-chain" ;; esac
done
"$here/build.sh" $progs
python3 - "$pairs" "$jn" "$here" "${SCENARIOS:-p2p chain}" <<'PY'
import resource, statistics, subprocess, sys, time
pairs, jn, here, chosen = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4].split()
scenarios = {
    "p2p": (
        [f"{here}/bin/p2p-tcp", "--loss=0.01", "--lossReverse=0", "--delay=50ms",
         "--queue=100", "--bytes=50000000", "--sndBuf=1048576", "--rcvBuf=4194304"],
        [jn, "run", f"{here}/speed-p2p.toml", "--csv", "-q", "-j", "1"],
    ),
    "chain": (
        [f"{here}/bin/wifi-chain", "--hops=4", "--bytes=5000000"],
        [jn, "run", f"{here}/speed-chain.toml", "--csv", "-q", "-j", "1"],
    ),
}

def cpu_s():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime

def timed(cmd):
    # Wall time, and CPU time (user + system of the child), which a
    # loaded host disturbs less.
    t, c = time.perf_counter(), cpu_s()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    timed.cpu = cpu_s() - c
    return time.perf_counter() - t, out

def ns3_completion(out):
    # p2p-tcp: tcp,sack,loss,on,off,seed,bytes,completion,...; wifi-chain: hops,seed,bytes,completion,...
    f = out.strip().split(",")
    return float(f[7] if not f[0].isdigit() else f[3])

def jn_completion(out):
    lines = out.strip().splitlines()
    head = lines[0].split(",")
    return float(lines[1].split(",")[head.index("completion_time_s")])

for name, (ns3, ours) in scenarios.items():
    if name not in chosen:
        continue
    timed(ns3); timed(ours)  # warm-up: page cache, shared libraries
    a, b, ratio, ca, cb = [], [], [], [], []
    for _ in range(pairs):
        ta, oa = timed(ns3)
        ca.append(timed.cpu)
        tb, ob = timed(ours)
        cb.append(timed.cpu)
        a.append(ta); b.append(tb); ratio.append(ta / tb)
    print(f"{name}: ns-3 median {statistics.median(a):.3f} s (min {min(a):.3f}, max {max(a):.3f}); "
          f"joulenet median {statistics.median(b):.3f} s (min {min(b):.3f}, max {max(b):.3f}); "
          f"ns-3/joulenet median of {pairs} pairs {statistics.median(ratio):.1f}x; "
          f"simulated completion ns-3 {ns3_completion(oa):.2f} s, joulenet {jn_completion(ob):.2f} s")
    print(f"{name}: CPU ns-3 median {statistics.median(ca):.3f} s, joulenet median {statistics.median(cb):.4f} s; "
          f"ns-3/joulenet by CPU medians {statistics.median(ca) / statistics.median(cb):.1f}x")
PY
