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

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.CommunicationException;
import ai.djl.distributed.ReduceOp;
import ai.djl.distributed.testing.MultiRank;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * The mismatch check of every backend (debug level DETAIL, PyTorch's {@code
 * TORCH_DISTRIBUTED_DEBUG=DETAIL}): ranks that call different collectives, types, sizes, reductions
 * or roots fail before anything runs, each naming both calls; collectives whose arrays legitimately
 * differ from rank to rank (gather's outputs, all-to-all's blocks) pass.
 */
@Timeout(120)
class CollectiveCheckTest {

    private static final Duration T = Duration.ofSeconds(30);
    private static final UnaryOperator<ProcessGroups.Builder> DETAIL =
            b -> b.optDebugLevel(DebugLevel.DETAIL).optBackendOption("cpu", "transport", "tcp");

    /** Rank 1 calls {@code odd}, the others {@code even}; every rank must fail naming both. */
    private static void mismatch(Call even, Call odd, String mine, String theirs) throws Exception {
        List<String> messages =
                MultiRank.run(
                        2,
                        DETAIL,
                        T,
                        (g, m) -> {
                            CommunicationException e =
                                    assertThrows(
                                            CommunicationException.class,
                                            () -> (g.getRank() == 1 ? odd : even).run(g, m));
                            return e.getMessage();
                        });
        for (String msg : messages) {
            assertTrue(msg.startsWith("collectives differ across ranks"), msg);
            assertTrue(msg.contains(mine) && msg.contains(theirs), msg);
        }
        assertTrue(messages.get(0).contains("rank 0 called #0 "), messages.get(0));
        assertTrue(messages.get(1).contains("rank 1 called #0 "), messages.get(1));
    }

    /** One rank's call. */
    @FunctionalInterface
    private interface Call {
        void run(ProcessGroup g, ai.djl.ndarray.NDManager m);
    }

    @Test
    void differentReductionsSizesTypesRootsAndCollectivesAreNamed() throws Exception {
        mismatch(
                (g, m) -> g.allReduce(m.ones(new Shape(8)), ReduceOp.SUM),
                (g, m) -> g.allReduce(m.ones(new Shape(8)), ReduceOp.MAX),
                "ALL_REDUCE(float32, 1 array, 8 elements, SUM)",
                "ALL_REDUCE(float32, 1 array, 8 elements, MAX)");
        mismatch(
                (g, m) -> g.allReduce(m.ones(new Shape(8))),
                (g, m) -> g.allReduce(m.ones(new Shape(9))),
                "8 elements",
                "9 elements");
        mismatch(
                (g, m) -> g.allReduce(m.ones(new Shape(8))),
                (g, m) -> g.allReduce(m.ones(new Shape(8), DataType.FLOAT64)),
                "ALL_REDUCE(float32",
                "ALL_REDUCE(float64");
        mismatch(
                (g, m) -> g.broadcast(m.ones(new Shape(8)), 0),
                (g, m) -> g.broadcast(m.ones(new Shape(8)), 1),
                "root 0",
                "root 1");
        mismatch(
                (g, m) -> g.barrier(),
                (g, m) -> g.allReduce(m.ones(new Shape(8))),
                "#0 BARRIER(",
                "#0 ALL_REDUCE(");
        mismatch(
                (g, m) -> g.allReduce(m.ones(new Shape(2, 4))),
                (g, m) -> g.allReduce(m.ones(new Shape(4, 2))),
                "(differing: shapes)",
                "8 elements");
    }

    @Test
    void collectivesThatAgreeRunAndAreCheckedInOrder() throws Exception {
        MultiRank.run(
                3,
                DETAIL,
                T,
                (g, m) -> {
                    int r = g.getRank();
                    NDArray a = m.create(new float[] {r, r});
                    g.allReduce(a);
                    assertEquals(3f, a.getFloat(0));
                    // Gather's outputs exist on the root only; all-to-all's blocks differ by rank.
                    List<NDArray> outs = new ArrayList<>();
                    for (int i = 0; i < 3 && r == 0; i++) {
                        outs.add(m.zeros(new Shape(1)));
                    }
                    g.gather(m.create(new float[] {r}), outs, 0);
                    List<NDArray> in = new ArrayList<>();
                    List<NDArray> out = new ArrayList<>();
                    for (int peer = 0; peer < 3; peer++) {
                        in.add(m.zeros(new Shape(r + 1)).add(r));
                        out.add(m.zeros(new Shape(peer + 1)));
                    }
                    g.allToAll(out, in);
                    for (int peer = 0; peer < 3; peer++) {
                        assertEquals(peer, out.get(peer).getFloat(0));
                    }
                    g.barrier();
                    assertEquals(
                            List.of("a", "b", "c"),
                            names(g.objects().allGather(new byte[] {(byte) ('a' + r)})));
                    // Sub-groups get their own check.
                    g.newGroup(0, 2).ifPresent(sub -> sub.allReduce(m.ones(new Shape(4))));
                    return null;
                });
    }

    private static List<String> names(List<byte[]> bytes) {
        List<String> out = new ArrayList<>();
        bytes.forEach(b -> out.add(new String(b, java.nio.charset.StandardCharsets.UTF_8)));
        return out;
    }
}
