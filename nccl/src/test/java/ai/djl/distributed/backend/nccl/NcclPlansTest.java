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

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import ai.djl.Device;
import ai.djl.distributed.ReduceOp;
import ai.djl.distributed.backend.PeerTransfer;
import ai.djl.distributed.backend.nccl.NcclCall.AllGather;
import ai.djl.distributed.backend.nccl.NcclCall.ReduceScatter;
import ai.djl.ndarray.types.DataType;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;
import java.util.function.IntFunction;

/**
 * Each collective's NCCL plan, run for 1 to 4 ranks in {@link NcclModel} (NCCL's documented
 * semantics), must leave in every rank's arrays what the collective means; the expected values are
 * written from the collective's definition, with inputs {@code x(r, k) = 100 r + k + 1}.
 */
class NcclPlansTest {

    /**
     * Float32 "device memory" per rank, handing out arrays one after another (with gaps on demand).
     */
    private static final class Ranks {
        final int size;
        final float[][] memory;
        final int[] used;

        Ranks(int size) {
            this.size = size;
            this.memory = new float[size][4096];
            this.used = new int[size];
        }

        TensorView array(int rank, long... shape) {
            long n = 1;
            for (long d : shape) {
                n *= d;
            }
            long address = 4L * used[rank];
            used[rank] += (int) n;
            return new TensorView(
                    address,
                    Device.Type.GPU,
                    0,
                    DataType.FLOAT32,
                    6,
                    n,
                    0,
                    shape,
                    DevicePointers.denseStrides(shape));
        }

        void gap(int rank) {
            used[rank] += 3;
        }

        void fill(int rank, TensorView v, IntFunction<Float> value) {
            for (int k = 0; k < v.numel(); k++) {
                memory[rank][(int) (v.address() / 4) + k] = value.apply(k);
            }
        }

        float[] read(int rank, TensorView v) {
            float[] out = new float[(int) v.numel()];
            System.arraycopy(memory[rank], (int) (v.address() / 4), out, 0, out.length);
            return out;
        }

        void run(IntFunction<List<NcclCall>> planOfRank) {
            List<List<NcclCall>> plans = new ArrayList<>();
            for (int r = 0; r < size; r++) {
                plans.add(planOfRank.apply(r));
            }
            NcclModel.run(plans, memory);
        }
    }

    private static float x(int rank, int k) {
        return 100f * rank + k + 1;
    }

