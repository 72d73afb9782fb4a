"""ns-3 and joulenet under one loss pattern, diffed packet by packet (issue 16).

Usage: python3 tracediff.py LOSS SEED [TCP]   (TCP: newreno, the default)
Writes frame-fate lists (joulenet's `trace` loss model: one 0/1 per frame
per direction, Bernoulli(LOSS) drawn from SEED, the first three frames
delivered), runs validation/ns3/bin/p2p-tcp with --lossTrace and --pcap and
target/debug/joulenet with the same lists and pcap output, and prints the
first data transmission where the two senders differ, with the segments
around it. ns-3's sender sends a pure ACK to end the handshake where ours
sends data at once, so ns-3's data-direction list gets one extra delivered
frame there; the ACK directions need no shift. Files go to $OUT (/tmp/tracediff);
LOSSY=data or LOSSY=acks loses frames in one direction only.
"""
import os, random, subprocess, sys

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))
out = os.environ.get("OUT", "/tmp/tracediff")


def fates(loss, seed, n=40000):
    r = random.Random(seed)
    return ["1" if k >= 3 and r.random() < loss else "0" for k in range(n)]


def write(path, lines):
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def senders_data(pcap):
    fields = ["frame.time_relative", "ip.src", "tcp.seq", "tcp.len"]
    args = ["tshark", "-r", pcap, "-T", "fields"] + sum((["-e", f] for f in fields), [])
    rows = []
    for line in subprocess.run(args, capture_output=True, text=True, check=True).stdout.splitlines():
        t, src, seq, ln = line.split("\t")
        if src.endswith(".1") and int(ln) > 0:
            rows.append((float(t), int(seq)))
    return rows


def main():
    loss, seed = float(sys.argv[1]), int(sys.argv[2])
    tcp = sys.argv[3] if len(sys.argv) > 3 else "newreno"
    os.makedirs(out, exist_ok=True)
    fwd, rev = fates(loss, 2 * seed), fates(loss, 2 * seed + 1)
    # LOSSY=data or LOSSY=acks keeps one direction lossless.
    lossy = os.environ.get("LOSSY", "both")
    if lossy == "acks":
        fwd = ["0"] * len(fwd)
    if lossy == "data":
        rev = ["0"] * len(rev)
    write(f"{out}/j.fwd", fwd)
    write(f"{out}/j.rev", rev)
    write(f"{out}/ns.fwd", fwd[:2] + ["0"] + fwd[2:])
    write(f"{out}/ns.rev", rev)
    ns_tcp, sack = ("NewReno", "0") if tcp == "newreno" else ("Cubic", "1")
    with open(f"{out}/ns3-trace.csv", "w") as err:
        ns = subprocess.run([f"{here}/bin/p2p-tcp", f"--tcp={ns_tcp}", f"--sack={sack}",
                             f"--lossTrace={out}/ns", f"--pcap={out}/ns3", "--trace=1"],
                            stdout=subprocess.PIPE, stderr=err, text=True, check=True).stdout
    toml = f"""name = "tracediff"
stop = "3000s"
[topology]
kind = "two_nodes"
[link]
rate = "10Mbps"
delay = "0.1ms"
queue = 83
medium = "wired"
loss = {{ model = "trace", file = "{out}/j.fwd" }}
loss_reverse = {{ model = "trace", file = "{out}/j.rev" }}
[flow]
app = "bulk"
bytes = "2MB"
protocol = "{tcp}"
[flow.tcp]
profile = "ns3"
[output]
pcap = true
"""
    write(f"{out}/j.toml", [toml])
    subprocess.run([f"{root}/target/debug/joulenet", "run", f"{out}/j.toml", "--seeds", "1..=1",
                    "--out", f"{out}/joulenet", "-q"], stdout=subprocess.DEVNULL, check=True)
    a = senders_data(f"{out}/ns3-0-0.pcap")
    b = senders_data(f"{out}/joulenet/pcap/default/seed1/node0-link0.pcap")
    print("ns-3:", ns.strip())
    print(f"ns-3 {len(a)} data segments, last at {a[-1][0]:.3f} s; joulenet {len(b)}, last at {b[-1][0]:.3f} s")
    n = min(len(a), len(b))
    late = next((i for i in range(n) if abs(a[i][0] - b[i][0]) > 0.005), None)
    if late is not None:
        print(f"first segment sent more than 5 ms apart: #{late}, ns-3 at {a[late][0]:.4f} s, "
              f"joulenet at {b[late][0]:.4f} s")
    k = next((i for i in range(n) if a[i][1] != b[i][1]), None)
    if k is None:
        print("identical data transmissions")
        return
    print(f"first difference at data segment #{k} (relative sequence numbers):")
    for i in range(max(0, k - 4), min(n, k + 4)):
        print(f"  #{i}: ns-3 {a[i][1]:>8} at {a[i][0]:.4f} s | joulenet {b[i][1]:>8} at {b[i][0]:.4f} s")


main()
