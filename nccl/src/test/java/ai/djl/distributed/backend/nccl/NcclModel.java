/*
 * Copyright 2026 The DJL Distributed Authors.
 *
 * Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
 * in compliance with the License. You may obtain a copy of the License at
 *
 * http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software distributed under the License
 * is distributed on an "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express
 * or implied. See the License for the specific language governing permissions and limitations under
 * the License.
 */
package ai.djl.distributed.backend.nccl;

import ai.djl.distributed.backend.nccl.NcclCall.AllGather;
import ai.djl.distributed.backend.nccl.NcclCall.AllReduce;
import ai.djl.distributed.backend.nccl.NcclCall.Broadcast;
import ai.djl.distributed.backend.nccl.NcclCall.Recv;
import ai.djl.distributed.backend.nccl.NcclCall.Reduce;
import ai.djl.distributed.backend.nccl.NcclCall.ReduceScatter;
import ai.djl.distributed.backend.nccl.NcclCall.Send;
import ai.djl.distributed.backend.nccl.NcclOps.Reduction;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A model of what NCCL's documentation says its calls do, for float32 buffers, run over several
 * ranks' plans at once: each rank's plan is one NCCL group, whose collectives pair up across ranks
 * by position and whose sends and receives pair up by (sender, receiver) in order. Every call reads
 * the memory as it was when the group began (the calls of a group run concurrently on a GPU, so a
 * plan may not rely on their order), and every buffer must lie inside the rank's memory.
 *
 * <p>Device memory is a float array per rank; an address is a byte offset into it. This lets the
 * plans of {@link NcclPlans} be checked for any number of ranks on a machine with one GPU or none.
 */
final class NcclModel {

    private NcclModel() {}

    /**
     * Runs one group: {@code plans.get(r)} on {@code memory[r]}, in place.
     *
     * @throws AssertionError where the ranks' calls do not pair up, or a buffer is out of bounds
     */
    static void run(List<List<NcclCall>> plans, float[][] memory) {
        int size = plans.size();
        float[][] before = new float[size][];
        for (int r = 0; r < size; r++) {
            before[r] = memory[r].clone();
        }
        List<List<NcclCall>> collectives = new ArrayList<>();
        Map<Long, Deque<Send>> sends = new HashMap<>();
        Map<Long, Deque<Recv>> recvs = new HashMap<>();
        for (int r = 0; r < size; r++) {
            List<NcclCall> mine = new ArrayList<>();
            for (NcclCall call : plans.get(r)) {
                if (call.type() != NcclDataType.FLOAT32) {
                    throw new AssertionError("the model holds float32 only: " + call);
                }
                if (call instanceof Send s) {
                    sends.computeIfAbsent(pair(r, s.peer()), k -> new ArrayDeque<>()).add(s);
                } else if (call instanceof Recv v) {
                    recvs.computeIfAbsent(pair(v.peer(), r), k -> new ArrayDeque<>()).add(v);
                } else {
                    mine.add(call);
                }
            }
            collectives.add(mine);
        }
        int n = collectives.get(0).size();
        for (int r = 1; r < size; r++) {
            if (collectives.get(r).size() != n) {
                throw new AssertionError(
                        "rank 0 issues "
                                + n
                                + " collectives, rank "
                                + r
                                + " "
                                + collectives.get(r).size());
            }
        }
        for (int i = 0; i < n; i++) {
            List<NcclCall> ith = new ArrayList<>(size);
            for (int r = 0; r < size; r++) {
                ith.add(collectives.get(r).get(i));
            }
            collective(ith, before, memory);
        }
        for (Map.Entry<Long, Deque<Send>> e : sends.entrySet()) {
            int src = (int) (e.getKey() >> 32);
            int dst = (int) (long) e.getKey();
            Deque<Recv> matching = recvs.getOrDefault(e.getKey(), new ArrayDeque<>());
            for (Send s : e.getValue()) {
                Recv v = matching.poll();
                if (v == null || v.count() != s.count()) {
                    throw new AssertionError(
                            "send " + s + " from " + src + " to " + dst + " meets " + v);
                }
                copy(before[src], s.buffer(), memory[dst], v.buffer(), s.count());
            }
            if (!matching.isEmpty()) {
                throw new AssertionError("receives with no send: " + matching);
            }
            recvs.remove(e.getKey());
        }
        if (!recvs.isEmpty()) {
            throw new AssertionError("receives with no send: " + recvs);
        }
    }

