#!/usr/bin/env python3
"""Linux kernel TCP and joulenet's `linux` profile under one loss pattern (issue 16).

Usage (root): python3 validation/linux/tracediff-linux.py LOSS_PCT [DIR] [CC]
  CC: reno (the default) or cubic. DIR (default /tmp/tracediff-linux) keeps
  the capture; a DIR that already holds one is diffed again without a new
  kernel run (REDO=1 forces one).

validation/linux/capture-lossy.sh runs one kernel transfer on the lossy
link and records every frame's fate where the link delivers it (NFLOG
"kept"/"lost" at the far host, in arrival order, per direction). This
script turns those into joulenet's `trace` loss model (one 0/1 line per
frame per direction), runs validation/linux/lossy-p2p.toml's link with the
same lists and pcap output, and prints where the two first differ:

- the receivers: the first ACK (its cumulative ACK number) the two
  receivers send differently; from there on the ACK-direction fates no
  longer fall on the same ACKs, so a later sender difference may be an
  echo of it;
- the senders: the first data segment sent differently (sequence number),
  with the kernel's congestion state (tcp:tcp_probe and
  tcp:tcp_cong_state_set: cwnd, ssthresh, srtt, CA state 0 open,
  1 disorder, 2 CWR, 3 recovery, 4 loss) at that point.

It also prints both senders' window averaged over time (the kernel's
from tcp_probe, ours from a 2 ms series), which is how the `linux`
profile's CUBIC arithmetic (`linux_cubic`) was found.

Kernel timing is not the simulator's, so it compares decisions (what is
sent next), not microseconds; our capture times a segment when the link
starts sending it (after the queue), the kernel's when TCP sends it.
EXTRA='key = value' adds [flow.tcp] keys to our side (e.g. to switch one
of the `linux` profile's rules off). The kernel sends a pure ACK to end the
handshake where ours sends data at once, so that frame's fate is left out
of the data-direction list.
"""
import os
import re
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))
SENDER, RECEIVER = "10.201.1.1", "10.201.2.1"


def tshark(pcap, fields, filt=None):
    args = ["tshark", "-r", pcap, "-T", "fields", "-E", "occurrence=f"]
    if filt:
        args += ["-Y", filt]
    args += sum((["-e", f] for f in fields), [])
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    return [line.split("\t") for line in out.splitlines()]


FIELDS = ["tcp.seq", "tcp.ack", "tcp.len", "tcp.flags", "tcp.options.sack_le",
          "tcp.options.sack_re"]


def frame(t, lost, s, a, n, f, le, re_):
    """(time, lost, seq, ack, len, flags, first SACK block)."""
    sack = f"{le}-{re_}" if le else ""
    return (t, lost, int(s), int(a or 0), int(n), int(f, 16), sack)


def kernel_frames(fates, link, src):
    """Frames from `src` where the link delivered them: the fates in the
    link's order, the times from the sender's interface (the link keeps
    the order)."""
    rows = tshark(fates, ["nflog.prefix"] + FIELDS, f"ip.src == {src} and tcp")
    times = [float(t) for (t,) in tshark(link, ["frame.time_epoch"], f"ip.src == {src} and tcp")]
    if len(times) < len(rows):
        sys.exit(f"{link}: {len(times)} frames seen, {len(rows)} reached the link's far end")
    return [frame(times[i], p == "lost", *r) for i, (p, *r) in enumerate(rows)]


def sim_frames(pcap, src):
    rows = tshark(pcap, ["frame.time_relative"] + FIELDS, f"ip.src == {src} and tcp")
    return [frame(float(t), False, *r) for t, *r in rows]


def sender_timeline(sent, acks):
    """The sender's view: (time, what) for each segment sent and each ACK
    reaching it (a lost one marked), in time order."""
    ev = [(f[0], f"send {f[2]}") for f in sent if f[4] > 0]
    ev += [(f[0], f"ack {f[3]} {f[6]}{' LOST' if f[1] else ''}") for f in acks]
    return sorted(ev, key=lambda e: e[0])


def show_timelines(kernel, ours, k_at, o_at, n=14, after=6):
    """The n events up to each side's first differing send and a few
    after it, side by side."""
    a = [e for e in kernel if e[0] <= k_at][-n:] + [e for e in kernel if e[0] > k_at][:after]
    b = [e for e in ours if e[0] <= o_at][-n:] + [e for e in ours if e[0] > o_at][:after]
    print("the senders around it (time from the first SYN, s; an ACK's first SACK block):")
    for i in range(max(len(a), len(b))):
        x = f"{a[i][0]:8.4f} {a[i][1]}" if i < len(a) else ""
        y = f"{b[i][0]:8.4f} {b[i][1]}" if i < len(b) else ""
        print(f"  kernel {x:<44} | ours {y}")


