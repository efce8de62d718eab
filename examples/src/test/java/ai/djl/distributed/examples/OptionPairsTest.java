package ai.djl.distributed.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

class OptionPairsTest {

    private static List<String> parse(String... args) {
        List<String> seen = new ArrayList<>();
        OptionPairs.parse(args, Set.of("--quiet"), (name, value) -> seen.add(name + "=" + value));
        return seen;
    }

    @Test
    void pairsFlagsAndEqualSignsAreReadInOrder() {
        assertEquals(
                List.of("--epochs=3", "--quiet=null", "--lr=0.5", "--prompt=a=b", "--seed=--7"),
                parse("--epochs", "3", "--quiet", "--lr=0.5", "--prompt=a=b", "--seed", "--7"));
        assertEquals(List.of(), parse());
    }

    @Test
    void aMissingValueAndAFlagWithOneAreRefused() {
        assertEquals(
                "--epochs: missing value (expected: --epochs VALUE)",
                assertThrows(IllegalArgumentException.class, () -> parse("--quiet", "--epochs"))
                        .getMessage());
        assertEquals(
                "--quiet: takes no value (got 'yes')",
                assertThrows(IllegalArgumentException.class, () -> parse("--quiet=yes"))
                        .getMessage());
    }
}
