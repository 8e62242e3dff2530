#!/usr/bin/python3
"""Training curves of several runs against episodes, and their sample efficiency.

Usage: plot_curves.py OUT.png LABEL=RUN_DIR [LABEL=RUN_DIR ...] [--target 1.0]

x: episodes (all ranks), read from RUN_DIR/metrics.csv at the iteration of each row of
RUN_DIR/eval.csv; y: eval.csv's greedy_vs_best_classical (geometric mean over the test
graphs, <1 beats the best classical placer). One line per run; runs whose labels share the
part before the last '/s' (bc/s1, bc/s2, ...) also form a group drawn as a mean line with a
min-max band (interpolated on the episodes all of the group's runs cover).

Prints markdown tables: per run, the first episode count at which greedy_vs_best_classical
<= target (sample efficiency), the best and the final value; per group (2+ runs), mean +-
sample sd of that episode count over the runs that reached the target.
"""
import argparse
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plotlib  # noqa: E402
from plotlib import InputError  # noqa: E402

Y = "greedy_vs_best_classical"


def load_run(run_dir):
    """(episodes, ratios) of the run's periodic evaluations, in iteration order."""
    metrics_path = os.path.join(run_dir, "metrics.csv")
    eval_path = os.path.join(run_dir, "eval.csv")
    if not os.path.isdir(run_dir):
        raise InputError(f"{run_dir}: not a run directory")
    episodes_at = {}
    for row in plotlib.read_csv(metrics_path, ("iteration", "episodes")):
        episodes_at[int(plotlib.number(metrics_path, row, "iteration"))] = plotlib.number(
            metrics_path, row, "episodes")
    if not episodes_at:
        raise InputError(f"{metrics_path}: no rows")
    iters = sorted(episodes_at)
    points = []
    for row in plotlib.read_csv(eval_path, ("iteration", Y)):
        it = int(plotlib.number(eval_path, row, "iteration"))
        y = plotlib.number(eval_path, row, Y)
        # The evaluation runs after iteration `it`; metrics.csv normally has that row. If it is
        # missing (a resumed run that lost rows), take the last iteration before it.
        before = [i for i in iters if i <= it]
        if not before:
            raise InputError(f"{eval_path}:{row['_line']}: iteration {it} precedes every "
                             f"iteration in {metrics_path}")
        points.append((it, episodes_at[before[-1]], y))
    if not points:
        raise InputError(f"{eval_path}: no evaluations yet")
    points.sort()
    return [p[1] for p in points], [p[2] for p in points]


def group_of(label):
    head, sep, _ = label.rpartition("/s")
    return head if sep and head else None


def first_reaching(xs, ys, target):
    for x, y in zip(xs, ys):
        if y <= target:
            return x
    return None


def interp(x, xs, ys):
    """Linear interpolation of (xs, ys) at x, xs ascending and x within [xs[0], xs[-1]]."""
    for i in range(1, len(xs)):
        if x <= xs[i]:
            if xs[i] == xs[i - 1]:
                return ys[i]
            t = (x - xs[i - 1]) / (xs[i] - xs[i - 1])
            return ys[i - 1] + t * (ys[i] - ys[i - 1])
    return ys[-1]


def group_band(runs):
    """Common x (the union of the runs' x inside the range they all cover) and the mean, min
    and max of the runs interpolated there."""
    lo = max(xs[0] for xs, _ in runs)
    hi = min(xs[-1] for xs, _ in runs)
    grid = sorted({x for xs, _ in runs for x in xs if lo <= x <= hi})
    cols = [[interp(x, xs, ys) for xs, ys in runs] for x in grid]
    return grid, [sum(c) / len(c) for c in cols], [min(c) for c in cols], [max(c) for c in cols]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out_png")
    ap.add_argument("runs", nargs="+", metavar="LABEL=RUN_DIR")
    ap.add_argument("--target", type=float, default=1.0,
                    help="greedy_vs_best_classical to reach (default 1.0 = best classical)")
    a = ap.parse_args()
    runs = []
    for arg in a.runs:
        label, run_dir = plotlib.label_arg(arg, "RUN_DIR")
        if any(label == r[0] for r in runs):
            raise InputError(f"label {label} given twice")
        runs.append((label, *load_run(run_dir)))
    groups = {}
    for label, xs, ys in runs:
        g = group_of(label)
        if g is not None:
            groups.setdefault(g, []).append((label, xs, ys))
    groups = {g: members for g, members in groups.items() if len(members) >= 2}

    plt = plotlib.pyplot()
    fig, ax = plt.subplots(figsize=(8, 5))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    color_of = {}
    for g in groups:
        color_of[g] = colors[len(color_of) % len(colors)]
    single_color = 0
    for label, xs, ys in runs:
        g = group_of(label)
        if g in groups:
            ax.plot(xs, ys, color=color_of[g], alpha=0.35, linewidth=1, marker=".")
        else:
            c = colors[(len(groups) + single_color) % len(colors)]
            single_color += 1
            ax.plot(xs, ys, color=c, linewidth=1.8, marker="o", markersize=3, label=label)
    for g, members in groups.items():
        grid, mean, lo, hi = group_band([(xs, ys) for _, xs, ys in members])
        if grid:
            ax.fill_between(grid, lo, hi, color=color_of[g], alpha=0.15)
            ax.plot(grid, mean, color=color_of[g], linewidth=2.2,
                    label=f"{g} (mean of {len(members)}, min-max band)")
    ax.axhline(a.target, color="gray", linestyle="--", linewidth=1,
               label=f"target {a.target:g}" + (" (best classical)" if a.target == 1.0 else ""))
    ax.set_xlabel("episodes (all ranks)")
    ax.set_ylabel("greedy runtime / best classical (test geomean)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(a.out_png, dpi=120)
    plt.close(fig)

    print(f"Episodes until greedy_vs_best_classical <= {a.target:g}\n")
    rows = []
    for label, xs, ys in runs:
        reached = first_reaching(xs, ys, a.target)
        finite = [y for y in ys if math.isfinite(y)]  # nan: every greedy placement failed
        rows.append([label, "not reached" if reached is None else f"{reached:.0f}",
                     f"{min(finite):.3f}" if finite else "n/a", f"{ys[-1]:.3f}",
                     f"{xs[-1]:.0f}"])
    print(plotlib.markdown_table(["run", "episodes to target", "best", "final", "episodes run"],
                                 rows))
    if groups:
        rows = []
        for g, members in groups.items():
            reached = [first_reaching(xs, ys, a.target) for _, xs, ys in members]
            hit = [r for r in reached if r is not None]
            m, sd = plotlib.mean_sd(hit)
            rows.append([g, f"{len(hit)}/{len(members)}",
                         "n/a" if math.isnan(m) else f"{m:.0f} ± {sd:.0f}"])
        print(plotlib.markdown_table(["group", "reached", "episodes to target (mean ± sd)"], rows))


if __name__ == "__main__":
    plotlib.run_main(main)
