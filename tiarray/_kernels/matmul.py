"""Matrix multiplication kernels: packed, register-blocked GEMM and a direct kernel.

The packed path follows the usual BLAS structure, written for Taichi's LLVM backend:

1. ``pack_a`` copies (and casts) ``A`` into panels of ``MR`` rows, ``pack_b`` copies ``B``
   into panels of ``NR`` columns, both k-major and zero-padded, reading any strides;
2. ``micro`` is parallel over output tiles; each computes an ``MR x NR`` tile as ``MR``
   vectors of ``NR`` accumulators kept in registers, streaming one ``MR`` vector of ``A``
   and one ``NR`` vector of ``B`` per step of k, over blocks of ``KC`` steps of k.

Two facts of Taichi 1.7's CPU code generation shape it (measured, see
``docs/internals.md``): ndarray elements are addressed with 32-bit index arithmetic
without no-wrap flags, so LLVM cannot prove that ``v[i + 1]`` follows ``v[i]`` and
refuses to vectorise; masking the row index (``(row) & MASK``, a range LLVM can reason
about) and loading whole vector elements (``ti.types.vector`` ndarrays) fixes that. And
with ``fast_math`` LLVM's loop vectoriser vectorises the k loop as a reduction
(gathers, spills) before the SLP vectoriser sees the register tile; the GEMM kernels are
therefore compiled with ``fast_math=False`` (per kernel, see
``Launcher(compile_options=...)``), which lets SLP turn each accumulator row into vector
multiply-adds.

Complex products run as real ones on (re, im) pairs: ``[[Ar, -Ai], [Ai, Ar]] @ [Br; Bi]``
gives ``[Cr; Ci]``.

The direct kernel (one dot product per output element, any strides) serves small and
thin products (matrix-vector, tiny batched matrices), where packing does not pay.
"""

import math

import numpy as np

from .. import _backend, _dtypes, _launch, _runtime
from .._array_object import TiArray
from .._backend import ti
from .._launch import IEEE, Launcher
from ._strided import meta_arg
from .gather import check_elements
from .gather import span as span_arg


def _mask(rows: int) -> int:
    """The largest ``2**j - 1`` with ``(2**j - 1) * rows + rows - 1 < 2**31``."""
    m = 1
    while m * 2 * rows <= 2**31:
        m *= 2
    return m - 1


# compute type -> (MR, NR): MR rows of NR-wide accumulators (8 AVX2 registers of them)
_BLOCKING = {"f32": (4, 16), "f64": (4, 8), "i32": (4, 16), "u32": (4, 16), "i64": (4, 8), "u64": (4, 8)}


