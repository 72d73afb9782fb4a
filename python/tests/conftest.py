import os
import sys
from pathlib import Path

import pytest

# Plots must work without a display.
os.environ.pop("DISPLAY", None)
os.environ.pop("WAYLAND_DISPLAY", None)
os.environ["MPLBACKEND"] = "Agg"

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "scenarios"


def small(**flow) -> dict:
    """A small, fast scenario as a dict."""
    f = {"bytes": "200kB", "protocol": "newreno"}
    f.update(flow)
    return {
        "name": "small",
        "link": {"rate": "2Mbps", "delay": "10ms", "radio": "wavelan",
                 "loss": {"model": "bernoulli", "rate": 0.01}},
        "flow": f,
        "output": {"series": ["cwnd", "channel", "rate"]},
    }


@pytest.fixture
def scenario() -> dict:
    return small()


@pytest.fixture
def demo_path() -> Path:
    return SCENARIOS / "demo.toml"
