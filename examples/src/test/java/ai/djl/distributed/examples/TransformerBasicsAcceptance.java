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
package ai.djl.distributed.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The acceptance runs of {@code transformer_basics}: the default 4-minute training, alone and
 * data-parallel on two ranks under djlrun (the README's main job), must end with a validation loss
 * clearly below the unigram baseline, in under 5 minutes. Too long for every build, so its name
 * keeps it out of the default test run (surefire runs {@code *Test}); run it with {@code mvn -B
 * -ntp -pl examples -am test -Dtest=TransformerBasicsAcceptance
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

    /** The main job, as the README runs it: two ranks under djlrun, the default options. */
    @Test
    void dataParallelUnderDjlrunAlsoEndsClearlyBelowTheBaseline(@TempDir Path dir)
            throws Exception {
        Djlrun.Run run =
                Djlrun.runWith(
                        dir,
                        2,
                        330,
                        "-Xmx2g",
                        "transformer_basics",
                        "--out",
                        dir.resolve("out").toString());
        String log = run.log();
        assertEquals(0, run.exitCode(), log);
        Matcher m =
                Pattern.compile(
                                "final: validation loss ([0-9.]+) on [0-9,]+ tokens; unigram"
                                        + " baseline ([0-9.]+) on the same tokens")
                        .matcher(log);
        assertTrue(m.find(), log);
        double validation = Double.parseDouble(m.group(1));
        double baseline = Double.parseDouble(m.group(2));
        assertTrue(
                validation < 0.8 * baseline, "validation " + validation + ", baseline " + baseline);
        assertTrue(log.contains("parameters identical on all 2 ranks"), log);
    }
}
