# SPDX-License-Identifier: Apache-2.0
# PyTorch's TCPStore client appending to one key: N appends of SIZE bytes, then one GET of the
# whole value (APPEND has no reply, so the GET is what waits for the server to have applied them).
# Prints the seconds from the first append to the GET's reply, after checking the value's length.
# usage: store_append_client.py HOST PORT N SIZE   (run with ../shared/peers/torch26 python3)
import sys, time, datetime
import torch.distributed as dist
host, port, n, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
s = dist.TCPStore(host, port, is_master=False, timeout=datetime.timedelta(seconds=600), use_libuv=False)
chunk = b"x" * size
t0 = time.perf_counter()
for i in range(n):
    s.append("log", chunk)
v = s.get("log")
t = time.perf_counter() - t0
assert len(v) == n * size, f"value of {len(v)} bytes after {n} appends of {size}"
print(f"appends={n} size={size} seconds={t:.4f}", flush=True)
