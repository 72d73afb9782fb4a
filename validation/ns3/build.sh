#!/usr/bin/env bash
# Builds the ns-3 reference programs of validation/ns3/ against the ns-3
# 3.44 PyPI wheel (`pip install ns3==3.44`): g++ with the wheel's headers
# and libraries, no cmake project. Binaries go to validation/ns3/bin/
# (not committed). NS3_DIR overrides where the wheel is.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ns3=${NS3_DIR:-$(python3 -c 'import ns3; print(list(ns3.__path__)[0])' 2>/dev/null || true)}
[ -d "$ns3/include/ns3" ] || { echo "ns-3 wheel not found (set NS3_DIR)" >&2; exit 1; }
mkdir -p "$here/bin"
libs="core network internet point-to-point applications traffic-control wifi mobility propagation energy spectrum antenna stats"
link=()
for l in $libs; do link+=("-lns3.44-$l"); done
for prog in "${@:-p2p-tcp wifi-chain}"; do
    for p in $prog; do
        src="$here/$p.cc"
        bin="$here/bin/$p"
        if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ] || [ "$here/transfer.h" -nt "$bin" ]; then
            echo "building $p" >&2
            g++ -std=c++20 -O2 -w -I"$ns3/include" "$src" -o "$bin" \
                -L"$ns3/lib64" -Wl,-rpath,"$ns3/lib64" "${link[@]}"
        fi
    done
done
