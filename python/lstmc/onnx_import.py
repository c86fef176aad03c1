# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""ONNX import: the LSTM, GRU and RNN nodes of an ONNX model as an lstmc
Network (lstm-dialect IR) and its parameters.

    net, params = lstmc.from_onnx("model.onnx")        # like lstmc.from_torch
    sess = lstmc.onnx_import.OnnxLike("model.onnx")    # called like onnxruntime
    y, y_h, y_c = sess.run(None, {"X": x})

    lstm-import-onnx model.onnx -o net.mlir [--params params.npz]
    python -m lstmc.onnx_import model.onnx -o net.mlir

What is accepted (docs/onnx.md has the details):

- One chain of LSTM, GRU and RNN nodes (opsets 1 to 22), each taking the
  previous one's output sequence: a stack, in one direction for all (forward,
  reverse or bidirectional), with one hidden size. Every attribute of the
  operators: direction, hidden_size, layout, clip, LSTM's input_forget and
  peepholes P, GRU's linear_before_reset, the activations and their
  activation_alpha / activation_beta (Sigmoid, Tanh, Relu, Affine,
  LeakyRelu, ScaledTanh, HardSigmoid, Elu and Softsign are built from the
  dialect's gates; ThresholdedRelu and Softplus cannot be and are refused
  naming the attribute); sequence_lens and initial states as graph inputs,
  slices of them, constants or zeros.