def sim_address(pcap, index):
    """The simulator numbers its nodes' addresses itself: the sender is node 0."""
    rows = tshark(pcap, ["ip.src", "tcp.len"], "tcp")
    senders = [s for s, n in rows if int(n) > 0]
    acks = [s for s, n in rows if int(n) == 0 and s not in senders]
    return senders[0] if index == 0 else acks[0]


def probes(path):
    """(time, event) from the tracepoint log, the sender's side only."""
    out = []
    if not os.path.exists(path):
        return out
    for line in open(path):
        m = re.search(r"\s(\d+\.\d+): (tcp_probe|tcp_cong_state_set): (.*)", line)
        if not m:
            continue
        t, kind, rest = float(m.group(1)), m.group(2), m.group(3)
        if kind == "tcp_probe" and f"src={SENDER}:" in rest:
            f = dict(kv.split("=", 1) for kv in rest.split() if "=" in kv)
            out.append((t, f"cwnd {f['snd_cwnd']} ssthresh {f['ssthresh']} srtt {int(f['srtt'])} us"))
        elif kind == "tcp_cong_state_set" and f"saddr={SENDER} " in rest:
            out.append((t, "CA state " + rest.split("cong_state=")[1]))
    return out


def kernel_mean_window(path):
    """The kernel sender's window, segments, averaged over time (each
    tcp_probe's value held until the next)."""
    pts = []
    for line in open(path) if os.path.exists(path) else []:
        m = re.search(r"\s(\d+\.\d+): tcp_probe: .*src=" + re.escape(SENDER) + r":.*snd_cwnd=(\d+)", line)
        if m:
            pts.append((float(m.group(1)), int(m.group(2))))
    span = pts[-1][0] - pts[0][0] if len(pts) > 1 else 0.0
    return sum(w * (b - a) for (a, w), (b, _) in zip(pts, pts[1:])) / span if span else None


def sim_mean_window(d):
    """Ours, from the 2 ms cwnd series, segments."""
    import csv
    rows = [r for r in csv.DictReader(open(f"{d}/joulenet/series.csv")) if r["series"] == "cwnd"]
    return sum(float(r["value"]) for r in rows) / len(rows) / 1448 if rows else None


def write(path, fates):
    with open(path, "w") as f:
        f.write("\n".join("1" if x else "0" for x in fates) + "\n")


def run_sim(d, cc):
    toml = f"""name = "tracediff-linux"
stop = "600s"
[topology]
kind = "two_nodes"
[link]
rate = "10Mbps"
delay = "0.1ms"
queue = 83
medium = "wired"
loss = {{ model = "trace", file = "{d}/j.fwd" }}
loss_reverse = {{ model = "trace", file = "{d}/j.rev" }}
[flow]
app = "bulk"
bytes = "2MB"
protocol = "{ 'sack' if cc == 'reno' else 'cubic' }"
[flow.tcp]
profile = "linux"
timestamps = true
mss = 1448
{os.environ.get("EXTRA", "")}
[output]
pcap = true
series = ["cwnd"]
series_interval = "2ms"
"""
    with open(f"{d}/j.toml", "w") as f:
        f.write(toml)
    res = subprocess.run([f"{root}/target/debug/joulenet", "run", f"{d}/j.toml", "--seeds", "1..=1",
                          "--out", f"{d}/joulenet", "-q", "--json"], capture_output=True, text=True,
                         check=True)
    return res.stdout


def first_difference(a, b, key):
    n = min(len(a), len(b))
    return next((i for i in range(n) if key(a[i]) != key(b[i])), None)


def show(title, a, b, k, describe, ctx):
    print(f"{title}: first difference at #{k}")
    for i in range(max(0, k - 6), min(max(len(a), len(b)), k + 4)):
        ka = describe(a[i]) if i < len(a) else "-"
        kb = describe(b[i]) if i < len(b) else "-"
        extra = ctx(a[i]) if i < len(a) else ""
        print(f"  #{i:<5} kernel {ka:<34} | ours {kb:<34} {extra}")


