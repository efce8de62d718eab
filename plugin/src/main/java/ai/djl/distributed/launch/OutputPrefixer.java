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
 * {@code [rank0]: }. Lines of different workers never interleave: each line is written and flushed
 * while holding the target stream's monitor, the lock {@link PrintStream}'s own methods take. Bytes
 * are copied as they are (no charset decoding); a line longer than {@link #MAX_LINE_BYTES} is split
 * into prefixed pieces, and a last line without a newline gets one.
 *
 * <p>{@link #run()} blocks until the worker closes the stream; it is meant to run on its own
 * thread.
 */
final class OutputPrefixer implements Runnable {

    /** The longest piece of a line held before it is written anyway. */
    static final int MAX_LINE_BYTES = 64 * 1024;

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
        byte[] buf = new byte[8192];
        try {
            int n;
            while ((n = in.read(buf)) >= 0) {
                int start = 0;
                for (int i = 0; i < n; ++i) {
                    if (buf[i] == '\n') {
                        line.write(buf, start, i - start);
                        emit();
                        start = i + 1;
                    } else if (line.size() + (i + 1 - start) >= MAX_LINE_BYTES) {
                        line.write(buf, start, i + 1 - start);
                        emit();
                        start = i + 1;
                    }
                }
                line.write(buf, start, n - start);
            }
        } catch (IOException e) {
            // the stream is closed once the worker is gone and stopped: keep what was read
        } finally {
            if (line.size() > 0) {
                emit();
            }
            try {
                in.close();
            } catch (IOException e) {
                // nothing more to read either way
            }
        }
    }

    private void emit() {
        synchronized (out) {
            out.write(prefix, 0, prefix.length);
            out.write(line.toByteArray(), 0, line.size());
            out.write('\n');
            out.flush();
        }
        line.reset();
    }
}
