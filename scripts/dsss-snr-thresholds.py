#!/usr/bin/env python3
"""The 802.11b rows of the simulator's rate table (crates/sim/src/medium/
rate_control.rs, DSSS_SNR_DB): for each DSSS/HR-DSSS rate, the SNR (dB) at
which a 1000-byte frame is lost half the time under ns-3's
DsssErrorRateModel (src/wifi/model/dsss-error-rate-model.cc): DBPSK and
DQPSK in closed form, CCK 5.5/11 by the symbol-error integral ns-3
evaluates with GSL (here by the trapezoid rule). Standard library only.

Usage: scripts/dsss-snr-thresholds.py   (prints: rate, SNR dB)
"""
import math

BITS = 8000  # a 1000-byte frame


def phi(x):
    return 0.5 * (1 + math.erf(x / math.sqrt(2)))


def dbpsk(snr):
    ber = 0.5 * math.exp(-snr * 22)  # Eb/N0 = SNR x 22 MHz / 1 Mbit/s
    return (1 - ber) ** BITS


def dqpsk(snr):
    x = snr * 22 / 2
    ber = (math.sqrt(2) + 1) / math.sqrt(8 * math.pi * math.sqrt(2)) / math.sqrt(x)
    ber = min(0.5, ber * math.exp(-(2 - math.sqrt(2)) * x))
    return (1 - ber) ** BITS


def sep16(e2, steps=20000):
    """ns-3's SymbolErrorProb16Cck: 1 - integral of the 8-ary detector."""
    beta = math.sqrt(2 * e2)
    a, b = -beta, beta + 12
    h = (b - a) / steps
    total = 0.0
    for i in range(steps + 1):
        x = a + i * h
        w = 0.5 if i in (0, steps) else 1.0
        total += w * (2 * phi(x + beta) - 1) ** 7 * math.exp(-x * x / 2) / math.sqrt(2 * math.pi)
    return 1 - total * h


def cck55(snr):
    ebn0 = snr * 22 / 1.375 / 4
    return min(1.0, (1 - sep16(4 * ebn0 / 2)) ** (BITS / 4))


def cck11(snr):
    ebn0 = snr * 22 / 1.375 / 8
    sep = 1 - (1 - sep16(8 * ebn0 / 2 / 2)) ** 2
    return min(1.0, (1 - sep) ** (BITS / 8))


def half_loss_db(success):
    lo, hi = -20.0, 30.0
    for _ in range(50):
        mid = (lo + hi) / 2
        if success(10 ** (mid / 10)) < 0.5:
            lo = mid
        else:
            hi = mid
    return mid


for rate, f in [("1", dbpsk), ("2", dqpsk), ("5.5", cck55), ("11", cck11)]:
    print(f"{rate:>4} Mbit/s {half_loss_db(f):6.2f} dB")
