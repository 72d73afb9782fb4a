"""Numbers for people: each metric's name, unit, domain and which way is
better, the SI prefix a set of values reads best in, and human names for
scenario parameters. The same choices as the CLI's tables
(``crates/sim/src/present.rs``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Optional, Tuple


@dataclass(frozen=True)
class Metric:
    """What a person needs to read one metric."""

    label: str
    #: SI unit before any prefix; "" for counts and ratios
    unit: str
    #: "real", "nonnegative" or "unit" (a fraction in [0, 1])
    domain: str
    #: "higher", "lower" or None (no winner is named)
    better: Optional[str]
    definition: str
    symbol: Optional[str] = None


METRICS = {
    "aggregate_goodput_bps": Metric(
        "goodput", "bit/s", "nonnegative", "higher",
        "bits delivered by all measured flows over their common interval"),
    "goodput_bps": Metric(
        "goodput", "bit/s", "nonnegative", "higher",
        "a flow's bits delivered over its active time"),
    "energy_j": Metric(
        "energy", "J", "nonnegative", "lower", "every node's radio energy over the run (S)"),
    "energy_per_bit_j": Metric(
        "energy per bit", "J", "nonnegative", "lower",
        "S over the bits delivered by the measured flows"),
    "minimum_energy_j": Metric(
        "minimum energy", "J", "nonnegative", None,
        "M: every delivered bit sent once over each wireless hop, no header, ACK or "
        "retransmission (E2TCP's definition)"),
    "efficiency": Metric(
        "efficiency", "", "unit", "higher", "M/S, the minimum energy over the energy spent",
        symbol="ε"),
    "energy_overhead": Metric(
        "overhead", "", "nonnegative", "lower",
        "(S − M)/M, the energy spent beyond the minimum, per unit of it", symbol="o"),
    "jain_fairness": Metric(
        "Jain's fairness", "", "unit", "higher",
        "(Σx)² / (n Σx²) of the flows' own goodputs"),
    "duration_s": Metric("duration", "s", "nonnegative", None, "simulated time of the run"),
    "completion_time_s": Metric(
        "completion time", "s", "nonnegative", "lower",
        "from a flow's start to its last byte delivered"),
    "flows_completed": Metric(
        "flows completed", "", "nonnegative", "higher", "measured flows that finished"),
    "retransmitted_packets": Metric(
        "retransmissions", "", "nonnegative", "lower", "data packets sent again"),
    "timeouts": Metric("timeouts", "", "nonnegative", "lower", "retransmission timeouts"),
    "bytes_delivered": Metric(
        "delivered", "B", "nonnegative", "higher", "application bytes delivered in order"),
    "delay_mean_ms": Metric("mean delay", "s", "nonnegative", "lower",
                            "application byte produced to delivered in order"),
    "rtt_mean_ms": Metric("mean RTT", "s", "nonnegative", None, "round-trip samples"),
    "first_death_s": Metric(
        "first death", "s", "nonnegative", "higher",
        "when the first battery-powered node's battery emptied"),
    "fraction_dead_s": Metric(
        "fraction dead", "s", "nonnegative", "higher",
        "when the scenario's dead_fraction of the battery-powered nodes had died"),
    "first_partition_s": Metric(
        "first partition", "s", "nonnegative", "higher",
        "when deaths first cut a measured flow's source off from its destination"),
}

#: stored unit → factor to the SI base unit, for keys whose suffix says so
_SUFFIX_SCALE = {"_ms": 1e-3, "_mbps": 1e6, "_uj": 1e-6}

PARAMETER_LABELS = {
    "flow.protocol": "protocol",
    "link.loss.rate": "loss rate",
    "link.rate": "link rate",
    "link.delay": "one-way delay",
    "link.queue": "queue (packets)",
    "flow.size": "transfer size",
    "topology.hops": "hops",
    "link.loss.bad.loss": "loss in the bad state",
    "link.loss.good.loss": "loss in the good state",
}

_PREFIXES = [("G", 1e9), ("M", 1e6), ("k", 1e3), ("", 1.0), ("m", 1e-3), ("µ", 1e-6),
             ("n", 1e-9)]


def metric(key: str) -> Metric:
    """The description of ``key``; an unknown key gets its words as label,
    its unit guessed from its suffix, and no domain beyond the reals."""
    if key in METRICS:
        return METRICS[key]
    for suffix, unit in (("_bps", "bit/s"), ("_j", "J"), ("_ms", "s"), ("_s", "s")):
        if key.endswith(suffix):
            return Metric(key[: -len(suffix)].replace("_", " "), unit, "nonnegative", None, "")
    return Metric(key.replace("_", " "), "", "real", None, "")


def to_base(key: str) -> float:
    """Factor from the value stored under ``key`` to its SI base unit
    (``delay_mean_ms`` is stored in ms, its unit is s)."""
    for suffix, factor in _SUFFIX_SCALE.items():
        if key.endswith(suffix):
            return factor
    return 1.0


def si_prefix(values: Iterable[float], unit: str) -> Tuple[float, str]:
    """(divisor, unit with prefix) that puts the largest magnitude of
    ``values`` (in base units) in [1, 1000). Counts and ratios take no
    prefix; seconds of 1 or more stay seconds."""
    finite = [abs(v) for v in values if v is not None and math.isfinite(v)]
    largest = max(finite, default=0.0)
    if not unit or largest == 0.0 or (unit == "s" and largest >= 1.0):
        return 1.0, unit
    for prefix, factor in _PREFIXES:
        if largest >= factor:
            return factor, prefix + unit
    return _PREFIXES[-1][1], _PREFIXES[-1][0] + unit


def axis_label(key: str, unit: str) -> str:
    """``energy per bit (µJ)``, ``ε efficiency``."""
    m = metric(key)
    name = f"{m.symbol} {m.label}" if m.symbol else m.label
    return f"{name} ({unit})" if unit else name


def parameter_label(key: str) -> str:
    """A human name for a scenario parameter (``link.loss.rate`` → ``loss rate``)."""
    if key in PARAMETER_LABELS:
        return PARAMETER_LABELS[key]
    parts = key.split(".")
    # The last word alone can be ambiguous ("loss" of which state?): keep
    # the one before it unless it is the table's name.
    words = parts[-2:] if len(parts) > 2 else parts[-1:]
    return " ".join(words).replace("_", " ")


def decimals(largest_scaled: float) -> int:
    """Decimals that give three significant digits to the largest value."""
    if largest_scaled >= 100 or largest_scaled == 0:
        return 0
    if largest_scaled >= 10:
        return 1
    if largest_scaled >= 1:
        return 2
    return 3