    private static void collective(List<NcclCall> calls, float[][] before, float[][] after) {
        NcclCall first = calls.get(0);
        int size = calls.size();
        for (NcclCall c : calls) {
            if (c.getClass() != first.getClass() || !sameShape(c, first)) {
                throw new AssertionError("collectives do not pair up: " + first + " and " + c);
            }
        }
        if (first instanceof AllReduce) {
            for (int r = 0; r < size; r++) {
                AllReduce a = (AllReduce) calls.get(r);
                for (long k = 0; k < a.count(); k++) {
                    write(after[r], a.recv(), k, reduce(calls, before, k, 0));
                }
            }
        } else if (first instanceof Broadcast b0) {
            Broadcast root = (Broadcast) calls.get(b0.root());
            for (int r = 0; r < size; r++) {
                Broadcast b = (Broadcast) calls.get(r);
                copy(before[b0.root()], root.send(), after[r], b.recv(), b.count());
            }
        } else if (first instanceof Reduce r0) {
            Reduce root = (Reduce) calls.get(r0.root());
            for (long k = 0; k < root.count(); k++) {
                write(after[r0.root()], root.recv(), k, reduce(calls, before, k, 0));
            }
        } else if (first instanceof AllGather g0) {
            for (int r = 0; r < size; r++) {
                AllGather g = (AllGather) calls.get(r);
                for (int j = 0; j < size; j++) {
                    AllGather from = (AllGather) calls.get(j);
                    copy(
                            before[j],
                            from.send(),
                            after[r],
                            g.recv() + 4L * j * g0.sendCount(),
                            g0.sendCount());
                }
            }
        } else {
            ReduceScatter s0 = (ReduceScatter) first;
            for (int r = 0; r < size; r++) {
                ReduceScatter s = (ReduceScatter) calls.get(r);
                for (long k = 0; k < s0.recvCount(); k++) {
                    write(
                            after[r],
                            s.recv(),
                            k,
                            reduce(calls, before, k, (long) r * s0.recvCount()));
                }
            }
        }
    }

    private static boolean sameShape(NcclCall a, NcclCall b) {
        if (a instanceof AllReduce x && b instanceof AllReduce y) {
            return x.count() == y.count() && same(x.reduction(), y.reduction());
        } else if (a instanceof Broadcast x && b instanceof Broadcast y) {
            return x.count() == y.count() && x.root() == y.root();
        } else if (a instanceof Reduce x && b instanceof Reduce y) {
            return x.count() == y.count()
                    && x.root() == y.root()
                    && same(x.reduction(), y.reduction());
        } else if (a instanceof AllGather x && b instanceof AllGather y) {
            return x.sendCount() == y.sendCount();
        } else if (a instanceof ReduceScatter x && b instanceof ReduceScatter y) {
            return x.recvCount() == y.recvCount() && same(x.reduction(), y.reduction());
        }
        return false;
    }

    private static boolean same(Reduction a, Reduction b) {
        return a.op() == b.op() && java.util.Arrays.equals(a.scalar(), b.scalar());
    }

    /** Element k (after {@code skip} elements) of every rank's input, reduced. */
    private static float reduce(List<NcclCall> calls, float[][] before, long k, long skip) {
        int size = calls.size();
        Reduction red = reductionOf(calls.get(0));
        float scalar =
                red.scalar() == null
                        ? 1f
                        : ByteBuffer.wrap(red.scalar()).order(ByteOrder.LITTLE_ENDIAN).getFloat();
        float acc = 0;
        for (int r = 0; r < size; r++) {
            float x = read(before[r], sendOf(calls.get(r)), skip + k);
            if (red.op() == null) {
                acc = r == 0 ? scalar * x : acc + scalar * x;
                continue;
            }
            switch (red.op()) {
                case SUM:
                case AVG:
                    acc = r == 0 ? x : acc + x;
                    break;
                case PROD:
                    acc = r == 0 ? x : acc * x;
                    break;
                case MIN:
                    acc = r == 0 ? x : Math.min(acc, x);
                    break;
                default:
                    acc = r == 0 ? x : Math.max(acc, x);
            }
        }
        return red.op() == NcclRedOp.AVG ? acc / size : acc;
    }

    private static Reduction reductionOf(NcclCall c) {
        if (c instanceof AllReduce a) {
            return a.reduction();
        }
        return c instanceof Reduce r ? r.reduction() : ((ReduceScatter) c).reduction();
    }

    private static long sendOf(NcclCall c) {
        if (c instanceof AllReduce a) {
            return a.send();
        }
        return c instanceof Reduce r ? r.send() : ((ReduceScatter) c).send();
    }

    private static long pair(int src, int dst) {
        return ((long) src << 32) | dst;
    }

    private static void copy(float[] from, long src, float[] to, long dst, long count) {
        for (long k = 0; k < count; k++) {
            write(to, dst, k, read(from, src, k));
        }
    }

    private static float read(float[] memory, long address, long k) {
        return memory[index(memory, address, k)];
    }

    private static void write(float[] memory, long address, long k, float value) {
        memory[index(memory, address, k)] = value;
    }

    private static int index(float[] memory, long address, long k) {
        if (address % 4 != 0 || address < 0 || address / 4 + k >= memory.length) {
            throw new AssertionError(
                    "address "
                            + address
                            + " + element "
                            + k
                            + " outside "
                            + memory.length
                            + " floats");
        }
        return (int) (address / 4 + k);
    }
}