- Around the nodes, the layout and shape glue an exporter writes
  (Transpose, Reshape, Squeeze, Unsqueeze, Flatten, Slice, Gather, Concat,
  Shape, ConstantOfShape, Expand, Cast, Identity, Dropout in inference,
  constants, and the TopK / Gather / ScatterElements sort of
  torch.onnx.export's packed sequences): it is followed symbolically, so
  the graph inputs and outputs are mapped onto the network's arguments and
  results. Anything that computes on the data (MatMul, Add, Softmax, ...)
  is refused with an error naming the node and its op: run the rest of the
  model with onnxruntime, or cut the model first (onnx.utils.extract_model).

The importer is this module's OnnxImport; the cells are
_onnx_cells.py's, the symbolic values _onnx_values.py's, the handlers
of the glue ops _onnx_glue.py's, those of the RNN nodes _onnx_layers.py's
and the network and its calls _onnx_network.py's.

Parsing uses the `onnx` package (the maintained parser of the format and
its reference evaluator, which folds the constant subgraphs); it is imported
on first use, so `import lstmc` does not need it.
"""
import argparse
import sys

import numpy as np

from .dsl import CellError
from ._onnx_glue import _GlueOps
from ._onnx_layers import _LayerOps
from ._onnx_network import _NetworkOps
from ._onnx_values import _DTYPES, OnnxImportError, _Axis, _Const, _Source, _View
from .runtime import CallError


RNN_OPS = ("LSTM", "GRU", "RNN")


# ------------------------------------------------------------- the importer
_GLUE_OPS = ("Transpose, Reshape, Squeeze, Unsqueeze, Flatten, Slice, Gather, Concat, "
             "Shape, ConstantOfShape, Expand, Cast, Identity, Dropout, TopK, "
             "ScatterElements, Range, ReduceProd")


class OnnxImport(_LayerOps, _NetworkOps, _GlueOps):
    """The result of importing a model: `network` and `params` (what
    from_onnx returns), and how the model's inputs and outputs map onto the
    network's arguments and results (used by OnnxLike)."""

    def __init__(self, model):
        import onnx
        if isinstance(model, (str, bytes)) or hasattr(model, "__fspath__"):
            model = onnx.load(model) if not isinstance(model, bytes) else \
                onnx.load_from_string(model)
        if not isinstance(model, onnx.ModelProto):
            raise TypeError(f"from_onnx: expected an onnx.ModelProto or the path of an .onnx "
                            f"file, got {type(model).__name__}")
        self.model = model
        self.opset = {imp.domain or "": imp.version for imp in model.opset_import}
        self.values = {}
        self.layers = []
        self.sources = {}
        self.T = self.B = None
        self.x_plan = None
        self._perm_ids = 0
        self._run()

    # ---------------------------------------------------------- the graph
    def _run(self):
        g = self.model.graph
        inits = {t.name for t in g.initializer}
        import onnx.numpy_helper as nh
        for t in g.initializer:
            self.values[t.name] = _Const(nh.to_array(t))
        for vi in g.input:
            if vi.name in inits:
                continue
            self.values[vi.name] = self._graph_input(vi)
        for i, node in enumerate(self._topological(g)):
            self._node(i, node)
        if not self.layers:
            raise OnnxImportError("from_onnx: the model has no LSTM, GRU or RNN node")
        self._network()
        self.outputs = [(o.name, self._output_plan(o.name)) for o in g.output]
        self.input_names = [vi.name for vi in g.input if vi.name not in inits]
        self.output_names = [o.name for o in g.output]

    def _topological(self, g):
        known = set(self.values) | {""}
        pending, order = list(g.node), []
        while pending:
            rest = []
            for node in pending:
                if all(n in known for n in node.input):
                    order.append(node)
                    known.update(node.output)
                else:
                    rest.append(node)
            if len(rest) == len(pending):
                node = rest[0]
                missing = [n for n in node.input if n not in known]
                raise OnnxImportError(f"{self._where(node)}: input {missing[0]!r} is not "
                                      "produced by any node, initializer or graph input")
            pending = rest
        return order

    def _graph_input(self, vi):
        t = vi.type.tensor_type
        if not vi.type.HasField("tensor_type") or not t.HasField("shape"):
            raise OnnxImportError(f"from_onnx: graph input {vi.name!r} has no declared tensor "
                                  "shape")
        axes = [_Axis(f"{vi.name}:{i}", d.dim_value if d.HasField("dim_value") else None)
                for i, d in enumerate(t.shape.dim)]
        src = _Source("input", vi.name, axes)
        self.sources[vi.name] = src
        return _View(src, [(a,) for a in axes], _DTYPES.get(t.elem_type, str(t.elem_type)))

    @staticmethod
    def _where(node):
        name = repr(node.name) if node.name else f"(unnamed, output {node.output[0]!r})"
        return f"node {name} ({node.op_type})"

    def _attrs(self, node):
        from onnx import helper
        out = {}
        for a in node.attribute:
            v = helper.get_attribute_value(a)
            if isinstance(v, bytes):
                v = v.decode()
            elif isinstance(v, list):
                v = [x.decode() if isinstance(x, bytes) else x for x in v]
            out[a.name] = v
        return out

    def _node(self, index, node):
        where = self._where(node)
        if node.domain not in ("", "ai.onnx"):
            raise OnnxImportError(f"{where}: operators of domain {node.domain!r} are not "
                                  "imported")
        ins = [self.values[n] if n else None for n in node.input]
        if node.op_type in RNN_OPS:
            outs = self._rnn(node, where, ins)
        elif all(v is None or isinstance(v, _Const) for v in ins):
            outs = self._fold(node, where, ins)
        else:
            handler = getattr(self, "_op_" + node.op_type, None)
            if handler is None:
                raise OnnxImportError(
                    f"{where}: from_onnx imports LSTM, GRU and RNN nodes and the layout glue "
                    f"around them ({_GLUE_OPS}, constants); {node.op_type} computes on the "
                    "data: run it with onnxruntime, or cut the model to the recurrent part "
                    "(onnx.utils.extract_model)")
            outs = handler(node, where, ins, self._attrs(node))
            outs = outs if isinstance(outs, list) else [outs]
        for name, v in zip(node.output, outs):
            if name:
                self.values[name] = v


def from_onnx(model):
    """(Network, params) of the LSTM / GRU / RNN stack of an ONNX model (an
    onnx.ModelProto, the path of an .onnx file, or its bytes); see the
    module's docstring and docs/onnx.md for what is accepted. The network's
    arguments are lstmc's (x [T, B, I], lengths, h0 / c0 [L·D, B, H] or
    [B, H], the parameters); OnnxLike calls it with the model's inputs."""
    imp = OnnxImport(model)
    return imp.network, imp.params


class OnnxLike:
    """A compiled ONNX model called like an onnxruntime.InferenceSession:
    run(output_names, input_feed) -> list of numpy arrays, in the model's
    layouts (inputs and outputs as the graph declares them)."""

    def __init__(self, model, target="cpu", **compile_options):
        self.imported = OnnxImport(model)
        self.network = self.imported.network
        self.fn = self.network.compile(target=target, **compile_options).bind(
            self.imported.params)

    def get_inputs(self):
        return list(self.imported.input_names)

    def get_outputs(self):
        return list(self.imported.output_names)

    def run(self, output_names, input_feed):
        unknown = set(input_feed) - set(self.imported.input_names)
        if unknown:
            raise CallError(f"unknown input(s) {sorted(unknown)} (the model's: "
                            f"{self.imported.input_names})")
        feeds = {k: np.asarray(v) for k, v in input_feed.items()}
        args = self.imported.arguments(feeds)
        results = self.fn(**args)
        return self.imported.outputs_of(results, feeds, output_names)


# --------------------------------------------------------------- the tool
def main(argv=None):
    """lstm-import-onnx model.onnx -o net.mlir [--params params.npz]"""
    ap = argparse.ArgumentParser(
        prog="lstm-import-onnx",
        description="Import the LSTM / GRU / RNN stack of an ONNX model as lstm-dialect IR "
                    "(a func.func taking x [T, B, I], lengths, the initial states and the "
                    "parameters; see docs/onnx.md).")
    ap.add_argument("model", help="the .onnx file")
    ap.add_argument("-o", "--output", default="-", help="the .mlir file to write (default: stdout)")
    ap.add_argument("--params", help="also write the parameters to this .npz (one array per "
                                     "parameter argument, by name)")
    ap.add_argument("--npy-dir", help="also write each parameter as DIR/<name>.npy (for "
                                      "lstm-run --inputs)")
    ap.add_argument("--verify", action="store_true",
                    help="parse and verify the IR with the compiler (needs lstmc's extension)")
    args = ap.parse_args(argv)
    try:
        net, params = from_onnx(args.model)
        if args.verify:
            net.verify()
    except (OnnxImportError, CellError, OSError) as e:
        print(f"lstm-import-onnx: error: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # onnx's own parse errors
        if type(e).__name__ in ("DecodeError", "ValidationError"):
            print(f"lstm-import-onnx: error: {args.model}: {e}", file=sys.stderr)
            return 1
        raise
    if args.output == "-":
        sys.stdout.write(net.ir)
    else:
        with open(args.output, "w") as f:
            f.write(net.ir)
    if args.params:
        np.savez(args.params, **params)
    if args.npy_dir:
        import os
        os.makedirs(args.npy_dir, exist_ok=True)
        for name, a in params.items():
            np.save(os.path.join(args.npy_dir, name + ".npy"), a)
    sig = ", ".join(f"{a.name} {list(a.shape)}" for a in net.args)
    res = ", ".join(f"{a.name} {list(a.shape)}" for a in net.results)
    print(f"lstm-import-onnx: @{net.entry}({sig}) -> ({res})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
