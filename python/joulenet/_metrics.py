"""A result's numbers in long format: what the store's ``metrics`` table
holds. Light to import: worker processes compute the rows next to the
run, so the sweep's parent only writes them."""

from __future__ import annotations

import json
from typing import Any, List, Mapping, Optional, Tuple

#: (kind, entity, label, metric, value)
MetricRow = Tuple[str, str, str, str, Optional[float]]


def _num(v: Any) -> Optional[float]:
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, (int, float)):
        return float(v)
    return None


def long_metrics(result: Mapping[str, Any]) -> List[MetricRow]:
    """(kind, entity, label, metric, value) rows of a result's numbers.
    ``None`` (a metric that does not apply, e.g. completion time of an
    unfinished flow) is kept as NULL."""
    rows: List[MetricRow] = []
    for f in result["flows"]:
        for k, v in f.items():
            if k in ("flow", "label", "protocol", "app"):
                continue
            if v is None or _num(v) is not None:
                rows.append(("flow", str(f["flow"]), f["label"], k, _num(v)))
    for n in result["nodes"]:
        for k, v in n.items():
            if k in ("node", "name"):
                continue
            if v is None or _num(v) is not None:
                rows.append(("node", str(n["node"]), n["name"], k, _num(v)))
    for link in result["links"]:
        label = f"{link['from']}->{link['to']}"
        for k, v in link.items():
            if k == "link":
                continue
            if v is None or _num(v) is not None:
                rows.append(("link", str(link["link"]), label, k, _num(v)))
    for k, v in result["summary"].items():
        if v is None or _num(v) is not None:
            rows.append(("summary", "", "", k, _num(v)))
    return rows


def metrics_json(rows: List[MetricRow]) -> str:
    """The rows as one compact JSON array of [kind, entity, label, metric,
    value] arrays: how the store keeps a run's metrics (one column of its
    ``runs`` row, which the ``metrics`` view expands). The rows come from a
    result's JSON, so every value is finite or None (NULL)."""
    return json.dumps([list(r) for r in rows], separators=(",", ":"), allow_nan=False)
