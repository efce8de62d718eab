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
package ai.djl.distributed.pg;

import static ai.djl.distributed.pg.Expect.array;
import static ai.djl.distributed.pg.Expect.expected;
import static ai.djl.distributed.pg.Expect.input;
import static ai.djl.distributed.pg.Expect.values;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import ai.djl.distributed.ReduceOp;
import ai.djl.distributed.backend.cpu.algorithm.AllReduce;
import ai.djl.distributed.testing.MultiRank;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;

import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Every collective on the CPU backend, for world sizes 1 to 4, every data type it applies to, and
 * element counts 0, 1, 7 (not a multiple of the world size), 1000 and 70,001 (large enough for the
 * ring), one thread per rank, over TCP, shared memory and both (auto); each rank checks its result
 * against a closed form.
 */
@Timeout(300)
class CollectiveSuiteTest {

    // No BFLOAT16: DJL 0.35.1's PyTorch engine aborts the JVM ("terminate called without an
    // active exception") when it creates a bfloat16 NDArray, by zeros, toType or from a buffer.
    // The bfloat16 reduction kernels are tested on raw buffers (ReductionsTest).
    static final DataType[] TYPES = {
        DataType.FLOAT32,
        DataType.FLOAT64,
        DataType.FLOAT16,
        DataType.INT8,
        DataType.UINT8,
        DataType.INT32,
        DataType.INT64,
        DataType.BOOLEAN
    };
    static final int[] COUNTS = {0, 1, 7, 1000, 70_001};
    static final ReduceOp[] OPS = {
        ReduceOp.SUM,
        ReduceOp.PRODUCT,
        ReduceOp.MIN,
        ReduceOp.MAX,
        ReduceOp.BAND,
        ReduceOp.BOR,
        ReduceOp.BXOR,
        ReduceOp.AVG,
        ReduceOp.premulSum(0.5)
    };

    static boolean applies(ReduceOp op, DataType t) {
        if (op.isBitwise()) {
            return !t.isFloating();
        }
        if (op.getType() == ReduceOp.Type.AVG || op.getType() == ReduceOp.Type.PREMUL_SUM) {
            return t.isFloating();
        }
        return true;
    }

    @ParameterizedTest(name = "{1}, {0} ranks")
    @CsvSource({"1,tcp", "2,tcp", "3,tcp", "4,tcp", "2,shm", "3,shm", "4,shm", "3,auto"})
    void reductions(int size, String transport) throws Exception {
        MultiRank.run(
                size,
                transport,
                Duration.ofSeconds(60),
                (g, m) -> {
                    for (DataType t : TYPES) {
                        for (ReduceOp op : OPS) {
                            if (!applies(op, t)) {
                                continue;
                            }
                            for (int n : COUNTS) {
                                try (NDManager s = m.newSubManager()) {
                                    allReduce(g, s, op, t, n);
                                    reduce(g, s, op, t, n, n % size);
                                    reduceScatter(g, s, op, t, Math.min(n, 20_001));
                                }
                            }
                        }
                    }
                    return null;
                });
    }

    @ParameterizedTest(name = "{1}, {0} ranks")
    @CsvSource({"1,tcp", "2,tcp", "3,tcp", "4,tcp", "2,shm", "3,shm", "4,shm", "3,auto"})
    void dataMovement(int size, String transport) throws Exception {
        MultiRank.run(
                size,
                transport,
                Duration.ofSeconds(60),
                (g, m) -> {
                    for (DataType t : TYPES) {
                        for (int n : COUNTS) {
                            try (NDManager s = m.newSubManager()) {
                                broadcast(g, s, t, n, (n + 1) % size);
                                allGather(g, s, t, n);
                                gatherScatter(g, s, t, n, n % size);
                                allToAll(g, s, t, n);
                            }
                        }
                    }
                    g.barrier();
                    return null;
                });
    }

