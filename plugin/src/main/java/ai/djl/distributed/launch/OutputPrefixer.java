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

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * Copies one worker stream to one of the launcher's, a whole line at a time with a prefix such as
 * {@code [rank0]: }. Lines of different workers never interleave: each piece is written and flushed
 * while holding the target stream's monitor, the lock {@link PrintStream}'s own methods take, and
 * each piece starts with the prefix and ends with {@code \n} or {@code \r}. Bytes are copied as
 * they are (no charset decoding); a line longer than {@link #MAX_LINE_BYTES} is split into prefixed
 * pieces, and a last line without a newline gets one.
 *
 * <p>A carriage return ends a piece too, kept as it is: a progress bar (DJL's {@code ProgressBar})
 * redraws its line with {@code \r} and writes no newline until it is done. Text that follows a
 * {@code \r} is such a redraw, and is written at the end of each read rather than held until a
 * newline, as {@code prefix + text + \r}: so the bar is live on a terminal, each redraw shows the
 * prefix, and the cursor is back at the start of the line for whatever another worker writes. A
 * redraw that grows before its end is written again, whole; {@code \r\n} ends a line as {@code \n}
 * does.
 *
 * <p>{@link #run()} blocks until the worker closes the stream; it is meant to run on its own
 * thread.
 */
final class OutputPrefixer implements Runnable {

    /** The longest piece of a line held before it is written anyway. */
    static final int MAX_LINE_BYTES = 64 * 1024;

    private static final byte[] LF = {'\n'};
    private static final byte[] CR = {'\r'};
    private static final byte[] CRLF = {'\r', '\n'};

    private final InputStream in;
    private final PrintStream out;
    private final byte[] prefix;
    private final ByteArrayOutputStream line = new ByteArrayOutputStream(256);

    /**
     * Creates the copier.
     *
     * @param in the worker's stream
     * @param out where its lines go
     * @param prefix what starts every line
     */
    OutputPrefixer(InputStream in, PrintStream out, String prefix) {
        this.in = in;
        this.out = out;
        this.prefix = prefix.getBytes(StandardCharsets.UTF_8);
    }

    /** Copies until end of stream (or a read error, when the worker is gone), then returns. */
    @Override
    public void run() {
        new Copy().run();
    }

    /** One copy's state, on the thread that runs it alone. */
    private final class Copy {

        // The piece being read follows a '\r': a redraw, written at the end of each read.
        private boolean redraw;
        // How many bytes of the piece were written already (as prefix + bytes + '\r').
        private int shown;
        // A '\r' ended the last read: the next byte tells whether it ends a line ("\r\n").
        private boolean pendingCr;

        void run() {
            byte[] buf = new byte[8192];
            try {
                int n;
                while ((n = in.read(buf)) >= 0) {
                    int start = 0;
                    if (pendingCr && n > 0) {
                        pendingCr = false;
                        if (buf[0] == '\n') {
                            lineEnd(CRLF); // "\r\n" cut between two reads
                            start = 1;
                        } else {
                            carriageReturn();
                        }
                    }
                    for (int i = start; i < n; ++i) {
                        if (buf[i] == '\n') {
                            line.write(buf, start, i - start);
                            lineEnd(LF);
                            start = i + 1;
                        } else if (buf[i] == '\r') {
                            line.write(buf, start, i - start);
                            start = i + 1;
                            if (i + 1 == n) {
                                pendingCr = true; // decided by the next read
                            } else if (buf[i + 1] == '\n') {
                                lineEnd(CRLF); // a line ended the Windows way, not a redraw
                                start = ++i + 1;
                            } else {
                                carriageReturn();
                            }
                        } else if (line.size() + (i + 1 - start) >= MAX_LINE_BYTES) {
                            line.write(buf, start, i + 1 - start);
                            emit(LF);
                            shown = 0;
                            start = i + 1;
                        }
                    }
                    line.write(buf, start, n - start);
                    if (redraw && !pendingCr && line.size() > shown) {
                        // the redraw so far, kept, as more of it may follow
                        write(CR);
                        shown = line.size();
                    }
                }
            } catch (IOException e) {
                // the stream is closed once the worker is gone and stopped: keep what was read
            } finally {
                if (line.size() > 0) {
                    emit(LF); // a last line (or a last '\r'-ended piece) gets a newline
                }
                try {
                    in.close();
                } catch (IOException e) {
                    // nothing more to read either way
                }
            }
        }

        // The line in hand ends: written, whole, with its end.
        private void lineEnd(byte[] end) {
            emit(end);
            redraw = false;
            shown = 0;
        }

        // A '\r' that ends a piece: the piece written with it unless written whole already (or
        // empty); what follows is a redraw.
        private void carriageReturn() {
            if (line.size() > shown) {
                emit(CR);
            } else {
                line.reset();
            }
            redraw = true;
            shown = 0;
        }
    }

    // The piece, ended by `end`; the next piece starts empty.
    private void emit(byte[] end) {
        write(end);
        line.reset();
    }

    private void write(byte[] end) {
        synchronized (out) {
            out.write(prefix, 0, prefix.length);
            out.write(line.toByteArray(), 0, line.size());
            out.write(end, 0, end.length);
            out.flush();
        }
    }
}
