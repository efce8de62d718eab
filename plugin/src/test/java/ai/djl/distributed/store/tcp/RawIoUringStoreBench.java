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

import com.sun.jna.LastErrorException;
import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Platform;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.IoEvent;
import io.netty.channel.IoEventLoop;
import io.netty.channel.IoRegistration;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.uring.IoUring;
import io.netty.channel.uring.IoUringIoEvent;
import io.netty.channel.uring.IoUringIoHandle;
import io.netty.channel.uring.IoUringIoHandler;
import io.netty.channel.uring.IoUringIoOps;
import io.netty.util.concurrent.DefaultThreadFactory;

import java.nio.charset.StandardCharsets;

/**
 * A measuring device, not a server: the store's fast requests served straight from Netty 4.2's
 * io_uring handles ({@link IoUringIoHandle}, {@link IoUringIoOps}), without a channel, its pipeline
 * or its outbound buffer, over the real {@link StoreState}. It sizes what a shorter request path
 * would save against {@link TcpStoreServer} (docs/PERFORMANCE.md, issue 19, session 22). It speaks
 * only VALIDATE, PING, SET, GET, ADD and a WAIT on one key that exists, which is what {@code
 * bench/store_load.c} and PyTorch's {@code torch_store_bench.py} send; anything else closes the
 * connection. No limits, timeouts, authentication or back-pressure: never expose it.
 *
 * <p>Run it as the server would be run ({@code bin/djl-dist}'s store-server JVM options), one event
 * loop, until killed:
 *
 * <pre>
 * mvn -q -pl plugin test-compile dependency:build-classpath -Dmdep.outputFile=target/cp.txt
 * java $STORE_SERVER_OPTS -cp plugin/target/test-classes:plugin/target/classes:$(cat plugin/target/cp.txt) \
 *     ai.djl.distributed.store.tcp.RawIoUringStoreBench PORT
 * </pre>
 */
public final class RawIoUringStoreBench {

    // io_uring opcodes (linux/io_uring.h): Netty's own constants and factories are package-private
    private static final byte IORING_OP_ACCEPT = 13;
    private static final byte IORING_OP_SEND = 26;
    private static final byte IORING_OP_RECV = 27;
    // arm the socket's poll before trying the read: a request's socket is empty when it is re-armed
    private static final short IORING_RECVSEND_POLL_FIRST = 1;
    private static final int MSG_NOSIGNAL = 0x4000;
    private static final int BUFFER = 64 * 1024;

    private static final StoreState STATE = new StoreState();
    private static final byte[] EMPTY = new byte[0];

    private RawIoUringStoreBench() {}

    /**
     * Serves on 127.0.0.1:{@code args[0]} until the process is killed.
     *
     * @param args the port
     * @throws Exception if the port cannot be bound or io_uring is not available
     */
    public static void main(String[] args) throws Exception {
        IoUring.ensureAvailability();
        int port = Integer.parseInt(args[0]);
        MultiThreadIoEventLoopGroup group =
                new MultiThreadIoEventLoopGroup(
                        1,
                        new DefaultThreadFactory("djl-store-server", true),
                        IoUringIoHandler.newFactory());
        IoEventLoop loop = group.next();
        Acceptor acceptor = new Acceptor(loop, listen(port));
        IoRegistration registration = loop.register(acceptor).sync().getNow();
        loop.execute(() -> acceptor.start(registration));
        System.out.println("listening on 127.0.0.1:" + port); // the scripts wait for this line
        Thread.sleep(Long.MAX_VALUE);
    }

    // A loopback listener with TCP_NODELAY, which Linux copies to every accepted socket.
    private static int listen(int port) {
        Native.register(Libc.class, NativeLibrary.getInstance(Platform.C_LIBRARY_NAME));
        int fd = Libc.socket(2 /* AF_INET */, 1 | 0x80000 /* SOCK_STREAM | SOCK_CLOEXEC */, 0);
        Libc.setsockopt(fd, 1 /* SOL_SOCKET */, 2 /* SO_REUSEADDR */, new int[] {1}, 4);
        Libc.setsockopt(fd, 6 /* IPPROTO_TCP */, 1 /* TCP_NODELAY */, new int[] {1}, 4);
        byte[] address = new byte[16]; // sockaddr_in: family (host order), port, address (network)
        address[0] = 2;
        address[2] = (byte) (port >> 8);
        address[3] = (byte) port;
        address[4] = 127;
        address[7] = 1;
        Libc.bind(fd, address, address.length);
        Libc.listen(fd, 4096);
        return fd;
    }

    private static IoUringIoOps op(
            byte opcode, short ioPrio, int fd, long address, int length, int flags) {
        // completions are told apart by their opcode: the data field stays 0
        return new IoUringIoOps(
                opcode, (byte) 0, ioPrio, fd, 0L, address, length, flags, 0L, (short) 0, (short) 0,
                0, 0L);
    }

    /** Accepts on the listening socket and registers each connection on the same loop. */
    private static final class Acceptor implements IoUringIoHandle {
        private final IoEventLoop loop;
        private final int fd;

        Acceptor(IoEventLoop loop, int fd) {
            this.loop = loop;
            this.fd = fd;
        }

