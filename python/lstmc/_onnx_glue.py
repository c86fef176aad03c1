# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The layout and shape glue around an ONNX model's RNN nodes (Transpose,
Reshape, Squeeze, Slice, Gather, Concat, Shape, Cast, ... and the TopK /
ScatterElements sort of packed sequences), followed symbolically: the
_op_NAME methods of OnnxImport, one per op."""
import numpy as np

from ._onnx_values import (_DTYPES, _FLOAT_BITS, OnnxImportError, _Const, _Fill, _Ints,
                           _Iota, _Perm, _Size, _View, _compose, _drop_dim, _group_size,
                           _rows, _significant)


class _GlueOps:
    """OnnxImport's handlers of the glue ops (a mixin: they use its values,
    sources and layers)."""

    def _fold(self, node, where, ins):
        """A node of constants only: evaluated by onnx's reference runtime."""
        from onnx.reference import ReferenceEvaluator
        try:
            ev = ReferenceEvaluator(node, opsets=dict(self.opset))
            feeds = {n: v.value for n, v in zip(node.input, ins) if n}
            res = ev.run(None, feeds)
        except Exception as e:  # noqa: BLE001 (onnx raises many kinds)
            raise OnnxImportError(f"{where}: could not evaluate this constant node: {e}") from e
        return [_Const(r) for r in res]

    # ------------------------------------------------------ glue handlers
    def _unsupported(self, where, ins, what="this use"):
        kinds = ", ".join(type(v).__name__.strip("_") for v in ins if v is not None)
        return OnnxImportError(f"{where}: {what} is not layout glue that from_onnx can follow "
                               f"(operands: {kinds})")

    def _const_ints(self, where, v, what):
        if isinstance(v, _Const):
            return [int(x) for x in np.atleast_1d(v.value).tolist()]
        raise OnnxImportError(f"{where}: {what} must be a constant")

    def _axes_arg(self, node, where, ins, attrs, index):
        if "axes" in attrs:
            return list(attrs["axes"])
        if len(ins) > index and ins[index] is not None:
            return self._const_ints(where, ins[index], "axes")
        return None

    def _op_Identity(self, node, where, ins, attrs):
        return ins[0]

    def _op_Dropout(self, node, where, ins, attrs):
        training = ins[2] if len(ins) > 2 else None
        if attrs.get("is_test", 1) == 0 or (training is not None and (
                not isinstance(training, _Const) or bool(training.value))):
            raise OnnxImportError(f"{where}: Dropout in training mode is not supported")
        return [ins[0], None]

    def _op_Cast(self, node, where, ins, attrs):
        v, to = ins[0], _DTYPES.get(attrs.get("to"), str(attrs.get("to")))
        if isinstance(v, (_Ints, _Perm, _Iota)):
            return v
        if isinstance(v, _Fill):
            return v
        if isinstance(v, _View):
            src_bits, dst_bits = _FLOAT_BITS.get(v.dtype), _FLOAT_BITS.get(to)
            if (src_bits is None) != (dst_bits is None):
                raise OnnxImportError(f"{where}: a cast from {v.dtype} to {to} of the data")
            narrowed = v.narrowed or (src_bits is not None and (
                dst_bits < src_bits or to == "bfloat16" or v.dtype == "bfloat16"))
            out = v.with_dims(v.dims)
            out.dtype, out.narrowed = to, narrowed
            return out
        raise self._unsupported(where, ins)

    def _op_Transpose(self, node, where, ins, attrs):
        v = ins[0]
        if isinstance(v, _Fill):
            return v
        if not isinstance(v, _View):
            raise self._unsupported(where, ins)
        perm = attrs.get("perm", list(range(len(v.dims)))[::-1])
        if sorted(perm) != list(range(len(v.dims))):
            raise OnnxImportError(f"{where}: perm {perm} for rank {len(v.dims)}")
        return v.with_dims([v.dims[p] for p in perm])

    def _op_Squeeze(self, node, where, ins, attrs):
        v = ins[0]
        axes = self._axes_arg(node, where, ins, attrs, 1)
        if isinstance(v, _Fill):
            return v
        if isinstance(v, _Ints):
            if len(v.entries) != 1 or v.scalar:
                raise self._unsupported(where, ins)
            return _Ints(v.entries, scalar=True)
        if not isinstance(v, _View):
            raise self._unsupported(where, ins)
        r = len(v.dims)
        if axes is None:
            axes = [i for i, g in enumerate(v.dims) if all(a.size == 1 for a in g)]
            if any(any(a.size is None for a in g) for g in v.dims):
                raise OnnxImportError(f"{where}: Squeeze without axes of a tensor with "
                                      "dynamic extents")
        axes = [a % r for a in axes]
        for a in axes:
            if any(ax.size not in (1, None) for ax in v.dims[a]):
                raise OnnxImportError(f"{where}: squeezes axis {a} of extent "
                                      f"{_group_size(v.dims[a]).coef}")
        dims = list(v.dims)
        for a in sorted(axes, reverse=True):
            dims = _drop_dim(dims, a)
        return v.with_dims(dims)

    def _op_Unsqueeze(self, node, where, ins, attrs):
        v = ins[0]
        axes = self._axes_arg(node, where, ins, attrs, 1)
        if isinstance(v, _Fill):
            return v
        if isinstance(v, _Ints):
            if not v.scalar or axes not in ([0], [-1]):
                raise self._unsupported(where, ins)
            return _Ints(v.entries)
        if not isinstance(v, _View) or axes is None:
            raise self._unsupported(where, ins)
        r = len(v.dims) + len(axes)
        axes = sorted(a % r for a in axes)
        dims = list(v.dims)
        for a in axes:
            dims.insert(a, ())
        return v.with_dims(dims)

    def _op_Flatten(self, node, where, ins, attrs):
        v = ins[0]
        if not isinstance(v, _View):
            raise self._unsupported(where, ins)
        k = attrs.get("axis", 1) % (len(v.dims) + 1)
        return v.with_dims([sum(v.dims[:k], ()), sum(v.dims[k:], ())])

    def _shape_entries(self, where, v):
        """A shape operand as a list of _Size (None for 0 / -1 given as ints)."""
        if isinstance(v, _Const):
            return [int(x) for x in np.atleast_1d(v.value).tolist()]
        if isinstance(v, _Ints):
            return list(v.entries)
        raise OnnxImportError(f"{where}: the shape must be a constant or computed from shapes")

    def _op_Reshape(self, node, where, ins, attrs):
        v, shape = ins[0], ins[1]
        if isinstance(v, _Fill):
            return v
        if not isinstance(v, _View):
            raise self._unsupported(where, ins)
        entries = self._shape_entries(where, shape)
        allowzero = attrs.get("allowzero", 0)
        targets = []
        for i, e in enumerate(entries):
            if isinstance(e, int) and e == 0 and not allowzero:
                if i >= len(v.dims):
                    raise OnnxImportError(f"{where}: shape entry {i} copies a missing dim")
                targets.append(_group_size(v.dims[i]))
            elif isinstance(e, int) and e == -1:
                targets.append(None)
            elif isinstance(e, int):
                targets.append(_Size(e))
            else:
                targets.append(e)
        if targets.count(None) > 1:
            raise OnnxImportError(f"{where}: more than one -1 in the shape")
        seq = [a for g in v.dims for a in g if a.size != 1]

        def take(axes, size, rev):
            """Axes from the front (or back) whose product is `size`."""
            got, n = [], _Size(1)
            while n != size:
                if not axes:
                    return None
                a = axes.pop(-1 if rev else 0)
                got.append(a)
                n = n * _group_size((a,))
                if n.coef > size.coef and size.coef and not n.syms:
                    return None
            return got[::-1] if rev else got

        free = targets.index(None) if None in targets else len(targets)
        groups = [None] * len(targets)
        for i in range(free):
            g = take(seq, targets[i], False)
            if g is None:
                raise self._bad_reshape(where, v, entries)
            groups[i] = tuple(g)
        for i in range(len(targets) - 1, free, -1):
            g = take(seq, targets[i], True)
            if g is None:
                raise self._bad_reshape(where, v, entries)
            groups[i] = tuple(g)
        if free < len(targets):
            groups[free] = tuple(seq)
        elif seq:
            raise self._bad_reshape(where, v, entries)
        rows = sum((_rows(g) for g in v.dims), ())
        if rows:
            if not groups:
                raise self._bad_reshape(where, v, entries)
            groups[0] = rows + groups[0]
        return v.with_dims(groups)

    def _bad_reshape(self, where, v, entries):
        dims = " x ".join(("·".join(map(repr, g)) or "1") for g in v.dims)
        shown = [e if isinstance(e, int) else "dynamic" for e in entries]
        return OnnxImportError(f"{where}: a reshape of [{dims}] to {shown} that splits or "
                               "reorders an extent: from_onnx follows only reshapes that "
                               "merge or keep whole extents")

    def _slice_args(self, node, where, ins, attrs):
        if self.opset.get("", 13) < 10 and "starts" in attrs:
            starts, ends = attrs["starts"], attrs["ends"]
            axes, steps = attrs.get("axes"), None
        else:
            starts = self._const_ints(where, ins[1], "starts")
            ends = self._const_ints(where, ins[2], "ends")
            axes = self._const_ints(where, ins[3], "axes") if len(ins) > 3 and ins[3] else None
            steps = self._const_ints(where, ins[4], "steps") if len(ins) > 4 and ins[4] else None
        axes = axes if axes is not None else list(range(len(starts)))
        steps = steps or [1] * len(starts)
        return starts, ends, axes, steps

    @staticmethod
    def _range(start, end, size):
        """[lo, hi) of a slice with step 1 on an extent of `size` (None:
        dynamic: only from 0 or to the end)."""
        big = 2 ** 62
        if size is None:
            if start < 0 or end < 0 or (start > 0 and end < big):
                return None
            return (start, end) if end < big else (start, None)
        start = max(0, min(size, start + size if start < 0 else start))
        end = max(0, min(size, end + size if end < 0 else end))
        return (start, max(start, end))

    def _op_Slice(self, node, where, ins, attrs):
        v = ins[0]
        starts, ends, axes, steps = self._slice_args(node, where, ins, attrs)
        if isinstance(v, _Fill):
            return v
        if isinstance(v, _Ints):
            if len(axes) != 1 or steps[0] != 1 or v.scalar:
                raise self._unsupported(where, ins)
            return _Ints(v.entries[slice(starts[0], ends[0])])
        if not isinstance(v, _View):
            raise self._unsupported(where, ins)
        dims = list(v.dims)
        for s, e, a, st in zip(starts, ends, axes, steps):
            a %= len(dims)
            if st != 1:
                raise OnnxImportError(f"{where}: a slice with step {st}")
            g = [x for x in dims[a] if x.size != 1]
            size = _group_size(dims[a]).known()
            rng = self._range(s, e, size)
            if rng is None:
                raise OnnxImportError(f"{where}: a slice {s}:{e} of a dynamic extent")
            lo, hi = rng
            if lo == 0 and (hi is None or hi == size):
                continue
            if len(g) != 1:
                raise OnnxImportError(f"{where}: a slice of axis {a}, which merges several "
                                      "extents")
            dims[a] = _rows(dims[a]) + (g[0].sub(lo, hi - lo),)
        return v.with_dims(dims)

    def _op_Gather(self, node, where, ins, attrs):
        data, idx = ins[0], ins[1]
        axis = attrs.get("axis", 0)
        if isinstance(data, _Ints) and isinstance(idx, _Const):
            picked = [data.entries[int(i)] for i in np.atleast_1d(idx.value).tolist()]
            return _Ints(picked, scalar=idx.value.ndim == 0)
        if isinstance(data, _Fill):
            return data
        if isinstance(data, _View) and isinstance(idx, _Perm):
            a = axis % len(data.dims)
            if len([x for x in data.dims[a] if x.size != 1]) != 1:
                raise OnnxImportError(f"{where}: a permutation of axis {a}, which merges "
                                      "several extents")
            key = [x for x in data.dims[a] if x.size != 1][0].key()
            return data.with_dims(data.dims, _compose(data.perms, (idx.pid, idx.inverse, key)))
        if isinstance(data, _View) and isinstance(idx, _Const) and idx.value.ndim <= 1:
            a = axis % len(data.dims)
            picks = np.atleast_1d(idx.value).astype(int)
            g = [x for x in data.dims[a] if x.size != 1]
            size = _group_size(data.dims[a]).known()
            if not g and size == 1 and picks.tolist() == [0]:  # an extent of 1
                return data.with_dims(_drop_dim(data.dims, a) if idx.value.ndim == 0
                                      else data.dims)
            if len(g) != 1 or size is None:
                raise OnnxImportError(f"{where}: indexing axis {a}, a dynamic or merged extent")
            picks = [p % size for p in picks.tolist()]
            if picks != list(range(picks[0], picks[0] + len(picks))):
                raise OnnxImportError(f"{where}: indices {picks} are not a contiguous range")
            dims = list(data.dims)
            dims[a] = _rows(dims[a]) + (g[0].sub(picks[0], len(picks)),)
            return data.with_dims(_drop_dim(dims, a) if idx.value.ndim == 0 else dims)
        raise self._unsupported(where, ins)

    def _op_Concat(self, node, where, ins, attrs):
        axis = attrs.get("axis", 0)
        if all(isinstance(v, (_Ints, _Const)) for v in ins):
            entries = []
            for v in ins:
                if isinstance(v, _Ints):
                    entries += v.entries
                else:
                    entries += [_Size(int(x)) if int(x) > 0 else int(x)
                                for x in np.atleast_1d(v.value).tolist()]
            return _Ints(entries)
        if all(isinstance(v, _Fill) for v in ins) and len({v.value for v in ins}) == 1:
            return ins[0]
        if not all(isinstance(v, _View) for v in ins):
            raise self._unsupported(where, ins)
        first = ins[0]
        a = axis % len(first.dims)
        rows = []
        for v in ins:
            same = (v.src is first.src and len(v.dims) == len(first.dims) and v.perms == first.perms
                    and all(_significant(g) == _significant(h)
                            for i, (g, h) in enumerate(zip(v.dims, first.dims)) if i != a))
            g = [x for x in v.dims[a] if x.size != 1 or x.parent is not None]
            if not same or len(g) != 1 or g[0].parent is None:
                raise OnnxImportError(f"{where}: a concatenation that is not of adjacent rows "
                                      "of one tensor (such as the final states of the layers "
                                      "of one stack)")
            rows.append(g[0])
        for prev, nxt in zip(rows, rows[1:]):
            if nxt.root is not prev.root or nxt.start != prev.start + prev.size:
                raise OnnxImportError(f"{where}: concatenates rows {prev!r} and {nxt!r}, which "
                                      "are not adjacent")
        merged = rows[0].sub(0, sum(r.size for r in rows))
        dims = list(first.dims)
        dims[a] = (merged,)
        return first.with_dims(dims)

    def _op_Shape(self, node, where, ins, attrs):
        v = ins[0]
        if isinstance(v, _Perm):
            entries = [v.size]
        elif isinstance(v, _View):
            entries = [_group_size(g) for g in v.dims]
        else:
            raise self._unsupported(where, ins, "the shape of a tensor of unknown shape")
        return _Ints(entries[attrs.get("start", 0):attrs.get("end")])

    def _op_ConstantOfShape(self, node, where, ins, attrs):
        value = attrs.get("value")
        if value is not None:
            from onnx import numpy_helper
            value = float(np.asarray(numpy_helper.to_array(value)).reshape(-1)[0])
        return _Fill(value or 0.0)

    def _op_Expand(self, node, where, ins, attrs):
        v = ins[0]
        if isinstance(v, _Fill):
            return v
        if isinstance(v, _Const) and v.value.size and (v.value == v.value.flat[0]).all():
            return _Fill(v.value.flat[0])  # a constant broadcast to a computed shape
        raise self._unsupported(where, ins)

    def _op_ReduceProd(self, node, where, ins, attrs):
        v = ins[0]
        if not isinstance(v, _Ints) or len(ins) > 1 and ins[1] is not None:
            raise self._unsupported(where, ins)
        n = _Size(1)
        for e in v.entries:
            n = n * (e if isinstance(e, _Size) else _Size(e))
        return _Ints([n], scalar=not attrs.get("keepdims", 1))

    def _op_Range(self, node, where, ins, attrs):
        start, limit, delta = ins
        if not (isinstance(start, _Const) and isinstance(delta, _Const) and
                isinstance(limit, _Ints) and len(limit.entries) == 1 and
                int(start.value) == 0 and int(delta.value) == 1):
            raise self._unsupported(where, ins)
        return _Iota(limit.entries[0])

    def _op_TopK(self, node, where, ins, attrs):
        """Sorting a batch by its lengths: the values are the lengths
        permuted, the indices a permutation of the batch."""
        v, k = ins[0], ins[1]
        if not isinstance(v, _View) or len(v.dims) != 1:
            raise self._unsupported(where, ins)
        size = _group_size(v.dims[0])
        kk = k.entries[0] if isinstance(k, _Ints) and len(k.entries) == 1 else (
            _Size(int(np.asarray(k.value).reshape(-1)[0])) if isinstance(k, _Const) else None)
        if kk != size:
            raise OnnxImportError(f"{where}: a TopK that does not sort the whole batch")
        g = [x for x in v.dims[0] if x.size != 1]
        key = g[0].key() if g else None
        self._perm_ids += 1
        pid = self._perm_ids
        return [v.with_dims(v.dims, _compose(v.perms, (pid, False, key))), _Perm(pid, False, size)]

    def _op_ScatterElements(self, node, where, ins, attrs):
        """ScatterElements(_, σ, iota) = σ⁻¹."""
        data, idx, upd = ins
        if isinstance(upd, _Const) and upd.value.ndim == 1 and \
                np.array_equal(upd.value, np.arange(len(upd.value))):
            upd = _Iota(_Size(len(upd.value)))  # a Range folded for a static batch
        if (isinstance(idx, _Perm) and isinstance(upd, _Iota) and upd.size == idx.size and
                attrs.get("axis", 0) == 0 and attrs.get("reduction", "none") == "none"):
            return _Perm(idx.pid, not idx.inverse, idx.size)
        raise self._unsupported(where, ins)