def main():
    pct = sys.argv[1]
    d = sys.argv[2] if len(sys.argv) > 2 else "/tmp/tracediff-linux"
    cc = sys.argv[3] if len(sys.argv) > 3 else "reno"
    if os.environ.get("REDO") or not os.path.exists(f"{d}/B-fates.pcap"):
        subprocess.run([f"{here}/capture-lossy.sh", d, pct, "2000000", cc], check=True,
                       stdout=subprocess.DEVNULL)
    data = kernel_frames(f"{d}/B-fates.pcap", f"{d}/A-link.pcap", SENDER)
    acks = kernel_frames(f"{d}/A-fates.pcap", f"{d}/A-link.pcap", RECEIVER)
    t0 = data[0][0]
    # Leave out the kernel's handshake ACK (the sender's second frame).
    fwd = [f for i, f in enumerate(data) if not (i == 1 and f[4] == 0 and f[5] & 0x12 == 0x10)]
    write(f"{d}/j.fwd", [f[1] for f in fwd])
    write(f"{d}/j.rev", [f[1] for f in acks])
    import json
    point = json.loads(run_sim(d, cc))["aggregate"][0]
    print("kernel:", open(f"{d}/serve.txt").read().split()[1], "s;",
          "ours: {completion_time_s_mean:.3f} s, {timeouts_mean:.0f} timeouts, "
          "{retransmitted_packets_mean:.0f} retransmissions".format(**point))
    pdir = f"{d}/joulenet/pcap/default/seed1"
    sender_pcap = f"{pdir}/node0-link0.pcap"
    s_addr, r_addr = sim_address(sender_pcap, 0), sim_address(sender_pcap, 1)
    ours_data = [f for f in sim_frames(sender_pcap, s_addr) if f[4] > 0]
    ours_acks_in = [f for f in sim_frames(sender_pcap, r_addr) if not f[5] & 0x02]
    ours_acks = [f for f in sim_frames(f"{pdir}/node1-link0.pcap", r_addr) if not f[5] & 0x02]
    k_data = [f for f in fwd if f[4] > 0]
    k_acks = [f for f in acks if not f[5] & 0x02]
    lost_d = sum(f[1] for f in fwd)
    lost_a = sum(f[1] for f in acks)
    print(f"kernel: {len(k_data)} data segments ({lost_d} lost), {len(k_acks)} ACKs ({lost_a} lost), "
          f"last data at {k_data[-1][0] - t0:.3f} s; ours: {len(ours_data)} data segments, "
          f"{len(ours_acks)} ACKs, last data at {ours_data[-1][0]:.3f} s")
    kw, ow = kernel_mean_window(f"{d}/probe.txt"), sim_mean_window(d)
    if kw is not None and ow is not None:
        # How the kernel trace diff found linux_cubic: kernel CUBIC's
        # window sat at two segments where ours grew (docs/validation.md).
        print(f"mean window over time: kernel {kw:.2f} segments, ours {ow:.2f}")
    log = probes(f"{d}/probe.txt")
    # Tracepoint times are the monotonic clock, pcap times the wall clock:
    # the first probe is the SYN-ACK's arrival, which the handshake ACK
    # (the sender's second frame) answers at once.
    shift = (log[0][0] - (data[1][0] - t0)) if log else 0.0

    def state(frame):
        t = frame[0] - t0
        before = [e for (pt, e) in log if pt - shift <= t]
        cw = next((e for e in reversed(before) if e.startswith("cwnd")), "")
        ca = next((e for e in reversed(before) if e.startswith("CA")), "")
        return f"{ca}; {cw}" if log else ""

    def seg(f):
        return f"{f[2]:>8}{' lost' if f[1] else ''} at {f[0] - (t0 if f[0] > 1e6 else 0):8.4f}"

    def ack(f):
        return f"ack {f[3]:>8}{' lost' if f[1] else ''} at {f[0] - (t0 if f[0] > 1e6 else 0):8.4f}"

    k = first_difference(k_acks, ours_acks, lambda f: f[3])
    if k is None:
        print("receivers: identical ACK sequences")
    else:
        show("receivers (ACK numbers)", k_acks, ours_acks, k, ack, lambda f: "")
    k = first_difference(k_data, ours_data, lambda f: f[2])
    if k is None:
        print("senders: identical data transmissions")
    else:
        show("senders (sequence numbers)", k_data, ours_data, k, seg, state)
        kt = sender_timeline([(f[0] - t0,) + f[1:] for f in k_data],
                             [(f[0] - t0,) + f[1:] for f in k_acks])
        ot = sender_timeline(ours_data, ours_acks_in)
        show_timelines(kt, ot, k_data[k][0] - t0, ours_data[k][0])


main()