class _Family:
    """The kernels of one compute type."""

    def __init__(self, ct_name: str):
        ct = getattr(ti, ct_name)
        MR, NR = _BLOCKING[ct_name]
        self.MR, self.NR = MR, NR
        self.ct_name = ct_name
        VA = ti.types.vector(MR, ct)
        VB = ti.types.vector(NR, ct)
        MA = _mask(MR)
        MB = _mask(NR)

        # meta of pack_a: [off_re, off_im, row_stride, col_stride, M, K, shared?]
        # batch offsets (element offsets of each batch element in the span): boff
        @ti.kernel
        def pack_a(
            a: ti.types.ndarray(ndim=1),
            boff: ti.types.ndarray(dtype=ti.i64, ndim=1),
            ap: ti.types.ndarray(dtype=VA, ndim=1),
            meta: ti.types.ndarray(dtype=ti.i64, ndim=1),
            nbatch: ti.i32,
            cplx: ti.template(),
        ):
            M = ti.cast(meta[4], ti.i32)  # rows of the real matrix (2M for complex)
            K = ti.cast(meta[5], ti.i32)  # columns of the real matrix (2K for complex)
            Mh = M // 2
            Kh = K // 2
            nib = (M + MR - 1) // MR
            rs = meta[2]
            cs = meta[3]
            for b, ib, k in ti.ndrange(nbatch, nib, K):
                base = boff[b]
                v = VA(0)
                for ii in ti.static(range(MR)):
                    i = ib * MR + ii
                    if i < M:
                        if ti.static(cplx):
                            # [[Ar, -Ai], [Ai, Ar]]
                            hi = i >= Mh
                            hk = k >= Kh
                            r = i - Mh if hi else i
                            c = k - Kh if hk else k
                            o = base + r * rs + c * cs
                            if hi == hk:
                                v[ii] = ti.cast(a[o + meta[0]], ct)
                            elif hk:
                                v[ii] = -ti.cast(a[o + meta[1]], ct)
                            else:
                                v[ii] = ti.cast(a[o + meta[1]], ct)
                        else:
                            v[ii] = ti.cast(a[base + meta[0] + i * rs + k * cs], ct)
                ap[(b * nib + ib) * K + k] = v

        # meta of pack_b: [off_re, off_im, row_stride, col_stride, K, N]
        @ti.kernel
        def pack_b(
            bm: ti.types.ndarray(ndim=1),
            boff: ti.types.ndarray(dtype=ti.i64, ndim=1),
            bp: ti.types.ndarray(dtype=VB, ndim=1),
            meta: ti.types.ndarray(dtype=ti.i64, ndim=1),
            nbatch: ti.i32,
            cplx: ti.template(),
        ):
            K = ti.cast(meta[4], ti.i32)  # rows of the real matrix (2K for complex)
            N = ti.cast(meta[5], ti.i32)
            Kh = K // 2
            njb = (N + NR - 1) // NR
            rs = meta[2]
            cs = meta[3]
            for b, jb, k in ti.ndrange(nbatch, njb, K):
                base = boff[b]
                v = VB(0)
                for jj in ti.static(range(NR)):
                    j = jb * NR + jj
                    if j < N:
                        if ti.static(cplx):
                            # [Br; Bi]
                            if k >= Kh:
                                v[jj] = ti.cast(bm[base + meta[1] + (k - Kh) * rs + j * cs], ct)
                            else:
                                v[jj] = ti.cast(bm[base + meta[0] + k * rs + j * cs], ct)
                        else:
                            v[jj] = ti.cast(bm[base + meta[0] + k * rs + j * cs], ct)
                bp[(b * njb + jb) * K + k] = v

        # c: rows of NR-vectors, row (b, i, jb) at (b * Mp + i) * ldc + jb
        @ti.kernel
        def micro(
            ap: ti.types.ndarray(dtype=VA, ndim=1),
            bp: ti.types.ndarray(dtype=VB, ndim=1),
            c: ti.types.ndarray(dtype=VB, ndim=1),
            nbatch: ti.i32,
            M: ti.i32,
            N: ti.i32,
            K: ti.i32,
            KC: ti.i32,
            MBK: ti.i32,
            ldc: ti.i32,
            b_shared: ti.i32,
        ):
            nib = (M + MR - 1) // MR
            njb = (N + NR - 1) // NR
            Mp = nib * MR
            nibb = (nib + MBK - 1) // MBK
            per = nibb * njb
            nkb = (K + KC - 1) // KC
            for t in range(nbatch * per):
                b = t // per
                tt = t % per
                ibb = tt // njb
                jb = tt % njb
                bb = b * (1 - b_shared)
                bbase = (bb * njb + jb) * K
                for kb in range(nkb):
                    k0 = kb * KC
                    k1 = ti.min(k0 + KC, K)
                    for ib in range(ibb * MBK, ti.min(nib, ibb * MBK + MBK)):
                        abase = (b * nib + ib) * K
                        acc = ti.Matrix.zero(ct, MR, NR)
                        for k in range(k0, k1):
                            av = ap[(abase + k) & MA]
                            bv = bp[(bbase + k) & MB]
                            for ii in ti.static(range(MR)):
                                for jj in ti.static(range(NR)):
                                    acc[ii, jj] += av[ii] * bv[jj]
                        crow = (b * Mp + ib * MR) * ldc + jb
                        for ii in ti.static(range(MR)):
                            ci = (crow + ii * ldc) & MB
                            row = VB(0)
                            for jj in ti.static(range(NR)):
                                row[jj] = acc[ii, jj]
                            if kb == 0:
                                c[ci] = row
                            else:
                                c[ci] += row

        self.pack_a = Launcher(pack_a, name=f"matmul_pack_a_{ct_name}", compile_options=IEEE)
        self.pack_b = Launcher(pack_b, name=f"matmul_pack_b_{ct_name}", compile_options=IEEE)
        self.micro = Launcher(micro, name=f"matmul_micro_{ct_name}", compile_options=IEEE)


