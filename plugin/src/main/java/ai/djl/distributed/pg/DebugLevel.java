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

import java.util.Locale;
import java.util.Optional;

/**
 * How much a process group checks, as PyTorch's {@code TORCH_DISTRIBUTED_DEBUG}: {@link #OFF} (the
 * default), {@link #INFO} (the same checks as OFF here), {@link #DETAIL} (every collective's
 * fingerprint is compared across ranks before it runs, for every backend: {@link
 * ProcessGroups.Builder#optDebugLevel}).
 */
public enum DebugLevel {
    /** No extra checks (the CPU backend still compares every message's signature in band). */
    OFF,
    /** As OFF. */
    INFO,
    /** Every collective checked across ranks before it runs. */
    DETAIL;

    /** PyTorch's variable, read when the builder is not told. */
    public static final String VARIABLE = "TORCH_DISTRIBUTED_DEBUG";

    /**
     * Parses a level, as PyTorch spells it.
     *
     * @param value {@code OFF}, {@code INFO} or {@code DETAIL}, any case
     * @return the level
     * @throws IllegalArgumentException naming the value and the levels
     */
    public static DebugLevel parse(String value) {
        String expected = VARIABLE + ": '" + value + "' (expected: OFF, INFO or DETAIL)";
        if (value == null) {
            throw new IllegalArgumentException(expected);
        }
        try {
            return valueOf(value.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(expected, e);
        }
    }

    static DebugLevel fromEnvironment(Optional<String> value) {
        return value.map(DebugLevel::parse).orElse(OFF);
    }
}
