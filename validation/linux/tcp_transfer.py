#!/usr/bin/env python3
"""One kernel TCP transfer for validation/linux/lossy-p2p.sh.

serve PORT: accept one connection, read to EOF, print the bytes and the
seconds from accept to EOF. send HOST PORT BYTES CC: connect with
congestion control CC (setsockopt TCP_CONGESTION), send BYTES, close.
"""
import socket
import sys
import time


def serve(port):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", port))
    s.listen(1)
    c, _ = s.accept()
    start = time.monotonic()
    n = 0
    while True:
        b = c.recv(65536)
        if not b:
            break
        n += len(b)
    print(n, f"{time.monotonic() - start:.3f}", flush=True)


def send(host, port, size, cc):
    # The server may still be starting: try again on a refusal.
    for _ in range(50):
        s = socket.socket()
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
        try:
            s.connect((host, port))
            break
        except ConnectionRefusedError:
            s.close()
            time.sleep(0.2)
    chunk = b"x" * 65536
    left = size
    while left > 0:
        left -= s.send(chunk[: min(left, len(chunk))])
    s.shutdown(socket.SHUT_WR)
    s.recv(1)
    s.close()


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(int(sys.argv[2]))
    else:
        send(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
