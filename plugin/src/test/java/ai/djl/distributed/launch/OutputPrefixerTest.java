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

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** Whole prefixed lines, never interleaved, whatever the worker writes. */
@Timeout(30)
class OutputPrefixerTest {

    private static String copy(byte[] input, String prefix) {
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(sink, false, StandardCharsets.UTF_8);
        new OutputPrefixer(new ByteArrayInputStream(input), out, prefix).run();
        return sink.toString(StandardCharsets.UTF_8);
    }

    @Test
    void everyLineGetsThePrefixAndTheLastOneANewline() {
        byte[] in = "one\n\ntwo: é\nlast".getBytes(StandardCharsets.UTF_8);
        assertEquals(
                "[rank2]: one\n[rank2]: \n[rank2]: two: é\n[rank2]: last\n", copy(in, "[rank2]: "));
        assertEquals("", copy(new byte[0], "[rank0]: "));
        assertEquals("a\n", copy("a\n".getBytes(StandardCharsets.UTF_8), ""));
    }

    @Test
    void aVeryLongLineIsSplitIntoPrefixedPieces() {
        int n = OutputPrefixer.MAX_LINE_BYTES * 2 + 10;
        String out = copy(("x".repeat(n) + "\n").getBytes(StandardCharsets.UTF_8), "> ");
        String[] lines = out.split("\n");
        assertEquals(3, lines.length);
        assertEquals("> " + "x".repeat(OutputPrefixer.MAX_LINE_BYTES), lines[0]);
        assertEquals("> " + "x".repeat(10), lines[2]);
    }

    @Test
    void linesOfManyWorkersNeverInterleave() throws Exception {
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(sink, false, StandardCharsets.UTF_8);
        List<Thread> threads = new ArrayList<>();
        for (int w = 0; w < 4; ++w) {
            StringBuilder text = new StringBuilder();
            for (int i = 0; i < 2000; ++i) {
                text.append("worker ")
                        .append(w)
                        .append(" line ")
                        .append(i)
                        .append(" ")
                        .append("y".repeat(i % 50))
                        .append('\n');
            }
            // a stream returning odd-sized pieces, so lines arrive split across reads
            InputStream in =
                    new ByteArrayInputStream(text.toString().getBytes(StandardCharsets.UTF_8)) {
                        @Override
                        public synchronized int read(byte[] b, int off, int len) {
                            return super.read(b, off, Math.min(len, 7));
                        }
                    };
            Thread t = new Thread(new OutputPrefixer(in, out, "[rank" + w + "]: "));
            threads.add(t);
            t.start();
        }
        for (Thread t : threads) {
            t.join(20_000);
        }
        String[] lines = sink.toString(StandardCharsets.UTF_8).split("\n");
        assertEquals(8000, lines.length);
        for (String line : lines) {
            assertTrue(line.matches("\\[rank(\\d)]: worker \\1 line \\d+ y*"), line);
        }
    }
}