    /**
     * All-reduces large enough for direct reads of the peers' memory (auto on one host: {@code
     * DirectAllReduce}), with block sizes that do not divide evenly, in every applicable type and
     * reduction, in place and through a non-contiguous array's write-back.
     */
    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {2, 3, 4})
    void largeAllReducesReadThePeersMemory(int size) throws Exception {
        MultiRank.run(
                size,
                "auto",
                Duration.ofSeconds(120),
                (g, m) -> {
                    for (DataType t :
                            new DataType[] {
                                DataType.FLOAT32, DataType.FLOAT16, DataType.INT64, DataType.UINT8
                            }) {
                        int n = (AllReduce.DIRECT_BYTES / t.getNumOfBytes()) * 5 / 4 + 1;
                        for (ReduceOp op : OPS) {
                            if (applies(op, t)) {
                                try (NDManager s = m.newSubManager()) {
                                    largeAllReduce(g, s, op, t, n);
                                }
                            }
                        }
                    }
                    try (NDManager s = m.newSubManager()) {
                        // A transposed (non-contiguous) array goes through a contiguous copy.
                        int r = g.getRank();
                        NDArray a = s.arange(0f, 600_000f).add(r).reshape(1000, 600).transpose();
                        g.allReduce(a, ReduceOp.SUM);
                        NDArray want =
                                s.arange(0f, 600_000f)
                                        .mul(size)
                                        .add(size * (size - 1) / 2f)
                                        .reshape(1000, 600)
                                        .transpose();
                        assertArrayEquals(want.toFloatArray(), a.toFloatArray());
                    }
                    return null;
                });
    }

    /**
     * Thousands of small all-reduces in a row, through the shared-memory board where the group has
     * one, interleaved with small broadcasts (the board too) and large ones (messages), with ranks
     * drifting apart: each board slot is reused every other exchange, and must never be overwritten
     * while a peer may still read it.
     */
    @ParameterizedTest(name = "{1}, {0} ranks")
    @CsvSource({"2,shm", "3,auto", "4,shm"})
    void manySmallAllReducesInARow(int size, String transport) throws Exception {
        MultiRank.run(
                size,
                transport,
                Duration.ofSeconds(120),
                (g, m) -> {
                    int r = g.getRank();
                    java.util.Random random = new java.util.Random(r);
                    for (int i = 0; i < 3000; i++) {
                        try (NDManager s = m.newSubManager()) {
                            int n = 1 + i % 5;
                            int iteration = i;
                            NDArray a = array(s, DataType.INT64, n, j -> iteration * 100L + r + j);
                            if (random.nextInt(50) == 0) {
                                Thread.sleep(1); // drift: this rank posts late
                            }
                            g.allReduce(a, ReduceOp.SUM);
                            double[] want =
                                    expected(
                                            n,
                                            j ->
                                                    size * (iteration * 100L + j)
                                                            + size * (size - 1) / 2);
                            assertArrayEquals(want, values(a), "all-reduce #" + i + " on " + r);
                            if (i % 7 == 0) {
                                NDArray b = s.create(new int[] {r == i % size ? i : -1});
                                g.broadcast(b, i % size);
                                assertArrayEquals(new int[] {i}, b.toIntArray());
                            }
                            if (i % 101 == 0) {
                                // Too large for the board: messages, between board exchanges.
                                NDArray big = s.zeros(new Shape(20_000)).add(r == 0 ? i : -1);
                                g.broadcast(big, 0);
                                assertEquals((float) i, big.getFloat(19_999));
                            }
                        }
                    }
                    return null;
                });
    }

    private static void largeAllReduce(
            ProcessGroup g, NDManager m, ReduceOp op, DataType t, int n) {
        int r = g.getRank();
        NDArray a = array(m, t, n, i -> input(op.getType(), t, r, i));
        g.allReduce(a, op);
        assertArrayEquals(
                expected(n, i -> Expect.reduced(op, t, g.getSize(), i)),
                values(a),
                "allReduce " + op + " " + t + " x " + n + " on rank " + r);
    }

    private static void allReduce(ProcessGroup g, NDManager m, ReduceOp op, DataType t, int n) {
        int r = g.getRank();
        NDArray a = array(m, t, n, i -> input(op.getType(), t, r, i));
        g.allReduce(a, op);
        String what = "allReduce " + op + " " + t + " x " + n + " on rank " + r;
        assertArrayEquals(expected(n, i -> Expect.reduced(op, t, g.getSize(), i)), values(a), what);
        // Coalesced: two arrays of different lengths reduce as one operation.
        NDArray b = array(m, t, n / 2 + 1, i -> input(op.getType(), t, r, i + 3));
        NDArray c = array(m, t, n, i -> input(op.getType(), t, r, i));
        g.allReduceCoalesced(List.of(b, c), op);
        assertArrayEquals(
                expected(n / 2 + 1, i -> Expect.reduced(op, t, g.getSize(), i + 3)),
                values(b),
                "coalesced " + what);
        assertArrayEquals(
                expected(n, i -> Expect.reduced(op, t, g.getSize(), i)),
                values(c),
                "coalesced " + what);
    }

    private static void reduce(
            ProcessGroup g, NDManager m, ReduceOp op, DataType t, int n, int root) {
        int r = g.getRank();
        NDArray a = array(m, t, n, i -> input(op.getType(), t, r, i));
        g.reduce(a, root, op);
        double[] expect =
                r == root
                        ? expected(n, i -> Expect.reduced(op, t, g.getSize(), i))
                        : values(array(m, t, n, i -> input(op.getType(), t, r, i)));
        assertArrayEquals(expect, values(a), "reduce " + op + " " + t + " x " + n + " rank " + r);
    }

    private static void reduceScatter(ProcessGroup g, NDManager m, ReduceOp op, DataType t, int n) {
        int r = g.getRank();
        int p = g.getSize();
        // Rank r's input j holds elements j*n .. j*n+n-1 of one long virtual vector.
        List<NDArray> inputs = new ArrayList<>();
        for (int j = 0; j < p; j++) {
            int base = j * n;
            inputs.add(array(m, t, n, i -> input(op.getType(), t, r, base + i)));
        }
        NDArray out = m.zeros(new Shape(n), t);
        g.reduceScatter(out, inputs, op);
        double[] expect = expected(n, i -> Expect.reduced(op, t, p, r * n + i));
        String what = "reduceScatter " + op + " " + t + " x " + n + " rank " + r;
        assertArrayEquals(expect, values(out), what);
        assertArrayEquals(
                expected(n, i -> input(op.getType(), t, r, i)),
                values(inputs.get(0)).length == 0 ? new double[0] : values(inputs.get(0)),
                "inputs untouched: " + what);
        NDArray whole = array(m, t, n * p, i -> input(op.getType(), t, r, i));
        NDArray out2 = m.zeros(new Shape(n), t);
        g.reduceScatterTensor(out2, whole, op);
        assertArrayEquals(expect, values(out2), "tensor " + what);
    }

    private static void broadcast(ProcessGroup g, NDManager m, DataType t, int n, int root) {
        int r = g.getRank();
        NDArray a = array(m, t, n, i -> input(ReduceOp.Type.MAX, t, r, i));
        g.broadcast(a, root);
        assertArrayEquals(
                values(array(m, t, n, i -> input(ReduceOp.Type.MAX, t, root, i))),
                values(a),
                "broadcast " + t + " x " + n + " from " + root + " on rank " + r);
    }

    private static void allGather(ProcessGroup g, NDManager m, DataType t, int n) {
        int r = g.getRank();
        int p = g.getSize();
        NDArray in = array(m, t, n, i -> input(ReduceOp.Type.MAX, t, r, i));
        List<NDArray> outs = new ArrayList<>();
        for (int j = 0; j < p; j++) {
            outs.add(m.zeros(new Shape(n), t));
        }
        g.allGather(outs, in);
        NDArray whole = m.zeros(new Shape((long) n * p), t);
        g.allGatherIntoTensor(whole, in);
        double[] all = values(whole);
        for (int j = 0; j < p; j++) {
            int src = j;
            double[] expect = values(array(m, t, n, i -> input(ReduceOp.Type.MAX, t, src, i)));
            assertArrayEquals(expect, values(outs.get(j)), "allGather " + t + " x " + n + " [" + j);
            for (int i = 0; i < n; i++) {
                if (all[j * n + i] != expect[i]) {
                    throw new AssertionError("allGatherIntoTensor " + t + " at " + (j * n + i));
                }
            }
        }
    }

    private static void gatherScatter(ProcessGroup g, NDManager m, DataType t, int n, int root) {
        int r = g.getRank();
        int p = g.getSize();
        NDArray in = array(m, t, n, i -> input(ReduceOp.Type.MAX, t, r, i));
        List<NDArray> outs = new ArrayList<>();
        if (r == root) {
            for (int j = 0; j < p; j++) {
                outs.add(m.zeros(new Shape(n), t));
            }
        }
        g.gather(in, outs, root);
        for (int j = 0; j < outs.size(); j++) {
            int src = j;
            assertArrayEquals(
                    values(array(m, t, n, i -> input(ReduceOp.Type.MAX, t, src, i))),
                    values(outs.get(j)),
                    "gather " + t + " x " + n + " from " + j);
        }
        // Scatter back what was gathered, shifted by one rank.
        List<NDArray> ins = new ArrayList<>();
        for (int j = 0; j < outs.size(); j++) {
            ins.add(outs.get((j + 1) % p));
        }
        NDArray out = m.zeros(new Shape(n), t);
        g.scatter(out, ins, root);
        int from = (r + 1) % p;
        assertArrayEquals(
                values(array(m, t, n, i -> input(ReduceOp.Type.MAX, t, from, i))),
                values(out),
                "scatter " + t + " x " + n + " on rank " + r);
    }

    private static void allToAll(ProcessGroup g, NDManager m, DataType t, int n) {
        int r = g.getRank();
        int p = g.getSize();
        // Rank r sends (r + j) % 3 + n % 4 elements to rank j: sizes differ per pair.
        List<NDArray> ins = new ArrayList<>();
        List<NDArray> outs = new ArrayList<>();
        for (int j = 0; j < p; j++) {
            int dst = j;
            int len = (r + j) % 3 + n % 4;
            ins.add(array(m, t, len, i -> input(ReduceOp.Type.MAX, t, r * 10 + dst, i)));
            outs.add(m.zeros(new Shape((j + r) % 3 + n % 4), t));
        }
        g.allToAll(outs, ins);
        for (int j = 0; j < p; j++) {
            int src = j;
            assertArrayEquals(
                    values(
                            array(
                                    m,
                                    t,
                                    (j + r) % 3 + n % 4,
                                    i -> input(ReduceOp.Type.MAX, t, src * 10 + r, i))),
                    values(outs.get(j)),
                    "allToAll " + t + " from " + j + " on rank " + r);
        }
        // allToAllSingle with rows of 2 elements and uneven splits: rank r sends j + 1 rows to j.
        long[] inSplits = new long[p];
        long[] outSplits = new long[p];
        int inRows = 0;
        int outRows = 0;
        for (int j = 0; j < p; j++) {
            inSplits[j] = j + 1;
            outSplits[j] = r + 1;
            inRows += j + 1;
            outRows += r + 1;
        }
        NDArray in =
                array(m, t, inRows * 2, i -> input(ReduceOp.Type.MAX, t, r, i)).reshape(inRows, 2);
        NDArray out = m.zeros(new Shape(outRows, 2), t);
        g.allToAllSingle(out, in, outSplits, inSplits);
        double[] got = values(out);
        int k = 0;
        for (int j = 0; j < p; j++) {
            // Rank j's rows for rank r start after its rows for ranks 0..r-1: (r(r+1)/2) rows.
            int start = r * (r + 1) / 2 * 2;
            for (int e = 0; e < (r + 1) * 2; e++, k++) {
                double want = input(ReduceOp.Type.MAX, t, j, start + e);
                if (got[k]
                        != (t == DataType.BOOLEAN
                                ? (want != 0 ? 1 : 0)
                                : Expect.wrap(t, (long) want))) {
                    throw new AssertionError(
                            "allToAllSingle " + t + " from " + j + " element " + e);
                }
            }
        }
    }
}
