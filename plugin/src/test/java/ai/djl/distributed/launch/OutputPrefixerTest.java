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
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** Whole prefixed lines, never interleaved, whatever the worker writes. */
@Timeout(30)
class OutputPrefixerTest {

    private static String copy(byte[] input, String prefix) {
        return copy(new ByteArrayInputStream(input), prefix);
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

    /**
     * Copies each text through its own prefixer, {@code [rankW]: }, on its own thread, all into one
     * stream; each reads at most 7 bytes at a time, so lines arrive split across reads.
     *
     * @return what the stream got
     */
    private static String copyConcurrently(List<String> texts) throws InterruptedException {
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(sink, false, StandardCharsets.UTF_8);
        List<Thread> threads = new ArrayList<>();
        for (int w = 0; w < texts.size(); ++w) {
            InputStream in =
                    new ByteArrayInputStream(texts.get(w).getBytes(StandardCharsets.UTF_8)) {
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
        return sink.toString(StandardCharsets.UTF_8);
    }

    @Test
    void linesOfManyWorkersNeverInterleave() throws Exception {
        List<String> texts = new ArrayList<>();
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
            texts.add(text.toString());
        }
        String[] lines = copyConcurrently(texts).split("\n");
        assertEquals(8000, lines.length);
        for (String line : lines) {
            assertTrue(line.matches("\\[rank(\\d)]: worker \\1 line \\d+ y*"), line);
        }
    }

    /** A stream that returns one of the given pieces per read, as a worker's writes arrive. */
    private static InputStream pieces(String... pieces) {
        return new InputStream() {
            private int next;

            @Override
            public int read() {
                throw new UnsupportedOperationException();
            }

            @Override
            public int read(byte[] b, int off, int len) {
                if (next == pieces.length) {
                    return -1;
                }
                byte[] piece = pieces[next++].getBytes(StandardCharsets.UTF_8);
                System.arraycopy(piece, 0, b, off, piece.length); // each piece is short
                return piece.length;
            }
        };
    }

    private static String copy(InputStream in, String prefix) {
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(sink, false, StandardCharsets.UTF_8);
        new OutputPrefixer(in, out, prefix).run();
        return sink.toString(StandardCharsets.UTF_8);
    }

    /**
     * DJL's progress bar writes "\rTraining: ..." for each step and a newline only at its end: each
     * redraw is written, prefixed and ended by its '\r', as it arrives.
     */
    @Test
    void eachRedrawOfAProgressBarIsWrittenPrefixed() {
        String out =
                copy(
                        pieces(
                                "\rTraining:  3% step 1",
                                "\rTraining:  6% step 2",
                                "\rTraining: 100% step 30",
                                "\n",
                                "done\n"),
                        "[rank0]: ");
        assertEquals(
                "[rank0]: Training:  3% step 1\r"
                        + "[rank0]: Training:  6% step 2\r"
                        + "[rank0]: Training: 100% step 30\r"
                        + "[rank0]: Training: 100% step 30\n"
                        + "[rank0]: done\n",
                out);
        // a redraw split across reads is written again, whole; \r\n ends a line
        assertEquals(
                "[p] ab\r[p] abcd\r[p] x\r\n[p] y\r[p] z\r[p] z\n",
                copy(pieces("\rab", "cd", "\r", "x\r\n", "y\r", "z"), "[p] "));
    }

    @Test
    void aLineEndCutBetweenItsTwoBytesIsStillALineEnd() {
        // a block-buffered writer's pipe read can end between \r and \n: one line, not a redraw
        // followed by an empty line, which another rank's line could land between
        assertEquals(
                "[p] abc\r\n[p] def\n[p] g\n", copy(pieces("abc\r", "\ndef\n", "g\r"), "[p] "));
    }

    /** A redraw reaches the terminal before the worker writes its next newline. */
    @Test
    void aRedrawIsWrittenWithoutWaitingForANewline() throws Exception {
        PipedOutputStream worker = new PipedOutputStream();
        PipedInputStream in = new PipedInputStream(worker);
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(sink, false, StandardCharsets.UTF_8);
        Thread copier = new Thread(new OutputPrefixer(in, out, "[rank0]: "));
        copier.start();
        try {
            worker.write("\rTraining: 50%".getBytes(StandardCharsets.UTF_8));
            worker.flush();
            long deadline = System.nanoTime() + 10_000_000_000L;
            String seen;
            do {
                Thread.sleep(10);
                synchronized (out) {
                    seen = sink.toString(StandardCharsets.UTF_8);
                }
            } while (seen.isEmpty() && System.nanoTime() < deadline);
            assertEquals("[rank0]: Training: 50%\r", seen);
        } finally {
            worker.close();
            copier.join(10_000);
        }
        assertEquals(
                "[rank0]: Training: 50%\r[rank0]: Training: 50%\n",
                sink.toString(StandardCharsets.UTF_8));
    }

    /** Redraws of many workers, read in odd-sized pieces: each piece carries its own prefix. */
    @Test
    void redrawsOfManyWorkersNeverInterleave() throws Exception {
        List<String> texts = new ArrayList<>();
        for (int w = 0; w < 4; ++w) {
            StringBuilder text = new StringBuilder();
            for (int i = 0; i < 500; ++i) {
                text.append("\rworker ").append(w).append(" step ").append(i);
                if (i % 100 == 99) {
                    text.append("\nworker ").append(w).append(" line ").append(i).append('\n');
                }
            }
            texts.add(text.toString());
        }
        String all = copyConcurrently(texts);
        int lines = 0;
        for (String piece : all.split("(?<=[\r\n])")) {
            assertTrue(piece.matches("\\[rank\\d]: [a-z0-9 ]*[\r\n]"), piece);
            // a redraw may be written in part first, then whole: "wor", "worker 1 step 7"
            String rank = piece.substring(5, 6);
            String text = piece.substring(9, piece.length() - 1);
            String own = "worker " + rank + " ";
            assertTrue(
                    own.startsWith(text) || text.startsWith(own), "worker " + rank + ": " + piece);
            if (piece.matches("\\[rank\\d]: worker \\d line \\d+\n")) {
                ++lines;
            }
        }
        assertEquals(20, lines);
    }
}
