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
package ai.djl.distributed.store.tcp;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * TCPStore wire bytes built by hand (little-endian lengths, as PyTorch's client sends them),
 * independently of the project's encoder, for the codec and server tests.
 */
final class Wire {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();

    Wire u8(int v) {
        out.write(v);
        return this;
    }

    Wire u32(long v) {
        out.writeBytes(
                ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt((int) v).array());
        return this;
    }

    Wire i64(long v) {
        out.writeBytes(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(v).array());
        return this;
    }

    Wire str(String s) {
        byte[] bytes = s.getBytes(StandardCharsets.ISO_8859_1);
        i64(bytes.length);
        out.writeBytes(bytes);
        return this;
    }

    Wire bytes(byte[] v) {
        i64(v.length);
        out.writeBytes(v);
        return this;
    }

    byte[] get() {
        return out.toByteArray();
    }
}
