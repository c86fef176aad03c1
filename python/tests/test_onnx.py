# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""ONNX import (lstmc.from_onnx, lstmc.onnx_import): models built with
onnx.helper and models exported by torch.onnx.export, run by the compiled
network and by onnxruntime (an independent implementation) on the same
fresh random inputs; float64 models against onnx's reference evaluator and
PyTorch in float64. Tolerances are VARIANTS.md's (fp32: 1e-5)."""
import os
import subprocess
import sys
import warnings
import zlib

import numpy as np
import pytest

import lstmc as lc

onnx = pytest.importorskip("onnx", reason="the onnx package is not installed "
                                          "(pip install onnx onnxruntime); ONNX import skipped")
ort = pytest.importorskip("onnxruntime", reason="onnxruntime is not installed "
                                                "(pip install onnxruntime); ONNX tests skipped")
from onnx import TensorProto, helper  # noqa: E402

from lstmc import onnx_import  # noqa: E402
from lstmc.onnx_import import OnnxImportError, OnnxLike  # noqa: E402

TOL = 1e-5  # fp32 against onnxruntime's fp32 (VARIANTS.md)
GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}


def rel(out, ref):
    assert np.isfinite(out).all(), "NaN or Inf in the output"
    n = np.linalg.norm(ref)
    return np.linalg.norm(out - ref) / (n if n else 1.0)


