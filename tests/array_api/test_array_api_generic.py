"""Third-party code written against the array API standard, run unchanged on TiArrays.

Each case runs the same generic function on TiArrays and on NumPy arrays and compares the
results: array-api-compat's helpers, array-api-extra's functions, einops' array API entry
points (``einops.array_api``), SciPy functions that dispatch on the array API namespace
(``SCIPY_ARRAY_API=1``, set in a subprocess since SciPy reads it at import) and
scikit-learn estimators, metrics and kernels under ``array_api_dispatch=True``. Inputs are
views where it matters (transposed, negative strides, offsets), so the functions meet the
layouts real code produces. A result must come back as a TiArray: the work was done by
tiarray's namespace, not by a silent conversion to NumPy.
"""

import json
import os
import subprocess
import sys
import textwrap

import array_api_compat
import array_api_extra as xpx
import numpy as np
import pytest
from einops import array_api as ea

import tiarray as ta

RNG = np.random.default_rng(1234)


def _pair(shape, dtype=np.float64, view=None):
    """(TiArray, NumPy array) with the same values; ``view`` picks a strided layout."""
    a = RNG.standard_normal(shape).astype(dtype)
    if view == "T":
        a = np.ascontiguousarray(a.T).T  # transposed memory
    elif view == "rev":
        a = np.ascontiguousarray(a[..., ::-1])[..., ::-1]  # negative last stride
    elif view == "offset":
        big = np.zeros((shape[0] + 1,) + shape[1:], dtype)
        big[1:] = a
        a = big[1:]
    t = ta.asarray(a)  # zero-copy: t has a's layout
    assert np.shares_memory(np.asarray(t), a)
    return t, a


def _check(got, want, rtol=1e-6, atol=1e-9):
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want)
        for g, w in zip(got, want):
            _check(g, w, rtol, atol)
        return
    if isinstance(want, np.ndarray) or np.isscalar(want):
        assert isinstance(got, ta.TiArray), f"expected a TiArray, got {type(got).__name__}"
        g = np.asarray(got)
        w = np.asarray(want)
        assert g.shape == w.shape, (g.shape, w.shape)
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
        if w.dtype.kind in "biu":
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
        return
    assert got == want


# ----------------------------------------------------------------------------- array-api-compat


def test_array_api_compat_recognises_tiarrays():
    t, a = _pair((3, 4))
    assert array_api_compat.is_array_api_obj(t)
    assert array_api_compat.array_namespace(t) is ta
    assert array_api_compat.array_namespace(t, t[0], 2.0) is ta
    assert array_api_compat.array_namespace(t, api_version="2024.12") is ta
    assert array_api_compat.device(t) == t.device
    assert array_api_compat.size(t) == a.size
    assert array_api_compat.to_device(t, t.device) is t
    with pytest.raises(TypeError, match="[Mm]ultiple namespaces"):
        array_api_compat.array_namespace(t, a)


# ----------------------------------------------------------------------------- array-api-extra

