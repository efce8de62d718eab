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

import java.util.List;

/**
 * One query of the TCPStore protocol. Keys are carried as ISO-8859-1 strings holding the raw key
 * bytes, so every byte sequence survives the round trip (PyTorch keys are bytes, not text).
 *
 * @param opcode the query
 * @param keys its keys, in wire order
 * @param values its values, in wire order (for MULTI_SET, one per key)
 * @param number the integer field (ADD's delta, VALIDATE's magic, PING's nonce), else 0
 */
public record StoreRequest(
        StoreOpcode opcode, List<String> keys, List<byte[]> values, long number) {

    /**
     * Creates a request with no integer field.
     *
     * @param opcode the query
     * @param keys its keys
     * @param values its values
     */
    public StoreRequest(StoreOpcode opcode, List<String> keys, List<byte[]> values) {
        this(opcode, keys, values, 0);
    }

    /**
     * Returns the first key.
     *
     * @return the key of a single-key query
     */
    public String key() {
        return keys.get(0);
    }

    /**
     * Returns the first value.
     *
     * @return the value of a single-value query
     */
    public byte[] value() {
        return values.get(0);
    }
}