    private static NcclPlans plans(int rank, int size) {
        return new NcclPlans(rank, size);
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 4})
    void broadcastCopiesTheRootsArray(int size) {
        Ranks w = new Ranks(size);
        List<TensorView> a = new ArrayList<>();
        int root = size - 1;
        for (int r = 0; r < size; r++) {
            a.add(w.array(r, 5));
            int rr = r;
            w.fill(r, a.get(r), k -> x(rr, k));
        }
        w.run(r -> plans(r, size).broadcast(a.get(r), root));
        for (int r = 0; r < size; r++) {
            float[] expected = new float[5];
            for (int k = 0; k < 5; k++) {
                expected[k] = x(root, k);
            }
            assertArrayEquals(expected, w.read(r, a.get(r)), "rank " + r);
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 4})
    void allReduceOfEveryOpReducesEachArrayInPlace(int size) {
        ReduceOp[] ops = {
            ReduceOp.SUM,
            ReduceOp.PRODUCT,
            ReduceOp.MIN,
            ReduceOp.MAX,
            ReduceOp.AVG,
            ReduceOp.premulSum(0.5)
        };
        for (ReduceOp op : ops) {
            Ranks w = new Ranks(size);
            List<List<TensorView>> arrays = new ArrayList<>();
            for (int r = 0; r < size; r++) {
                List<TensorView> mine = List.of(w.array(r, 3), w.array(r, 2, 2));
                int rr = r;
                w.fill(r, mine.get(0), k -> x(rr, k));
                w.fill(r, mine.get(1), k -> -x(rr, k));
                arrays.add(mine);
            }
            w.run(r -> plans(r, size).allReduce(arrays.get(r), op));
            for (int r = 0; r < size; r++) {
                float[] first = new float[3];
                float[] second = new float[4];
                for (int k = 0; k < 3; k++) {
                    first[k] = expected(op, size, k, 1);
                }
                for (int k = 0; k < 4; k++) {
                    second[k] = expected(op, size, k, -1);
                }
                assertArrayEquals(first, w.read(r, arrays.get(r).get(0)), op + " rank " + r);
                assertArrayEquals(second, w.read(r, arrays.get(r).get(1)), op + " rank " + r);
            }
        }
    }

    /** The reduction over ranks of {@code sign * x(r, k)}, written out per op. */
    private static float expected(ReduceOp op, int size, int k, int sign) {
        float sum = 0;
        float prod = 1;
        float min = Float.MAX_VALUE;
        float max = -Float.MAX_VALUE;
        for (int r = 0; r < size; r++) {
            float v = sign * x(r, k);
            sum += v;
            prod *= v;
            min = Math.min(min, v);
            max = Math.max(max, v);
        }
        switch (op.getType()) {
            case SUM:
                return sum;
            case PRODUCT:
                return prod;
            case MIN:
                return min;
            case MAX:
                return max;
            case AVG:
                return sum / size;
            default:
                return sum * (float) op.getFactor();
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 4})
    void reduceWritesTheRootOnly(int size) {
        Ranks w = new Ranks(size);
        List<TensorView> a = new ArrayList<>();
        int root = 1 % size;
        for (int r = 0; r < size; r++) {
            a.add(w.array(r, 4));
            int rr = r;
            w.fill(r, a.get(r), k -> x(rr, k));
        }
        w.run(r -> plans(r, size).reduce(a.get(r), root, ReduceOp.SUM));
        for (int r = 0; r < size; r++) {
            float[] expected = new float[4];
            for (int k = 0; k < 4; k++) {
                expected[k] = r == root ? expected(ReduceOp.SUM, size, k, 1) : x(r, k);
            }
            assertArrayEquals(expected, w.read(r, a.get(r)), "rank " + r);
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 4})
    void allGatherIntoSeparateOrAdjacentArrays(int size) {
        for (boolean adjacent : new boolean[] {true, false}) {
            Ranks w = new Ranks(size);
            List<TensorView> in = new ArrayList<>();
            List<List<TensorView>> outs = new ArrayList<>();
            for (int r = 0; r < size; r++) {
                in.add(w.array(r, 3));
                int rr = r;
                w.fill(r, in.get(r), k -> x(rr, k));
                List<TensorView> mine = new ArrayList<>();
                for (int j = 0; j < size; j++) {
                    if (!adjacent) {
                        w.gap(r);
                    }
                    mine.add(w.array(r, 3));
                }
                outs.add(mine);
            }
            List<NcclCall> plan0 = plans(0, size).allGather(outs.get(0), in.get(0));
            if (adjacent) {
                // Arrays one after another take NCCL's own all-gather.
                assertEquals(1, plan0.size());
                assertInstanceOf(AllGather.class, plan0.get(0));
            } else {
                assertEquals(size, plan0.size());
            }
            w.run(r -> plans(r, size).allGather(outs.get(r), in.get(r)));
            for (int r = 0; r < size; r++) {
                for (int j = 0; j < size; j++) {
                    assertArrayEquals(
                            new float[] {x(j, 0), x(j, 1), x(j, 2)},
                            w.read(r, outs.get(r).get(j)),
                            "adjacent " + adjacent + " rank " + r + " block " + j);
                }
            }
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 4})
    void allGatherIntoTensorIsRankMajor(int size) {
        Ranks w = new Ranks(size);
        List<TensorView> in = new ArrayList<>();
        List<TensorView> out = new ArrayList<>();
        for (int r = 0; r < size; r++) {
            in.add(w.array(r, 2));
            out.add(w.array(r, size, 2));
            int rr = r;
            w.fill(r, in.get(r), k -> x(rr, k));
        }
        w.run(r -> plans(r, size).allGatherIntoTensor(out.get(r), in.get(r)));
        float[] expected = new float[2 * size];
        for (int j = 0; j < size; j++) {
            expected[2 * j] = x(j, 0);
            expected[2 * j + 1] = x(j, 1);
        }
        for (int r = 0; r < size; r++) {
            assertArrayEquals(expected, w.read(r, out.get(r)), "rank " + r);
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 4})
    void reduceScatterFromSeparateAdjacentOrOneArray(int size) {
        for (String form : new String[] {"adjacent", "separate", "tensor"}) {
            Ranks w = new Ranks(size);
            List<TensorView> out = new ArrayList<>();
            List<List<TensorView>> ins = new ArrayList<>();
            List<TensorView> whole = new ArrayList<>();
            for (int r = 0; r < size; r++) {
                out.add(w.array(r, 2));
                int rr = r;
                if (form.equals("tensor")) {
                    TensorView t = w.array(r, size, 2);
                    w.fill(r, t, k -> x(rr, k));
                    whole.add(t);
                } else {
                    List<TensorView> mine = new ArrayList<>();
                    for (int j = 0; j < size; j++) {
                        if (form.equals("separate")) {
                            w.gap(r);
                        }
                        TensorView t = w.array(r, 2);
                        int jj = j;
                        w.fill(r, t, k -> x(rr, 2 * jj + k));
                        mine.add(t);
                    }
                    ins.add(mine);
                }
            }
            if (form.equals("adjacent")) {
                List<NcclCall> plan0 =
                        plans(0, size).reduceScatter(out.get(0), ins.get(0), ReduceOp.AVG);
                assertEquals(1, plan0.size());
                assertInstanceOf(ReduceScatter.class, plan0.get(0));
            }
            w.run(
                    r ->
                            form.equals("tensor")
                                    ? plans(r, size)
                                            .reduceScatterTensor(
                                                    out.get(r), whole.get(r), ReduceOp.AVG)
                                    : plans(r, size)
                                            .reduceScatter(out.get(r), ins.get(r), ReduceOp.AVG));
            for (int r = 0; r < size; r++) {
                float[] expected = {
                    expected(ReduceOp.AVG, size, 2 * r, 1),
                    expected(ReduceOp.AVG, size, 2 * r + 1, 1)
                };
                assertArrayEquals(expected, w.read(r, out.get(r)), form + " rank " + r);
            }
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 4})
    void gatherAndScatterThroughTheRoot(int size) {
        int root = size / 2;
        Ranks w = new Ranks(size);
        List<TensorView> in = new ArrayList<>();
        List<List<TensorView>> outs = new ArrayList<>();
        for (int r = 0; r < size; r++) {
            in.add(w.array(r, 2));
            int rr = r;
            w.fill(r, in.get(r), k -> x(rr, k));
            List<TensorView> mine = new ArrayList<>();
            for (int j = 0; r == root && j < size; j++) {
                mine.add(w.array(r, 2));
            }
            outs.add(mine);
        }
        w.run(r -> plans(r, size).gather(outs.get(r), in.get(r), root));
        for (int j = 0; j < size; j++) {
            assertArrayEquals(new float[] {x(j, 0), x(j, 1)}, w.read(root, outs.get(root).get(j)));
        }

        // Scatter the root's gathered blocks back, reversed: rank r gets rank (size-1-r)'s block.
        List<TensorView> back = new ArrayList<>();
        for (int r = 0; r < size; r++) {
            back.add(w.array(r, 2));
        }
        List<TensorView> reversed = new ArrayList<>(outs.get(root));
        java.util.Collections.reverse(reversed);
        w.run(r -> plans(r, size).scatter(back.get(r), r == root ? reversed : List.of(), root));
        for (int r = 0; r < size; r++) {
            int from = size - 1 - r;
            assertArrayEquals(
                    new float[] {x(from, 0), x(from, 1)}, w.read(r, back.get(r)), "rank " + r);
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 4})
    void allToAllExchangesBlocks(int size) {
        Ranks w = new Ranks(size);
        List<List<TensorView>> ins = new ArrayList<>();
        List<List<TensorView>> outs = new ArrayList<>();
        for (int r = 0; r < size; r++) {
            List<TensorView> i = new ArrayList<>();
            List<TensorView> o = new ArrayList<>();
            for (int j = 0; j < size; j++) {
                TensorView t = w.array(r, 2);
                int rr = r;
                int jj = j;
                w.fill(r, t, k -> x(rr, 10 * jj + k));
                i.add(t);
                w.gap(r);
                o.add(w.array(r, 2));
            }
            ins.add(i);
            outs.add(o);
        }
        w.run(r -> plans(r, size).allToAll(outs.get(r), ins.get(r)));
        for (int r = 0; r < size; r++) {
            for (int j = 0; j < size; j++) {
                // Block j of rank r holds what rank j addressed to r.
                assertArrayEquals(
                        new float[] {x(j, 10 * r), x(j, 10 * r + 1)},
                        w.read(r, outs.get(r).get(j)));
            }
        }
    }

    /** Rows rank {@code src} sends rank {@code dst}: uneven, and zero for some pairs. */
    private static int rows(int src, int dst) {
        return (src + 2 * dst) % 3;
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 4})
    void allToAllSingleWithUnevenSplitsMovesRows(int size) {
        int width = 2;
        Ranks w = new Ranks(size);
        List<TensorView> in = new ArrayList<>();
        List<TensorView> out = new ArrayList<>();
        List<long[]> inSplits = new ArrayList<>();
        List<long[]> outSplits = new ArrayList<>();
        for (int r = 0; r < size; r++) {
            long[] is = new long[size];
            long[] os = new long[size];
            int sent = 0;
            int received = 0;
            for (int j = 0; j < size; j++) {
                is[j] = rows(r, j);
                os[j] = rows(j, r);
                sent += is[j];
                received += os[j];
            }
            inSplits.add(is);
            outSplits.add(os);
            in.add(w.array(r, sent, width));
            out.add(w.array(r, received, width));
            int rr = r;
            w.fill(r, in.get(r), k -> x(rr, k));
        }
        w.run(
                r ->
                        plans(r, size)
                                .allToAllSingle(
                                        out.get(r), in.get(r), outSplits.get(r), inSplits.get(r)));
        for (int r = 0; r < size; r++) {
            List<Float> expected = new ArrayList<>();
            for (int j = 0; j < size; j++) {
                // Rank j's rows for r start after the rows j sent to ranks before r.
                int first = 0;
                for (int q = 0; q < r; q++) {
                    first += rows(j, q);
                }
                for (int k = first * width; k < (first + rows(j, r)) * width; k++) {
                    expected.add(x(j, k));
                }
            }
            float[] e = new float[expected.size()];
            for (int k = 0; k < e.length; k++) {
                e[k] = expected.get(k);
            }
            assertArrayEquals(e, w.read(r, out.get(r)), "rank " + r);
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3})
    void allToAllSingleOnScalarsMovesTheirOneElement(int size) {
        // A scalar is one row of one element (as the process group's checks and the CPU backend
        // have it): each rank sends its scalar to the next rank.
        Ranks w = new Ranks(size);
        List<TensorView> in = new ArrayList<>();
        List<TensorView> out = new ArrayList<>();
        for (int r = 0; r < size; r++) {
            in.add(w.array(r));
            out.add(w.array(r));
            int rr = r;
            w.fill(r, in.get(r), k -> x(rr, k));
        }
        w.run(
                r -> {
                    long[] ins = new long[size];
                    long[] outs = new long[size];
                    ins[(r + 1) % size] = 1;
                    outs[(r + size - 1) % size] = 1;
                    return plans(r, size).allToAllSingle(out.get(r), in.get(r), outs, ins);
                });
        for (int r = 0; r < size; r++) {
            assertArrayEquals(
                    new float[] {x((r + size - 1) % size, 0)}, w.read(r, out.get(r)), "rank " + r);
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3})
    void sendAndRecvPairUp(int size) {
        Ranks w = new Ranks(size);
        TensorView a = w.array(0, 4);
        w.fill(0, a, k -> x(0, k));
        TensorView b = w.array(size - 1, 4);
        w.run(
                r ->
                        r == 0
                                ? plans(0, size).send(a, size - 1)
                                : r == size - 1 ? plans(r, size).recv(b, 0) : List.of());
        assertArrayEquals(w.read(0, a), w.read(size - 1, b));
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3, 4})
    void aBatchSendingRightAndReceivingLeftIsOneGroup(int size) {
        // Each rank sends before it receives: posted one by one this deadlocks on GPUs.
        Ranks w = new Ranks(size);
        List<TensorView> out = new ArrayList<>();
        List<TensorView> in = new ArrayList<>();
        for (int r = 0; r < size; r++) {
            out.add(w.array(r, 3));
            in.add(w.array(r, 3));
            int rr = r;
            w.fill(r, out.get(r), k -> x(rr, k));
        }
        w.run(
                r ->
                        plans(r, size)
                                .sendRecv(
                                        List.of(out.get(r), in.get(r)),
                                        List.of(
                                                new PeerTransfer(true, null, (r + 1) % size, 0),
                                                new PeerTransfer(
                                                        false, null, (r + size - 1) % size, 0))));
        for (int r = 0; r < size; r++) {
            int left = (r + size - 1) % size;
            assertArrayEquals(
                    new float[] {x(left, 0), x(left, 1), x(left, 2)}, w.read(r, in.get(r)));
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 3})
    void aBarrierIsOneFloatSummed(int size) {
        Ranks w = new Ranks(size);
        List<TensorView> scratch = new ArrayList<>();
        for (int r = 0; r < size; r++) {
            scratch.add(w.array(r, 1));
            w.fill(r, scratch.get(r), k -> 1f);
        }
        w.run(r -> plans(r, size).barrier(scratch.get(r).address()));
        for (int r = 0; r < size; r++) {
            assertArrayEquals(new float[] {size}, w.read(r, scratch.get(r)));
        }
    }

    @org.junit.jupiter.api.Test
    void theModelRefusesPlansThatDoNotPairUp() {
        // The model is what the tests above stand on: it must catch mismatched plans.
        Ranks w = new Ranks(2);
        TensorView a0 = w.array(0, 2);
        TensorView a1 = w.array(1, 2);
        assertThrows(
                AssertionError.class, () -> w.run(r -> plans(r, 2).broadcast(r == 0 ? a0 : a1, r)));
        assertThrows(
                AssertionError.class,
                () -> w.run(r -> r == 0 ? plans(0, 2).send(a0, 1) : List.of()));
        TensorView big = w.array(1, 4);
        assertThrows(
                AssertionError.class,
                () -> w.run(r -> r == 0 ? plans(0, 2).send(a0, 1) : plans(1, 2).recv(big, 0)));
        TensorView outside =
                new TensorView(
                        4L * 5000,
                        Device.Type.GPU,
                        0,
                        DataType.FLOAT32,
                        6,
                        2,
                        0,
                        new long[] {2},
                        new long[] {1});
        assertThrows(
                AssertionError.class,
                () -> w.run(r -> plans(r, 2).broadcast(r == 0 ? a0 : outside, 0)));
    }
}
