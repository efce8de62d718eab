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
        try {
            return valueOf(value.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException | NullPointerException e) {
            throw new IllegalArgumentException(
                    VARIABLE + ": '" + value + "' (expected: OFF, INFO or DETAIL)", e);
        }
    }

    static DebugLevel fromEnvironment(Optional<String> value) {
        return value.map(DebugLevel::parse).orElse(OFF);
    }
}
