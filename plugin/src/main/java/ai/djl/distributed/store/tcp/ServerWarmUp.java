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

import ai.djl.distributed.store.StoreException;

import io.netty.channel.Channel;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.util.concurrent.GlobalEventExecutor;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Warms a fresh {@link TcpStoreServer} up before it is handed out: a few loopback clients run a
 * closed-loop load of the common queries (SET, GET, ADD, CHECK, WAIT, COMPARE_SET, MULTI_GET,
 * DELETE, GETNUMKEYS, large values), and bursts of short connections as a job's rendezvous makes,
 * through a second listener on the server's own event loops and handlers, against a scratch key
 * space, until the JIT has compiled that path (no compilation for a moment) or the warm-up's time
 * is up. The first real client then meets compiled code. The listener and its connections are
 * closed before the server's builder returns; the server's keys are never touched.
 */
final class ServerWarmUp {

    private static final int CLIENTS = 4;
    private static final int ROUNDS = 512;
    private static final long SETTLE_MILLIS = 100;
    private static final int PIPELINED = 32;
    private static final int BURST = 64;
    // 1,024 connections: with 4 (256), the listener's own path still compiled in the first
    // rendezvous
    private static final int LAST_BURSTS = 16;

    private ServerWarmUp() {}

    /**
     * Runs the warm-up for the builder's duration, blocking the caller.
     *
     * @throws StoreException if the warm-up load fails; its server logs that and serves without
     */
    static void run(TcpStoreServer server, TcpStoreServer.Builder builder) {
        ChannelGroup connections = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
        Set<IoUringConnection> direct = ConcurrentHashMap.newKeySet();
        Channel listener =
                server.bind(
                        builder,
                        "127.0.0.1",
                        0,
                        new StoreState(),
                        new MemoryBudget(Long.MAX_VALUE),
                        new MemoryBudget(Long.MAX_VALUE),
                        connections,
                        direct,
                        null, // the warm-up's clients hold no secret
                        null); // and speak no TLS
        int port = ((InetSocketAddress) listener.localAddress()).getPort();
        long start = System.nanoTime();
        AtomicLong deadline = new AtomicLong(start + builder.warmUpNanos());
        List<Thread> threads = new ArrayList<>(CLIENTS);
        Throwable[] failure = new Throwable[1];
        try {
            for (int i = 0; i < CLIENTS; ++i) {
                int id = i;
                Thread t =
                        new Thread(
                                () -> {
                                    try {
                                        load(port, id, deadline);
                                    } catch (IOException | RuntimeException e) {
                                        synchronized (failure) {
                                            failure[0] = e;
                                        }
                                    }
                                },
                                "djl-store-warm-up-" + i);
                t.setDaemon(true);
                t.start();
                threads.add(t);
            }
            long loadNanos = builder.warmUpNanos() - builder.warmUpNanos() / 5;
            settle(start, loadNanos, deadline);
            for (Thread t : threads) {
                // the clients stop at the deadline; their sockets time out 5 s after it at most
                t.join(10_000);
            }
            lastBursts(port, start + builder.warmUpNanos(), failure);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StoreException("interrupted while warming the store server up", e);
        } finally {
            listener.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
            IoUringConnection.closeAll(direct, 5000);
            connections.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
        }
        synchronized (failure) {
            if (failure[0] != null) {
                throw new StoreException("a warm-up client failed: " + failure[0], failure[0]);
            }
        }
    }

    // One client: connections of a few hundred rounds each, each followed by a burst of short
    // ones, until the deadline.
    private static void load(int port, int id, AtomicLong deadline) throws IOException {
        for (int n = 0; System.nanoTime() < deadline.get(); ++n) {
            connection(port, id, deadline);
            if (System.nanoTime() < deadline.get()) {
                burst(port, id, n);
            }
        }
    }

    /**
     * A job's rendezvous in miniature: {@link #BURST} connections at once, each sending VALIDATE,
     * an ADD and a WAIT on a key that the last of them then sets, and all closed. Without it, a
     * fresh server compiled its paths for accepting, setting up and closing a connection, and for
     * releasing many waiters at once, during the first rendezvous of thousands (500 methods, a
     * tenth of the server's CPU then).
     */
    private static void burst(int port, int id, int n) throws IOException {
        ByteBuffer buf = ByteBuffer.allocate(256).order(ByteOrder.LITTLE_ENDIAN);
        String counter = "/warm-up/burst/" + id + "/" + n;
        String done = counter + "/done";
        List<Socket> sockets = new ArrayList<>(BURST);
        try {
            for (int i = 0; i < BURST; ++i) {
                Socket socket = open(port, buf);
                sockets.add(socket);
                op(buf, StoreOpcode.ADD);
                str(buf, counter);
                buf.putLong(1);
                op(buf, StoreOpcode.WAIT);
                buf.putLong(1);
                str(buf, done);
                send(socket.getOutputStream(), buf);
            }
            for (Socket socket : sockets) {
                new DataInputStream(socket.getInputStream()).readLong(); // the ADD's count
            }
            op(buf, StoreOpcode.SET);
            str(buf, done);
            str(buf, new byte[1]);
            send(sockets.get(BURST - 1).getOutputStream(), buf);
            for (Socket socket : sockets) {
                if (socket.getInputStream().read() != StoreProtocol.STOP_WAITING) {
                    throw new IOException("warm-up WAIT on " + done + " not released");
                }
            }
        } finally {
            for (Socket socket : sockets) {
                socket.close();
            }
        }
    }

