"""Pure functions that turn rows into what a page draws: the latency chart's SVG points and a
trace's waterfall bars. No database, no templates."""

from __future__ import annotations

from dataclasses import dataclass

CHART_W, CHART_H, PAD = 1000, 90, 4


def latency_chart(series, *, width: int = CHART_W, height: int = CHART_H) -> dict:
    """SVG polylines (one per run kind) of the hourly p50 latency, on a shared y scale."""
    values = [v for line in series.p50.values() for v in line if v is not None]
    top = max(values, default=0) or 1.0
    n = max(len(series.hours) - 1, 1)
    lines, dots = {}, []
    for kind, points in series.p50.items():
        coords = [(round(PAD + i * (width - 2 * PAD) / n, 1),
                   round(height - PAD - (v / top) * (height - 2 * PAD), 1), v)
                  for i, v in enumerate(points) if v is not None]
        lines[kind] = " ".join(f"{x},{y}" for x, y, _ in coords)
        dots += [{"kind": kind, "x": x, "y": y, "ms": v} for x, y, v in coords]
    return {"width": width, "height": height, "max_ms": round(top, 1), "lines": lines, "dots": dots,
            "start": series.hours[0] if series.hours else None, "empty": not values}


@dataclass
class WaterfallRow:
    step: object
    offset_ms: float
    left_pct: float
    width_pct: float


def waterfall(steps: list) -> list[WaterfallRow]:
    """Steps one after another on a shared time axis (each attempt restarts at 0), bars to scale."""
    offsets, clock, attempt = [], 0.0, None
    for step in steps:
        if step.attempt != attempt:
            clock, attempt = 0.0, step.attempt
        offsets.append(clock)
        clock += step.duration_ms or 0.0
    total = max((o + (s.duration_ms or 0.0) for o, s in zip(offsets, steps, strict=True)), default=0.0) or 1.0
    return [WaterfallRow(step=s, offset_ms=round(o, 2), left_pct=round(100 * o / total, 2),
                         width_pct=round(max(100 * (s.duration_ms or 0.0) / total, 0.4), 2))
            for o, s in zip(offsets, steps, strict=True)]
