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
package ai.djl.distributed.parallel;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.Device;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.training.tracker.Tracker;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import java.util.stream.Stream;

/**
 * Reading an optimizer's state checks each array's length before trusting it: a corrupt length
 * fails with an {@link IOException} naming the state, the parameter and the length, and never
 * allocates what the length asks for. Removing some ids' state closes their arrays and forgets
 * their counts, in every optimizer of DJL and one it does not know, leaving the other ids' alone.
 */
class OptimizerStateTest {

    @Test
    void aWrittenStateReadsBack() throws IOException {
        try (NDManager m = NDManager.newBaseManager(Device.cpu())) {
            Optimizer adam = adamAfterOneUpdate(m);
            byte[] saved = write(adam);
            Optimizer fresh = Optimizer.adam().optLearningRateTracker(Tracker.fixed(0.1f)).build();
            OptimizerState.read(in(saved), fresh, Map.of("weight", "w"), m, Device.cpu()).apply();
            assertEquals(2, OptimizerState.arrays(fresh, "w").size());
            for (int i = 0; i < 2; i++) {
                assertArrayEquals(
                        OptimizerState.arrays(adam, "w").get(i).toFloatArray(),
                        OptimizerState.arrays(fresh, "w").get(i).toFloatArray());
            }
        }
    }

    @Test
    void aNegativeLengthFailsNamingIt() throws IOException {
        try (NDManager m = NDManager.newBaseManager(Device.cpu())) {
            Corrupted c = corruptFirstLength(write(adamAfterOneUpdate(m)), -5);
            IOException e = assertThrows(IOException.class, () -> read(c.bytes, m));
            assertEquals(
                    "optimizer state "
                            + c.field
                            + " of weight: length -5 (expected: 0 or more bytes)",
                    e.getMessage());
        }
    }

    @Test
    void aLengthPastTheEndFailsNamingIt() throws IOException {
        try (NDManager m = NDManager.newBaseManager(Device.cpu())) {
            // 64 MiB: a flipped bit's length, far more than the stream holds.
            Corrupted c = corruptFirstLength(write(adamAfterOneUpdate(m)), 1 << 26);
            IOException e = assertThrows(IOException.class, () -> read(c.bytes, m));
            assertEquals(
                    "optimizer state "
                            + c.field
                            + " of weight: length 67108864 (expected: at most the "
                            + c.left
                            + " bytes left)",
                    e.getMessage());
        }
    }