def make_model(op, T=5, B=3, I=4, H=6, direction="forward", layout=0, bias=True,
               lengths=None, initial=True, peephole=False, seed=0, scale=None, x_scale=2.0,
               opset=14, **attrs):
    """One LSTM / GRU / RNN node with initializer weights U(-k, k) (k = 1/√H
    unless `scale`), and fresh random feeds for its graph inputs."""
    rng = np.random.default_rng(seed)
    D = 2 if direction == "bidirectional" else 1
    G = GATES[op]
    k = scale or 1.0 / np.sqrt(H)

    def u(*shape, s=k):
        return rng.uniform(-s, s, shape).astype(np.float32)
    inits = {"W": u(D, G * H, I), "R": u(D, G * H, H)}
    if bias:
        inits["B"] = u(D, 2 * G * H)
    if peephole:
        inits["P"] = u(D, 3 * H)
    bt = (lambda *s: (s[1], s[0]) + s[2:]) if layout else (lambda *s: s)
    feeds = {"X": u(*bt(T, B, I), s=x_scale)}
    infos = [helper.make_tensor_value_info("X", TensorProto.FLOAT, list(bt("T", "B", I)))]
    names = ["X", "W", "R", "B" if bias else "", "", ""]
    if lengths is not None:
        names[4] = "sequence_lens"
        feeds["sequence_lens"] = np.asarray(lengths, np.int32)
        infos.append(helper.make_tensor_value_info("sequence_lens", TensorProto.INT32, ["B"]))
    states = ["initial_h"] + (["initial_c"] if op == "LSTM" else [])
    if initial:
        names[5] = "initial_h"
        for s in states:
            feeds[s] = u(*bt(D, B, H), s=1.0)
            infos.append(helper.make_tensor_value_info(s, TensorProto.FLOAT, list(bt(D, "B", H))))
    if op == "LSTM":
        names += ["initial_c" if initial else "", "P" if peephole else ""]
    while names[-1] == "":
        names.pop()
    outs = ["Y", "Y_h"] + (["Y_c"] if op == "LSTM" else [])
    if direction != "forward":
        attrs["direction"] = direction
    if layout:
        attrs["layout"] = layout
    node = helper.make_node(op, names, outs, name=f"the_{op.lower()}", hidden_size=H, **attrs)
    graph = helper.make_graph(
        [node], "g", infos, [helper.make_tensor_value_info(o, TensorProto.FLOAT, None)
                             for o in outs],
        [onnx.numpy_helper.from_array(a, n) for n, a in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    return model, feeds


def ort_run(model, feeds):
    """onnxruntime's outputs. Its CPU RNNs have no layout=1: a node with
    layout=1 runs as the same node with layout=0 on transposed inputs and its
    outputs are transposed back (the spec's relation between the layouts:
    X, Y, initial and final states swap their first two axes)."""
    node = model.graph.node[0]
    if any(a.name == "layout" and a.i == 1 for a in node.attribute):
        assert len(model.graph.node) == 1
        m0 = onnx.ModelProto()
        m0.CopyFrom(model)
        n0 = m0.graph.node[0]
        keep = [a for a in n0.attribute if a.name != "layout"]
        del n0.attribute[:]
        n0.attribute.extend(keep)
        for vi in m0.graph.input:
            dims = vi.type.tensor_type.shape.dim
            if vi.name != "sequence_lens":
                a, b = onnx.TensorShapeProto.Dimension(), onnx.TensorShapeProto.Dimension()
                a.CopyFrom(dims[0]), b.CopyFrom(dims[1])
                dims[0].CopyFrom(b), dims[1].CopyFrom(a)
        swap = {k: v if k == "sequence_lens" else np.ascontiguousarray(np.swapaxes(v, 0, 1))
                for k, v in feeds.items()}
        outs = ort_run(m0, swap)
        # Y [T, D, B, H] -> [B, T, D, H]; Y_h, Y_c [D, B, H] -> [B, D, H]
        return [o.transpose(2, 0, 1, 3) if o.ndim == 4 else o.transpose(1, 0, 2) for o in outs]
    s = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return s.run(None, feeds)


def check(model, feeds, tol=TOL):
    """The compiled network against onnxruntime, every output."""
    ref = ort_run(model, feeds)
    got = OnnxLike(model).run(None, feeds)
    assert len(got) == len(ref)
    for o, r, g in zip(model.graph.output, ref, got):
        assert g.shape == r.shape, (o.name, g.shape, r.shape)
        assert rel(g, r) < tol, (o.name, rel(g, r))
    return got, ref


# ----------------------------------------------------- models from onnx.helper
@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_directions(op, direction):
    model, feeds = make_model(op, direction=direction, seed=zlib.crc32(f"{op}{direction}".encode()))
    check(model, feeds)


def test_lstm_peepholes():
    model, feeds = make_model("LSTM", peephole=True, seed=1, scale=0.8)
    got, _ = check(model, feeds)
    # The peepholes matter at this tolerance: without P the outputs differ.
    model2 = onnx.ModelProto()
    model2.CopyFrom(model)
    del model2.graph.node[0].input[7:]
    assert rel(got[0], ort_run(model2, feeds)[0]) > 100 * TOL


@pytest.mark.parametrize("peephole", [False, True])
def test_lstm_input_forget(peephole):
    model, feeds = make_model("LSTM", input_forget=1, peephole=peephole, seed=2,
                              direction="bidirectional")
    check(model, feeds)


@pytest.mark.parametrize("op,extra", [("LSTM", {}), ("GRU", {}),
                                      ("GRU", {"linear_before_reset": 1}), ("RNN", {})])
def test_clip(op, extra):
    # Large weights so that many pre-activations are clipped.
    model, feeds = make_model(op, clip=0.7, scale=1.5, seed=3, **extra)
    got, _ = check(model, feeds)
    unclipped = onnx.ModelProto()
    unclipped.CopyFrom(model)
    node = unclipped.graph.node[0]
    keep = [a for a in node.attribute if a.name != "clip"]
    del node.attribute[:]
    node.attribute.extend(keep)
    assert rel(got[0], ort_run(unclipped, feeds)[0]) > 100 * TOL


@pytest.mark.parametrize("lbr", [0, 1])
@pytest.mark.parametrize("direction", ["forward", "bidirectional"])
def test_gru_linear_before_reset(lbr, direction):
    model, feeds = make_model("GRU", linear_before_reset=lbr, direction=direction, seed=4 + lbr)
    check(model, feeds)


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("direction", ["forward", "bidirectional"])
def test_layout_1(op, direction):
    model, feeds = make_model(op, layout=1, direction=direction, seed=6, peephole=op == "LSTM")
    check(model, feeds)


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_sequence_lens(op, direction):
    """Padded batch entries (random values past their lengths): Y is zero
    there and Y_h is the state at each entry's last step."""
    T, B = 6, 4
    model, feeds = make_model(op, T=T, B=B, direction=direction, lengths=[6, 2, 4, 1], seed=7)
    got, _ = check(model, feeds)
    y = got[0]
    assert (y[2:, :, 1] == 0).all() and (y[1:, :, 3] == 0).all()  # Y [T, D, B, H]
    assert np.abs(y[:2, :, 1]).min() > 0


def test_sequence_lens_with_layout_1():
    model, feeds = make_model("LSTM", T=5, B=3, layout=1, lengths=[3, 5, 2], seed=8,
                              direction="bidirectional")
    check(model, feeds)


@pytest.mark.parametrize("op,acts,alpha,beta", [
    ("RNN", ["Relu"], None, None),
    ("RNN", ["Sigmoid"], None, None),
    ("RNN", ["Affine"], [0.7], [0.2]),
    ("RNN", ["LeakyRelu"], [0.3], None),
    ("RNN", ["LeakyRelu"], None, None),  # the spec's default alpha 0.01
    ("RNN", ["ScaledTanh"], [1.3], [0.6]),
    ("RNN", ["HardSigmoid"], [0.4], [0.3]),
    ("RNN", ["HardSigmoid"], None, None),  # defaults 0.2, 0.5
    ("RNN", ["Elu"], [0.8], None),
    ("RNN", ["Softsign"], None, None),
    ("GRU", ["HardSigmoid", "Softsign"], None, None),
    ("GRU", ["Sigmoid", "Relu"], None, None),
    ("LSTM", ["HardSigmoid", "Elu", "Softsign"], [0.3, 0.9], [0.4]),
    ("LSTM", ["Sigmoid", "LeakyRelu", "Affine"], [0.2, 0.5], [0.1]),
    ("LSTM", ["Sigmoid", "Relu", "ScaledTanh"], [0.9], [1.1]),
])
def test_activations(op, acts, alpha, beta):
    attrs = {"activations": acts}
    if alpha:
        attrs["activation_alpha"] = alpha
    if beta:
        attrs["activation_beta"] = beta
    model, feeds = make_model(op, seed=9, scale=0.9, **attrs)
    got, _ = check(model, feeds)
    default, _ = make_model(op, seed=9, scale=0.9)
    assert rel(got[0], ort_run(default, feeds)[0]) > 100 * TOL  # the activation mattered


def test_bidirectional_activations_per_direction():
    model, feeds = make_model("LSTM", direction="bidirectional", seed=10, clip=1.1,
                              activations=["Sigmoid", "Tanh", "Tanh",
                                           "HardSigmoid", "Relu", "Softsign"],
                              activation_alpha=[0.25], activation_beta=[0.45])
    check(model, feeds)


def test_clip_with_activations_and_peepholes():
    model, feeds = make_model("LSTM", peephole=True, clip=0.5, scale=1.2, seed=11,
                              activations=["HardSigmoid", "Elu", "Tanh"], layout=1,
                              lengths=[5, 3, 4])
    check(model, feeds)


def test_no_bias_no_initial_states():
    model, feeds = make_model("GRU", bias=False, initial=False, seed=12, direction="reverse")
    check(model, feeds)


def test_older_opset():
    model, feeds = make_model("GRU", opset=7, linear_before_reset=1, seed=13)
    check(model, feeds)


# ------------------------------------------------------------ stacks by hand
def stacked_model(op="LSTM", L=3, D=1, H=5, I=4, seed=0, layout=0, glue="squeeze"):
    """L nodes chained by the glue an exporter writes; outputs the last Y
    as [T, B, D·H] and the final states of all layers concatenated."""
    rng = np.random.default_rng(seed)
    G = GATES[op]
    direction = "bidirectional" if D == 2 else "forward"
    nodes, inits = [], []
    x, I_k = "X", I
    hs, cs = [], []
    for k in range(L):
        w = {n: rng.uniform(-0.5, 0.5, s).astype(np.float32) for n, s in
             (("W", (D, G * H, I_k)), ("R", (D, G * H, H)), ("B", (D, 2 * G * H)))}
        inits += [onnx.numpy_helper.from_array(a, f"{n}{k}") for n, a in w.items()]
        outs = [f"Y{k}", f"Yh{k}"] + ([f"Yc{k}"] if op == "LSTM" else [])
        nodes.append(helper.make_node(op, [x, f"W{k}", f"R{k}", f"B{k}"], outs, name=f"layer{k}",
                                      hidden_size=H, direction=direction, layout=layout))
        hs.append(outs[1])
        if op == "LSTM":
            cs.append(outs[2])
        # Y [T, D, B, H] -> [T, B, D·H] (layout 1: [B, T, D, H] -> [B, T, D·H])
        if layout == 0 and D == 1 and glue == "squeeze":
            inits.append(onnx.numpy_helper.from_array(np.array([1], np.int64), f"ax{k}"))
            nodes.append(helper.make_node("Squeeze", [f"Y{k}", f"ax{k}"], [f"S{k}"]))
        else:
            if layout == 0:
                nodes.append(helper.make_node("Transpose", [f"Y{k}"], [f"Tr{k}"],
                                              perm=[0, 2, 1, 3]))
            inits.append(onnx.numpy_helper.from_array(np.array([0, 0, -1], np.int64),
                                                      f"shape{k}"))
            nodes.append(helper.make_node("Reshape", [f"Tr{k}" if layout == 0 else f"Y{k}",
                                                      f"shape{k}"], [f"S{k}"]))
        x, I_k = f"S{k}", D * H
    axis = 0 if layout == 0 else 1
    nodes.append(helper.make_node("Concat", hs, ["h_n"], axis=axis))
    outputs = [x, "h_n"]
    if op == "LSTM":
        nodes.append(helper.make_node("Concat", cs, ["c_n"], axis=axis))
        outputs.append("c_n")
    xshape = ["T", "B", I] if layout == 0 else ["B", "T", I]
    graph = helper.make_graph(nodes, "stack",
                              [helper.make_tensor_value_info("X", TensorProto.FLOAT, xshape)],
                              [helper.make_tensor_value_info(o, TensorProto.FLOAT, None)
                               for o in outputs], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    xs = (6, 3, I) if layout == 0 else (3, 6, I)
    return model, {"X": rng.uniform(-2, 2, xs).astype(np.float32)}


@pytest.mark.parametrize("op,L,D", [("LSTM", 3, 1), ("GRU", 2, 2), ("RNN", 2, 1)])
def test_stack_by_hand(op, L, D):
    model, feeds = stacked_model(op, L=L, D=D, seed=L + D)
    net, params = lc.from_onnx(model)
    assert net.num_layers == L and net.direction == ("bidirectional" if D == 2 else "forward")
    check(model, feeds)


@pytest.mark.parametrize("op,D", [("RNN", 1), ("LSTM", 2)])
def test_stack_by_hand_layout_1(op, D):
    """A layout=1 chain against the same weights in layout 0 (onnxruntime has
    no layout=1), inputs and outputs transposed."""
    model1, _ = stacked_model(op, L=2, D=D, seed=20, layout=1)
    model0, feeds0 = stacked_model(op, L=2, D=D, seed=20, layout=0)
    feeds1 = {"X": np.ascontiguousarray(feeds0["X"].transpose(1, 0, 2))}
    ref = [o.transpose(1, 0, 2) for o in ort_run(model0, feeds0)]
    got = OnnxLike(model1).run(None, feeds1)
    for g, r in zip(got, ref):
        assert g.shape == r.shape and rel(g, r) < TOL


def test_glue_on_the_outputs():
    """Outputs taken apart by other glue: one layer's final state squeezed,
    indexed, reshaped; the sequence flattened; all against onnxruntime."""
    model, feeds = stacked_model("LSTM", L=3, seed=21)
    g = model.graph
    c = onnx.numpy_helper.from_array
    g.initializer.extend([c(np.array([0], np.int64), "zero1"), c(np.array(0, np.int64), "zero"),
                          c(np.array([-1, 5], np.int64), "bh"),
                          c(np.array([2], np.int64), "two")])
    g.node.extend([
        helper.make_node("Squeeze", ["Yh2", "zero1"], ["h_last"]),
        helper.make_node("Gather", ["Yh0", "zero"], ["h_first"], axis=0),
        helper.make_node("Reshape", ["Yc1", "bh"], ["c_mid"]),
        helper.make_node("Flatten", ["S2"], ["y_flat"], axis=2),
        helper.make_node("Unsqueeze", ["S2", "two"], ["y_4d"]),
        helper.make_node("Transpose", ["y_4d"], ["y_t"], perm=[1, 0, 3, 2]),
    ])
    g.output.extend([helper.make_tensor_value_info(n, TensorProto.FLOAT, None)
                     for n in ["h_last", "h_first", "c_mid", "y_flat", "y_t"]])
    check(model, feeds)


def test_intermediate_output_is_refused():
    model, _ = stacked_model("LSTM", L=2)
    model.graph.output.append(helper.make_tensor_value_info("S0", TensorProto.FLOAT, None))
    with pytest.raises(OnnxImportError, match="'S0' is the output sequence of node 'layer0'"):
        lc.from_onnx(model)


# ------------------------------------------------------------- the errors
def _error(model, match):
    with pytest.raises(OnnxImportError, match=match):
        lc.from_onnx(model)


@pytest.mark.parametrize("act", ["ThresholdedRelu", "Softplus"])
def test_unsupported_activation(act):
    model, _ = make_model("RNN", activations=[act], activation_alpha=[1.0])
    _error(model, rf"node 'the_rnn' \(RNN\): attribute activations: {act} cannot be expressed "
                  "in the lstm dialect")


def test_activation_errors():
    for acts, alpha, beta, match in [
            (["Affine"], None, None, "attribute activation_alpha: Affine needs a value"),
            (["ScaledTanh"], [1.0], None, "attribute activation_beta: ScaledTanh needs a value"),
            (["Relu"], [0.5], None, "attribute activation_alpha has 1 value"),
            (["Tanh", "Tanh", "Tanh"], None, None, "activations has 3 functions; expected 1"),
            (["Swish"], None, None, "activations: unknown function 'Swish'")]:
        attrs = {"activations": acts}
        if alpha:
            attrs["activation_alpha"] = alpha
        if beta:
            attrs["activation_beta"] = beta
        model, _ = make_model("RNN", **attrs)
        _error(model, match)
    model, _ = make_model("LSTM", direction="bidirectional",
                          activations=["Sigmoid", "Tanh", "Tanh"])
    _error(model, r"activations has 3 functions; expected 6 \(3 per direction: f, g, h\)")


def test_attribute_errors():
    for op, attrs, match in [
            ("LSTM", {"direction": "sideways"}, "direction 'sideways': expected forward"),
            ("GRU", {"layout": 2}, "layout 2: expected 0 or 1"),
            ("RNN", {"clip": -1.0}, "clip -1.0: expected a positive threshold"),
            ("RNN", {"input_forget": 1}, r"unknown attribute\(s\) \['input_forget'\]"),
            ("LSTM", {"linear_before_reset": 1}, r"unknown attribute\(s\)")]:
        model, _ = make_model(op, **attrs)
        _error(model, match)
    model, _ = make_model("LSTM")
    model.graph.node[0].attribute[0].i = 7  # hidden_size
    _error(model, "hidden_size 7 but W has 24 rows")


def test_data_ops_are_refused_by_name():
    model, _ = make_model("LSTM")
    w = onnx.numpy_helper.from_array(np.ones((6, 2), np.float32), "fc")
    model.graph.initializer.append(w)
    model.graph.node.append(helper.make_node("Squeeze", ["Y", "one"], ["Ys"]))
    model.graph.initializer.append(onnx.numpy_helper.from_array(np.array([1], np.int64), "one"))
    model.graph.node.append(helper.make_node("MatMul", ["Ys", "fc"], ["logits"], name="head"))
    model.graph.output.append(helper.make_tensor_value_info("logits", TensorProto.FLOAT, None))
    _error(model, r"node 'head' \(MatMul\): from_onnx imports LSTM, GRU and RNN nodes and the "
                  "layout glue")


def test_no_rnn_node():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g", [x],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    _error(helper.make_model(graph), "no LSTM, GRU or RNN node")


def test_chains_that_are_not_one_stack():
    # Two nodes on the same graph input.
    model, _ = stacked_model("GRU", L=2)
    node = [n for n in model.graph.node if n.name == "layer1"][0]
    node.input[0] = "X"
    _error(model, "already starts a stack: from_onnx imports one chain")
    # Mixed directions.
    model, _ = stacked_model("GRU", L=2)
    node = [n for n in model.graph.node if n.name == "layer1"][0]
    node.attribute.append(helper.make_attribute("direction", "reverse"))
    _error(model, "direction reverse, but node 'layer0' .* is forward")


def test_call_errors():
    model, feeds = make_model("GRU", lengths=[5, 4, 3])
    sess = OnnxLike(model)
    assert sess.get_inputs() == ["X", "sequence_lens", "initial_h"]
    with pytest.raises(lc.CallError, match="missing input 'sequence_lens'"):
        sess.run(None, {"X": feeds["X"]})
    with pytest.raises(lc.CallError, match=r"unknown input\(s\) \['x'\]"):
        sess.run(None, dict(feeds, x=feeds["X"]))
    with pytest.raises(lc.CallError, match="unknown output 'Z'"):
        sess.run(["Z"], feeds)
    y_h, = sess.run(["Y_h"], feeds)
    assert rel(y_h, ort_run(model, feeds)[1]) < TOL


def test_weights_must_be_constant():
    model, _ = make_model("RNN")
    init = model.graph.initializer[0]
    model.graph.input.append(helper.make_tensor_value_info("W2", TensorProto.FLOAT,
                                                           list(init.dims)))
    model.graph.node[0].input[1] = "W2"
    _error(model, "input W must be an initializer or a constant")


# --------------------------------------------------- float64 and the reference
@pytest.mark.parametrize("op,attrs", [("LSTM", {}), ("GRU", {"linear_before_reset": 1}),
                                      ("GRU", {}), ("RNN", {})])
def test_float64_against_onnx_reference(op, attrs):
    """A float64 model becomes a float64 network: against onnx's reference
    evaluator (numpy, float64) to 1e-10 (onnxruntime has no float64 RNNs)."""
    from onnx.reference import ReferenceEvaluator
    model, feeds = make_model(op, seed=14, initial=True, **attrs)
    for t in model.graph.initializer:
        t.CopyFrom(onnx.numpy_helper.from_array(onnx.numpy_helper.to_array(t).astype(np.float64),
                                                t.name))
    for vi in list(model.graph.input) + list(model.graph.output):
        vi.type.tensor_type.elem_type = TensorProto.DOUBLE
    feeds = {k: v.astype(np.float64) for k, v in feeds.items()}
    ref = ReferenceEvaluator(model).run(None, feeds)
    sess = OnnxLike(model)
    assert sess.network.dtype == "float64"
    got = sess.run(None, feeds)
    for g, r in zip(got, ref):
        assert g.dtype == np.float64 and rel(g, r.reshape(g.shape)) < 1e-10


# ------------------------------------------------------ models from PyTorch
torch = None


def _torch():
    global torch
    if torch is None:
        torch = pytest.importorskip("torch", reason="PyTorch is not installed; the "
                                                    "exported-model tests are skipped")
    return torch


def export(module, args, path, input_names, dynamic_axes):
    """torch.onnx.export with the TorchScript exporter (its LSTM, GRU and
    RNN become ONNX LSTM, GRU and RNN nodes)."""
    t = _torch()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t.onnx.export(module.eval(), args, str(path), input_names=input_names,
                      dynamic_axes=dynamic_axes, dynamo=False)
    return onnx.load(str(path))


def _states_module(m, kind):
    t = _torch()

    class M(t.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = m

        def forward(self, x, h0, c0=None):
            return self.m(x, (h0, c0) if kind == "LSTM" else h0)
    return M()


@pytest.mark.torch
@pytest.mark.parametrize("kind,opts,states", [
    ("LSTM", {}, False),
    ("LSTM", {"num_layers": 2, "bidirectional": True}, True),
    ("LSTM", {"num_layers": 3}, True),
    ("GRU", {"batch_first": True}, False),
    ("GRU", {"num_layers": 2, "bidirectional": True, "batch_first": True}, True),
    ("RNN", {"nonlinearity": "relu", "num_layers": 2}, True),
    ("RNN", {"bidirectional": True, "bias": False}, False),
])
def test_exported_from_pytorch(kind, opts, states, tmp_path):
    t = _torch()
    t.manual_seed(15)
    I, H, T, B = 5, 7, 6, 3
    m = getattr(t.nn, kind)(I, H, **opts)
    bf = opts.get("batch_first", False)
    L = opts.get("num_layers", 1) * (2 if opts.get("bidirectional") else 1)
    x = t.rand(B, T, I) * 2 - 1 if bf else t.rand(T, B, I) * 2 - 1
    names = ["x"] + (["h0", "c0"][:2 if kind == "LSTM" else 1] if states else [])
    axes = {"x": {0: "B", 1: "T"} if bf else {0: "T", 1: "B"}}
    axes.update({n: {1: "B"} for n in names[1:]})
    hs = tuple(t.rand(L, B, H) - 0.5 for _ in names[1:])
    module = _states_module(m, kind) if states else m
    model = export(module, (x,) + hs, tmp_path / "m.onnx", names, axes)
    assert {n.op_type for n in model.graph.node} & {"LSTM", "GRU", "RNN"}
    # Fresh inputs of another T and B than the export's.
    T2, B2 = 9, 2
    rng = np.random.default_rng(16)
    xs = (B2, T2, I) if bf else (T2, B2, I)
    feeds = {"x": rng.uniform(-1, 1, xs).astype(np.float32)}
    for n in names[1:]:
        feeds[n] = rng.uniform(-1, 1, (L, B2, H)).astype(np.float32)
    got, ref = check(model, feeds)
    # And the module itself in float64.
    with t.no_grad():
        md = m.double()
        args = [t.from_numpy(feeds["x"]).double()]
        if states:
            st = [t.from_numpy(feeds[n]).double() for n in names[1:]]
            args.append(tuple(st) if kind == "LSTM" else st[0])
        y, _ = md(*args)
    assert rel(got[0], y.numpy()) < TOL


@pytest.mark.torch
def test_exported_with_static_shapes(tmp_path):
    """No dynamic axes: the exporter's shapes are constants (and the zero
    initial states are folded); the network keeps T and B dynamic."""
    t = _torch()
    t.manual_seed(25)
    m = t.nn.LSTM(3, 5, num_layers=2, bidirectional=True)
    model = export(m, (t.rand(4, 2, 3),), tmp_path / "s.onnx", ["x"], None)
    rng = np.random.default_rng(26)
    feeds = {"x": rng.uniform(-1, 1, (4, 2, 3)).astype(np.float32)}
    check(model, feeds)
    net, _ = lc.from_onnx(model.SerializeToString())  # bytes too
    assert net.num_layers == 2


def _packed_module(m, kind, scale_c=False):
    t = _torch()

    class Packed(t.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = m

        def forward(self, x, lengths, h0, c0):
            p = t.nn.utils.rnn.pack_padded_sequence(x, lengths, enforce_sorted=False)
            hx = (h0, c0 * 0.5 if scale_c else c0) if kind == "LSTM" else h0
            y, _ = self.m(p, hx)
            y, _ = t.nn.utils.rnn.pad_packed_sequence(y, total_length=x.shape[0])
            return y
    return Packed()


@pytest.mark.torch
@pytest.mark.parametrize("kind,bidirectional", [("GRU", True), ("LSTM", False)])
def test_exported_packed_sequence(kind, bidirectional, tmp_path):
    """pack_padded_sequence exports as a sort of the batch by length (TopK),
    a Gather, sequence_lens, and the inverse permutation after the node:
    from_onnx follows the permutations and they cancel."""
    t = _torch()
    t.manual_seed(17)
    I, H, T, B = 4, 6, 5, 3
    m = getattr(t.nn, kind)(I, H, num_layers=2, bidirectional=bidirectional)
    L = 2 * (2 if bidirectional else 1)
    names = ["x", "lengths", "h0"] + (["c0"] if kind == "LSTM" else [])
    axes = {"x": {0: "T", 1: "B"}, "lengths": {0: "B"}, "h0": {1: "B"}, "c0": {1: "B"}}
    model = export(_packed_module(m, kind), (t.rand(T, B, I), t.tensor([5, 2, 4]),
                                             t.rand(L, B, H), t.rand(L, B, H)),
                   tmp_path / "p.onnx", names, {n: axes[n] for n in names})
    assert {"TopK", "ScatterElements", "Gather"} <= {n.op_type for n in model.graph.node}
    rng = np.random.default_rng(18)
    T2, B2 = 7, 4
    feeds = {"x": rng.uniform(-1, 1, (T2, B2, I)).astype(np.float32),
             "lengths": np.array([3, 7, 1, 5], np.int64)}
    for n in names[2:]:
        feeds[n] = rng.uniform(-1, 1, (L, B2, H)).astype(np.float32)
    got, _ = check(model, feeds)
    assert (got[0][3:, 0] == 0).all() and (got[0][1:, 2] == 0).all()
    assert np.abs(got[0][:3, 0]).min() > 0


@pytest.mark.torch
def test_exported_arithmetic_is_refused(tmp_path):
    """0.5 * c0 before the LSTM is a Mul on the data: refused by name."""
    t = _torch()
    m = t.nn.LSTM(4, 6)
    model = export(_packed_module(m, "LSTM", scale_c=True),
                   (t.rand(5, 3, 4), t.tensor([5, 2, 4]), t.rand(1, 3, 6), t.rand(1, 3, 6)),
                   tmp_path / "p.onnx", ["x", "lengths", "h0", "c0"], {"x": {0: "T", 1: "B"}})
    with pytest.raises(OnnxImportError, match=r"\(Mul\): from_onnx imports LSTM, GRU and RNN "
                                              "nodes and the layout glue"):
        lc.from_onnx(model)


@pytest.mark.torch
def test_exported_weights_equal_from_torch(tmp_path):
    """The ONNX gate order (i, o, f, c; z, r, h) is mapped back exactly:
    from_onnx of an export gives from_torch's parameters, bit for bit."""
    t = _torch()
    t.manual_seed(19)
    for m in (t.nn.LSTM(3, 4, num_layers=2, bidirectional=True), t.nn.GRU(3, 4)):
        model = export(m, (t.rand(2, 1, 3),), tmp_path / "w.onnx", ["x"], {"x": {0: "T"}})
        net, params = lc.from_onnx(model)
        ref_net, ref_params = lc.from_torch(m)
        assert sorted(params) == sorted(ref_params)
        for k in params:
            np.testing.assert_array_equal(params[k], ref_params[k])


def test_default_cells_are_lstmc_cells():
    """Default attributes give the IR of lstmc.cells.lstm / gru / cho_gru /
    rnn (up to names and order)."""
    from irnorm import canonical
    from lstmc import cells, compiler
    for op, attrs, cell, opts in [("LSTM", {}, cells.lstm, {}),
                                  ("GRU", {"linear_before_reset": 1}, cells.gru, {}),
                                  ("GRU", {}, cells.cho_gru, {}),
                                  ("RNN", {"activations": ["Relu"]}, cells.rnn,
                                   {"nonlinearity": "relu"})]:
        model, _ = make_model(op, **attrs)
        net, _ = lc.from_onnx(model)
        ref = lc.Network(cell, input_size=4, hidden=6, **opts)
        assert canonical(compiler.canonicalize(net.ir)) == \
            canonical(compiler.canonicalize(ref.ir)), op


# ------------------------------------------------------------------ the tool
def strip_locations(ir):
    """The IR without its locations (they name the Python line that built
    each op, which differs between callers)."""
    import re
    return re.sub(r' loc\("[^"]*"\)', "", ir)


def test_command_line_tool(tmp_path):
    model, _ = make_model("LSTM", peephole=True, lengths=[5, 3, 4], direction="bidirectional")
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    out, npz = tmp_path / "net.mlir", tmp_path / "p.npz"
    assert onnx_import.main([str(path), "-o", str(out), "--params", str(npz), "--verify"]) == 0
    net, params = lc.from_onnx(str(path))
    assert strip_locations(out.read_text()) == strip_locations(net.ir)
    lc.compiler.verify(out.read_text())
    with np.load(npz) as z:
        assert sorted(z.files) == sorted(params)
        for k in z.files:
            np.testing.assert_array_equal(z[k], params[k])
    # python -m lstmc.onnx_import, and an error: exit status 1 and the reason.
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    r = subprocess.run([sys.executable, "-m", "lstmc.onnx_import", str(path)],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0 and strip_locations(r.stdout) == strip_locations(net.ir), r.stderr
    assert "lstm-import-onnx: @forward(x ['T', 'B', 4], lengths ['B']" in r.stderr
    assert "Warning" not in r.stderr, r.stderr
    bad, _ = make_model("RNN", activations=["Softplus"])
    onnx.save(bad, str(tmp_path / "bad.onnx"))
    r = subprocess.run([sys.executable, "-m", "lstmc.onnx_import", str(tmp_path / "bad.onnx")],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 1 and "Softplus cannot be expressed" in r.stderr


def test_console_script_is_declared():
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        pytest.skip("tomllib needs Python 3.11")
    from conftest import ROOT
    with open(os.path.join(ROOT, "python", "pyproject.toml"), "rb") as f:
        meta = tomllib.load(f)
    assert meta["project"]["scripts"]["lstm-import-onnx"] == "lstmc.onnx_import:main"