_families: dict = {}


def family(ct_name: str) -> _Family:
    f = _families.get(ct_name)
    if f is None:
        f = _families[ct_name] = _Family(ct_name)
    return f


# ----------------------------------------------------------------------------- direct kernel


# meta: [a_re, a_im, a_rs, a_cs, b_re, b_im, b_rs, b_cs, M, N, K]
@ti.kernel
def _direct(
    a: ti.types.ndarray(ndim=1),
    aoff: ti.types.ndarray(dtype=ti.i64, ndim=1),
    bm: ti.types.ndarray(ndim=1),
    boff: ti.types.ndarray(dtype=ti.i64, ndim=1),
    out: ti.types.ndarray(ndim=1),
    meta: ti.types.ndarray(dtype=ti.i64, ndim=1),
    n: ti.i32,
    ct: ti.template(),
    cplx: ti.template(),
    conj_a: ti.template(),
):
    """``out[b, i, j] = sum_k A[b, i, k] * B[b, k, j]`` (contiguous output, (re, im) pairs for
    complex)."""
    for t in range(n):
        M = meta[8]
        N = meta[9]
        K = ti.cast(meta[10], ti.i32)
        j = t % N
        r = t // N
        i = r % M
        b = r // M
        pa = aoff[b] + i * meta[2]
        pb = boff[b] + j * meta[7]
        if ti.static(cplx):
            sr = ti.cast(0, ct)
            si = ti.cast(0, ct)
            for k in range(K):
                ar = ti.cast(a[pa + meta[0] + k * meta[3]], ct)
                ai = ti.cast(a[pa + meta[1] + k * meta[3]], ct)
                if ti.static(conj_a):
                    ai = -ai
                br = ti.cast(bm[pb + meta[4] + k * meta[6]], ct)
                bi = ti.cast(bm[pb + meta[5] + k * meta[6]], ct)
                sr += ar * br - ai * bi
                si += ar * bi + ai * br
            out[2 * t] = sr
            out[2 * t + 1] = si
        else:
            s = ti.cast(0, ct)
            for k in range(K):
                s += ti.cast(a[pa + meta[0] + k * meta[3]], ct) * ti.cast(bm[pb + meta[4] + k * meta[6]], ct)
            out[t] = s


_direct_l = Launcher(_direct, name="matmul_direct", compile_options=IEEE)


@ti.kernel
def _rowdot(
    a: ti.types.ndarray(ndim=1),
    aoff: ti.types.ndarray(dtype=ti.i64, ndim=1),
    bm: ti.types.ndarray(ndim=1),
    boff: ti.types.ndarray(dtype=ti.i64, ndim=1),
    out: ti.types.ndarray(ndim=1),
    n: ti.i32,
    M: ti.i32,
    K: ti.i32,
    a_rs: ti.i64,
    ct: ti.template(),
    pad: ti.template(),
):
    """``out[b, i] = sum_k A[b, i, k] * x[b, k]`` for rows and vectors contiguous along k
    (matrix-vector products, ``vecdot`` of many rows): the k loop reads consecutive
    elements and, compiled with fast math, LLVM vectorises its sum."""
    for s_ in range(n * pad):
        if s_ % pad == 0:  # one task per block of Taichi's CPU pool (reduce.task_pad)
            t = s_ // pad
            i = t % M
            bt = t // M
            pa = ti.cast(aoff[bt] + i * a_rs, ti.i32)
            pb = ti.cast(boff[bt], ti.i32)
            acc = ti.cast(0, ct)
            for k in range(K):
                acc += ti.cast(a[pa + k], ct) * ti.cast(bm[pb + k], ct)
            out[t] = acc


_rowdot_l = Launcher(_rowdot, name="matmul_rowdot", compile_options={"fast_math": True})

# ----------------------------------------------------------------------------- drivers


def _sig(d: _dtypes.DType) -> _dtypes.DType:
    """The dtype an operand is passed to a kernel as (complex: its real parts)."""
    return _dtypes.finfo_dtype(d) if d.kind == "c" else d


