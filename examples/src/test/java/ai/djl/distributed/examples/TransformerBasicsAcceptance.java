package ai.djl.distributed.examples;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

/**
 * The acceptance run of {@code transformer_basics}: the default 4-minute training must end with a
 * validation loss clearly below the unigram baseline, in under 5 minutes. Too long for every build,
 * so its name keeps it out of the default test run (surefire runs {@code *Test}); run it with
 * {@code mvn -B -ntp -pl examples -am test -Dtest=TransformerBasicsAcceptance
 * -Dsurefire.failIfNoSpecifiedTests=false}.
 */
class TransformerBasicsAcceptance {

    @Test
    void validationLossFallsClearlyBelowTheUnigramBaseline(@TempDir Path dir) throws Exception {
        GptRunResult r = TransformerBasics.runExample("--out", dir.toString());
        assertTrue(
                r.getValidationLoss() < 0.8 * r.getUnigramBaseline(),
                "validation " + r.getValidationLoss() + ", baseline " + r.getUnigramBaseline());
        assertTrue(r.getTotalSeconds() < 300, "took " + r.getTotalSeconds() + " s");
    }
}
