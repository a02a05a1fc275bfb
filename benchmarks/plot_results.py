"""Plots of the benchmark measurements for the docs' Performance page.

    python benchmarks/bench_sparse.py --json sparse.json
    python benchmarks/plot_results.py sparse sparse.json -o docs/_static/bench_sparse.png

    python benchmarks/bench_array_api.py --json array_api.json
    python benchmarks/plot_results.py array_api array_api.json -o docs/_static/bench_array_api.png

``sparse``: time per call against the network size for one firing rate, one panel per
product and direction, tiarray's routes next to every peer of the run and the
memory-traffic lower bound (log-log). ``array_api``: the tiarray / NumPy time ratio of
each case at the largest size of the run (bars; left of 1: tiarray faster).
The plots only redraw what the benchmark measured; they measure nothing themselves.
"""

from __future__ import annotations

import argparse
import json
import sys

# line styles: tiarray's routes solid, peers dashed
_TI = {"tiarray": "tiarray (NumPy)", "ti jit": "tiarray in jax.jit", "ti CSR": "tiarray CSR object"}
_PEERS = ("scipy", "torch", "jax BCSR", "jax BCOO", "dense @", "brainevent")


def plot_sparse(data: dict, out: str, rate: float | None) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = data["rows"]
    si = 0 if data["meta"].get("stat") == "median" else 1
    rates = sorted({r["r"] for r in rows})
    if rate is None:
        rate = min(rates, key=lambda x: abs(x - 0.05))
    if rate not in rates:
        raise SystemExit(f"plot_results.py: argument --rate: {rate} not measured (the run has {rates})")
    panels = [(op, t) for op in ("event_csrmv", "csrmv") for t in (False, True)]
    fig, axes = plt.subplots(2, 2, figsize=(11, 8), sharex=True)
    for ax, (op, transpose) in zip(axes.flat, panels):
        sel = sorted(
            (r for r in rows if r["op"] == op and r["transpose"] == transpose and r["r"] == rate),
            key=lambda r: r["n"],
        )
        if not sel:
            ax.set_visible(False)
            continue
        ns = [r["n"] for r in sel]
        methods = [m for m in (*_TI, *_PEERS) if any(m in r["res"] for r in sel)]
        for m in methods:
            ys = [r["res"][m][si] if m in r["res"] else float("nan") for r in sel]
            style = "-o" if m in _TI else "--s"
            ax.plot(ns, ys, style, label=_TI.get(m, m), lw=2.2 if m == "tiarray" else 1.3, ms=4)
        ax.plot(ns, [r["lb"] for r in sel], ":", color="black", label="memory-traffic bound")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(f"{op}  {'A.T @ s' if transpose else 'A @ s'}  (r = {rate})")
        ax.grid(True, which="both", alpha=0.3)
        ax.set_ylabel(f"us per call ({'median' if si == 0 else 'minimum'})")
    for ax in axes[-1]:
        ax.set_xlabel("neurons n (20-200 synapses per row)")
    handles, labels = [], []
    for ax in axes.flat:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    fig.legend(handles, labels, loc="lower center", ncol=5, fontsize=9)
    fig.suptitle("Sparse products, float32 weights, bool events: benchmarks/bench_sparse.py")
    fig.tight_layout(rect=(0, 0.07, 1, 0.96))
    fig.savefig(out, dpi=110)


def plot_array_api(data: dict, out: str) -> None:
    import statistics

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in data["rows"] if not r["case"].startswith("overhead")]
    largest = max(r["n"] for r in rows if not r["case"].startswith("matmul"))
    sel = [r for r in rows if r["n"] == largest or r["case"].startswith("matmul")]
    labels = [r["case"] if r["case"].startswith("matmul") else f"{r['case']} (n = {r['n']:.0e})" for r in sel]
    best = [min(r["tiarray_s"]) / min(r["numpy_s"]) for r in sel]
    med = [statistics.median(r["tiarray_s"]) / statistics.median(r["numpy_s"]) for r in sel]
    fig, ax = plt.subplots(figsize=(8, 0.42 * len(sel) + 1.4))
    ys = range(len(sel))
    colors = ["tab:green" if b <= 1 else "tab:red" for b in best]
    ax.barh(list(ys), best, color=colors, alpha=0.8, label="best batch")
    ax.plot(med, list(ys), "k|", ms=12, label="ratio of medians")
    ax.axvline(1.0, color="black", lw=1)
    ax.set_yticks(list(ys), labels)
    ax.invert_yaxis()
    ax.set_xlabel("time tiarray / time NumPy (< 1: tiarray faster)")
    ax.set_title("Array API, float32: benchmarks/bench_array_api.py")
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(True, axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kind", choices=["sparse", "array_api"])
    ap.add_argument("json", help="the file written by the benchmark's --json")
    ap.add_argument("-o", "--out", required=True, help="PNG file to write")
    ap.add_argument(
        "--rate", type=float, default=None, help="sparse: the firing rate to plot (default: 0.05)"
    )
    args = ap.parse_args(argv)
    with open(args.json) as f:
        data = json.load(f)
    if args.kind == "sparse":
        plot_sparse(data, args.out, args.rate)
    else:
        plot_array_api(data, args.out)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
