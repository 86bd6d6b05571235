"""PNG plots of a score report: YN accuracy and FR exact match against n and against m, one line
per setting (as in the RoomSpace paper's Figure 10). Agg backend and no timestamp: same bytes
for the same scores."""

from __future__ import annotations

from pathlib import Path

from pipeline.evaluate.score import PLOTTED, Metrics, Report
from pipeline.files import write_atomic
from pipeline.spatial.facts import SETTINGS

PANELS = (("yn_accuracy", "YN accuracy (%)"), ("fr_exact", "FR exact-set match (%)"))


def accuracy_plot(points: dict[str, dict[int, Metrics]], axis: str, title: str, path: Path) -> Path:
    """points: setting -> axis value -> metrics. Written atomically to `path`."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    figure, panels = plt.subplots(1, len(PANELS), figsize=(11, 4.2), sharex=True)
    ticks = sorted({value for per_setting in points.values() for value in per_setting})
    for panel, (field, label) in zip(panels, PANELS):
        for setting in (s for s in SETTINGS if s in points):
            values = sorted(points[setting])
            rates = [getattr(points[setting][v], field) for v in values]
            panel.plot(values, [None if r is None else 100 * r for r in rates], marker="o", label=setting)
        panel.set_xlabel(axis)
        panel.set_ylabel(label)
        panel.set_ylim(-2, 102)
        panel.grid(alpha=0.3)
        panel.set_xticks(ticks)
    panels[-1].legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    figure.suptitle(title)
    figure.tight_layout()
    write_atomic(path, lambda target: figure.savefig(target, format="png", dpi=100, metadata={"Software": None}))
    plt.close(figure)
    return path


def write_plots(reports: list[Report], folder: Path) -> list[Path]:
    """Two PNGs per system: {system}-accuracy-vs-n.png and {system}-accuracy-vs-m.png."""
    return [accuracy_plot(report.by_setting[axis], axis, f"{report.system}: accuracy against {axis}",
                          folder / f"{report.system}-accuracy-vs-{axis}.png")
            for report in reports for axis in PLOTTED]
