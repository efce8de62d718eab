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
import static org.junit.jupiter.api.Assertions.assertThrows;

import ai.djl.Device;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.training.tracker.Tracker;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Map;

/**
 * Reading an optimizer's state checks each array's length before trusting it: a corrupt length
 * fails with an {@link IOException} naming the state, the parameter and the length, and never
 * allocates what the length asks for.
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
}