def _parts(x: TiArray):
    """(span, span offset, re offset, im offset, element stride scale) of an operand."""
    span, off = span_arg(x)
    if x._dtype.kind == "c":
        # in units of the real dtype: offsets double and the imaginary part follows
        lo, _ = x._byte_extent()
        rit = x._dtype.itemsize // 2
        n = span[1] // rit
        check_elements(n)
        span = (span[0], span[1], (n,))
        return span, 2 * off, 0, 1, 2
    return span, off, 0, 0, 1


def _i64(a) -> tuple:
    a = np.ascontiguousarray(a, dtype=np.int64)
    return a, meta_arg(a)


class _DirectPlan:
    """A cached launch of the direct (or row-dot) kernel for one operand geometry.

    Everything but the operands' and the output's addresses: the specialisation, the
    batch-offset and meta arrays (kept alive here) and each operand's span relative to its
    first element (a span depends only on shape and strides).
    """

    __slots__ = ("spec", "a_span", "b_span", "aoff", "boff", "nout", "out_nbytes", "tail", "keep")


_PLANS: dict = {}
_runtime.register_cache(_PLANS.clear)
_PLAN_CAP = 256


def _rel_span(x: TiArray) -> tuple:
    """``(span start - x._ptr, nbytes, length, element offset, re offset, im offset, stride scale)``."""
    (lo, nbytes, (n,)), off, re, im, f = _parts(x)
    return lo - x._ptr, nbytes, n, off, re, im, f


def _direct_plan(a: TiArray, b: TiArray, bshape: tuple, M: int, N: int, K: int, ct: _dtypes.DType,
                 conj_a: bool, batch_offsets) -> _DirectPlan:  # fmt: skip
    p = _DirectPlan()
    ra, rb = _rel_span(a), _rel_span(b)  # (_parts checks the spans' lengths)
    _, _, _, oa, are, aim, fa = ra
    _, _, _, ob, bre, bim, fb = rb
    aoffs = batch_offsets(bshape, a._shape[:-2], a._strides[:-2])
    boffs = batch_offsets(bshape, b._shape[:-2], b._strides[:-2])
    n = len(aoffs) * M * N
    cplx = ct.kind == "c"
    rct = _dtypes.finfo_dtype(ct)
    p.a_span, p.b_span = ra[:2] + ((ra[2],),), rb[:2] + ((rb[2],),)
    if N == 1 and not cplx and not conj_a and a._strides[-1] == 1 and b._strides[-2] == 1 and K > 1:
        from .reduce import task_pad

        serial = _rowdot_l.use_serial(n * K * 2)
        p.spec = _rowdot_l.spec(
            [(_sig(a._dtype), 1, False), (_dtypes.int64, 1, False), (_sig(b._dtype), 1, False),
             (_dtypes.int64, 1, False), (rct, 1, False)],
            (_dtypes.taichi_type(rct), task_pad(n, K, serial)),
            serial=serial,
        )  # fmt: skip
        p.nout = n
        p.tail = (n, M, K, a._strides[-2])
        p.keep = None
    else:
        meta = np.array(
            [are, aim, a._strides[-2] * fa, a._strides[-1] * fa, bre, bim, b._strides[-2] * fb,
             b._strides[-1] * fb, M, N, K], dtype=np.int64,
        )  # fmt: skip
        p.spec = _direct_l.spec(
            [(_sig(a._dtype), 1, False), (_dtypes.int64, 1, False), (_sig(b._dtype), 1, False),
             (_dtypes.int64, 1, False), (rct, 1, False), (_dtypes.int64, 1, False)],
            (_dtypes.taichi_type(rct), cplx, conj_a),
            serial=_direct_l.use_serial(n * K * 2),
        )  # fmt: skip
        p.nout = n * (2 if cplx else 1)
        p.tail = (meta_arg(meta), n)
        p.keep = meta
    check_elements(p.nout, "matmul's output")
    p.out_nbytes = p.nout * rct.itemsize
    p.aoff, p.boff = _i64(aoffs * fa + oa), _i64(boffs * fb + ob)
    return p


