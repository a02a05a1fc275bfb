"""What taichi and quadrants share: reading a field's SNode tree, the hook on a kernel
class's ``__call__`` that lets a user's own kernels take TiArrays, and the boundary
functions whose code is the same for both languages (``config_copier``,
``debug_checker``, ``element_type``, ``external_caller``).

Both languages have the same SNode C++ API (``snode.parent``, ``cell_size_bytes``,
``offset_bytes_in_parent_cell``, ``get_physical_index_position``, ``get_addr``), so one
reader serves both; each backend module (and the quadrants-memory module, which reads
quadrants objects while taichi is the backend) makes one ``FieldReader`` for its language.
No ``from __future__ import annotations``: the probe kernel's annotations are objects.
"""

import weakref

import numpy as np


def _indices(elem):
    if not elem:
        return [()]
    if len(elem) == 1:
        return [(i,) for i in range(elem[0])]
    return [(i, j) for i in range(elem[0]) for j in range(elem[1])]


def _flat(idx, elem) -> int:
    return idx[0] * (elem[1] if len(elem) == 2 else 1) + (idx[1] if len(idx) == 2 else 0)


def _describe(chain) -> str:
    parts = ["root"]
    for p in reversed(chain):
        kind = str(p.type).rsplit(".", 1)[-1]
        shape = [p.get_shape_along_axis(i) for i in range(p.num_active_indices())]
        parts.append(f"{kind}{shape}" if kind != "place" else "place")
    return " -> ".join(parts)


def _make_probe(lang):
    @lang.kernel
    def _addr_probe(
        f: lang.template(), ndim: lang.template(), out: lang.types.ndarray(dtype=lang.u64, ndim=1)
    ):
        out[0] = lang.get_addr(f, lang.static([0] * ndim))

    return _addr_probe


def c_strides(shape) -> tuple:
    """Row-major element strides of ``shape`` (the layout of a backend ndarray)."""
    st, acc = [], 1
    for s in reversed(shape):
        st.append(acc)
        acc *= s
    return tuple(reversed(st))


