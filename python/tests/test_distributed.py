# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""lstmc.torch_module under torch.nn.parallel.DistributedDataParallel: two
processes on the CPU (gloo), each on half of the batch, get the gradients of
one process on the whole batch, and take the same optimizer step.

The network is compiled once here and loaded in each process (lstmc.load,
as on a machine without the compiler). Every wait has a deadline: the
processes are killed and the test fails if they do not finish in time."""
import os
import socket
import time

import numpy as np
import pytest

import lstmc as lc

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch", reason="PyTorch is not installed")
dist = pytest.importorskip("torch.distributed")

WORLD = 2
DEADLINE_S = 120


class _Model(torch.nn.Module):
    """The compiled RNN, a linear head and a loss: a mean over the batch (so
    that the whole batch's loss is the average of the two halves')."""

    def __init__(self, rnn, head):
        super().__init__()
        self.rnn, self.head = rnn, head

    def forward(self, x, h0, c0):
        y, hT, cT = self.rnn(x, h0, c0)
        return (self.head(y) ** 2).sum(-1).mean() + (hT * cT).sum(-1).mean()


def _model(directory, state=None):
    rnn = lc.torch_module(lc.load(os.path.join(directory, "net")))
    model = _Model(rnn, torch.nn.Linear(5, 3).double())
    if state is not None:
        model.load_state_dict(state)
    return model


def _worker(rank, directory, port):
    import datetime

    from torch.nn.parallel import DistributedDataParallel as DDP
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=WORLD, timeout=datetime.timedelta(seconds=60))
    try:
        data = torch.load(os.path.join(directory, "data.pt"))
        model = _model(directory, data["state"])
        ddp = DDP(model)
        opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
        half = data["x"].shape[1] // WORLD
        part = slice(rank * half, (rank + 1) * half)
        ddp(data["x"][:, part], data["h0"][part], data["c0"][part]).backward()
        grads = {n: p.grad.clone() for n, p in model.named_parameters()}
        opt.step()
        torch.save({"grads": grads, "params": {n: p.detach().clone()
                                               for n, p in model.named_parameters()}},
                   os.path.join(directory, f"rank{rank}.pt"))
    finally:
        dist.destroy_process_group()


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_ddp_gradients_equal_one_process(tmp_path):
    import torch.multiprocessing as mp
    torch.manual_seed(0)
    net = lc.Network(lc.cells.lstm, input_size=4, hidden=5, dtype="float64")
    net.compile(path=str(tmp_path / "net"), target="cpu", gradients=True)
    model = _model(str(tmp_path))
    g = torch.Generator().manual_seed(1)
    x = torch.randn(6, 8, 4, generator=g, dtype=torch.float64)
    h0, c0 = (torch.randn(8, 5, generator=g, dtype=torch.float64) for _ in range(2))
    torch.save({"state": model.state_dict(), "x": x, "h0": h0, "c0": c0}, tmp_path / "data.pt")

    # One process, the whole batch.
    model(x, h0, c0).backward()
    expected = {n: p.grad for n, p in model.named_parameters()}
    assert "rnn.W" in expected and "head.weight" in expected

    ctx = mp.start_processes(_worker, args=(str(tmp_path), _free_port()), nprocs=WORLD,
                             join=False, start_method="spawn")
    deadline = time.time() + DEADLINE_S
    try:
        while not ctx.join(timeout=1):
            if time.time() > deadline:
                pytest.fail(f"the DDP processes did not finish in {DEADLINE_S} s")
    finally:
        for p in ctx.processes:
            if p.is_alive():
                p.kill()
                p.join(5)
    ranks = [torch.load(tmp_path / f"rank{r}.pt") for r in range(WORLD)]
    for r, out in enumerate(ranks):
        assert set(out["grads"]) == set(expected)
        for name, grad in expected.items():
            torch.testing.assert_close(out["grads"][name], grad, rtol=1e-12, atol=1e-14,
                                       msg=f"rank {r}: {name}")
    # The same step everywhere.
    for name, p in ranks[0]["params"].items():
        assert torch.equal(p, ranks[1]["params"][name]), name
    # and a half alone differs from the whole (the averaging mattered)
    half = _model(str(tmp_path), model.state_dict())
    half(x[:, :4], h0[:4], c0[:4]).backward()
    assert not np.allclose(half.rnn.W.grad.numpy(), expected["rnn.W"].numpy())
