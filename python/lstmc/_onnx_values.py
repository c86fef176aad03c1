# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The values onnx_import follows an ONNX graph with: views of the graph's
inputs and the layers' sequences and states through the exporters' layout
glue, constants, sizes; and the import's error."""
import numpy as np

from .runtime import CallError


class OnnxImportError(ValueError):
    """A model (or part of it) that from_onnx cannot import: names the node,
    its op and the attribute or input."""

    # Where users import it from (and tracebacks name it).
    __module__ = "lstmc.onnx_import"


#: ONNX's element types (TensorProto.DataType) by number, as numpy names.
_DTYPES = {1: "float32", 2: "uint8", 3: "int8", 5: "int16", 6: "int32", 7: "int64",
           9: "bool", 10: "float16", 11: "float64", 12: "uint32", 13: "uint64",
           16: "bfloat16"}
_FLOAT_BITS = {"float16": 16, "bfloat16": 16, "float32": 32, "float64": 64}


# ------------------------------------------------------ the symbolic values
class _Axis:
    """An extent of a source tensor (size an int, or None when dynamic), or
    the rows [start, start + size) of one (`parent`)."""

    def __init__(self, name, size, parent=None, start=0):
        self.name, self.size, self.parent, self.start = name, size, parent, start

    @property
    def root(self):
        return self.parent or self

    def key(self):
        return (id(self.root), self.start, self.size) if self.parent else (id(self), None, None)

    def sub(self, start, size):
        return _Axis(self.root.name, size, self.root, self.start + start)

    def __repr__(self):
        s = self.root.name
        return f"{s}[{self.start}:{self.start + self.size}]" if self.parent else s


class _Source:
    """What a view reads: a graph input ('input'), a layer's output sequence
    ('y', viewed as [T, B, D, H]) or the network's final states ('state',
    [L·D, B, H]); `axes` in memory order."""

    def __init__(self, kind, name, axes, layer=None):
        self.kind, self.name, self.axes, self.layer = kind, name, axes, layer


class _View:
    """A tensor that is a source rearranged: dims are groups of the source's
    axes (a group is one dim, its axes merged in row-major order; () is a
    dim of 1); `perms` the batch permutations applied (TopK sorts);
    `dtype` the element type; `narrowed` if a cast rounded it on the way."""

    def __init__(self, src, dims, dtype, perms=(), narrowed=False):
        self.src, self.dims, self.dtype = src, [tuple(d) for d in dims], dtype
        self.perms, self.narrowed = tuple(perms), narrowed

    def with_dims(self, dims, perms=None):
        return _View(self.src, dims, self.dtype, self.perms if perms is None else perms,
                     self.narrowed)


class _Const:
    def __init__(self, value):
        self.value = np.asarray(value)


class _Size:
    """An extent as a product: an int and the dynamic axes (keys)."""

    def __init__(self, coef, syms=()):
        self.coef, self.syms = int(coef), tuple(sorted(syms))

    def __mul__(self, o):
        return _Size(self.coef * o.coef, self.syms + o.syms)

    def __eq__(self, o):
        return isinstance(o, _Size) and (self.coef, self.syms) == (o.coef, o.syms)

    def __hash__(self):
        return hash((self.coef, self.syms))

    def known(self):
        return None if self.syms else self.coef


class _Ints:
    """A shape-like int vector (or scalar) whose entries may be dynamic
    extents (from Shape of a view)."""

    def __init__(self, entries, scalar=False):
        self.entries, self.scalar = list(entries), scalar


class _Fill:
    """A tensor of one value and unknown shape (ConstantOfShape)."""

    def __init__(self, value):
        self.value = float(value)


class _Perm:
    """A permutation of the batch (TopK's indices, `inverse` for the
    ScatterElements that undoes it)."""

    def __init__(self, pid, inverse, size):
        self.pid, self.inverse, self.size = pid, inverse, size


class _Iota:
    def __init__(self, size):
        self.size = size


def _group_size(group):
    s = _Size(1)
    for a in group:
        s = s * (_Size(a.size) if a.size is not None else _Size(1, (a.key(),)))
    return s


def _drop_dim(dims, i):
    """dims without dim i (of extent 1): its axes that are rows of a source
    (a layer's final state, say) join a neighbouring dim, where an extent of
    1 changes nothing, so that the view still knows which row it reads."""
    dims = list(dims)
    keep = tuple(a for a in dims.pop(i) if a.parent is not None)
    if keep:
        if not dims:
            raise OnnxImportError("a view of a single row reduced to a scalar")
        j = min(i, len(dims) - 1)
        dims[j] = keep + dims[j] if j == i else dims[j] + keep
    return dims


def _rows(group):
    """The single rows of sources in a group (extent 1, but they say which
    row a view reads: they must survive reshapes)."""
    return tuple(a for a in group if a.size == 1 and a.parent is not None)


def _significant(group):
    return tuple(a.key() for a in group if a.size != 1)


def _compose(perms, new):
    """perms followed by `new` (pid, inverse), a permutation and its inverse
    cancelling."""
    if perms and perms[-1][0] == new[0] and perms[-1][1] != new[1]:
        return perms[:-1]
    return perms + (new,)


def _materialise_view(arr, axes, dims, what):
    """The array of a view: `arr` holds the source (axes in memory order)."""
    arr = np.asarray(arr)
    if arr.ndim != len(axes):
        raise CallError(f"{what}: rank {arr.ndim}, expected {len(axes)}")
    flat = [a for g in dims for a in g]
    index, order, unused = [], [], []
    for pos, ax in enumerate(axes):
        uses = [a for a in flat if a.root is ax]
        if not uses:
            if arr.shape[pos] != 1:
                raise CallError(f"{what}: extent {arr.shape[pos]} of axis {pos} where the "
                                "model squeezes or indexes an extent of 1")
            index.append(slice(None))
            unused.append(pos)
            continue
        a = uses[0]
        if a.parent is not None:
            if a.start + a.size > arr.shape[pos]:
                raise CallError(f"{what}: rows {a.start}:{a.start + a.size} of an extent "
                                f"{arr.shape[pos]}")
            index.append(slice(a.start, a.start + a.size))
        else:
            index.append(slice(None))
    arr = arr[tuple(index)]
    pos_of = {id(ax): pos for pos, ax in enumerate(axes)}
    order = [pos_of[id(a.root)] for a in flat]
    arr = arr.transpose(order + unused)
    sizes, i = [], 0
    for g in dims:
        n = 1
        for _ in g:
            n *= arr.shape[i]
            i += 1
        sizes.append(n)
    return arr.reshape(sizes)
