"""Shared helpers for the experiment scripts (summarize_eval.py, plot_curves.py, plot_trace.py):
strict CSV reading with errors that name the file, the row and the field, the headless
matplotlib import, and small statistics.

Bad input raises InputError; each script's main() goes through run_main(), which prints the
message and exits 2 instead of showing a traceback.
"""
import csv
import math
import os
import sys


class InputError(Exception):
    """A user-supplied file is missing or malformed; the message names the file."""


def run_main(main):
    """Runs main() and turns InputError (and OSError on outputs) into 'script: error: message'
    on stderr and exit status 2."""
    try:
        main()
    except InputError as e:
        sys.stderr.write(f"{os.path.basename(sys.argv[0])}: error: {e}\n")
        sys.exit(2)
    except OSError as e:  # writing an output (a missing folder, no permission)
        sys.stderr.write(f"{os.path.basename(sys.argv[0])}: error: {e.filename}: {e.strerror}\n")
        sys.exit(2)


def pyplot():
    """matplotlib.pyplot on the Agg backend: no display needed, and Agg PNGs carry no
    timestamp, so the same input gives the same bytes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def read_csv(path, required):
    """Reads a CSV with a header into a list of dicts; every column in `required` must exist
    and every row must have as many fields as the header."""
    try:
        with open(path, newline="") as f:
            reader = csv.reader(f)
            header = next(reader, None)
            if header is None:
                raise InputError(f"{path}: empty file, expected a CSV header")
            missing = [c for c in required if c not in header]
            if missing:
                raise InputError(
                    f"{path}: missing column(s) {', '.join(missing)} "
                    f"(header: {','.join(header)})")
            rows = []
            for line_no, fields in enumerate(reader, start=2):
                if not fields:
                    continue
                if len(fields) != len(header):
                    raise InputError(f"{path}:{line_no}: {len(fields)} fields, "
                                     f"the header has {len(header)}")
                row = dict(zip(header, fields))
                row["_line"] = line_no
                rows.append(row)
    except OSError as e:
        raise InputError(f"{path}: {e.strerror}") from None
    except (csv.Error, UnicodeDecodeError) as e:
        raise InputError(f"{path}: not a readable CSV ({e})") from None
    return rows


def number(path, row, field):
    """The float in `field` of a row from read_csv; 'nan'/'inf' are accepted."""
    text = row[field]
    try:
        return float(text)
    except ValueError:
        raise InputError(f"{path}:{row['_line']}: field {field} is '{text}', "
                         "expected a number") from None


def boolean(path, row, field):
    text = row[field].strip().lower()
    if text in ("true", "1"):
        return True
    if text in ("false", "0"):
        return False
    raise InputError(f"{path}:{row['_line']}: field {field} is '{row[field]}', "
                     "expected true or false")


def label_arg(text, what):
    """Splits a LABEL=PATH argument."""
    label, sep, path = text.partition("=")
    if not sep or not label or not path:
        raise InputError(f"argument '{text}': expected LABEL={what}")
    return label, path


def geomean(values):
    values = list(values)
    if not values:
        return math.nan
    return math.exp(sum(math.log(v) for v in values) / len(values))


def mean_sd(values):
    """Mean and sample standard deviation (0 for a single value)."""
    values = list(values)
    if not values:
        return math.nan, math.nan
    m = sum(values) / len(values)
    if len(values) < 2:
        return m, 0.0
    return m, math.sqrt(sum((v - m) ** 2 for v in values) / (len(values) - 1))


def median(values):
    v = sorted(values)
    if not v:
        return math.nan
    mid = len(v) // 2
    return v[mid] if len(v) % 2 else (v[mid - 1] + v[mid]) / 2


def markdown_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def anytime_grid(rows, columns, series, png, ylabel="runtime / best classical"):
    """One panel per (row, column) -- families by device counts -- of runtime ratio against
    placement time on a log axis, with the 1.0 line.  series(row, column) returns a list of
    (label, xs, ys, matplotlib keyword arguments); the legend goes on the top-right panel."""
    plt = pyplot()
    fig, axes = plt.subplots(len(rows), len(columns), figsize=(4 * len(columns), 3.2 * len(rows)),
                             squeeze=False)
    for i, r in enumerate(rows):
        for j, c in enumerate(columns):
            ax = axes[i][j]
            for label, xs, ys, style in series(r, c):
                ax.plot(xs, ys, label=label, **style)
            ax.set_xscale("log")
            ax.axhline(1.0, color="grey", linewidth=0.6)
            ax.set_title("%s, %s devices" % (r, c))
            if i == len(rows) - 1:
                ax.set_xlabel("place ms (mean)")
            if j == 0:
                ax.set_ylabel(ylabel)
    axes[0][-1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(png, dpi=100)
