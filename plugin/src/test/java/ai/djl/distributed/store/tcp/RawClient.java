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

import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/** A blocking socket that writes and reads protocol bytes by hand, for wire-level tests. */
final class RawClient implements AutoCloseable {

    private final Socket socket;
    private final OutputStream out;
    private final DataInputStream in;

    RawClient(int port) throws IOException {
        socket = new Socket("127.0.0.1", port);
        socket.setSoTimeout(10_000);
        socket.setTcpNoDelay(true);
        // buffered and flushed before each read: a request leaves in one write, as PyTorch's
        // client sends it, so a server that closes early cannot break the test mid-request
        out = new BufferedOutputStream(socket.getOutputStream(), 1 << 16);
        in = new DataInputStream(socket.getInputStream());
    }

    RawClient u8(int v) throws IOException {
        out.write(v);
        return this;
    }

    RawClient raw(byte[] bytes) throws IOException {
        out.write(bytes);
        return this;
    }

    byte[] readBytes(int n) throws IOException {
        out.flush();
        byte[] b = new byte[n];
        in.readFully(b);
        return b;
    }

    RawClient u32(long v) throws IOException {
        out.write(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt((int) v).array());
        return this;
    }

    RawClient i64(long v) throws IOException {
        out.write(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(v).array());
        return this;
    }

    RawClient str(String s) throws IOException {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        i64(b.length);
        out.write(b);
        return this;
    }

    RawClient flush() throws IOException {
        out.flush();
        return this;
    }

    RawClient validate() throws IOException {
        return u8(0).u32(StoreProtocol.MAGIC);
    }

    int readU8() throws IOException {
        out.flush();
        return in.readUnsignedByte();
    }

    long readI64() throws IOException {
        out.flush();
        byte[] b = new byte[8];
        in.readFully(b);
        return ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).getLong();
    }

    long readU32() throws IOException {
        out.flush();
        byte[] b = new byte[4];
        in.readFully(b);
        return ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).getInt() & 0xFFFFFFFFL;
    }

    String readString() throws IOException {
        byte[] b = new byte[(int) readI64()];
        in.readFully(b);
        return new String(b, StandardCharsets.UTF_8);
    }

    /**
     * Reads one byte if one arrives within a short time.
     *
     * @param millis how long to wait
     * @return the byte, or -1 if none came (or the stream ended)
     */
    int readWithin(int millis) throws IOException {
        out.flush();
        socket.setSoTimeout(millis);
        try {
            return in.read();
        } catch (SocketTimeoutException e) {
            return -1;
        } finally {
            socket.setSoTimeout(10_000);
        }
    }

    /**
     * Returns whether the server closed the connection (EOF or reset) within the socket timeout.
     */
    boolean closedByServer() throws IOException {
        try {
            out.flush();
            return in.read() == -1;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (IOException e) {
            return true; // reset
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
