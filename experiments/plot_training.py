#!/usr/bin/python3
"""Plots a run's metrics.csv: runtime (mean final and best seen) relative to the start
placement, entropy and episodes/s per iteration, and, when metrics.csv has them, the signals
that say whether the run learns: advantage standard deviation, fraction of steps that move an
op, and the cosine between the gradients of the two halves of a batch (docs/TRAINING.md).
Usage: plot_training.py RUN_DIR [OUT.png]"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: plot_training.py RUN_DIR [OUT.png]")
    run = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else run + "/training.png"
    try:
        rows = list(csv.DictReader(open(run + "/metrics.csv")))
    except OSError as e:
        sys.exit(f"{run}/metrics.csv: {e.strerror}")
    if not rows:
        sys.exit(f"{run}/metrics.csv: no rows yet")
    it = [int(r["iteration"]) for r in rows]

    def column(name):
        """The column as floats, or None when this metrics.csv predates it (empty cells too)."""
        if name not in rows[0]:
            return None
        vals = [float(r[name]) if r[name] not in ("", None) else float("nan") for r in rows]
        return vals if any(v == v for v in vals) else None

    signals = [("adv_sd", "advantage s.d. (before normalisation)", "tab:purple"),
               ("move_fraction", "fraction of steps that move an op", "tab:brown"),
               ("grad_cosine", "cosine of the two half-batch gradients", "tab:red")]
    signals = [(name, label, color, column(name)) for name, label, color in signals]
    signals = [s for s in signals if s[3] is not None]
    nrows = 2 if signals else 1
    fig, grid = plt.subplots(nrows, 3, figsize=(14, 4 * nrows), squeeze=False)
    ax = grid.flatten()
    for a in ax[3 + len(signals):]:
        a.set_visible(False)
    ax[0].plot(it, [float(r["mean_ratio_to_start"]) for r in rows], label="mean final / start")
    best = column("best_ratio_to_start")
    if best is not None:
        ax[0].plot(it, best, label="mean best seen / start")
    ax[0].set_xlabel("iteration")
    ax[0].set_ylabel("runtime relative to the start placement")
    ax[0].legend()
    ax[0].grid(alpha=0.3)
    ax[1].plot(it, [float(r["entropy"]) for r in rows], color="tab:orange")
    ax[1].set_xlabel("iteration")
    ax[1].set_ylabel("policy entropy (nats)")
    ax[1].grid(alpha=0.3)
    ax[2].plot(it, [float(r["episodes_per_s"]) for r in rows], color="tab:green")
    ax[2].set_xlabel("iteration")
    ax[2].set_ylabel("episodes / s (all ranks)")
    ax[2].grid(alpha=0.3)
    for a, (name, label, color, vals) in zip(ax[3:], signals):
        a.plot(it, vals, color=color, linewidth=0.8)
        a.set_xlabel("iteration")
        a.set_ylabel(label)
        a.grid(alpha=0.3)
    fig.suptitle(run)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(out)


if __name__ == "__main__":
    main()