XPX_CASES = {
    "atleast_nd": lambda x, xp: xpx.atleast_nd(x, ndim=4, xp=xp),
    "cov": lambda x, xp: xpx.cov(x, xp=xp),
    "create_diagonal": lambda x, xp: xpx.create_diagonal(x[0, :], offset=1, xp=xp),
    "expand_dims": lambda x, xp: xpx.expand_dims(x, axis=(0, -1), xp=xp),
    "kron": lambda x, xp: xpx.kron(x, x[:2, :2], xp=xp),
    "nunique": lambda x, xp: xpx.nunique(xp.round(x), xp=xp),
    "pad": lambda x, xp: xpx.pad(x, 2, constant_values=-1.0, xp=xp),
    "pad_tuple": lambda x, xp: xpx.pad(x, ((1, 0), (0, 3)), xp=xp),
    "setdiff1d": lambda x, xp: xpx.setdiff1d(xp.round(x[0, :]), xp.round(x[1, :]), xp=xp),
    "union1d": lambda x, xp: xpx.union1d(xp.round(x[0, :]), xp.round(x[1, :]), xp=xp),
    "isin": lambda x, xp: xpx.isin(xp.round(x), xp.round(x[0, :]), xp=xp),
    "sinc": lambda x, xp: xpx.sinc(x, xp=xp),
    "isclose": lambda x, xp: xpx.isclose(x, x + 1e-9, xp=xp),
    "nan_to_num": lambda x, xp: xpx.nan_to_num(xp.where(x > 1, xp.inf, xp.where(x < -1, xp.nan, x)), xp=xp),
    "nanmax": lambda x, xp: xpx.nanmax(xp.where(x > 0, x, xp.nan), axis=1, xp=xp),
    "nanmean": lambda x, xp: xpx.nanmean(xp.where(x > 0, x, xp.nan), axis=0, xp=xp),
    "nansum": lambda x, xp: xpx.nansum(xp.where(x > 0, x, xp.nan), xp=xp),
    "one_hot": lambda x, xp: xpx.one_hot(xp.astype(xp.abs(xp.round(x[0, :])), xp.int64) % 3, 3, xp=xp),
    "partition": lambda x, xp: xp.sort(xpx.partition(x, 2, axis=1, xp=xp)[:, :2], axis=1),
    "argpartition": lambda x, xp: xp.take_along_axis(x, xpx.argpartition(x, 2, axis=1, xp=xp), axis=1)[:, 2],
    "apply_where": lambda x, xp: xpx.apply_where(x > 0, (x,), xp.sqrt, fill_value=-1.0, xp=xp),
    "at_set": lambda x, xp: xpx.at(x)[x > 0.5].set(0.0, copy=True, xp=xp),
    "at_add": lambda x, xp: xpx.at(x)[1:, ::2].add(1.0, copy=True, xp=xp),
    "at_multiply_int_index": lambda x, xp: xpx.at(x)[0, 1].multiply(3.0, copy=True, xp=xp),
    "at_min": lambda x, xp: xpx.at(x)[:, 0].min(0.0, copy=True, xp=xp),
    "angle": lambda x, xp: xpx.angle(xp.astype(x, xp.complex128) * (1 + 2j), xp=xp),
    "deg2rad": lambda x, xp: xpx.deg2rad(x, xp=xp),
    "searchsorted": lambda x, xp: xpx.searchsorted(xp.sort(x, axis=1), x[:, :2], side="right", xp=xp),
    "unravel_index": lambda x, xp: xpx.unravel_index(xp.arange(6), (2, 3), xp=xp),
    "tril_indices": lambda x, xp: xpx.tril_indices(4, offset=-1, xp=xp),
}


@pytest.mark.parametrize("view", [None, "T", "rev"])
@pytest.mark.parametrize("name", sorted(XPX_CASES))
def test_array_api_extra(name, view):
    t, a = _pair((4, 5), view=view)
    _check(XPX_CASES[name](t, ta), XPX_CASES[name](a, np))


def test_array_api_extra_at_does_not_write_its_input():
    t, a = _pair((3, 3))
    before = a.copy()
    out = xpx.at(t)[0].set(7.0, copy=True)
    np.testing.assert_array_equal(a, before)
    assert np.asarray(out)[0].tolist() == [7.0] * 3


# ----------------------------------------------------------------------------- einops


EINOPS_CASES = {
    "rearrange": lambda x: ea.rearrange(x, "a b c -> c (a b)"),
    "rearrange_split": lambda x: ea.rearrange(x, "a b (c d) -> (a c) b d", d=2),
    "reduce_max": lambda x: ea.reduce(x, "a b c -> a c", "max"),
    "reduce_min": lambda x: ea.reduce(x, "a b c -> c", "min"),
    "reduce_sum": lambda x: ea.reduce(x, "a b c -> b", "sum"),
    "reduce_mean": lambda x: ea.reduce(x, "a b c -> a 1 c", "mean"),
    "reduce_prod": lambda x: ea.reduce(x, "a b c -> (b a)", "prod"),
    "repeat": lambda x: ea.repeat(x, "a b c -> a r b c", r=2),
    "pack": lambda x: ea.pack([x, x[:, :1]], "a * c")[0],
    "unpack": lambda x: ea.unpack(x, [(1,), (2,)], "a * c"),
}


