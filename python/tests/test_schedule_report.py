# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Network.schedule_report: lstm-schedule-report on what compile() would
compile, with the same options (no compile, no GPU needed)."""
import re

import pytest

import lstmc as lc

pytest.importorskip("lstmc._lstmc", reason="the compiler library is not available")


def charrnn(compute_type="fp32"):
    return lc.Network(lc.cells.lstm, input_size=65, hidden=128, num_layers=2,
                      compute_type=compute_type)


def lines(report):
    return [line for line in report.splitlines() if line]


def test_per_layer_lines():
    """A line per layer; the default pre-passes combine each cell's GEMMs
    (two a step: x_t and h), nothing about persistent kernels on the CPU."""
    report = lines(charrnn().schedule_report())
    assert [line.split(":")[0] for line in report] == [
        "@forward layer 0 (forward)", "@forward layer 1 (forward)"]
    assert all("gemms/step=2 " in line and "persistent=" not in line for line in report)
    # lstm-optimize hoists the input projections: one GEMM a step.
    optimized = lines(charrnn().schedule_report(pre_passes="lstm-optimize{wavefront=false}"))
    assert all("gemms/step=1 " in line and "hoisted-gemms=1" in line for line in optimized)


@pytest.mark.parametrize("compute_type,kind,start", [
    ("fp32", "3xtf32", 64), ("tf32", "tf32", 16), ("bf16", "bf16", 4)])
def test_persistent_kernels(compute_type, kind, start):
    """With persistent=True on the GPU, each layer's kernel and the stack's
    (char-rnn's two layers in one kernel) with the batch they run to and,
    for the network's compute type, the batch the tensor cores start at."""
    report = lines(charrnn(compute_type).schedule_report(target="cuda", persistent=True))
    assert len(report) == 2
    for line in report:
        m = re.search(r"persistent=B<=(\d+) tensor-cores=B>=(\d+) \((\w+)\) "
                      r"stack=0-1 \(one kernel of \d+ blocks of \d+ threads, B<=(\d+)\) "
                      r"tensor-cores=B>=(\d+) \((\w+)\)$", line)
        assert m, line
        assert int(m[2]) == start and m[3] == kind and int(m[5]) == start and m[6] == kind
        assert int(m[4]) >= start


def test_without_tensor_cores():
    """persistent_tensor_cores=False, or a chip before sm_80: the kernels
    of fp32 multiply-adds only."""
    for options in ({"persistent_tensor_cores": False}, {"chip": "sm_75"}):
        report = lines(charrnn("tf32").schedule_report(target="cuda", persistent=True,
                                                       **options))
        assert all("persistent=B<=" in line and "tensor-cores" not in line
                   for line in report), (options, report)


def test_gradients():
    """gradients='train': the training forward and the backward, both
    persistent, and no NAME_grad; True adds NAME_grad."""
    train = charrnn().schedule_report(target="cuda", persistent=True, gradients="train")
    functions = {line.split()[0] for line in lines(train)}
    assert functions == {"@forward_train", "@forward_backward"}, train
    assert all("persistent=B<=" in line for line in lines(train))
    every = charrnn().schedule_report(gradients=True)
    assert {line.split()[0] for line in lines(every)} >= {
        "@forward", "@forward_grad", "@forward_train", "@forward_backward"}


def test_gpu_training_wavefronts():
    """On the GPU with gradients and without persistent kernels, the default
    pre-passes (and lstm-optimize) become GPU_TRAIN_PRE_PASSES: a stack's
    training forward and its backward each one wavefront; on the CPU, and
    under a pipeline given in full, the layers one after the other."""
    net = lc.Network(lc.cells.lstm, input_size=16, hidden=32, num_layers=3)
    for pre_passes in ("lstm-combine-gate-gemms", "lstm-optimize"):
        gpu = lines(net.schedule_report(target="cuda", gradients="train",
                                        pre_passes=pre_passes))
        heads = {line.split(":")[0].split(" where")[0] for line in gpu}
        assert "@forward_train wavefront of 3 layers (forward)" in heads, gpu
        assert "@forward_backward wavefront of 3 layers (reverse)" in heads, gpu
    for report in (net.schedule_report(target="cpu", gradients="train", pre_passes="lstm-optimize"),
                   net.schedule_report(target="cuda", gradients="train",
                                       pre_passes="lstm-optimize{wavefront=false}")):
        assert "wavefront" not in report and "@forward_backward layer 2 (reverse)" in report, report
    # Without gradients the GPU's default is left as it is.
    assert "wavefront" not in net.schedule_report(target="cuda")


def test_errors():
    net = charrnn()
    with pytest.raises(ValueError, match="persistent=True: persistent kernels need target='cuda'"):
        net.schedule_report(persistent=True)
    with pytest.raises(ValueError, match="chip='sm 90; rm': expected a GPU architecture"):
        net.schedule_report(target="cuda", persistent=True, chip="sm 90; rm")
    with pytest.raises(ValueError, match="persistent_tensor_cores=1: expected True or False"):
        net.schedule_report(target="cuda", persistent=True, persistent_tensor_cores=1)
    with pytest.raises(RuntimeError, match="bogus"):
        net.schedule_report(pre_passes="bogus")