class FieldReader:
    """Reads the memory layout of one language's fields.

    A field's memory is freed by ``reset()``/``init()`` while the Python field object lives
    on, and every C++ object it points to (its SNodes) is freed with it: reading a stale
    field's layout would read freed memory. So each field member is tagged with the program
    it was created under (``create_field_member`` makes every member of ``field``,
    ``Vector.field``, ``Matrix.field`` and ``Struct.field``); a member created before the
    reader was made has no tag and is current only while the program of that time runs.
    """

    def __init__(self, lang, impl, runtime_name: str, scalar_cls, matrix_cls, to_numpy_type, title: str):
        self.lang = lang
        self.impl = impl
        self.runtime_name = runtime_name  # the module global of impl holding the runtime
        self.scalar_cls = scalar_cls
        self.matrix_cls = matrix_cls
        self.to_numpy_type = to_numpy_type
        self.title = title
        self.prog_at_start = self.program()
        self._probe = None
        self._bases: dict = {}  # SNode tree id -> address of its root buffer, for _bases_prog
        self._bases_prog = None
        self._layouts = weakref.WeakKeyDictionary()  # field -> (program, layout)
        create = impl.create_field_member

        def tagged_create_field_member(*args, **kwargs):
            members = create(*args, **kwargs)
            prog = self.program()
            for m in members:  # the value, and its .grad and .dual (each is a field of its own)
                if m is not None:
                    try:
                        m._tiarray_prog = prog
                    except AttributeError:  # pragma: no cover - not an Expr
                        pass
            return members

        impl.create_field_member = tagged_create_field_member
        self._destroyed: set = set()  # root SNode ids of the SNode trees destroyed by the user
        self._tag_trees(lang)

    def _tag_trees(self, lang) -> None:
        """Track ``FieldsBuilder`` trees: ``SNodeTree.destroy()`` frees a tree's memory while its
        fields live on, and the next tree takes the same tree id. ``place`` tags every field
        member with the id of its tree's root SNode (unique: root SNode ids only increase),
        ``finalize`` tags the tree with it, and ``destroy`` records it and drops the cached
        addresses (a new tree's field was given the destroyed tree's buffer, and reading a
        destroyed tree's field read freed memory; both crashed, 2026-12-05)."""
        import importlib

        name = lang.__name__
        builder = importlib.import_module(f"{name}._snode.fields_builder").FieldsBuilder
        tree_cls = importlib.import_module(f"{name}._snode.snode_tree").SNodeTree
        snode_cls = importlib.import_module(f"{name}.lang.snode").SNode
        finalize, destroy, place = builder.finalize, tree_cls.destroy, snode_cls.place

        def tagged_finalize(fb, *args, **kwargs):
            tree = finalize(fb, *args, **kwargs)
            try:
                tree._tiarray_root_id = fb.ptr.id
            except AttributeError:  # pragma: no cover - another layout of the class
                pass
            return tree

        def tagged_destroy(tree, *args, **kwargs):
            out = destroy(tree, *args, **kwargs)
            rid = getattr(tree, "_tiarray_root_id", None)
            if rid is not None:
                self._destroyed.add(rid)
            self._bases.clear()
            self._layouts.clear()
            return out

        def tagged_place(node, *args, **kwargs):
            out = place(node, *args, **kwargs)
            p = node.ptr
            while p.parent is not None:
                p = p.parent
            todo = list(args)
            while todo:
                a = todo.pop()
                if isinstance(a, (list, tuple)):
                    todo.extend(a)
                elif hasattr(a, "_get_field_members"):
                    for var in a._get_field_members():
                        try:
                            var._tiarray_root_id = p.id
                        except AttributeError:  # pragma: no cover
                            pass
            return out

        builder.finalize = tagged_finalize
        tree_cls.destroy = tagged_destroy
        snode_cls.place = tagged_place

    def program(self):
        rt = getattr(self.impl, self.runtime_name)
        return getattr(rt, "_prog", None) if hasattr(rt, "_prog") else rt.prog

    def is_current(self, f) -> bool:
        prog = self.program()
        return prog is not None and getattr(f.vars[0], "_tiarray_prog", self.prog_at_start) is prog

    def _check_current(self, f) -> None:
        if not self.is_current(f):
            raise RuntimeError(
                f"the field belongs to a {self.title} runtime that was reset or re-initialised (reset() or "
                "init() since it was created); its memory has been freed. Create the field again after init()"
            )
        if self._destroyed and getattr(f.vars[0], "_tiarray_root_id", None) in self._destroyed:
            raise RuntimeError(
                "the field's SNode tree was destroyed (SNodeTree.destroy() of its FieldsBuilder); its memory "
                "has been freed"
            )

    def _member_layout(self, sf):
        """``(address, shape, byte_strides)`` of one scalar field member, or a reason string."""
        p = sf.vars[0].ptr.snode()
        if p is None:
            return "the field is not placed in an SNode tree yet"
        chain = []  # place ... outermost, root excluded
        while p is not None and str(p.type) != "SNodeType.root":
            chain.append(p)
            p = p.parent
        if p is None:
            return "the field's SNode tree has no root"
        root = p
        kinds = [str(q.type).rsplit(".", 1)[-1] for q in chain[1:]]
        if any(k != "dense" for k in kinds):
            return f"its layout {_describe(chain)} has {', '.join(sorted(set(kinds) - {'dense'}))} SNodes"
        ndim = chain[0].num_active_indices()
        shape = [chain[0].get_shape_along_axis(i) for i in range(ndim)]
        strides = [0] * ndim
        owner_level = [None] * ndim
        offset = sum(q.offset_bytes_in_parent_cell for q in chain)
        parent_cum: dict = {}
        for level, q in enumerate(reversed(chain[1:])):  # outermost dense first
            n = q.num_active_indices()
            pos = q.get_physical_index_position()
            axes = [pos[i] for i in range(n)]
            cum = {a: q.get_shape_along_axis(i) for i, a in enumerate(axes)}
            ext = {a: cum[a] // parent_cum.get(a, 1) for a in axes}
            if any(a >= ndim for a in axes):  # e.g. ti.root.dense(ti.j, 3) for a 1-d field: an
                # IndexError before (2026-12-05); Taichi's own copy reads it
                return f"its layout {_describe(chain)} places axes {axes} for a {ndim}-d field"
            acc = q.cell_size_bytes  # cells of one dense level are row-major over its axes
            for a in reversed(axes):
                if ext[a] > 1:
                    if owner_level[a] is not None:
                        return (
                            f"its layout {_describe(chain)} splits axis {a} over several dense levels "
                            "(a blocked layout)"
                        )
                    owner_level[a] = level
                    strides[a] = acc
                acc *= ext[a]
            parent_cum.update(cum)
        tree = root.get_snode_tree_id()
        prog = self.program()
        if self._bases_prog is not prog:
            self._bases.clear()
            self._bases_prog = prog
        base = self._bases.get(tree)
        if base is None:  # one probe kernel per SNode tree: the address of this member's [0, ...]
            if self._probe is None:
                self._probe = _make_probe(self.lang)
            out = np.zeros(1, np.uint64)
            self._probe(sf, ndim, out)
            base = self._bases[tree] = int(out[0]) - offset
        perm = getattr(sf, "_qd_layout", None)  # quadrants' order="ji": physical axis k is canonical perm[k]
        if perm is not None and tuple(perm) != tuple(range(ndim)):
            inv = [0] * ndim
            for k, j in enumerate(perm):
                inv[j] = k
            shape = [shape[inv[j]] for j in range(ndim)]
            strides = [strides[inv[j]] for j in range(ndim)]
        return base + offset, tuple(shape), tuple(strides)

    def layout(self, f):
        """The memory of a field (scalar, vector or matrix) as one strided array:
        ``(address, shape, byte_strides, numpy_dtype)``, the element axes of a vector/matrix
        field last; or a string saying why its memory is not one strided array
        (pointer/bitmasked/dynamic/hash SNodes, blocked dense levels, members that do not
        lie at one stride from each other). RuntimeError for a field of a runtime reset or
        re-initialised since it was created (its memory is gone)."""
        if not isinstance(f, (self.matrix_cls, self.scalar_cls)):  # Struct fields: their members are
            return f"{type(f).__name__} fields are not supported (only scalar, vector and matrix fields)"
        self._check_current(f)
        hit = self._layouts.get(f)
        if hit is not None and hit[0] is self.program():
            return hit[1]  # a placed field's layout never changes while its program runs
        lay = self._layout(f)
        if not isinstance(lay, str):
            self._layouts[f] = (self.program(), lay)
        return lay

    def _layout(self, f):
        # Fields created since the last kernel launch are laid out (their SNode tree is
        # built) only when the runtime materializes again: every kernel launch does it.
        try:
            self.impl.get_runtime().materialize()
        except RuntimeError as e:  # another field not placed yet, a FieldsBuilder not finalized
            raise RuntimeError(f"{self.title} cannot lay out its fields now ({e})") from None
        if isinstance(f, self.matrix_cls):
            elem = (f.n,) if f.ndim == 1 else (f.n, f.m)
            members = [f.get_scalar_field(*idx) for idx in _indices(elem)]
        elif isinstance(f, self.scalar_cls):
            elem = ()
            members = [f]
        else:
            return f"{type(f).__name__} fields are not supported (only scalar, vector and matrix fields)"
        try:
            dt = self.to_numpy_type(members[0].dtype)
        except AssertionError:  # the language's own answer for a type NumPy lacks
            raise TypeError(
                f"its element type {members[0].dtype} has no NumPy dtype (a quantized type: bit-packed "
                "elements are not addressable); read it in a kernel into a field or ndarray of a plain type"
            ) from None
        item = np.dtype(dt).itemsize
        layouts = []
        for sf in members:
            lay = self._member_layout(sf)
            if isinstance(lay, str):
                return lay
            layouts.append(lay)
        addr0, shape, strides = layouts[0]
        if any(s % item for s in strides) or addr0 % item:
            return "its elements are not aligned to their size"
        elem_strides = []
        for k, n in enumerate(elem):
            unit = tuple(1 if j == k else 0 for j in range(len(elem)))
            elem_strides.append(layouts[_flat(unit, elem)][0] - addr0 if n > 1 else 0)
        for idx, (addr, shp, st) in zip(_indices(elem), layouts):
            if shp != shape or st != strides:
                return "its vector/matrix members lie in dense SNodes of different shapes (a mixed layout)"
            if addr != addr0 + sum(i * s for i, s in zip(idx, elem_strides)):
                return (
                    "its vector/matrix members do not lie at one stride from each other "
                    "(a mixed layout: members placed in different SNodes)"
                )
        if any(s % item for s in elem_strides):
            return "its vector/matrix members are not aligned to their size"
        return addr0, tuple(shape) + elem, tuple(strides) + tuple(elem_strides), dt

    def to_numpy(self, f):
        """A NumPy copy of a field, whatever its layout (the language's own ``to_numpy``)."""
        self._check_current(f)
        return f.to_numpy()


# ----------------------------------------------------------------------------- kernel calls

_HOOK: list = [(), None]  # (types, convert(kernel, func, params, args, kwargs) -> (args, kwargs))


def set_hook(types: tuple, convert) -> None:
    """Have every call of a ``@ti.kernel`` (and of a ``@qd.kernel`` once quadrants is
    imported) whose arguments include an instance of one of ``types`` pass them through
    ``convert(kernel, func, params, args, kwargs) -> (args, kwargs)`` first (``kernel`` the
    kernel object, ``func`` its Python function, ``params`` ``[(name, is_ndarray)]``)."""
    _HOOK[:] = [tuple(types), convert]


class KernelCallHook:
    """Wraps ``kernel_cls.__call__`` once: a call whose arguments include an instance of the
    registered types goes through the registered converter first; any other call costs one
    ``type()`` test per argument. ``params_of(kernel) -> (func, [(name, annotation)])``."""

    def __init__(self, kernel_cls, params_of):
        original = kernel_cls.__call__
        cache = weakref.WeakKeyDictionary()

        def info(kernel):
            r = cache.get(kernel)
            if r is None:
                r = cache[kernel] = params_of(kernel)
            return r

        def __call__(kernel, *args, **kwargs):
            types, convert = _HOOK
            if types and (
                any(type(a) in types for a in args)
                or (kwargs and any(type(v) in types for v in kwargs.values()))
            ):
                func, params = info(kernel)
                args, kwargs = convert(kernel, func, params, args, kwargs)
            return original(kernel, *args, **kwargs)

        __call__.__wrapped__ = original
        __call__.__doc__ = original.__doc__
        kernel_cls.__call__ = __call__


# ----------------------------------------------------------------------------- same code, two languages


def options_checker(config_class):
    """The backend's ``check_compile_options(options, who)``: that ``options`` is a dict of
    ``CompileConfig`` fields and values those fields take, checked on a fresh config (no
    program needed), else a TypeError naming ``who`` (an unknown field raised AttributeError,
    a wrong type pybind's 'incompatible function arguments', at the first compile)."""

    def check_compile_options(options, who: str) -> None:
        if not isinstance(options, dict):
            raise TypeError(f"{who}: argument 'compile_options' must be a dict, got {type(options).__name__}")
        cfg = config_class()
        for name, value in options.items():
            if not isinstance(name, str) or name.startswith("_") or not hasattr(cfg, name):
                raise TypeError(f"{who}: compile_options: the CompileConfig has no field {name!r}")
            try:
                setattr(cfg, name, value)
            except (TypeError, ValueError):
                raise TypeError(
                    f"{who}: compile_options[{name!r}] must be a {type(getattr(cfg, name)).__name__}, "
                    f"got {value!r}"
                ) from None

    return check_compile_options


def config_copier(config_class):
    """The backend's ``config_with(cfg, overrides)`` for its ``CompileConfig`` class: a copy of
    a config with some fields changed (the class has no copy constructor; the fields that can
    be copied are found once)."""
    fields: list = []

    def config_with(cfg, overrides: dict):
        """A copy of a CompileConfig with some fields changed (it has no copy constructor)."""
        new = config_class()
        if not fields:
            for name in dir(cfg):
                if name.startswith("_") or callable(getattr(cfg, name)):
                    continue
                try:
                    setattr(new, name, getattr(cfg, name))
                except (AttributeError, TypeError):
                    continue
                fields.append(name)
        else:
            for name in fields:
                setattr(new, name, getattr(cfg, name))
        for name, value in overrides.items():
            setattr(new, name, value)
        return new

    return config_with


def debug_checker(impl):
    """The backend's ``debug_checks()``: whether the running program checks array accesses
    (``init(debug=True)`` or ``check_out_of_bound``)."""

    def debug_checks() -> bool:
        """Whether the running program checks array accesses (``ti.init(debug=True)``)."""
        cfg = impl.current_cfg()
        return bool(getattr(cfg, "debug", False) or getattr(cfg, "check_out_of_bound", False))

    return debug_checks


def element_type(arg):
    """At compile time: the element type of an ndarray argument."""
    return arg.get_type().element_type


def external_caller(impl, core, expr_module: str):
    """The backend's ``call_external(addr, args)``: at compile time, a call of the C function
    at ``addr`` with ``args`` (expressions), no results, in the kernel being compiled.
    ``expr_module`` ("taichi.lang.expr") is imported at the first call."""

    def call_external(addr: int, args) -> None:
        """At compile time: a call of the C function at ``addr`` with ``args`` (expressions),
        no results, in the kernel being compiled."""
        import importlib

        make_expr_group = importlib.import_module(expr_module).make_expr_group
        rt = impl.get_runtime()
        rt.compiling_callable.ast_builder().insert_external_func_call(
            addr, "", "", "", make_expr_group(list(args)), make_expr_group([]),
            core.DebugInfo(rt.get_current_src_info()),
        )  # fmt: skip

    return call_external
