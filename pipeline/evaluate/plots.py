"""PNG plots of an evaluation, several systems on one figure, each line with its 95 % band.

* `{group}-{metric}-vs-{axis}.png`: YN accuracy or FR exact match against n, m, hops or
  answer-set size, one panel per setting (as in the RoomSpace paper's figures), one line per
  system, the chance and majority levels of the same items dotted;
* `gaps.png`: every paired gap of every system, with its interval.

Agg backend and no timestamp: the same scores give the same bytes.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from pipeline.evaluate.report import Evaluation, GroupReport
from pipeline.files import write_atomic

METRICS = (("yn_accuracy", "yn_majority", "YN accuracy (%)"), ("fr_exact", "fr_majority", "FR exact match (%)"))
AXIS_NAMES = {"n": "objects n", "m": "described pairs m", "hops": "hops", "answer_set_size": "answer-set size"}


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    return pyplot


def _save(figure, path: Path) -> Path:
    write_atomic(path, lambda target: figure.savefig(target, format="png", dpi=100, metadata={"Software": None}))
    _pyplot().close(figure)
    return path


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-")


def curve_plot(group: GroupReport, axis: str, metric: str, majority: str, label: str, path: Path) -> Path | None:
    settings = {s: v for s, v in group.curves[axis].items() if any(getattr(m, metric) for part in v.values()
                                                                   for m in part.systems.values())}
    if not settings or all(len(values) < 2 for values in settings.values()):
        return None  # one point per line: nothing to compare (pool configurations with --pool)
    plt = _pyplot()
    columns = min(4, len(settings))
    rows = math.ceil(len(settings) / columns)
    figure, panels = plt.subplots(rows, columns, figsize=(3.6 * columns, 3.0 * rows), squeeze=False, sharey=True)
    systems = list(next(iter(next(iter(settings.values())).values())).systems)
    for panel, (setting, values) in zip(panels.flat, settings.items()):
        xs = sorted(values)
        for system in systems:
            rates = [getattr(values[x].systems[system], metric) for x in xs]
            kept = [(x, r) for x, r in zip(xs, rates) if r is not None]
            if not kept:
                continue
            panel.plot([x for x, _ in kept], [100 * r.value for _, r in kept], marker="o", label=system)
            panel.fill_between([x for x, _ in kept], [100 * r.low for _, r in kept], [100 * r.high for _, r in kept],
                               alpha=0.2)
        levels = [(x, getattr(values[x].reference, majority)) for x in xs]
        panel.plot([x for x, v in levels if v is not None], [100 * v for _, v in levels if v is not None],
                   linestyle=":", color="grey", label="majority")
        panel.set_title(setting, fontsize=9)
        panel.set_xticks(xs)
        panel.set_ylim(-2, 102)
        panel.grid(alpha=0.3)
    for panel in panels.flat[len(settings):]:
        panel.set_visible(False)
    for panel in panels[-1]:
        panel.set_xlabel(AXIS_NAMES[axis])
    for panel in panels[:, 0]:
        panel.set_ylabel(label)
    panels.flat[0].legend(fontsize=7)
    figure.suptitle(f"{group.name}: {label} against {AXIS_NAMES[axis]}")
    figure.tight_layout()
    return _save(figure, path)


def gaps_plot(evaluation: Evaluation, path: Path) -> Path | None:
    gaps = [g for g in evaluation.gaps if g.result is not None]
    if not gaps:
        return None
    plt = _pyplot()
    figure, panel = plt.subplots(figsize=(8, 0.35 * len(gaps) + 1.2))
    ys = range(len(gaps))
    values = [100 * g.result.difference for g in gaps]
    errors = [[100 * (g.result.difference - g.result.low) for g in gaps],
              [100 * (g.result.high - g.result.difference) for g in gaps]]
    panel.errorbar(values, list(ys), xerr=errors, fmt="o", capsize=3)
    panel.axvline(0, color="grey", linewidth=0.8)
    panel.set_yticks(list(ys))
    panel.set_yticklabels([f"{g.system}: {g.kind}, {g.measure} ({g.configs})" for g in gaps], fontsize=7)
    panel.invert_yaxis()
    panel.set_xlabel("first - second condition (percentage points, 95% paired bootstrap interval)")
    panel.grid(alpha=0.3, axis="x")
    figure.tight_layout()
    return _save(figure, path)


def write_plots(evaluation: Evaluation, folder: Path) -> list[Path]:
    written = []
    for group in evaluation.groups:
        for axis in group.curves:
            for metric, majority, label in METRICS:
                path = folder / f"{_slug(group.name)}-{metric}-vs-{axis}.png"
                written.append(curve_plot(group, axis, metric, majority, label, path))
    written.append(gaps_plot(evaluation, folder / "gaps.png"))
    return [path for path in written if path is not None]
