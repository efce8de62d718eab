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
package ai.djl.distributed.launch;

import picocli.CommandLine.ParseResult;

import java.time.Duration;

/**
 * The values of the options, from the command line or else from their environment variables (as
 * picocli filled them in), read as numbers, durations and endpoints. Every message names where the
 * value came from ({@code --nnodes} or {@code $PET_NNODES}), the value and what was expected.
 */
final class OptionValues {

    // the longest duration a seconds option takes: a year
    private static final double MAX_SECONDS = 365 * 24 * 3600.0;

    private final ParseResult parsed;

    /**
     * Creates the reader.
     *
     * @param parsed the command line as picocli read it, the environment's values filled in
     */
    OptionValues(ParseResult parsed) {
        this.parsed = parsed;
    }

    /**
     * Returns whether an option (or its variable) was given.
     *
     * @param option the option
     * @return {@code true} if it has a value
     */
    boolean has(LaunchOption option) {
        Object v = value(option);
        return v != null && !Boolean.FALSE.equals(v);
    }

    /**
     * Returns an option's text.
     *
     * @param option the option
     * @param fallback the default
     * @return the command line's value, else the variable's, else the default
     */
    String string(LaunchOption option, String fallback) {
        Object v = value(option);
        return v == null ? fallback : v.toString();
    }

    // picocli's value: the command line's, else the environment's (its default), else null
    private Object value(LaunchOption option) {
        return parsed.commandSpec().findOption(option.optionName()).getValue();
    }

    /**
     * Returns an integer option.
     *
     * @param option the option
     * @param fallback the default
     * @param min the least value accepted
     * @param max the greatest value accepted
     * @return the value
     * @throws IllegalArgumentException if it is not an integer from min to max
     */
    int integer(LaunchOption option, int fallback, int min, int max) {
        String v = string(option, null);
        if (v == null) {
            return fallback;
        }
        try {
            int n = Integer.parseInt(v.trim());
            if (n >= min && n <= max) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below with the expected range
        }
        throw bad(
                option,
                v,
                max == Integer.MAX_VALUE ? "an integer, at least " + min : range(min, max));
    }

    /**
     * Returns {@code --nproc-per-node}, as torchrun reads it: a positive integer; {@code gpu} for
     * the GPUs this process sees (one worker per GPU, each taking GPU {@code LOCAL_RANK}); {@code
     * cpu} for the number of cores; {@code auto} for the GPUs if there are any, else the cores.
     *
     * @return the number of workers on this node
     */
    int nprocPerNode() {
        String v = string(LaunchOption.NPROC_PER_NODE, "1").trim();
        if (v.equals("cpu")) {
            return Runtime.getRuntime().availableProcessors();
        }
        if (v.equals("gpu") || v.equals("auto")) {
            int gpus = GpuCount.visible(); // the driver's count, honouring CUDA_VISIBLE_DEVICES
            if (gpus > 0) {
                return gpus;
            }
            if (v.equals("gpu")) {
                throw bad(
                        LaunchOption.NPROC_PER_NODE,
                        v,
                        "a GPU visible to this process (CUDA sees none here); a positive integer,"
                                + " auto or cpu");
            }
            return Runtime.getRuntime().availableProcessors();
        }
        try {
            int n = Integer.parseInt(v);
            if (n >= 1) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw bad(LaunchOption.NPROC_PER_NODE, v, "a positive integer, gpu, auto or cpu");
    }

    /**
     * Returns {@code --nnodes}: a positive integer, or torchrun's {@code N:N}; an elastic range is
     * refused.
     *
     * @return the number of nodes
     */
    int nnodes() {
        String v = string(LaunchOption.NNODES, "1").trim();
        String[] parts = v.split(":", -1);
        try {
            int min = Integer.parseInt(parts[0]);
            int max = parts.length == 2 ? Integer.parseInt(parts[1]) : min;
            if (parts.length <= 2 && min >= 1 && min == max) {
                return min;
            }
            if (parts.length == 2 && min >= 1 && max > min) {
                throw bad(
                        LaunchOption.NNODES,
                        v,
                        "a positive integer; elastic ranges MIN:MAX are not supported");
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw bad(LaunchOption.NNODES, v, "a positive integer");
    }

    /**
     * Returns a duration option given in seconds.
     *
     * @param option the option
     * @param fallbackSeconds the default, in seconds
     * @return the duration
     * @throws IllegalArgumentException if it is not a positive number
     */
    Duration seconds(LaunchOption option, double fallbackSeconds) {
        String v = string(option, null);
        double s = fallbackSeconds;
        if (v != null) {
            try {
                s = Double.parseDouble(v.trim());
            } catch (NumberFormatException e) {
                s = Double.NaN;
            }
            // at most a year: a typo should not become an endless wait
            if (!(s > 0 && s <= MAX_SECONDS)) {
                throw bad(
                        option,
                        v,
                        "a positive number of seconds, at most "
                                + (long) MAX_SECONDS
                                + " (a year)");
            }
        }
        return Duration.ofNanos(Math.max(1_000_000L, (long) (s * 1e9)));
    }

    /**
     * Returns an endpoint option.
     *
     * @param option the option
     * @return the endpoint, or {@code null} if not given
     */
    Endpoint endpoint(LaunchOption option) {
        String v = string(option, null);
        return v == null ? null : Endpoint.parse(source(option), v.trim());
    }

    private IllegalArgumentException bad(LaunchOption option, String value, String expected) {
        return new IllegalArgumentException(
                source(option) + ": '" + value + "' (expected: " + expected + ")");
    }

    /**
     * Returns where an option's value came from, for a message.
     *
     * @param option the option
     * @return {@code --name} if given on the command line, else its variable ({@code $PET_NAME}) if
     *     it has one, else {@code --name}
     */
    String source(LaunchOption option) {
        return LaunchCommandLine.source(parsed, option);
    }

    private static String range(int min, int max) {
        return "an integer from " + min + " to " + max;
    }
}
