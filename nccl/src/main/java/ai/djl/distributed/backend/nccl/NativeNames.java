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

import java.util.Locale;
import java.util.function.ToIntFunction;

/** C names of the native enums' constants, made from the Java names (one rule per library). */
final class NativeNames {

    private NativeNames() {}

    /**
     * NCCL's spelling: {@code ncclInvalidUsage} for {@code INVALID_USAGE}, {@code ncclBfloat16} for
     * {@code BFLOAT16}.
     *
     * @param constant an enum constant named in upper case with underscores
     * @return the C name
     */
    static String nccl(Enum<?> constant) {
        StringBuilder b = new StringBuilder("nccl");
        for (String word : constant.name().split("_")) {
            b.append(word.charAt(0)).append(word.substring(1).toLowerCase(Locale.ROOT));
        }
        return b.toString();
    }

    /**
     * The driver's spelling: {@code CUDA_SUCCESS}, else {@code CUDA_ERROR_} and the name.
     *
     * @param constant a {@code CUresult} constant
     * @return the C name
     */
    static String cuda(Enum<?> constant) {
        return constant.name().equals("SUCCESS") ? "CUDA_SUCCESS" : "CUDA_ERROR_" + constant.name();
    }

    /**
     * Finds the constant of a C value.
     *
     * @param values the enum's constants
     * @param code the C value
     * @param codeOf the constant's C value
     * @param <E> the enum
     * @return the constant, or null
     */
    static <E> E byCode(E[] values, int code, ToIntFunction<E> codeOf) {
        for (E e : values) {
            if (codeOf.applyAsInt(e) == code) {
                return e;
            }
        }
        return null;
    }
}