    /**
     * A few bursts more once the load has stopped, then a wait for what they compile, until the
     * warm-up's end. Connections are set up and closed far fewer times in the load than requests
     * are served, and while the load's own compiles queue up, HotSpot raises its thresholds with
     * the queue: so the paths of accepting, setting up and closing a connection had run hundreds of
     * times without being compiled, and a fresh server compiled them (and about a hundred more
     * methods) in its first rendezvous. With the queue empty, these bursts have them compiled
     * (about 70 methods are then left for that rendezvous, against 120 to 170: the allocator's and
     * the maps' growth to thousands of connections, which no warm-up of this size reaches).
     */
    private static void lastBursts(int port, long end, Throwable[] failure)
            throws InterruptedException {
        synchronized (failure) {
            if (failure[0] != null) {
                return;
            }
        }
        try {
            for (int i = 0; i < LAST_BURSTS && System.nanoTime() < end; ++i) {
                burst(port, i, -1);
            }
        } catch (IOException | RuntimeException e) {
            synchronized (failure) {
                failure[0] = e;
            }
            return;
        }
        CompilationMXBean jit = monitoredJit();
        if (jit != null) {
            awaitQuietJit(jit, end, SETTLE_MILLIS / 4);
        }
    }

    /**
     * Ends the load once the JIT has settled: after at least a third of the load's share of the
     * warm-up (four fifths; the last bursts have the rest), as soon as the compilers spent under a
     * tenth of a {@link #SETTLE_MILLIS} window compiling (compiles lag the load by hundreds of
     * milliseconds on a busy machine, then trickle on for rare tier changes), and at the end of
     * that share at the latest.
     */
    private static void settle(long start, long warmUpNanos, AtomicLong deadline)
            throws InterruptedException {
        CompilationMXBean jit = monitoredJit();
        Thread.sleep(TimeUnit.NANOSECONDS.toMillis(jit != null ? warmUpNanos / 3 : warmUpNanos));
        if (jit != null) {
            awaitQuietJit(jit, start + warmUpNanos, SETTLE_MILLIS);
        }
        deadline.set(System.nanoTime());
    }

    // The JIT's bean where it reports its compile time, else null (then the warm-up runs its time).
    private static CompilationMXBean monitoredJit() {
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        return jit != null && jit.isCompilationTimeMonitoringSupported() ? jit : null;
    }

    // Returns once the compilers spent under a tenth of a window compiling, or at end.
    private static void awaitQuietJit(CompilationMXBean jit, long end, long windowMillis)
            throws InterruptedException {
        while (end - System.nanoTime() > 0) {
            long before = jit.getTotalCompilationTime();
            Thread.sleep(windowMillis);
            if (jit.getTotalCompilationTime() - before < windowMillis / 10) {
                return;
            }
        }
    }

    private static Socket open(int port, ByteBuffer buf) throws IOException {
        Socket socket = new Socket();
        try {
            socket.setTcpNoDelay(true);
            socket.setSoTimeout(5000);
            socket.connect(new InetSocketAddress("127.0.0.1", port), 5000);
            buf.put((byte) StoreOpcode.VALIDATE.code()).putInt(StoreProtocol.MAGIC);
            send(socket.getOutputStream(), buf);
            return socket;
        } catch (IOException e) {
            socket.close();
            throw e;
        }
    }

