# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The lstmc Network that an ONNX model's layers make, and the model's
inputs and outputs mapped onto its arguments and results: the _network,
_output_plan, arguments and outputs_of methods of OnnxImport, a mixin
separate from the graph walk (onnx_import.py) and the RNN nodes
(_onnx_layers.py)."""
import numpy as np

from ._onnx_cells import _CELLS
from ._onnx_values import OnnxImportError, _Const, _materialise_view, _View
from .network import Network
from .runtime import CallError


class _NetworkOps:
    """OnnxImport's network and calls (a mixin: it uses its layers, plans
    and sources)."""

    # --------------------------------------------------------- the network
    def _network(self):
        first = self.layers[0]
        for layer in self.layers[1:]:
            if layer.direction != first.direction:
                raise OnnxImportError(f"{layer.where}: direction {layer.direction}, but "
                                      f"{first.where} is {first.direction}: a network has one "
                                      "direction")
            if set(layer.states) != set(first.states):
                raise OnnxImportError(f"{layer.where}: an {layer.kind} after an {first.kind}: "
                                      "the layers of a network have the same states")
            if layer.hidden != first.hidden:
                raise OnnxImportError(f"{layer.where}: hidden_size {layer.hidden}, but "
                                      f"{first.where} has {first.hidden}")
        L, D = len(self.layers), first.D
        direction = first.direction
        dirs = ["forward", "reverse"] if D == 2 else [direction]
        specs, params = {}, {}
        for k, layer in enumerate(self.layers):
            for j, d in enumerate(dirs):
                sfx = (str(k) if L > 1 else "") + ("_rev" if D == 2 and d == "reverse" else "")
                specs[sfx] = layer.specs[j]
                for n, a in layer.params[j].items():
                    params[n + sfx] = a

        def cell(c, x):
            spec = specs[c.suffix]
            return _CELLS[spec.kind](c, x, spec)
        cell.__name__ = "onnx_" + "_".join(sorted({layer.kind.lower() for layer in self.layers}))
        self.network = Network(cell, input_size=first.input_size, num_layers=L,
                               direction=direction, lengths=first.lengths is not None,
                               dtype=first.dtype)
        shapes = self.network.param_shapes()
        if set(shapes) != set(params):  # an internal inconsistency, not the model's
            raise OnnxImportError(f"from_onnx: parameters {sorted(params)} do not match the "
                                  f"network's {sorted(shapes)}")
        self.params = params
        self.state_names = [s for s, _ in self.network.state_sizes]

    def _output_plan(self, name):
        v = self.values.get(name)
        if isinstance(v, _Const):
            return ("const", v.value)
        if isinstance(v, _View):
            if v.perms:
                raise OnnxImportError(f"from_onnx: graph output {name!r} stays permuted by a "
                                      "sort of the batch that the graph does not undo")
            if v.src.kind == "y":
                if v.src.layer != len(self.layers) - 1:
                    raise OnnxImportError(
                        f"from_onnx: graph output {name!r} is the output sequence of "
                        f"{self.layers[v.src.layer].where}, which is not the last node of the "
                        "stack: the network returns the last layer's sequence and the final "
                        "states")
                return ("y", v.src, v.dims)
            if v.src.kind == "state":
                return ("state", v.src, v.dims)
            return ("input", v.src, v.dims)
        raise OnnxImportError(f"from_onnx: graph output {name!r} is not computed from the "
                              "RNN nodes by layout glue")

    # ------------------------------------------------------------ calling
    def arguments(self, feeds):
        """The network's arguments (dict) for the model's input feeds."""
        net, first = self.network, self.layers[0]
        dtype = net.dtype

        def feed(src, dims, what):
            if src.name not in feeds:
                raise CallError(f"missing input {src.name!r} ({what})")
            return _materialise_view(feeds[src.name], src.axes, dims, f"input {src.name!r}")
        src, dims = self.x_plan
        x = np.ascontiguousarray(feed(src, dims, "X of the first node"), dtype)
        B = x.shape[1]
        args = {"x": x}
        if first.lengths is not None:
            plan = first.lengths
            lengths = plan[1] if plan[0] == "const" else feed(plan[1], plan[2], "sequence_lens")
            args["lengths"] = np.ascontiguousarray(lengths, np.int32)
        L, D, H = len(self.layers), first.D, first.hidden
        for s in self.state_names:
            pieces, given = [], False
            for layer in self.layers:
                plan = layer.states[s]
                if plan[0] == "fill":
                    given |= plan[1] != 0.0
                    pieces.append(np.full((D, B, H), plan[1], dtype))
                elif plan[0] == "const":
                    given = True
                    if plan[1].shape[1] != B:
                        raise CallError(f"the constant initial state {s} of {layer.where} has "
                                        f"batch {plan[1].shape[1]}, input X has {B}")
                    pieces.append(plan[1].astype(dtype))
                else:
                    given = True
                    pieces.append(feed(plan[1], plan[2], f"initial state {s} of {layer.where}"))
            if given:
                a = np.ascontiguousarray(np.concatenate(pieces, axis=0), dtype)
                args[s + "0"] = a if L * D > 1 else a[0]
        return args

    def outputs_of(self, results, feeds, names=None):
        """The model's outputs (list, in `names`' order or the graph's) from
        the network's results."""
        L, D = len(self.layers), self.layers[0].D
        y = np.asarray(results[0])
        T, B = y.shape[0], y.shape[1]
        ys = y.reshape(T, B, D, -1)
        finals = {}
        for s, r in zip(self.state_names, results[1:]):
            r = np.asarray(r)
            finals[s] = r.reshape(L * D, B, -1)
        plans = dict(self.outputs)
        out = []
        for name in (names or self.output_names):
            if name not in plans:
                raise CallError(f"unknown output {name!r} (the model's: {self.output_names})")
            plan = plans[name]
            if plan[0] == "const":
                out.append(plan[1])
            elif plan[0] == "y":
                out.append(_materialise_view(ys, plan[1].axes, plan[2], f"output {name!r}"))
            elif plan[0] == "state":
                out.append(_materialise_view(finals[plan[1].name], plan[1].axes, plan[2],
                                             f"output {name!r}"))
            else:
                out.append(_materialise_view(feeds[plan[1].name], plan[1].axes, plan[2],
                                             f"output {name!r}"))
        return out
