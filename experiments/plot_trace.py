#!/usr/bin/python3
"""Renders a Chrome trace-event JSON from `placeto sim --trace` as a timeline PNG.

Usage: plot_trace.py TRACE.json OUT.png [--title T]

The trace has one process per device (pid, named by a process_name metadata event) with
thread 0 = compute and thread 1 = outgoing bus (thread_name events); "X" events carry ts and
dur in microseconds. One row per (device, thread), top to bottom in pid then tid order, one
rectangle per op (compute) or transfer (bus), x in milliseconds. Row labels show how busy the
row is; the title shows the total runtime (the end of the last event). Also prints the
runtime and a per-row table (events, busy %) on stdout. Zero-length events
(variables, no-op transfers) get a hairline so they remain visible. Drawn with broken_barh,
one call per row, so tens of thousands of events render in about a second.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plotlib  # noqa: E402
from plotlib import InputError  # noqa: E402

COLORS = {"compute": "tab:blue", "transfer": "tab:orange"}


def load_trace(path):
    """(rows, other_data): rows maps (pid, tid) to {"label", "kind", "spans": [(ts, dur)]}."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except OSError as e:
        raise InputError(f"{path}: {e.strerror}") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: not valid JSON ({e})") from None
    events = doc.get("traceEvents") if isinstance(doc, dict) else doc
    if not isinstance(events, list):
        raise InputError(f"{path}: expected a traceEvents array (Chrome trace-event format)")
    process_names, thread_names, rows = {}, {}, {}
    for i, e in enumerate(events):
        where = f"{path}: traceEvents[{i}]"
        if not isinstance(e, dict):
            raise InputError(f"{where}: expected an object")
        ph = e.get("ph")
        try:
            if ph == "M":
                name = (e.get("args") or {}).get("name", "")
                if e.get("name") == "process_name":
                    process_names[int(e["pid"])] = name
                elif e.get("name") == "thread_name":
                    thread_names[(int(e["pid"]), int(e["tid"]))] = name
            elif ph == "X":
                key = (int(e["pid"]), int(e["tid"]))
                ts, dur = float(e["ts"]), float(e["dur"])
                if dur < 0:
                    raise InputError(f"{where}: negative dur {dur}")
                row = rows.setdefault(key, {"spans": [], "cats": set()})
                row["spans"].append((ts, dur))
                row["cats"].add(e.get("cat", ""))
        except KeyError as k:
            raise InputError(f"{where}: '{ph}' event without field {k}") from None
        except (TypeError, ValueError):
            raise InputError(f"{where}: pid, tid, ts and dur must be numbers") from None
    if not rows:
        raise InputError(f"{path}: no 'X' (complete) events to draw")
    for (pid, tid), row in rows.items():
        thread = thread_names.get((pid, tid), f"thread {tid}")
        # The simulator marks bus rows with cat "transfer"; fall back to the thread id.
        transfer = "transfer" in row["cats"] or ("op" not in row["cats"] and tid == 1)
        row["kind"] = "transfer" if transfer else "compute"
        row["label"] = f"{process_names.get(pid, f'device {pid}')} {thread}"
    other = doc.get("otherData", {}) if isinstance(doc, dict) else {}
    return rows, other if isinstance(other, dict) else {}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trace")
    ap.add_argument("out_png")
    ap.add_argument("--title", help="title prefix (default: the trace's graph and cluster)")
    a = ap.parse_args()
    rows, other = load_trace(a.trace)
    keys = sorted(rows)
    end_us = max(ts + dur for r in rows.values() for ts, dur in r["spans"])
    start_us = min(ts for r in rows.values() for ts, _ in r["spans"])
    total_ms = end_us / 1000.0
    hairline = max(end_us - min(start_us, 0.0), 1e-9) / 1000.0 * 5e-4

    plt = plotlib.pyplot()
    height = min(0.45 * len(keys) + 1.6, 40)
    fig, ax = plt.subplots(figsize=(12, height))
    labels, table = [], []
    for y, key in enumerate(reversed(keys)):  # first device on top
        r = rows[key]
        spans = sorted(r["spans"])
        bars = [(ts / 1000.0, max(dur / 1000.0, hairline)) for ts, dur in spans]
        ax.broken_barh(bars, (y - 0.4, 0.8), facecolors=COLORS[r["kind"]], linewidth=0)
        busy = sum(d for _, d in spans) / end_us if end_us > 0 else 0.0
        labels.append(f"{r['label']} ({100 * busy:.0f}% busy)")
        table.append([r["label"], r["kind"], len(spans), f"{100 * busy:.1f}"])
    ax.set_yticks(range(len(keys)))
    ax.set_yticklabels(labels, fontsize=8)
    ax.set_ylim(-0.6, len(keys) - 0.4)
    ax.set_xlim(min(start_us, 0.0) / 1000.0, total_ms * 1.01 if total_ms > 0 else 1.0)
    ax.set_xlabel("time (ms)")
    ax.grid(axis="x", alpha=0.3)
    from matplotlib.patches import Patch

    ax.legend(handles=[Patch(color=COLORS["compute"], label="compute (op)"),
                       Patch(color=COLORS["transfer"], label="transfer (outgoing bus)")],
              loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)
    title = a.title
    if title is None:
        title = " / ".join(str(other[k]) for k in ("graph", "cluster") if other.get(k)) or \
            os.path.basename(a.trace)
    n = sum(len(r["spans"]) for r in rows.values())
    ax.set_title(f"{title}: runtime {total_ms:.3f} ms ({n} events)")
    fig.tight_layout()
    fig.savefig(a.out_png, dpi=120)
    plt.close(fig)
    print(f"{title}: runtime {total_ms:.3f} ms, {n} events\n")
    print(plotlib.markdown_table(["row", "kind", "events", "busy %"], reversed(table)))


if __name__ == "__main__":
    plotlib.run_main(main)