@pytest.mark.parametrize("view", [None, "T", "offset"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(EINOPS_CASES))
def test_einops(name, dtype, view):
    t, a = _pair((2, 3, 4), dtype, view=view)
    _check(EINOPS_CASES[name](t), EINOPS_CASES[name](a), rtol=1e-5)


# ----------------------------------------------------------------------------- scipy, scikit-learn

# Both read SCIPY_ARRAY_API at import, so their cases run in a subprocess. The harness runs
# each case on TiArrays and on the NumPy arrays, and reports the result types and whether
# the values agree.
HARNESS = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    import tiarray as ta

    rng = np.random.default_rng(7)
    results = {}

    def run(name, f, *arrays, rtol=1e-6, atol=1e-10):
        ts = [ta.asarray(a) for a in arrays]
        try:
            got = f(*ts)
            want = f(*arrays)
        except Exception as e:
            results[name] = {"error": f"{type(e).__name__}: {e}"}
            return
        got = list(got) if isinstance(got, tuple) else [got]
        want = list(want) if isinstance(want, tuple) else [want]
        res = {"types": [type(g).__name__ for g in got], "ok": True, "detail": ""}
        for g, w in zip(got, want):
            g = np.asarray(g)
            w = np.asarray(w)
            if g.shape != w.shape or g.dtype != w.dtype or not np.allclose(g, w, rtol=rtol, atol=atol, equal_nan=True):
                res["ok"] = False
                res["detail"] += f"got {g.dtype}{g.shape} {g.ravel()[:4]}, want {w.dtype}{w.shape} {w.ravel()[:4]}; "
        results[name] = res

    A = rng.standard_normal((6, 32))
    At = np.ascontiguousarray(A.T).T          # transposed memory
    P = np.abs(A) + 0.1
    F = A.astype(np.float32)
    """
)

SCIPY_SCRIPT = HARNESS + textwrap.dedent(
    """
    from scipy import cluster, fft, integrate, ndimage, signal, special, stats

    run("special.logsumexp", lambda x: special.logsumexp(x, axis=1), A)
    run("special.logsumexp_b", lambda x, b: special.logsumexp(x, axis=0, b=b, return_sign=True), At, P)
    run("special.softmax", lambda x: special.softmax(x, axis=0), F, rtol=1e-5)
    run("special.log_softmax", lambda x: special.log_softmax(x, axis=1), At)
    run("special.expit", special.expit, A)
    run("cluster.vq.whiten", cluster.vq.whiten, At)
    run("cluster.vq.vq", lambda x: cluster.vq.vq(x, x[:3]), A)
    run("stats.moment", lambda x: stats.moment(x, order=3, axis=1), A)
    run("stats.skew", lambda x: stats.skew(x, axis=1), At)
    run("stats.kurtosis", lambda x: stats.kurtosis(x, axis=0), A)
    run("stats.variation", lambda x: stats.variation(x, axis=1), P)
    run("stats.zscore", lambda x: stats.zscore(x, axis=1), F, rtol=1e-5)
    run("stats.sem", lambda x: stats.sem(x, axis=1), A)
    run("stats.gmean", lambda x: stats.gmean(x, axis=1), P)
    run("stats.hmean", lambda x: stats.hmean(x, axis=1), P)
    run("stats.pmean", lambda x: stats.pmean(x, 2.5, axis=1), P)
    run("stats.entropy", lambda x: stats.entropy(x, axis=1), P)
    run("stats.describe", lambda x: tuple(stats.describe(x, axis=1))[2:], A)
    run("stats.quantile", lambda x: stats.quantile(x, 0.3, axis=1), At)
    run("stats.trim_mean", lambda x: stats.trim_mean(x, 0.1, axis=1), A)
    run("stats.iqr", lambda x: stats.iqr(x, axis=1), A)
    run("stats.rankdata", lambda x: stats.rankdata(x, axis=1), np.round(A))
    run("stats.pearsonr", lambda x, y: stats.pearsonr(x, y, axis=1).statistic, A, At[::-1])
    run("stats.ttest_1samp", lambda x: tuple(stats.ttest_1samp(x, 0.1, axis=1)), A)
    run("stats.ttest_ind", lambda x, y: tuple(stats.ttest_ind(x, y, axis=1)), A, P)
    run("stats.circmean", lambda x: stats.circmean(x, axis=1), A)
    run("signal.convolve", signal.convolve, A[0], A[1, :5])
    run("signal.correlate", signal.correlate, A[0], A[1])
    run("signal.fftconvolve", lambda x, y: signal.fftconvolve(x, y, mode="same"), A, A[:2, :7])
    run("signal.detrend", lambda x: signal.detrend(x, axis=1), A)
    run("signal.lfilter", lambda b, a, x: signal.lfilter(b, a, x), A[0, :3], np.array([1.0, -0.5]), A[1])
    run("signal.hilbert", signal.hilbert, A[2])
    run("signal.medfilt", lambda x: signal.medfilt(x, 5), A[3])
    run("fft.fft", lambda x: fft.fft(x, axis=1), A)
    run("fft.rfft", lambda x: fft.rfft(x, n=40), F, rtol=1e-5)
    run("fft.dct", lambda x: fft.dct(x, type=2, norm="ortho"), A)
    run("ndimage.gaussian_filter", lambda x: ndimage.gaussian_filter(x, 1.5), A)
    run("ndimage.uniform_filter", lambda x: ndimage.uniform_filter(x, 3), At)
    run("integrate.trapezoid", lambda x: integrate.trapezoid(x, dx=0.5, axis=1), A)
    run("integrate.cumulative_trapezoid", lambda x: integrate.cumulative_trapezoid(x, axis=1, initial=0), A)
    json.dump(results, sys.stdout)
    """
)

# scikit-learn's array API dispatch (``array_api_dispatch=True``) on estimators, metrics
# and kernels that support it
SKLEARN_SCRIPT = HARNESS + textwrap.dedent(
    """
    from sklearn import config_context
    from sklearn.decomposition import PCA
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    from sklearn.linear_model import Ridge
    from sklearn.metrics import pairwise_distances
    from sklearn.metrics.pairwise import cosine_similarity, euclidean_distances, rbf_kernel
    from sklearn.preprocessing import MaxAbsScaler, MinMaxScaler, StandardScaler, normalize

    X = rng.standard_normal((60, 5))
    Xt = np.ascontiguousarray(X.T).T
    y = (X[:, 0] + 0.3 * rng.standard_normal(60) > 0).astype(np.int64)


    def dispatch(f):
        def g(*a):
            if isinstance(a[0], np.ndarray):
                return f(*a)
            with config_context(array_api_dispatch=True):
                return f(*a)

        return g


    run("PCA", dispatch(lambda x: abs(PCA(n_components=2, svd_solver="full").fit_transform(x))), X)
    run("LinearDiscriminantAnalysis", dispatch(lambda x, y: LinearDiscriminantAnalysis().fit(x, y).predict(x)), X, y)
    run("StandardScaler", dispatch(lambda x: StandardScaler().fit_transform(x)), Xt)
    run("MinMaxScaler", dispatch(lambda x: MinMaxScaler().fit_transform(x)), X)
    run("MaxAbsScaler", dispatch(lambda x: MaxAbsScaler().fit_transform(x)), X)
    run("normalize", dispatch(normalize), Xt)
    run("Ridge", dispatch(lambda x, t: Ridge(alpha=1.0).fit(x, t).predict(x)), X, 2.0 * X[:, 0] + 1.0)
    run("euclidean_distances", dispatch(lambda x: euclidean_distances(x[:10], x[:7])), X, atol=1e-6)
    run("rbf_kernel", dispatch(lambda x: rbf_kernel(x[:10], x[:7], gamma=0.3)), X)
    run("cosine_similarity", dispatch(lambda x: cosine_similarity(x[:10], x[:7])), Xt)
    run("pairwise_distances", dispatch(lambda x: pairwise_distances(x[:10], x[:7], metric="manhattan")), X)
    json.dump(results, sys.stdout)
    """
)

SCIPY_NAMES = [
    "special.logsumexp", "special.logsumexp_b", "special.softmax", "special.log_softmax", "special.expit",
    "cluster.vq.whiten", "cluster.vq.vq", "stats.moment", "stats.skew", "stats.kurtosis", "stats.variation",
    "stats.zscore", "stats.sem", "stats.gmean", "stats.hmean", "stats.pmean", "stats.entropy",
    "stats.describe", "stats.quantile", "stats.trim_mean", "stats.iqr", "stats.rankdata", "stats.pearsonr",
    "stats.ttest_1samp", "stats.ttest_ind", "stats.circmean", "signal.convolve", "signal.correlate",
    "signal.fftconvolve", "signal.detrend", "signal.lfilter", "signal.hilbert", "signal.medfilt", "fft.fft",
    "fft.rfft", "fft.dct", "ndimage.gaussian_filter", "ndimage.uniform_filter", "integrate.trapezoid",
    "integrate.cumulative_trapezoid",
]  # fmt: skip


SKLEARN_NAMES = [
    "PCA", "LinearDiscriminantAnalysis", "StandardScaler", "MinMaxScaler", "MaxAbsScaler", "normalize", "Ridge",
    "euclidean_distances", "rbf_kernel", "cosine_similarity", "pairwise_distances",
]  # fmt: skip


def _run_script(tmp_path_factory, name, text):
    script = tmp_path_factory.mktemp(name) / f"generic_{name}.py"
    script.write_text(text)
    env = dict(os.environ, SCIPY_ARRAY_API="1")
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def _check_case(res, name):
    assert "error" not in res, res.get("error")
    assert res["ok"], res["detail"]
    assert set(res["types"]) == {"TiArray"}, f"{name} returned {res['types']}, not TiArrays"


@pytest.fixture(scope="module")
def scipy_results(tmp_path_factory):
    return _run_script(tmp_path_factory, "scipy", SCIPY_SCRIPT)


@pytest.fixture(scope="module")
def sklearn_results(tmp_path_factory):
    return _run_script(tmp_path_factory, "sklearn", SKLEARN_SCRIPT)


@pytest.mark.parametrize("name", SCIPY_NAMES)
def test_scipy_array_api_dispatch(scipy_results, name):
    _check_case(scipy_results[name], name)


@pytest.mark.parametrize("name", SKLEARN_NAMES)
def test_sklearn_array_api_dispatch(sklearn_results, name):
    _check_case(sklearn_results[name], name)


def test_every_case_is_checked(scipy_results, sklearn_results):
    assert sorted(scipy_results) == sorted(SCIPY_NAMES)
    assert sorted(sklearn_results) == sorted(SKLEARN_NAMES)
