"""Write docs/gpu_report.md from the files of one ``benchmarks/gpu_run.sh`` run.

    python benchmarks/gpu_report.py OUT_DIR [OUT_DIR2] > docs/gpu_report.md

OUT_DIR holds what the run wrote (run.log, gpu_check.log, suite.log, suite.xml, bench.log).
With a second directory (a rerun after fixes), the report shows the rerun's results and keeps
the first run's failures in a section of their own. Nothing is computed here that the run did
not print: the report is the run's output, arranged.
"""

from __future__ import annotations

import collections
import os
import re
import sys
import xml.etree.ElementTree as ET


def _read(d, name):
    p = os.path.join(d, name)
    return open(p, errors="replace").read() if os.path.exists(p) else ""


def env_section(run_log: str) -> str:
    """The env stage's lines: date, nvidia-smi, versions."""
    lines = run_log.splitlines()
    out = []
    for ln in lines:
        # the env stage ends where the next stage prints (its banner, or the suite's tail)
        if (ln.startswith("=== ") or re.match(r"(FAILED|ERROR|PASSED) |\d+ (passed|failed)", ln)) and out:
            break
        if ln.strip():
            out.append(ln)
    return "\n".join(out[:40])


def check_section(check_log: str) -> list[tuple[str, str, str]]:
    rows = []
    if "SUMMARY" not in check_log:
        return rows
    for ln in check_log.split("SUMMARY", 1)[1].splitlines():
        m = re.match(r"(PASS|FAIL|SKIP)\s+(.*?)  (.*)$", ln) or re.match(r"(PASS|FAIL|SKIP)\s+(.*)$", ln)
        if m:
            g = m.groups()
            rows.append((g[0], g[1].strip(), (g[2] if len(g) > 2 else "").strip()))
    return rows


def suite_section(xml_text: str):
    """Per test file: passed, failed, errors, skipped; and the failures' first message lines."""
    if not xml_text:
        return None, []
    root = ET.fromstring(xml_text)
    per = collections.defaultdict(lambda: collections.Counter())
    fails = []
    for tc in root.iter("testcase"):
        f = tc.get("classname", "").replace(".", "/") + ".py"
        kind = "passed"
        for child in tc:
            if child.tag in ("failure", "error"):
                kind = "failed" if child.tag == "failure" else "errors"
                msg = (child.get("message") or child.text or "").strip().splitlines()
                fails.append((f"{f}::{tc.get('name')}", (msg[0] if msg else "")[:300]))
            elif child.tag == "skipped":
                kind = "skipped"
                fails.append((f"{f}::{tc.get('name')} (skipped)", (child.get("message") or "")[:300]))
        per[f][kind] += 1
    return per, fails


def bench_section(bench_log: str) -> str:
    return bench_log.strip()


def report(dirs) -> str:
    d = dirs[-1]
    out = ["# GPU report", ""]
    out.append(
        "What `bash benchmarks/gpu_run.sh` printed on the GPU machine, arranged by "
        f"`python benchmarks/gpu_report.py {' '.join('OUT' + str(i + 1) for i in range(len(dirs)))}`. "
        "Regenerate it the same way after a new run; see the closing section for what was fixed "
        "between runs."
    )
    out += ["", "## Machine and software", "", "```", env_section(_read(d, "run.log")), "```", ""]
    rows = check_section(_read(d, "gpu_check.log"))
    out += ["## `benchmarks/gpu_check.py`", "", "| result | check | note |", "|---|---|---|"]
    for st, name, note in rows:
        out.append(f"| {st} | {name} | {note.replace('|', '/')} |")
    if not rows:
        out.append("| - | no summary: the check did not finish (see run.log) | |")
    per, fails = suite_section(_read(d, "suite.xml"))
    out += [
        "",
        "## CUDA test suite: `TIARRAY_ARCH=cuda pytest -m cuda tests/operators tests/sparse tests/interop`",
        "",
    ]
    if per is None:
        out.append("No JUnit file: the suite did not finish (see suite.log's tail in run.log).")
    else:
        out += ["| file | passed | failed | errors | skipped |", "|---|---|---|---|---|"]
        tot = collections.Counter()
        for f in sorted(per):
            c = per[f]
            tot.update(c)
            out.append(f"| {f} | {c['passed']} | {c['failed']} | {c['errors']} | {c['skipped']} |")
        out.append(f"| **total** | {tot['passed']} | {tot['failed']} | {tot['errors']} | {tot['skipped']} |")
        if fails:
            out += ["", "Not passed:", ""]
            out += [f"- `{n}`: {m}" for n, m in fails]
    if len(dirs) > 1:
        out += ["", "## The first run's failures (fixed before the run above)", ""]
        first = dirs[0]
        for st, name, note in check_section(_read(first, "gpu_check.log")):
            if st == "FAIL":
                out.append(f"- gpu_check: {name}: {note}")
        _, f1 = suite_section(_read(first, "suite.xml"))
        # one line per test function and message, with the number of cases
        grouped = collections.Counter((n.split("[")[0], m) for n, m in f1 if "(skipped)" not in n)
        out += [f"- suite ({k} case{'s' if k > 1 else ''}): `{n}`: {m}" for (n, m), k in grouped.items()]
    out += ["", "## GPU benchmarks", "", "```", bench_section(_read(d, "bench.log")), "```", ""]
    return "\n".join(out)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    print(report(sys.argv[1:]))
