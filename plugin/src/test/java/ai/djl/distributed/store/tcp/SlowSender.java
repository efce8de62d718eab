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
package ai.djl.distributed.store.tcp;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A client that sends part of a request, then stalls or trickles: what the server's budget on
 * partial requests and its read timeout are for. Writes that fail because the server closed the
 * connection are expected and ignored; {@link #closedWithin} tells whether it did.
 */
final class SlowSender implements AutoCloseable {

    private static final byte[] VALIDATE = {0, (byte) 0xCE, (byte) 0xF7, (byte) 0x85, 0x3C};

    private final Socket socket;
    private final OutputStream out;
    private final long startNanos = System.nanoTime();
    private Thread trickler;

    private SlowSender(int port) throws IOException {
        socket = new Socket("127.0.0.1", port);
        socket.setTcpNoDelay(true);
        out = socket.getOutputStream();
    }

    /**
     * Connects and sends a SET announcing a value of {@code valueBytes}, of which only {@code
     * sentBytes} follow.
     */
    static SlowSender partialSet(int port, long valueBytes, int sentBytes) throws IOException {
        SlowSender s = new SlowSender(port);
        ByteBuffer head = ByteBuffer.allocate(5 + 1 + 8 + 4 + 8).order(ByteOrder.LITTLE_ENDIAN);
        head.put(VALIDATE).put((byte) 1).putLong(4).put("/big".getBytes(StandardCharsets.UTF_8));
        head.putLong(valueBytes);
        s.send(head.array());
        s.send(new byte[sentBytes]);
        return s;
    }

    /** Connects and sends a GET whose key length stops after 3 of its 8 bytes. */
    static SlowSender partialHeader(int port) throws IOException {
        SlowSender s = new SlowSender(port);
        s.send(new byte[] {0, (byte) 0xCE, (byte) 0xF7, (byte) 0x85, 0x3C, 3, 4, 0, 0});
        return s;
    }

    /** Sends one more byte of the request every {@code every}, from a thread, until closed. */
    SlowSender trickle(Duration every) {
        trickler =
                new Thread(
                        () -> {
                            try {
                                while (true) {
                                    TimeUnit.NANOSECONDS.sleep(every.toNanos());
                                    out.write(0);
                                    out.flush();
                                }
                            } catch (IOException | InterruptedException e) {
                                // the server closed the connection, or the test did
                            }
                        },
                        "trickle");
        trickler.setDaemon(true);
        trickler.start();
        return this;
    }

    private void send(byte[] bytes) {
        try {
            out.write(bytes);
            out.flush();
        } catch (IOException e) {
            // the server closed the connection early: closedWithin says so
        }
    }

    /**
     * Returns whether the server closes the connection (end of stream or reset) within a time.
     *
     * @param limit how long to wait
     * @return {@code true} if closed, {@code false} if still open after {@code limit}
     */
    boolean closedWithin(Duration limit) throws IOException {
        socket.setSoTimeout((int) limit.toMillis());
        InputStream in = socket.getInputStream();
        try {
            return in.read() == -1;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (IOException e) {
            return true; // reset
        }
    }

    /**
     * Returns how long ago this sender connected.
     *
     * @return milliseconds since it started sending
     */
    long millisSinceStart() {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
    }

    @Override
    public void close() throws IOException {
        socket.close();
        if (trickler != null) {
            trickler.interrupt();
        }
    }
}
