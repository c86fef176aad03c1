# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""lstmc.torch_module under DistributedDataParallel on two GPUs (NCCL): each
process, on its own GPU, trains on half of the batch; their gradients must
equal one process's on the whole batch (fp32; the two halves' products are
summed in another order: relative tolerance 1e-5), and both must take the
same optimizer step. python/tests/test_distributed.py checks the same on
the CPU with gloo, in float64.

  ddp_nccl.py prepare --dir DIR   compile the network for CUDA, with its
                                  gradients (here: no GPU is needed)
  ddp_nccl.py check --dir DIR     on a machine with two GPUs

Every wait has a deadline: the processes are killed and the check fails if
they do not finish in time."""
import argparse
import os
import socket
import sys
import time

H, I, T, B, WORLD, DEADLINE_S = 64, 32, 20, 16, 2, 300


def prepare(directory):
    import lstmc as lc
    net = lc.Network(lc.cells.lstm, input_size=I, hidden=H)
    try:
        net.compile(path=os.path.join(directory, "net"), target="cuda", gradients=True,
                    pre_passes="lstm-optimize")
    except lc.runtime.NoGPUError:
        pass  # written; loading it needs the driver (where it runs)
    assert os.path.isfile(os.path.join(directory, "net", "network.so"))
    print("prepared", os.path.join(directory, "net"))


def model(directory, device, state=None):
    import lstmc as lc
    import torch

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = lc.torch_module(lc.load(os.path.join(directory, "net")),
                                       device=device)
            self.head = torch.nn.Linear(H, 3)

        def forward(self, x):
            y, hT, cT = self.rnn(x)
            return (self.head(y) ** 2).sum(-1).mean() + (hT * cT).sum(-1).mean()

    m = Model().to(device)
    if state is not None:
        m.load_state_dict(state)
    return m


def worker(rank, directory, port):
    import datetime

    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=WORLD, timeout=datetime.timedelta(seconds=120))
    try:
        device = f"cuda:{rank}"
        data = torch.load(os.path.join(directory, "data.pt"))
        m = model(directory, device, data["state"])
        ddp = DDP(m, device_ids=[rank])
        opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
        part = slice(rank * B // WORLD, (rank + 1) * B // WORLD)
        ddp(data["x"][:, part].to(device)).backward()
        grads = {n: p.grad.cpu() for n, p in m.named_parameters()}
        opt.step()
        torch.save({"grads": grads,
                    "params": {n: p.detach().cpu() for n, p in m.named_parameters()}},
                   os.path.join(directory, f"rank{rank}.pt"))
    finally:
        dist.destroy_process_group()


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def check(directory):
    import torch
    import torch.multiprocessing as mp
    if torch.cuda.device_count() < WORLD:
        sys.exit(f"needs {WORLD} GPUs, found {torch.cuda.device_count()}")
    torch.manual_seed(0)
    whole = model(directory, "cuda:0")
    x = torch.randn(T, B, I, generator=torch.Generator().manual_seed(1))
    torch.save({"state": {k: v.cpu() for k, v in whole.state_dict().items()}, "x": x},
               os.path.join(directory, "data.pt"))
    whole(x.to("cuda:0")).backward()
    expected = {n: p.grad.cpu() for n, p in whole.named_parameters()}

    ctx = mp.start_processes(worker, args=(directory, free_port()), nprocs=WORLD,
                             join=False, start_method="spawn")
    deadline = time.time() + DEADLINE_S
    try:
        while not ctx.join(timeout=1):
            if time.time() > deadline:
                sys.exit(f"the DDP processes did not finish in {DEADLINE_S} s")
    finally:
        for p in ctx.processes:
            if p.is_alive():
                p.kill()
                p.join(5)
    ranks = [torch.load(os.path.join(directory, f"rank{r}.pt")) for r in range(WORLD)]
    worst = 0.0
    for r, out in enumerate(ranks):
        assert set(out["grads"]) == set(expected), (r, sorted(out["grads"]))
        for name, grad in expected.items():
            err = ((out["grads"][name] - grad).norm() / grad.norm()).item()
            worst = max(worst, err)
            assert err < 1e-5, f"rank {r}: {name}: relative error {err:.2e}"
    for name, p in ranks[0]["params"].items():
        assert torch.equal(p, ranks[1]["params"][name]), name
    # A half alone differs from the whole: the averaging mattered.
    half = model(directory, "cuda:0", {k: v for k, v in whole.state_dict().items()})
    half(x[:, :B // WORLD].to("cuda:0")).backward()
    assert not torch.allclose(half.rnn.W.grad.cpu(), expected["rnn.W"], rtol=1e-3)
    print(f"DDP on {WORLD} GPUs (NCCL): gradients of {len(expected)} parameters equal "
          f"one process on the whole batch (max relative error {worst:.1e}); same step")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=["prepare", "check"])
    ap.add_argument("--dir", required=True)
    args = ap.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    (prepare if args.mode == "prepare" else check)(os.path.abspath(args.dir))


if __name__ == "__main__":
    main()
