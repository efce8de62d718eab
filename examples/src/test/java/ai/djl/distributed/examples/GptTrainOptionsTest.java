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
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

import java.nio.file.Paths;

class GptTrainOptionsTest {

    @Test
    void defaultsAndBothSpellings() {
        GptTrainOptions o = GptTrainOptions.parse();
        assertEquals("mini", o.preset);
        assertEquals(Paths.get("out", "transformer_basics"), o.getOut());
        o = GptTrainOptions.parse("--batch", "8", "--lr=1e-3", "--out", "x/y");
        assertEquals(8, o.batch);
        assertEquals(1e-3f, o.lr);
        assertEquals(Paths.get("x/y"), o.getOut());
    }

    @Test
    void errorsNameTheOption() {
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> GptTrainOptions.parse("--bogus", "1"));
        assertTrue(e.getMessage().startsWith("unknown option: --bogus\n"), e.getMessage());
        e =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> GptTrainOptions.parse("--batch", "0"));
        assertEquals("--batch: 0 (expected: > 0)", e.getMessage());
        e =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> GptTrainOptions.parse("--steps", "x"));
        assertEquals("--steps: x (expected: an integer)", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> GptTrainOptions.parse("--seed"));
        assertTrue(e.getMessage().startsWith("--seed: missing value"), e.getMessage());
    }

    /**
     * Values the run itself would refuse are refused while parsing: a bad --temperature would
     * otherwise fail only after the whole training budget, before the model is written.
     */
    @Test
    void valuesTheRunWouldRefuseAreRefusedBeforeItStarts() {
        assertRefused("--temperature: -1.0 (expected: finite, >= 0)", "--temperature", "-1");
        assertRefused("--temperature: NaN (expected: finite, >= 0)", "--temperature", "NaN");
        assertRefused(
                "--temperature: Infinity (expected: finite, >= 0)", "--temperature", "Infinity");
        assertRefused("--preset: huge (expected: tiny, mini or small)", "--preset", "huge");
        assertRefused("--dropout: 1.0 (expected: [0, 1))", "--dropout", "1");
        assertRefused("--dropout: -0.5 (expected: [0, 1))", "--dropout", "-0.5");
        assertRefused("--vocab: 255 (expected: >= 256)", "--vocab", "255");
        assertRefused(
                "--max-docs: 19 (expected: >= 20, so that both splits have a document)",
                "--max-docs",
                "19");
        // the boundaries are accepted; the byte tokenizer ignores --vocab
        GptTrainOptions o =
                GptTrainOptions.parse(
                        "--temperature",
                        "0",
                        "--preset",
                        "TINY",
                        "--dropout",
                        "0",
                        "--vocab",
                        "256",
                        "--max-docs",
                        "20");
        assertEquals("tiny", o.preset);
        assertEquals(0f, o.temperature);
        GptTrainOptions.parse("--tokenizer", "byte", "--vocab", "1");
        // fsdp_basics checks its GPT options alike
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> FsdpBasics.runExample("--temperature", "-1"));
        assertEquals("--temperature: -1.0 (expected: finite, >= 0)", e.getMessage());
    }

    private static void assertRefused(String message, String... args) {
        IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> GptTrainOptions.parse(args));
        assertEquals(message, e.getMessage());
    }

    @Test
    void scheduleWarmsUpThenDecaysToATenth() {
        WarmupCosineTracker t = new WarmupCosineTracker(1f, 10, 110, () -> 0);
        assertEquals(0.1f, t.getNewValue(1), 1e-7f);
        assertEquals(1f, t.getNewValue(10), 1e-7f);
        // half way through the decay: floor + (peak - floor) / 2 = 0.1 + 0.45
        assertEquals(0.55f, t.getNewValue(60), 1e-6f);
        assertEquals(0.1f, t.getNewValue(110), 1e-6f);
        assertEquals(0.1f, t.getNewValue(500), 1e-6f);
        // bounded by time only: the time fraction drives the decay
        WarmupCosineTracker byTime = new WarmupCosineTracker(1f, 0, 0, () -> 0.5);
        assertEquals(0.55f, byTime.getNewValue(3), 1e-6f);
    }
}
