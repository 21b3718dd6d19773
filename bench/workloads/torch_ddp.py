"""PyTorch DistributedDataParallel over gloo, as a PyTorchJob runs it: the
operator's MASTER_ADDR, MASTER_PORT, RANK and WORLD_SIZE set the rendezvous
(env://). Each step: forward and backward of a small MLP on a deterministic
synthetic batch, then DDP's allreduce of every gradient bucket over gloo, so
every step waits for the slowest rank: a rank with its CPU limit cut holds
all of them back (the allreduce straggler).

Every rank writes its completed steps to $TRAINSIM_STEPS_FILE.
"""
import argparse
import os
import sys
import time

from steps import Deadline, StepCounter, limit_threads

limit_threads()
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402


def parse_args():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--hidden", type=int, default=512,
                   help="MLP width: ~2*hidden^2 parameters, 4 bytes each, reduced per step")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--step-ms", type=int, default=200)
    p.add_argument("--max-seconds", type=float, default=600)
    return p.parse_args()


def main():
    args = parse_args()
    for var in ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE"):
        if var not in os.environ:
            sys.exit(f"torch_ddp: {var} is not set (run it as a PyTorchJob / trainsim allreduce job)")
    torch.set_num_threads(1)
    torch.manual_seed(0)  # the same initial weights on every rank
    rank = int(os.environ["RANK"])
    dist.init_process_group("gloo", init_method="env://")
    print(f"[torch_ddp] rank {rank}/{dist.get_world_size()} joined", flush=True)
    model = torch.nn.Sequential(
        torch.nn.Linear(args.hidden, args.hidden), torch.nn.ReLU(),
        torch.nn.Linear(args.hidden, args.hidden), torch.nn.ReLU(),
        torch.nn.Linear(args.hidden, 1))
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    params = sum(p.numel() for p in model.parameters())
    print(f"[torch_ddp] {params} parameters, {4 * params} gradient bytes per step", flush=True)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    gen = torch.Generator().manual_seed(100 + rank)
    counter = StepCounter()
    deadline = Deadline(args.max_seconds)
    while not deadline.over():
        started = time.monotonic()
        x = torch.randn(args.batch, args.hidden, generator=gen)
        y = x[:, :1].sign()
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(ddp(x), y)
        loss.backward()  # gradients allreduced here
        opt.step()
        counter.add()
        if counter.steps % 100 == 0:
            print(f"[torch_ddp] rank {rank} step {counter.steps} loss {loss.item():.4f}", flush=True)
        deadline.pace(started, args.step_ms / 1000)
    counter.write(force=True)
    print(f"[torch_ddp] rank {rank} done after {counter.steps} steps", flush=True)
    # No barrier at the end: a stopped peer must not hang the others.
    os._exit(0)


if __name__ == "__main__":
    main()
