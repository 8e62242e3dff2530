#!/usr/bin/python3
"""Plots a run's metrics.csv: runtime (mean and best) relative to the start placement,
entropy and episodes/s per iteration.  Usage: plot_training.py RUN_DIR [OUT.png]"""
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
    fig, ax = plt.subplots(1, 3, figsize=(14, 4))
    ax[0].plot(it, [float(r["mean_ratio_to_start"]) for r in rows], label="mean final / start")
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
    fig.suptitle(run)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(out)


if __name__ == "__main__":
    main()
