"""Hostile input: every case runs in a child process, so that a crash fails one test.

The cases live in ``tests/hostile/``; each module runs under ``run_isolated``
(``_subprocess_suite``): a child that dies takes only the test it was running with it,
that test reports ``crashed`` with the child's output, and a new child runs the rest.
"""

import pytest
from _subprocess_suite import TESTS, check, child_tests, run_isolated

# child module -> the framework its cases need (None: NumPy only); the nox sessions select
# the parent tests by the framework fixture they take
MODULES = {
    "hostile_sizes": None,
    "hostile_dlpack": None,
    "hostile_random": None,
    "hostile_families": None,
    "hostile_torch": "torch",
    "hostile_debug": None,
    "hostile_debug_jax": "jax",
    "hostile_unchecked_structure": None,
    "hostile_traced_jax": "jax",
    "hostile_traced_families_jax": "jax",
}
ENV = {"hostile_debug": {"TIARRAY_DEBUG": "1"}, "hostile_debug_jax": {"TIARRAY_DEBUG": "1"}}
CASES = [
    pytest.param(m, name, marks=[getattr(pytest.mark, MODULES[m])] if MODULES[m] else [], id=f"{m}::{name}")
    for m in MODULES
    for name in child_tests(TESTS / "hostile" / f"{m}.py")
]


@pytest.fixture(scope="module")
def children(tmp_path_factory):
    results = {}

    def get(module):
        if module not in results:
            path = TESTS / "hostile" / f"{module}.py"
            results[module] = run_isolated(
                path, tmp_path_factory.mktemp(module), env=ENV.get(module), timeout=1200
            )
        return results[module]

    return get


@pytest.mark.parametrize("module, name", CASES)
def test_hostile(children, module, name):
    check(*children(module), name)


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