def direct(a: TiArray, b: TiArray, out_buf: TiArray, bshape: tuple, M: int, N: int, K: int,
           ct: _dtypes.DType, batch_offsets, *, conj_a: bool = False) -> None:  # fmt: skip
    """Run the direct kernel: ``out_buf[..., M, N] = a[..., M, K] @ b[..., K, N]`` over the
    batch ``bshape`` (``batch_offsets(bshape, shape, strides)`` gives an operand's per-batch
    element offsets); ``out_buf`` contiguous of dtype ``ct`` (complex ``ct`` -> pairs).

    Plans are cached by the operands' metadata (as the reductions' are), so a repeated
    product only computes addresses and launches.
    """
    if math.prod(bshape) * M * N == 0:
        return
    key = (a._shape, a._strides, a._dtype, b._shape, b._strides, b._dtype, a._device, tuple(bshape), M, N, K,
           ct, conj_a, _launch._SERIAL_THRESHOLD[0])  # fmt: skip
    if _runtime.program() is not _runtime.CACHES.prog:
        _runtime.ensure_init()
    p = _PLANS.get(key)
    if p is None:
        p = _direct_plan(a, b, tuple(bshape), M, N, K, ct, conj_a, batch_offsets)
        if len(_PLANS) >= _PLAN_CAP:
            _PLANS.clear()
        _PLANS[key] = p
    ra, rb = p.a_span, p.b_span
    sa = (a._ptr + ra[0], ra[1], ra[2])
    sb = (b._ptr + rb[0], rb[1], rb[2])
    o = (out_buf._ptr, p.out_nbytes, (p.nout,))
    p.spec.launch([sa, p.aoff[1], sb, p.boff[1], o, *p.tail])


