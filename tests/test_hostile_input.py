"""Hostile input: every case runs in a child process, so that a crash fails one test.

The cases live in ``tests/hostile/``; each module runs under ``run_isolated``
(``_subprocess_suite``): a child that dies takes only the test it was running with it,
that test reports ``crashed`` with the child's output, and a new child runs the rest.
"""

from _subprocess_suite import TESTS, run_isolated


def test_runner_isolates_a_crash(tmp_path):
    res, log = run_isolated(TESTS / "hostile" / "selftest_crash.py", tmp_path, timeout=300)
    outcomes = {case: outcome for cases in res.values() for case, outcome, _ in cases}
    assert outcomes == {
        "test_before": "passed",
        "test_cases[0]": "passed",
        "test_cases[1]": "crashed",
        "test_cases[2]": "failed",
        "test_after": "passed",
    }, log
    crash_text = next(t for c, o, t in res["test_cases"] if o == "crashed")
    assert "died in this test" in crash_text and "Fatal Python error" in crash_text
