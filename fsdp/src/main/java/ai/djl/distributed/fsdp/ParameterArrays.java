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
package ai.djl.distributed.fsdp;

import ai.djl.ndarray.NDArray;
import ai.djl.nn.Parameter;

import java.lang.reflect.Field;

/**
 * Replaces a parameter's array. DJL's {@link Parameter#setArray} refuses a parameter that already
 * has one, and {@link Parameter#close()} leaves the block uninitialized (its next training forward
 * fails), so FSDP writes DJL's private field: a sharded parameter keeps its full shape and holds
 * the part of it this rank owns. Stateless.
 */
final class ParameterArrays {

    private static final Field ARRAY = arrayField();

    private ParameterArrays() {}

    /**
     * Gives a parameter a new array and closes the one it had (unless it is the same).
     *
     * @param parameter the parameter
     * @param array its new array; the parameter does not own it beyond closing it with the block
     */
    static void replace(Parameter parameter, NDArray array) {
        NDArray old = swap(parameter, array);
        if (old != null && old != array) {
            old.close();
        }
    }

    /**
     * Gives a parameter a new array for a while and returns the one it had, unclosed: a full
     * checkpoint installs full values to write the model, then puts the shards back.
     *
     * @param parameter the parameter
     * @param array its new array
     * @return the array it had
     */
    static NDArray swap(Parameter parameter, NDArray array) {
        NDArray old = parameter.getArray();
        try {
            ARRAY.set(parameter, array);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException("cannot write " + ARRAY, e);
        }
        return old;
    }

    private static Field arrayField() {
        try {
            Field f = Parameter.class.getDeclaredField("array");
            f.setAccessible(true);
            return f;
        } catch (NoSuchFieldException | RuntimeException e) {
            throw new IllegalStateException(
                    "cannot reach ai.djl.nn.Parameter.array (expected: DJL 0.35's Parameter)", e);
        }
    }
}