        void start(IoRegistration registration) {
            registration.submit(op(IORING_OP_ACCEPT, (short) 0, fd, 0L, 0, 0));
        }

        @Override
        public void handle(IoRegistration registration, IoEvent event) {
            int accepted = ((IoUringIoEvent) event).res();
            if (accepted >= 0) {
                Connection connection = new Connection(accepted);
                loop.register(connection)
                        .addListener(f -> connection.start((IoRegistration) f.getNow()));
            }
            start(registration);
        }

        @Override
        public void close() {}
    }

    /** One client: a receive always armed, replies sent as soon as the loop submits. */
    private static final class Connection implements IoUringIoHandle {
        private final int fd;
        private final ByteBuf in = Unpooled.directBuffer(BUFFER);
        private final ByteBuf out = Unpooled.directBuffer(BUFFER);
        private IoRegistration registration;
        private boolean sending;

        Connection(int fd) {
            this.fd = fd;
        }

        void start(IoRegistration registration) {
            this.registration = registration;
            receive();
        }

        private void receive() {
            long at = in.memoryAddress() + in.writerIndex();
            registration.submit(
                    op(IORING_OP_RECV, IORING_RECVSEND_POLL_FIRST, fd, at, in.writableBytes(), 0));
        }

        private void send() {
            sending = true;
            long at = out.memoryAddress() + out.readerIndex();
            registration.submit(
                    op(IORING_OP_SEND, (short) 0, fd, at, out.readableBytes(), MSG_NOSIGNAL));
        }

        @Override
        public void handle(IoRegistration registration, IoEvent event) {
            IoUringIoEvent completion = (IoUringIoEvent) event;
            int result = completion.res();
            if (completion.opcode() == IORING_OP_RECV) {
                if (result <= 0 || !serve(result)) {
                    registration.cancel();
                    return;
                }
                in.discardSomeReadBytes();
                receive();
                if (!sending && out.isReadable()) {
                    send();
                }
            } else if (completion.opcode() == IORING_OP_SEND) {
                sending = false;
                if (result < 0) {
                    registration.cancel();
                    return;
                }
                out.skipBytes(result);
                if (out.isReadable()) {
                    send();
                } else {
                    out.clear();
                }
            }
        }

        // Serves every whole request in the buffer; false for a request this device cannot serve.
        private boolean serve(int received) {
            in.writerIndex(in.writerIndex() + received);
            while (true) {
                int at = in.readerIndex();
                int end = in.writerIndex();
                if (end - at < 5) {
                    return true;
                }
                int opcode = in.getUnsignedByte(at);
                if (opcode == StoreOpcode.VALIDATE.code() || opcode == StoreOpcode.PING.code()) {
                    if (opcode == StoreOpcode.PING.code()) {
                        out.writeInt(in.getInt(at + 1)); // the nonce, echoed
                    }
                    in.readerIndex(at + 5);
                    continue;
                }
                // WAIT names how many keys it has: this device takes one
                int keyAt = opcode == StoreOpcode.WAIT.code() ? at + 17 : at + 9;
                if (end < keyAt) {
                    return true;
                }
                int keyLength = (int) in.getLongLE(keyAt - Long.BYTES);
                int next = keyAt + keyLength;
                if (end < next) {
                    return true;
                }
                String key = in.toString(keyAt, keyLength, StandardCharsets.ISO_8859_1);
                if (opcode == StoreOpcode.SET.code()) {
                    if (end - next < Long.BYTES) {
                        return true;
                    }
                    long valueLength = in.getLongLE(next);
                    if (end - next - Long.BYTES < valueLength) {
                        return true;
                    }
                    byte[] value = new byte[(int) valueLength];
                    in.getBytes(next + Long.BYTES, value);
                    in.readerIndex(next + Long.BYTES + value.length);
                    STATE.set(key, value);
                } else if (opcode == StoreOpcode.GET.code()) {
                    in.readerIndex(next);
                    byte[] value = STATE.get(key);
                    value = value == null ? EMPTY : value;
                    out.writeLongLE(value.length).writeBytes(value);
                } else if (opcode == StoreOpcode.ADD.code()) {
                    if (end - next < Long.BYTES) {
                        return true;
                    }
                    long delta = in.getLongLE(next);
                    in.readerIndex(next + Long.BYTES);
                    out.writeLongLE(STATE.add(key, delta));
                } else if (opcode == StoreOpcode.WAIT.code()
                        && in.getLongLE(at + 1) == 1
                        && STATE.get(key) != null) {
                    in.readerIndex(next);
                    out.writeByte(StoreProtocol.STOP_WAITING);
                } else {
                    return false;
                }
            }
        }

        @Override
        public void unregistered() {
            in.release();
            out.release();
            Libc.close(fd);
        }

        @Override
        public void close() {}
    }

    /** The libc calls for the listener, bound directly (JNA's direct mapping). */
    @SuppressWarnings("checkstyle:MethodName")
    private static final class Libc {
        private Libc() {}

        static native int socket(int domain, int type, int protocol) throws LastErrorException;

        static native int setsockopt(int fd, int level, int name, int[] value, int length)
                throws LastErrorException;

        static native int bind(int fd, byte[] address, int length) throws LastErrorException;

        static native int listen(int fd, int backlog) throws LastErrorException;

        static native int close(int fd);
    }
}
