# SPDX-License-Identifier: Apache-2.0
# PyTorch's own ProcessGroupNCCL at world size 1 on GPU 0: in-place all_reduce (AVG) of float32 and
# bfloat16 tensors from 4 KiB to 1 GiB. AVG, because at one rank NCCL skips an in-place SUM
# altogether (nothing to copy), while AVG runs its scaling kernel over the buffer: the bandwidth
# figures then measure a kernel, not only the cost of a call. Per size: warm-up, then ITERS calls back to back on the
# current stream and one synchronize; prints the time per call and the algorithm bandwidth
# (bytes / time; at one rank NCCL's bus factor 2(n-1)/n is 0, so algbw is the figure compared).
# Output lines match bench/gpu/RawAllReduceBench's, for bench/gpu/allreduce_bench.sh to pair.
import os, sys, time, torch, torch.distributed as dist

def sizes():
    s = 4096
    while s <= (1 << 30):
        yield s
        s *= 4

def main():
    iters_small = int(os.environ.get("ITERS_SMALL", "200"))
    iters_large = int(os.environ.get("ITERS_LARGE", "20"))
    torch.cuda.set_device(0)
    store = dist.HashStore()
    dist.init_process_group("nccl", store=store, rank=0, world_size=1,
                            device_id=torch.device("cuda", 0))
    print(f"# torch {torch.__version__} nccl {'.'.join(map(str, torch.cuda.nccl.version()))} "
          f"gpu {torch.cuda.get_device_name(0)}", flush=True)
    for dtype, name in [(torch.float32, "float32"), (torch.bfloat16, "bfloat16")]:
        for nbytes in sizes():
            t = torch.ones(nbytes // torch.tensor([], dtype=dtype).element_size(),
                           dtype=dtype, device="cuda")
            iters = iters_small if nbytes <= (1 << 20) else iters_large
            for _ in range(5):
                dist.all_reduce(t, op=dist.ReduceOp.AVG)
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(iters):
                dist.all_reduce(t, op=dist.ReduceOp.AVG)
            torch.cuda.synchronize()
            dt = (time.perf_counter() - t0) / iters
            print(f"allreduce impl=pytorch dtype={name} bytes={nbytes} time_us={dt * 1e6:.2f} "
                  f"algbw_GBps={nbytes / dt / 1e9:.3f}", flush=True)
            del t
    dist.destroy_process_group()

main()