    static Stream<Arguments> optimizers() {
        Supplier<Optimizer> momentum =
                () ->
                        Optimizer.sgd()
                                .setLearningRateTracker(Tracker.fixed(0.1f))
                                .optMomentum(0.9f)
                                .build();
        Supplier<Optimizer> nag =
                () ->
                        Optimizer.nag()
                                .setLearningRateTracker(Tracker.fixed(0.1f))
                                .setMomentum(0.9f)
                                .build();
        Supplier<Optimizer> adam =
                () -> Optimizer.adam().optLearningRateTracker(Tracker.fixed(0.1f)).build();
        Supplier<Optimizer> adamW = () -> Optimizer.adamW().build();
        Supplier<Optimizer> rmsProp = () -> Optimizer.rmsprop().optCentered(true).build();
        Supplier<Optimizer> adagrad = () -> Optimizer.adagrad().build();
        Supplier<Optimizer> adadelta = () -> Optimizer.adadelta().build();
        return Stream.of(
                Arguments.of("Sgd with momentum", 1, momentum),
                Arguments.of("Nag", 1, nag),
                Arguments.of("Adam", 2, adam),
                Arguments.of("AdamW", 2, adamW),
                Arguments.of("RmsProp, centered", 3, rmsProp),
                Arguments.of("Adagrad", 1, adagrad),
                Arguments.of("Adadelta", 2, adadelta),
                Arguments.of("unknown", 1, (Supplier<Optimizer>) Unknown::new));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("optimizers")
    void removingIdsClosesTheirStateAndLeavesTheRest(
            String name, int states, Supplier<Optimizer> optimizer) {
        try (NDManager m = NDManager.newBaseManager(Device.cpu())) {
            Optimizer opt = optimizer.get();
            // Set rather than updated: PyTorch's engine runs neither Nag, RmsProp, Adagrad nor
            // Adadelta, whose state maps are reached all the same.
            for (String id : List.of("gone", "kept")) {
                List<NDArray> arrays = new ArrayList<>();
                for (int k = 0; k < states; k++) {
                    arrays.add(m.create(new float[] {1, 2, 3}));
                }
                OptimizerState.put(opt, id, arrays, new int[] {2, 2}, Device.cpu());
            }
            List<NDArray> gone = OptimizerState.arrays(opt, "gone");
            List<NDArray> kept = OptimizerState.arrays(opt, "kept");
            assertEquals(states, gone.size(), "state arrays before");

            OptimizerState.remove(opt, List.of("gone", "never updated"));

            assertTrue(OptimizerState.arrays(opt, "gone").isEmpty(), "state arrays of gone");
            for (NDArray a : gone) {
                assertTrue(a.isReleased(), "a removed state array");
            }
            // The optimizer's number of updates is every id's: it stays.
            assertArrayEquals(new int[] {0, 2}, OptimizerState.counts(opt, "gone"));
            assertEquals(kept, OptimizerState.arrays(opt, "kept"));
            for (NDArray a : kept) {
                assertFalse(a.isReleased(), "a kept state array");
            }
            assertArrayEquals(new int[] {2, 2}, OptimizerState.counts(opt, "kept"));
        }
    }

    /** Adam with its two moments for one parameter, "w", named "weight". */
    private static Optimizer adamAfterOneUpdate(NDManager m) {
        Optimizer adam = Optimizer.adam().optLearningRateTracker(Tracker.fixed(0.1f)).build();
        NDArray weight = m.create(new float[] {1, 2, 3, 4});
        NDArray grad = m.create(new float[] {0.5f, -0.5f, 0.25f, -0.25f});
        adam.update("w", weight, grad);
        return adam;
    }

    private static byte[] write(Optimizer optimizer) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            OptimizerState.write(out, optimizer, Map.of("w", "weight"), Device.cpu());
        }
        return bytes.toByteArray();
    }

    private static void read(byte[] bytes, NDManager m) throws IOException {
        Optimizer fresh = Optimizer.adam().optLearningRateTracker(Tracker.fixed(0.1f)).build();
        OptimizerState.read(in(bytes), fresh, Map.of("weight", "w"), m, Device.cpu());
    }

    private static DataInputStream in(byte[] bytes) {
        return new DataInputStream(new ByteArrayInputStream(bytes));
    }

    private record Corrupted(byte[] bytes, String field, int left) {}

    /**
     * Overwrites the length of the first state array with {@code length}, walking the layout the
     * class documents: class, update count, counts by name, then per state its name, its entries,
     * and per entry the parameter's name, the length and the bytes.
     */
    private static Corrupted corruptFirstLength(byte[] saved, int length) throws IOException {
        ByteArrayInputStream raw = new ByteArrayInputStream(saved);
        DataInputStream in = new DataInputStream(raw);
        in.readUTF();
        in.readInt();
        for (int n = in.readInt(); n > 0; n--) {
            in.readUTF();
            in.readInt();
        }
        assertEquals(2, in.readInt(), "Adam's two states");
        String field = in.readUTF();
        assertEquals(1, in.readInt(), "one parameter's state");
        assertEquals("weight", in.readUTF());
        int at = saved.length - raw.available();
        byte[] corrupted = saved.clone();
        ByteBuffer.wrap(corrupted).putInt(at, length);
        return new Corrupted(corrupted, field, saved.length - at - 4);
    }

    /**
     * An optimizer DJL does not ship: its state, momentum kept in a state map as DJL's own
     * optimizers keep theirs, is found by the field's type.
     */
    private static final class Unknown extends Optimizer {

        private final Map<String, Map<Device, NDArray>> velocity = new ConcurrentHashMap<>();

        Unknown() {
            super(new Builder());
        }

        /** {@inheritDoc} */
        @Override
        public void update(String parameterId, NDArray weight, NDArray grad) {
            updateCount(parameterId);
            NDArray v =
                    withDefaultState(
                            velocity, parameterId, weight.getDevice(), k -> grad.zerosLike());
            v.muli(0.9f).addi(grad);
            weight.subi(v.mul(0.1f));
        }

        private static final class Builder extends OptimizerBuilder<Builder> {

            /** {@inheritDoc} */
            @Override
            protected Builder self() {
                return this;
            }
        }
    }
}
