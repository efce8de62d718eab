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

import ai.djl.distributed.store.Stores;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * User keys to wire keys and back. PyTorch's client sends {@code "/" + key} in UTF-8; the wire keys
 * are the raw bytes held in ISO-8859-1 strings, as the codec carries them. Messages name the user's
 * key, not the wire's.
 */
final class WireKeys {

    private WireKeys() {}

    /**
     * Returns the wire key of a user key.
     *
     * @param key the user's key
     * @return the raw bytes PyTorch's client sends for it
     * @throws IllegalArgumentException if the key is null or holds an unpaired surrogate
     */
    static String toWire(String key) {
        byte[] utf8 =
                (StoreProtocol.KEY_PREFIX + Stores.checkKey(key)).getBytes(StandardCharsets.UTF_8);
        return new String(utf8, StandardCharsets.ISO_8859_1);
    }

    /**
     * Returns the wire keys of user keys.
     *
     * @param keys the user's keys
     * @return their wire keys, in order
     * @throws IllegalArgumentException if the list or a key is null, or a key holds an unpaired
     *     surrogate
     */
    static List<String> toWire(List<String> keys) {
        List<String> out = new ArrayList<>(Stores.checkKeys(keys).size());
        for (String key : keys) {
            out.add(toWire(key));
        }
        return out;
    }

    /**
     * Returns the user key of a wire key; a key sent without the prefix ({@code init/}) as it is.
     *
     * @param wireKey raw key bytes in an ISO-8859-1 string
     * @return the key as the user wrote it
     */
    static String toUser(String wireKey) {
        if (!wireKey.startsWith(StoreProtocol.KEY_PREFIX)) {
            return wireKey;
        }
        byte[] raw = wireKey.substring(1).getBytes(StandardCharsets.ISO_8859_1);
        return new String(raw, StandardCharsets.UTF_8);
    }

    /**
     * Returns the user keys of wire keys.
     *
     * @param wireKeys raw key bytes in ISO-8859-1 strings
     * @return the keys as the user wrote them, in order
     */
    static List<String> toUser(List<String> wireKeys) {
        List<String> out = new ArrayList<>(wireKeys.size());
        for (String key : wireKeys) {
            out.add(toUser(key));
        }
        return out;
    }
}