    // Rounds of SET+GET (together, apart, or split) and ADD; every 16th round the rarer queries,
    // and a WAIT on a second connection that this one's SET releases.
    private static void connection(int port, int id, AtomicLong deadline) throws IOException {
        ByteBuffer buf = ByteBuffer.allocate(8192).order(ByteOrder.LITTLE_ENDIAN);
        try (Socket socket = open(port, buf);
                Socket waiter = open(port, buf)) {
            OutputStream out = socket.getOutputStream();
            DataInputStream in = new DataInputStream(socket.getInputStream());
            String key = "/warm-up/" + id;
            String counter = "/warm-up/counter";
            byte[] small = "01234567".getBytes(StandardCharsets.US_ASCII);
            byte[] medium = new byte[64];
            byte[] large = new byte[1024];
            byte[] reply = new byte[64 + large.length];
            for (int round = 0; round < ROUNDS && System.nanoTime() < deadline.get(); ++round) {
                byte[] value = round % 64 == 0 ? large : round % 2 == 0 ? small : medium;
                if (round % 4 == 3) {
                    pipelined(buf, out, in, key, counter, value, reply);
                    continue;
                }
                op(buf, StoreOpcode.SET);
                str(buf, key);
                str(buf, value);
                if (round % 4 == 1) {
                    send(out, buf); // alone, as PyTorch's client sends it: a read with no reply
                } else if (round % 4 == 2) {
                    split(out, buf); // a request over two reads: the partial-request path
                }
                // PyTorch's client WAITs before each GET
                op(buf, StoreOpcode.WAIT);
                buf.putLong(1);
                str(buf, key);
                op(buf, StoreOpcode.GET);
                str(buf, key);
                send(out, buf);
                in.readFully(reply, 0, 1 + 8 + value.length);
                op(buf, StoreOpcode.ADD);
                str(buf, counter);
                buf.putLong(1);
                send(out, buf);
                in.readFully(reply, 0, 8);
                if (round % 16 == 0) {
                    rare(buf, out, in, key, reply);
                    released(buf, waiter, out, key + "/go/" + round);
                }
            }
        }
    }

    // Many requests in one write: the per-request path gets hot many times faster than the
    // per-read path, so the JIT reaches its final code within the warm-up.
    private static void pipelined(
            ByteBuffer buf,
            OutputStream out,
            DataInputStream in,
            String key,
            String counter,
            byte[] value,
            byte[] reply)
            throws IOException {
        int n = Math.min(PIPELINED, (buf.capacity() - 64) / (3 * key.length() + value.length + 64));
        for (int i = 0; i < n; ++i) {
            op(buf, StoreOpcode.SET);
            str(buf, key);
            str(buf, value);
            op(buf, StoreOpcode.GET);
            str(buf, key);
            op(buf, StoreOpcode.ADD);
            str(buf, counter);
            buf.putLong(1);
        }
        send(out, buf);
        for (int i = 0; i < n; ++i) {
            in.readFully(reply, 0, 8 + value.length + 8);
        }
    }

    // A WAIT on a missing key, released by a SET from the other connection.
    private static void released(ByteBuffer buf, Socket waiter, OutputStream out, String key)
            throws IOException {
        op(buf, StoreOpcode.WAIT);
        buf.putLong(1);
        str(buf, key);
        send(waiter.getOutputStream(), buf);
        op(buf, StoreOpcode.SET);
        str(buf, key);
        str(buf, new byte[1]);
        send(out, buf);
        if (waiter.getInputStream().read() != StoreProtocol.STOP_WAITING) {
            throw new IOException("warm-up WAIT on " + key + " not released");
        }
    }

    // Sends all but the last byte, then that byte.
    private static void split(OutputStream out, ByteBuffer buf) throws IOException {
        out.write(buf.array(), 0, buf.position() - 1);
        out.flush();
        out.write(buf.array(), buf.position() - 1, 1);
        out.flush();
        buf.clear();
    }

    private static void rare(
            ByteBuffer buf, OutputStream out, DataInputStream in, String key, byte[] reply)
            throws IOException {
        op(buf, StoreOpcode.CHECK);
        buf.putLong(1);
        str(buf, key);
        op(buf, StoreOpcode.WAIT);
        buf.putLong(1);
        str(buf, key);
        op(buf, StoreOpcode.GETNUMKEYS);
        op(buf, StoreOpcode.MULTI_GET);
        buf.putLong(1);
        str(buf, key);
        send(out, buf);
        in.readFully(reply, 0, 1 + 1 + 8);
        long length = Long.reverseBytes(in.readLong());
        in.readFully(reply, 0, (int) length);
        op(buf, StoreOpcode.COMPARE_SET);
        str(buf, key + "/cas");
        str(buf, new byte[0]);
        str(buf, key.getBytes(StandardCharsets.ISO_8859_1));
        op(buf, StoreOpcode.DELETE_KEY);
        str(buf, key + "/cas");
        op(buf, StoreOpcode.PING);
        buf.putInt(7);
        send(out, buf);
        in.readFully(reply, 0, 8 + key.length() + 8 + 4);
    }

    private static void op(ByteBuffer buf, StoreOpcode op) {
        buf.put((byte) op.code());
    }

    private static void str(ByteBuffer buf, String s) {
        str(buf, s.getBytes(StandardCharsets.ISO_8859_1));
    }

    private static void str(ByteBuffer buf, byte[] b) {
        buf.putLong(b.length).put(b);
    }

    private static void send(OutputStream out, ByteBuffer buf) throws IOException {
        out.write(buf.array(), 0, buf.position());
        out.flush();
        buf.clear();
    }
}