def packed(a: TiArray, b: TiArray, c_ptr: int, c_nvec: int, ldc: int, aoffs, boffs, b_shared: bool,
           M: int, N: int, K: int, ct: _dtypes.DType, *, kc: int = 0, mb: int = 0) -> None:  # fmt: skip
    """Run pack_a, pack_b and the micro kernel. The result (real: M x N; complex: the real
    (2M) x N matrix [Cr; Ci]) is written into ``c``, rows of ``NR``-vectors, ``ldc`` vectors
    per row and ``Mp = ceil(rows / MR) * MR`` rows per batch element."""
    from .._buffer import empty_owned

    cplx = ct.kind == "c"
    rct = _dtypes.finfo_dtype(ct)
    fam = family(_backend.type_name(_dtypes.taichi_type(rct)))
    MR, NR = fam.MR, fam.NR
    Mr, Kr = (2 * M, 2 * K) if cplx else (M, K)
    nib = -(-Mr // MR)
    njb = -(-N // NR)
    nbatch = len(aoffs)
    nb_b = 1 if b_shared else nbatch
    check_elements(nbatch * nib * Kr * MR, "matmul's packed copy of x1")
    check_elements(nb_b * njb * Kr * NR, "matmul's packed copy of x2")
    check_elements(nbatch * (-(-Mr // MR) * MR) * max(N, njb * NR), "matmul's output")
    ap = empty_owned((nbatch * nib * Kr, MR), rct, a._device)
    bp = empty_owned((nb_b * njb * Kr, NR), rct, a._device)
    sa, oa, are, aim, fa = _parts(a)
    sb, ob, bre, bim, fb = _parts(b)
    ao, aoa = _i64(np.asarray(aoffs, dtype=np.int64) * fa + oa)
    bo, boa = _i64(np.asarray(boffs[:nb_b], dtype=np.int64) * fb + ob)
    meta_a = np.array([are, aim, a._strides[-2] * fa, a._strides[-1] * fa, Mr, Kr, 0], dtype=np.int64)
    meta_b = np.array([bre, bim, b._strides[-2] * fb, b._strides[-1] * fb, Kr, N], dtype=np.int64)
    it = rct.itemsize
    pa = fam.pack_a.spec(
        [(_sig(a._dtype), 1, False), (_dtypes.int64, 1, False), (rct, 2, False), (_dtypes.int64, 1, False)],
        (cplx,),
        serial=fam.pack_a.use_serial(ap._nbytes() * 2),
    )  # fmt: skip
    pa.launch([sa, aoa, (ap._ptr, ap._nbytes(), (ap._shape[0],)), meta_arg(meta_a), nbatch])
    pb = fam.pack_b.spec(
        [(_sig(b._dtype), 1, False), (_dtypes.int64, 1, False), (rct, 2, False), (_dtypes.int64, 1, False)],
        (cplx,),
        serial=fam.pack_b.use_serial(bp._nbytes() * 2),
    )  # fmt: skip
    pb.launch([sb, boa, (bp._ptr, bp._nbytes(), (bp._shape[0],)), meta_arg(meta_b), nb_b])
    if kc <= 0:
        kc = Kr
    if mb <= 0:
        mb = 1
    mi = fam.micro.spec(
        [(rct, 2, False), (rct, 2, False), (rct, 2, False)],
        (),
        serial=fam.micro.use_serial(nbatch * Mr * N * it // 8),
    )
    mi.launch(
        [(ap._ptr, ap._nbytes(), (ap._shape[0],)), (bp._ptr, bp._nbytes(), (bp._shape[0],)),
         (c_ptr, c_nvec * NR * it, (c_nvec,)), nbatch, Mr, N, Kr, kc, mb, ldc, int(b_shared)]
    )  # fmt: skip


def blocking(ct: _dtypes.DType) -> tuple:
    rct = _dtypes.finfo_dtype(ct)
    return _BLOCKING[_backend.type_name(_dtypes.taichi_type(rct))]


# ----------------------------------------------------------------------------- long dot products

# A dot product of two long contiguous vectors (``vecdot`` of 1-D operands) is split into
# chunks reduced in parallel (the direct kernel would run it as one task on one thread,
# element by element). The chunk loop uses its loop variable as the index and stores
# nothing, so LLVM vectorises it; fast math lets it reassociate the sum (the float
# accumulation is in float64 through a runtime ``one``, as in the reductions).
_DOT_CHUNK = 1 << 16
DOT_MIN_K = 1 << 16


@ti.kernel
def _dot_chunks(
    a: ti.types.ndarray(ndim=1),
    b: ti.types.ndarray(ndim=1),
    part: ti.types.ndarray(ndim=1),
    out: ti.types.ndarray(ndim=1),
    K: ti.i32,
    n_chunks: ti.i32,
    chunk: ti.i32,
    one: ti.f64,
    acc_t: ti.template(),
    pad: ti.template(),
):
    for s_ in range(n_chunks * pad):
        if s_ % pad == 0:  # one task per block of Taichi's CPU pool (reduce.task_pad)
            c = s_ // pad
            lo = c * chunk
            hi = ti.min(lo + chunk, K)
            acc = ti.cast(0, acc_t)
            for k in range(lo, hi):
                acc += ti.cast(a[k], acc_t) * ti.cast(b[k], acc_t) * ti.cast(one, acc_t)
            part[c] = acc
    ti.loop_config(serialize=True)
    for _ in range(1):
        acc = ti.cast(0, acc_t)
        for c in range(n_chunks):
            acc += part[c]
        out[0] = acc


_dot_l = Launcher(_dot_chunks, name="dot_chunks", compile_options={"fast_math": True})


def long_dot(a: TiArray, b: TiArray, rdtype: _dtypes.DType) -> TiArray:
    """``sum(a * b)`` of two C-contiguous 1-D real arrays of dtype ``rdtype`` and length
    at least ``DOT_MIN_K``, as a 0-d array of ``rdtype``."""
    from .._buffer import empty_owned
    from .._launch import kernel_arg
    from .reduce import task_pad

    K = a._shape[0]
    check_elements(K)
    acc = _dtypes.float64 if rdtype.kind == "f" else (_dtypes.uint64 if rdtype.kind == "u" else _dtypes.int64)
    n_chunks = -(-K // _DOT_CHUNK)
    part = empty_owned((n_chunks,), acc, a._device)
    res = empty_owned((1,), acc, a._device)
    serial = _dot_l.use_serial(2 * K * rdtype.itemsize)
    spec = _dot_l.spec(
        [(rdtype, 1, False), (rdtype, 1, False), (acc, 1, False), (acc, 1, False)],
        (_dtypes.taichi_type(acc), task_pad(n_chunks, _DOT_CHUNK, serial)),
        serial=serial,
    )
    spec.launch(
        [kernel_arg(a), kernel_arg(b), kernel_arg(part), kernel_arg(res), K, n_chunks, _DOT_CHUNK, 1.0]
    )
    from .copy import copy_array

    out = copy_array(res, rdtype) if acc is not rdtype else res
    return out._view(out._ptr, (), ())
