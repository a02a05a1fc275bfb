"""A pytest plugin for child processes that may crash (``-p _crash_log``).

It appends ``START <nodeid>`` before each test and ``END <nodeid> <outcome>`` after it to
the file named by ``TIARRAY_CRASH_LOG`` (flushed at once, so the file survives a
segmentation fault), and deselects the node ids listed in ``TIARRAY_CRASH_SKIP`` (one per
line): the tests a previous child already ran, or that crashed it.
"""

import os

_LOG = os.environ.get("TIARRAY_CRASH_LOG")
_SKIP = os.environ.get("TIARRAY_CRASH_SKIP")


def _write(line: str) -> None:
    if _LOG:
        with open(_LOG, "a") as f:
            f.write(line + "\n")
            f.flush()
            os.fsync(f.fileno())


def pytest_collection_modifyitems(config, items):
    if not _SKIP or not os.path.exists(_SKIP):
        return
    with open(_SKIP) as f:
        skip = {ln.strip() for ln in f if ln.strip()}
    keep = [it for it in items if it.nodeid not in skip]
    config.hook.pytest_deselected(items=[it for it in items if it.nodeid in skip])
    items[:] = keep


def pytest_runtest_logstart(nodeid, location):
    _write(f"START {nodeid}")


def pytest_runtest_logreport(report):
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        text = report.longreprtext.replace("\n", "\\n")[-4000:] if report.outcome != "passed" else ""
        _write(f"END {report.nodeid} {report.outcome} {text}")
