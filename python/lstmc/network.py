# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Networks: layers of a cell, stacked, in one or both directions, with
optional per-sequence lengths, written out as one func.func of lstm IR.

The function's signature follows examples/*.mlir (and nn.LSTM):

    x [T, B, I], lengths [B] (i32, with lengths=True), for each state S of
    the cell its initial value S0 ([B, N], or [L·D, B, N] for L layers and
    D directions), then the parameters of each layer and direction (names
    suffixed with the layer index when L > 1 and "_rev" for the reverse
    direction)

and it returns y [T, B, D·N] and the final value of each returned state
(same shapes as the initial ones).
"""
import re
import numpy as np

from . import dsl
from .dsl import CellBuilder, CellError, Emitter, Value

DIRECTIONS = ("forward", "reverse")


class Arg:
    """One argument or result of the compiled function."""

    def __init__(self, name, shape, dtype, kind):
        self.name = name
        self.shape = tuple(shape)  # ints, or 'T' / 'B'
        self.dtype = dtype  # numpy dtype name
        self.kind = kind  # 'data', 'lengths', 'state', 'param', 'result'

    def to_json(self):
        return {"name": self.name, "shape": list(self.shape), "dtype": self.dtype,
                "kind": self.kind}

    @classmethod
    def from_json(cls, d):
        return cls(d["name"], d["shape"], d["dtype"], d["kind"])

    def __repr__(self):
        return f"{self.name}: {list(self.shape)} {self.dtype}"


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _check_names(entry, args, em):
    """The function's and its arguments' names: identifiers (the IR's SSA
    names, the keywords of a call), each once, none the name of a value
    the cells' IR already defines; then kept from the names the rest of
    the IR takes."""
    if not isinstance(entry, str) or not _IDENTIFIER.fullmatch(entry):
        raise dsl.CellError(f"entry {entry!r}: a function name must be an identifier "
                            "(letters, digits and _, not starting with a digit)")
    origin = {"data": "the input", "lengths": "the lengths", "state": "the initial value of a state",
              "param": "a parameter"}
    seen = {}
    for a in args:
        if not _IDENTIFIER.fullmatch(a.name):
            what = (f"state {a.name[:-1]!r}" if a.kind == "state" else
                    f"param {a.name!r}")
            raise dsl.CellError(f"{what}: the name {a.name!r} must be an identifier "
                                "(letters, digits and _, not starting with a digit)")
        if a.name in seen:
            both = ("two parameters" if seen[a.name] == origin[a.kind] == origin["param"]
                    else f"{seen[a.name]} and {origin[a.kind]}")
            raise dsl.CellError(f"argument {a.name!r} is {both}: rename one (a state S "
                                "takes the argument S0; layers and directions suffix "
                                "their parameters with the layer index and _rev)")
        seen[a.name] = origin[a.kind]
        if "%" + a.name in em.names:
            raise dsl.CellError(f"{origin[a.kind]} {a.name!r} takes the name of a value "
                                "that the cell's IR defines: rename it")
    for a in args:
        em.reserve(a.name)


class Network:
    """`num_layers` layers of `cell`, each a function cell(c, x, **cell_args).

    direction: 'forward', 'reverse' or 'bidirectional'. lengths: take
    per-sequence lengths (packed-sequence semantics). dtype: 'float32' or
    'float64', the type of every tensor. compute_type: the GEMM arithmetic
    on the GPU, 'fp32' (no TF32), 'tf32' or 'bf16' (GEMM operands rounded to
    bf16, fp32 accumulation; float32 networks only); the CPU computes in
    `dtype` whatever it says. entry: the function's name.
    """

    def __init__(self, cell, input_size, num_layers=1, direction="forward", lengths=False,
                 dtype="float32", compute_type="fp32", entry="forward", **cell_args):
        if direction not in DIRECTIONS + ("bidirectional",):
            raise ValueError(f"direction {direction!r}: expected forward, reverse or "
                             "bidirectional")
        if not isinstance(num_layers, int) or num_layers < 1:
            raise ValueError(f"num_layers {num_layers!r} must be a positive int")
        if not isinstance(input_size, int) or input_size < 1:
            raise ValueError(f"input_size {input_size!r} must be a positive int")
        if compute_type not in ("fp32", "tf32", "bf16"):
            raise ValueError(f"compute_type {compute_type!r}: expected 'fp32', 'tf32' or 'bf16'")
        if dtype not in dsl.DTYPES:
            raise ValueError(f"dtype {dtype!r}: expected one of {sorted(dsl.DTYPES)}")
        if compute_type == "bf16" and dtype != "float32":
            # bf16 rounds fp32 GEMM operands (lstm-gemm-operands-to-bf16); a
            # float64 network would silently keep its float64 products.
            raise ValueError(f"compute_type 'bf16' needs dtype 'float32', not {dtype!r}")
        self.cell, self.cell_args = cell, cell_args
        self.input_size, self.num_layers = input_size, num_layers
        self.direction, self.lengths = direction, lengths
        self.dtype, self.compute_type, self.entry = dtype, compute_type, entry
        self._build()

    # ------------------------------------------------------------------
    def _dirs(self):
        return list(DIRECTIONS) if self.direction == "bidirectional" else [self.direction]

    def _suffix(self, layer, direction):
        s = str(layer) if self.num_layers > 1 else ""
        return s + ("_rev" if direction == "reverse" and self.direction == "bidirectional"
                    else "")

    def _trace(self, em, input_size, suffix):
        """Runs the cell function once; returns (builder, x, out, states)."""
        c = CellBuilder(em, suffix)
        x = Value(em, em.fresh("xt"), input_size)
        result = self.cell(c, x, **self.cell_args)
        if not (isinstance(result, tuple) and len(result) == 2):
            raise CellError(f"cell {getattr(self.cell, '__name__', self.cell)!r} must return "
                            "(output, new_state)")
        out, new = result
        out = dsl._value(out, "output")
        if not c.states:
            raise CellError("a cell needs at least one state (c.state)")
        if isinstance(new, dict):
            missing = [n for n, _, _ in c.states if n not in new]
            extra = [n for n in new if n not in c._state_values]
            if missing or extra:
                raise CellError(f"new state: missing {missing}, unknown {extra}")
            new = [new[n] for n, _, _ in c.states]
        new = [dsl._value(v, "state") for v in new]
        if len(new) != len(c.states):
            raise CellError(f"new state: {len(new)} values for {len(c.states)} states")
        for (name, size, _), v in zip(c.states, new):
            if v.size != size:
                raise CellError(f"state {name!r}: declared [B, {size}], the cell yields "
                                f"[B, {v.size}]")
        return c, x, out, new

    def _build(self):
        em = Emitter(self.dtype)
        # The arguments every network has, kept from the cells' values (a
        # state named x).
        em.reserve("x")
        em.reserve("lengths")
        D, L = len(self._dirs()), self.num_layers
        stacked = D * L > 1
        np_dtype = self.dtype

        # Trace every layer and direction first: the signature needs their
        # parameters and state sizes.
        traces = []  # per layer: per direction (builder, x, out, new, region lines)
        size = self.input_size
        for k in range(L):
            per_dir = []
            for d in self._dirs():
                em.region = []
                trace = self._trace(em, size, self._suffix(k, d))
                per_dir.append(trace + (em.region,))
                em.region = None
            outs = {t[2].size for t in per_dir}
            if len(outs) != 1:
                raise CellError(f"layer {k}: directions with different output sizes {outs}")
            states0 = [(n, s) for n, s, _ in per_dir[0][0].states]
            for t in per_dir[1:] + [p for layer in traces for p in layer]:
                if [(n, s) for n, s, _ in t[0].states] != states0:
                    raise CellError("every layer and direction must have the same states "
                                    f"(layer {k}: {states0})")
            traces.append(per_dir)
            size = outs.pop() * D
        out_size = size // D
        first = traces[0][0][0]
        state_decl = first.states

        # Signature.
        t = em.type
        args = [Arg("x", ("T", "B", self.input_size), np_dtype, "data")]
        sig = [f"%x: {t((None, None, self.input_size))}"]
        if self.lengths:
            args.append(Arg("lengths", ("B",), "int32", "lengths"))
            sig.append("%lengths: tensor<?xi32>")
        for name, n, _ in state_decl:
            shape = (D * L, None, n) if stacked else (None, n)
            args.append(Arg(name + "0", tuple("B" if s is None else s for s in shape),
                            np_dtype, "state"))
            sig.append(f"%{name}0: {t(shape)}")
        for layer in traces:
            for c, *_ in layer:
                for name, shape in c.params:
                    args.append(Arg(name + c.suffix, shape, np_dtype, "param"))
                    sig.append(f"%{name}{c.suffix}: {t(shape)}")
        _check_names(self.entry, args, em)
        self.args = args

        body = list(em.lines)  # the slices of the parameters
        em.lines = body
        B = None
        if stacked:
            c1 = em.fresh("c1")
            B = em.fresh("B")
            sname = state_decl[0][0] + "0"
            body.append(f"{c1} = arith.constant 1 : index")
            body.append(f"{B} = tensor.dim %{sname}, {c1} : {t((D * L, None, state_decl[0][1]))}")

        seq, seq_size = "%x", self.input_size
        finals = {name: [] for name, _, _ in state_decl}
        for k, layer in enumerate(traces):
            ys = []
            for j, (c, x, out, new, region) in enumerate(layer):
                d = self._dirs()[j]
                inits = []
                for name, n, _ in state_decl:
                    if stacked:
                        v = em.fresh(f"{name}0_l{k}_{d[0]}")
                        body.append(f"{v} = tensor.extract_slice %{name}0[{k * D + j}, 0, 0] "
                                    f"[1, {B}, {n}] [1, 1, 1] : {t((D * L, None, n))} to "
                                    f"{t((None, n))}")
                        inits.append(v)
                    else:
                        inits.append(f"%{name}0")
                y = em.fresh(f"y{k}{d[0]}")
                fins = [em.fresh(f"{name}T{k}{d[0]}") for name, _, _ in state_decl]
                stypes = ", ".join(t((None, n)) for _, n, _ in state_decl)
                header = (f"{y}, {', '.join(fins)} = lstm.layer {d} ins({seq} : "
                          f"{t((None, None, seq_size))})\n"
                          f"      init({', '.join(inits)} : {stypes})\n")
                if self.lengths:
                    header += "      lengths(%lengths : tensor<?xi32>)\n"
                header += (f"      -> ({t((None, None, out.size))}), ({stypes}) {{\n"
                           f"  ^bb0({x.name}: {x.type}, " +
                           ", ".join(f"{c._state_values[name].name}: {t((None, n))}"
                                     for name, n, _ in state_decl) + "):\n")
                # The layer's location names it and the caller's line: a
                # failure of its run (a buffer that cannot be allocated, a
                # shape check) says which layer.
                src_file, src_line = dsl._where()
                yield_ = (f"    lstm.yield out({out.name} : {out.type}) state("
                          f"{', '.join(v.name for v in new)} : {stypes})\n  }}"
                          f' loc("layer {k} ({d}) of {self.entry} at {src_file}:{src_line}")')
                body.append(header + "".join(f"    {line}\n" for line in region) + yield_)
                ys.append(y)
                for name, f in zip(finals, fins):
                    finals[name].append(f)
            if D == 2:
                cat = em.fresh(f"y{k}")
                body.append(f"{cat} = tensor.concat dim(2) {ys[0]}, {ys[1]} : "
                            f"({t((None, None, out_size))}, {t((None, None, out_size))}) -> "
                            f"{t((None, None, 2 * out_size))}")
                seq = cat
            else:
                seq = ys[0]
            seq_size = out_size * D

        results = [seq]
        rtypes = [t((None, None, out_size * D))]
        self.results = [Arg("y", ("T", "B", out_size * D), np_dtype, "result")]
        for name, n, returned in state_decl:
            if not returned:
                continue
            if stacked:
                acc = em.fresh(f"{name}T_empty")
                stype = t((D * L, None, n))
                body.append(f"{acc} = tensor.empty({B}) : {stype}")
                for i, f in enumerate(finals[name]):
                    nxt = em.fresh(f"{name}T_acc")
                    body.append(f"{nxt} = tensor.insert_slice {f} into {acc}[{i}, 0, 0] "
                                f"[1, {B}, {n}] [1, 1, 1] : {t((None, n))} into {stype}")
                    acc = nxt
                results.append(acc)
                rtypes.append(stype)
                self.results.append(Arg(name + "T", (D * L, "B", n), np_dtype, "result"))
            else:
                results.append(finals[name][0])
                rtypes.append(t((None, n)))
                self.results.append(Arg(name + "T", ("B", n), np_dtype, "result"))
        body.append(f"return {', '.join(results)} : {', '.join(rtypes)}")

        self.ir = (f"func.func @{self.entry}(\n    " + ",\n    ".join(sig) +
                   f")\n    -> ({', '.join(rtypes)}) {{\n" +
                   "".join(f"  {line}\n" for line in body) + "}\n")
        self.state_sizes = [(n, s) for n, s, _ in state_decl]
        self.output_size = out_size * D

    # ------------------------------------------------------------------
    def verify(self):
        """Parses and verifies the IR in the compiler; raises CellError with
        the compiler's diagnostics (located at the cell's lines)."""
        from . import compiler
        compiler.verify(self.ir)
        return self

    def param_shapes(self):
        return {a.name: a.shape for a in self.args if a.kind == "param"}

    def init_params(self, seed=0):
        """Random parameters ~ U(-1/√N, 1/√N) (PyTorch's init; N the output size
        of a layer), as a dict of numpy arrays."""
        rng = np.random.default_rng(seed)
        k = 1.0 / np.sqrt(self.output_size // len(self._dirs()))
        return {name: rng.uniform(-k, k, size=shape).astype(self.dtype)
                for name, shape in self.param_shapes().items()}

    def schedule_report(self, target="cpu", pre_passes="lstm-combine-gate-gemms", **options):
        """The schedule report of compiling with these options, as text (see
        lstmc.compiler.schedule_report): with target='cuda' and
        persistent=True, which layers run as persistent kernels, to which
        batch, and from which batch on tensor cores."""
        from . import compiler
        return compiler.schedule_report(self, target=target, pre_passes=pre_passes, **options)

    def compile(self, path=None, target="cpu", pre_passes="lstm-combine-gate-gemms",
                **options):
        """Compiles to a shared library; returns a CompiledNetwork (see
        lstmc.compiler.compile)."""
        from . import compiler
        return compiler.compile(self, path=path, target=target, pre_passes=pre_passes,
                                **options)
