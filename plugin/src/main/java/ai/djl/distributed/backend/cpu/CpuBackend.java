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
package ai.djl.distributed.backend.cpu;

import static ai.djl.distributed.backend.cpu.transport.OpSignature.ALL_GATHER;
import static ai.djl.distributed.backend.cpu.transport.OpSignature.ALL_REDUCE;
import static ai.djl.distributed.backend.cpu.transport.OpSignature.ALL_TO_ALL;
import static ai.djl.distributed.backend.cpu.transport.OpSignature.BARRIER;
import static ai.djl.distributed.backend.cpu.transport.OpSignature.BROADCAST;
import static ai.djl.distributed.backend.cpu.transport.OpSignature.GATHER;
import static ai.djl.distributed.backend.cpu.transport.OpSignature.REDUCE;
import static ai.djl.distributed.backend.cpu.transport.OpSignature.REDUCE_SCATTER;
import static ai.djl.distributed.backend.cpu.transport.OpSignature.SCATTER;

import ai.djl.Device;
import ai.djl.distributed.CommunicationException;
import ai.djl.distributed.ReduceOp;
import ai.djl.distributed.Work;
import ai.djl.distributed.backend.Backend;
import ai.djl.distributed.backend.cpu.algorithm.AllReduce;
import ai.djl.distributed.backend.cpu.algorithm.Barrier;
import ai.djl.distributed.backend.cpu.algorithm.Broadcast;
import ai.djl.distributed.backend.cpu.algorithm.Exchange;
import ai.djl.distributed.backend.cpu.algorithm.Reduce;
import ai.djl.distributed.backend.cpu.algorithm.Ring;
import ai.djl.distributed.backend.cpu.reduce.TorchReductions;
import ai.djl.distributed.backend.cpu.transport.OpSignature;
import ai.djl.distributed.backend.cpu.transport.Transport;
import ai.djl.distributed.memory.NdRegion;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.List;

/**
 * The pure-Java CPU backend: collectives on CPU NDArrays, in place on their memory, over a {@link
 * Transport} between the group's processes. Collectives run one at a time, in call order, on the
 * backend's operation thread ({@link CollectiveRunner}); point-to-point messages go straight to the
 * transport, so that an {@code isend} and an {@code irecv} posted together never wait on each
 * other.
 *
 * <p>Thread-safe. See {@link Backend} for ownership and ordering.
 */
public final class CpuBackend implements Backend {

    /** This backend's name; {@code "gloo"} is accepted as an alias. */
    public static final String NAME = "cpu";

    private final Transport transport;
    private final CollectiveRunner runner;
    private final PointToPoint p2p;
    private final NDManager manager; // for libtorch's reductions on wrapped buffers
    private final TorchReductions kernels;
    private final String transportName;

    /**
     * Creates the backend over a connected transport; it owns and closes the transport.
     *
     * @param transport the group's transport
     * @param timeout the bound of every operation, from when it starts
     */
    public CpuBackend(Transport transport, Duration timeout) {
        this(transport, timeout, transport.getClass().getSimpleName());
    }

    /**
     * Creates the backend over a connected transport; it owns and closes the transport.
     *
     * @param transport the group's transport
     * @param timeout the bound of every operation, from when it starts
     * @param transportName how {@link #toString()} names the transport
     */
    public CpuBackend(Transport transport, Duration timeout, String transportName) {
        this.transportName = transportName;
        this.transport = transport;
        NDManager m = null;
        try {
            m = NDManager.newBaseManager(Device.cpu()); // fails where libtorch cannot load
            this.kernels = new TorchReductions(m); // fails where the engine is not PyTorch
        } catch (RuntimeException | Error e) {
            // The transport is connected: its threads and sockets go, and the peers, whose groups
            // formed, hear why now instead of at their first collective's deadline.
            if (m != null) {
                m.close();
            }
            transport.abort(
                    new CommunicationException(
                            "rank "
                                    + transport.getRank()
                                    + " could not start its CPU backend: "
                                    + e,
                            transport.getRank(),
                            e));
            transport.close();
            throw e;
        }
        this.manager = m;
        this.runner = new CollectiveRunner(transport, timeout, kernels);
        this.p2p = new PointToPoint(transport, timeout);
    }

    /** {@inheritDoc} */
    @Override
    public String getName() {
        return NAME;
    }

    /** {@inheritDoc} */
    @Override
    public Work broadcast(NDArray array, int root) {
        checkCpu(array);
        return runner.submit(
                sig(BROADCAST, array.getDataType(), null, root, array.size()),
                array.getDataType(),
                null,
                ctx -> {
                    NdRegion region = region(array);
                    Broadcast.run(ctx, region.buffer(), root);
                    region.writeBack();
                });
    }

    /** {@inheritDoc} */
    @Override
    public Work allReduce(List<NDArray> arrays, ReduceOp op) {
        DataType type = arrays.get(0).getDataType();
        int count = checkCpu(arrays);
        checkPackable("arrays", arrays);
        return runner.submit(
                sig(ALL_REDUCE, type, op, 0, count),
                type,
                op,
                ctx -> {
                    Packed packed = Packed.of(arrays, this);
                    ByteBuffer data = packed.buffer();
                    premultiply(op, type, data, count);
                    AllReduce.run(ctx, data, count);
                    finish(op, type, data, 0, count);
                    packed.unpack();
                });
    }

    /** {@inheritDoc} */
    @Override
    public Work reduce(NDArray array, int root, ReduceOp op) {
        DataType type = array.getDataType();
        int count = checkCpu(List.of(array));
        return runner.submit(
                sig(REDUCE, type, op, root, count),
                type,
                op,
                ctx -> {
                    NdRegion region = region(array);
                    ByteBuffer data = region.buffer();
                    if (op.getType() == ReduceOp.Type.PREMUL_SUM && ctx.rank() != root) {
                        // This rank's array stays unchanged: scale a copy (slot 0; Reduce uses 1).
                        ByteBuffer copy = ctx.scratch(0, data.remaining());
                        copy.put(0, data, 0, data.remaining());
                        data = copy;
                    }
                    premultiply(op, type, data, count);
                    Reduce.run(ctx, data, count, root);
                    if (ctx.rank() == root) {
                        finish(op, type, region.buffer(), 0, count);
                        region.writeBack();
                    }
                });
    }

    /** {@inheritDoc} */
    @Override
    public Work allGather(List<NDArray> outputs, NDArray input) {
        checkCpu(input);
        checkCpu(outputs);
        return runner.submit(
                sig(ALL_GATHER, input.getDataType(), null, 0, input.size()),
                input.getDataType(),
                null,
                ctx -> {
                    NdRegion in = region(input);
                    NdRegion[] outs = regions(outputs);
                    ByteBuffer[] blocks = buffers(outs);
                    blocks[ctx.rank()].duplicate().put(in.buffer().duplicate());
                    Ring.allGather(ctx, blocks, ctx.rank(), 0);
                    writeBack(outs);
                });
    }

    /** {@inheritDoc} */
    @Override
    public Work allGatherIntoTensor(NDArray output, NDArray input) {
        checkCpu(input);
        checkCpu(output);
        int p = transport.getSize();
        return runner.submit(
                sig(ALL_GATHER, input.getDataType(), null, 0, input.size()),
                input.getDataType(),
                null,
                ctx -> {
                    NdRegion in = region(input);
                    NdRegion out = region(output);
                    ByteBuffer[] blocks = split(out.buffer(), p);
                    blocks[ctx.rank()].duplicate().put(in.buffer().duplicate());
                    Ring.allGather(ctx, blocks, ctx.rank(), 0);
                    out.writeBack();
                });
    }

    /** {@inheritDoc} */
    @Override
    public Work gather(List<NDArray> outputs, NDArray input, int root) {
        checkCpu(input);
        checkCpu(outputs);
        return runner.submit(
                sig(GATHER, input.getDataType(), null, root, input.size()),
                input.getDataType(),
                null,
                ctx -> {
                    NdRegion in = region(input);
                    NdRegion[] outs = regions(outputs);
                    Exchange.gather(ctx, in.buffer(), buffers(outs), root);
                    writeBack(outs);
                });
    }

    /** {@inheritDoc} */
    @Override
    public Work scatter(NDArray output, List<NDArray> inputs, int root) {
        checkCpu(output);
        checkCpu(inputs);
        return runner.submit(
                sig(SCATTER, output.getDataType(), null, root, output.size()),
                output.getDataType(),
                null,
                ctx -> {
                    NdRegion out = region(output);
                    NdRegion[] ins = regions(inputs);
                    Exchange.scatter(ctx, buffers(ins), out.buffer(), root);
                    out.writeBack();
                });
    }

    /** {@inheritDoc} */
    @Override
    public Work reduceScatter(NDArray output, List<NDArray> inputs, ReduceOp op) {
        return reduceScatterOf(output, inputs, op);
    }

    /** {@inheritDoc} */
    @Override
    public Work reduceScatterTensor(NDArray output, NDArray input, ReduceOp op) {
        return reduceScatterOf(output, List.of(input), op);
    }

    private Work reduceScatterOf(NDArray output, List<NDArray> inputs, ReduceOp op) {
        DataType type = output.getDataType();
        checkCpu(output);
        checkCpu(inputs);
        checkPackable("inputs", inputs);
        int count = Math.toIntExact(output.size());
        int p = transport.getSize();
        return runner.submit(
                sig(REDUCE_SCATTER, type, op, 0, count),
                type,
                op,
                ctx -> {
                    Packed packed = Packed.of(inputs, this);
                    NdRegion out = region(output);
                    // Reduce in a private copy: the inputs stay as the caller left them.
                    ByteBuffer acc = ctx.scratch(1, packed.buffer().remaining());
                    acc.put(0, packed.buffer(), 0, acc.limit());
                    premultiply(op, type, acc, count * p);
                    ByteBuffer[] blocks = split(acc, p);
                    int[] counts = new int[p];
                    java.util.Arrays.fill(counts, count);
                    Ring.reduceScatter(ctx, blocks, counts, -1, 0);
                    out.buffer().duplicate().put(blocks[ctx.rank()]);
                    finish(op, type, out.buffer(), 0, count);
                    out.writeBack();
                });
    }

    /** {@inheritDoc} */
    @Override
    public Work allToAll(List<NDArray> outputs, List<NDArray> inputs) {
        checkCpu(outputs);
        checkCpu(inputs);
        DataType type = inputs.get(0).getDataType();
        return runner.submit(
                sig(ALL_TO_ALL, type, null, 0, 0),
                type,
                null,
                ctx -> {
                    NdRegion[] outs = regions(outputs);
                    NdRegion[] ins = regions(inputs);
                    Exchange.allToAll(ctx, buffers(ins), buffers(outs));
                    writeBack(outs);
                });
    }

    /** {@inheritDoc} */
    @Override
    public Work allToAllSingle(
            NDArray output, NDArray input, long[] outputSplits, long[] inputSplits) {
        checkCpu(output);
        checkCpu(input);
        DataType type = input.getDataType();
        int outRow = rowBytes(output);
        int inRow = rowBytes(input);
        return runner.submit(
                sig(ALL_TO_ALL, type, null, 0, 0),
                type,
                null,
                ctx -> {
                    NdRegion out = region(output);
                    NdRegion in = region(input);
                    Exchange.allToAll(
                            ctx,
                            split(in.buffer(), inputSplits, inRow),
                            split(out.buffer(), outputSplits, outRow));
                    out.writeBack();
                });
    }

    /** {@inheritDoc} */
    @Override
    public Work barrier() {
        return runner.submit(
                sig(BARRIER, DataType.UINT8, null, 0, 0), DataType.UINT8, null, Barrier::run);
    }

    /**
     * {@inheritDoc}
     *
     * <p>The n-th send to a peer with a tag meets that peer's n-th receive with it, so the backend
     * counts the messages of every (peer, tag) it has sent with, and keeps each count until the
     * group is destroyed: some hundred bytes per distinct pair. Reuse a few tags, as PyTorch code
     * does; a fresh tag per message grows that memory with every message.
     */
    @Override
    public Work send(NDArray array, int dst, int tag) {
        return p2p.send(region(array), array, dst, tag);
    }

    /**
     * {@inheritDoc}
     *
     * <p>Counted per (peer, tag) as {@link #send} is, with the same memory per distinct pair.
     */
    @Override
    public Work recv(NDArray array, int src, int tag) {
        return p2p.recv(region(array), array, src, tag);
    }

    /**
     * Names the backend and its transport, e.g. {@code cpu(transport=tcp)}.
     *
     * @return the description
     */
    @Override
    public String toString() {
        return NAME + "(transport=" + transportName + ")";
    }

    /** {@inheritDoc} */
    @Override
    public void close() {
        runner.close();
        transport.close();
        manager.close();
    }

    NdRegion region(NDArray array) {
        checkCpu(array);
        return NdRegion.of(array);
    }

    private static void checkCpu(NDArray array) {
        if (!Device.Type.CPU.equals(array.getDevice().getDeviceType())) {
            throw new IllegalArgumentException(
                    "array: on " + array.getDevice() + " (expected: cpu() for the cpu backend)");
        }
    }

    /** Checks every array is on the CPU, at issue; returns their elements in all. */
    private static int checkCpu(List<NDArray> arrays) {
        long count = 0;
        for (NDArray a : arrays) {
            checkCpu(a);
            count += a.size();
        }
        return Math.toIntExact(count);
    }

    /**
     * Checks, at issue, that arrays a collective packs into one buffer ({@link Packed}) fit one:
     * each array is under 2 GiB, but several may not be, and a buffer that cannot be made would
     * fail the collective when it runs, and with it the group.
     */
    private static void checkPackable(String name, List<NDArray> arrays) {
        long bytes = 0;
        for (NDArray a : arrays) {
            bytes += a.size() * a.getDataType().getNumOfBytes();
        }
        if (bytes > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(
                    name
                            + ": "
                            + arrays.size()
                            + " arrays of "
                            + bytes
                            + " bytes in all (expected: under 2 GiB in all, as the cpu backend"
                            + " reduces them in one buffer)");
        }
    }

    private NdRegion[] regions(List<NDArray> arrays) {
        NdRegion[] r = new NdRegion[arrays.size()];
        for (int i = 0; i < r.length; i++) {
            r[i] = region(arrays.get(i));
        }
        return r;
    }

    private static ByteBuffer[] buffers(NdRegion[] regions) {
        ByteBuffer[] b = new ByteBuffer[regions.length];
        for (int i = 0; i < b.length; i++) {
            b[i] = regions[i].buffer();
        }
        return b;
    }

    private static void writeBack(NdRegion[] regions) {
        for (NdRegion r : regions) {
            r.writeBack();
        }
    }

    private static ByteBuffer[] split(ByteBuffer whole, int parts) {
        int each = whole.limit() / parts;
        ByteBuffer[] blocks = new ByteBuffer[parts];
        for (int i = 0; i < parts; i++) {
            blocks[i] = whole.slice(i * each, each).order(ByteOrder.LITTLE_ENDIAN);
        }
        return blocks;
    }

    private static int rowBytes(NDArray array) {
        long rows = array.getShape().isScalar() ? 1 : array.getShape().get(0);
        return rows == 0
                ? 0
                : Math.toIntExact(array.size() / rows * array.getDataType().getNumOfBytes());
    }

    private static ByteBuffer[] split(ByteBuffer whole, long[] rows, int rowBytes) {
        ByteBuffer[] blocks = new ByteBuffer[rows.length];
        int offset = 0;
        for (int i = 0; i < rows.length; i++) {
            int n = Math.toIntExact(rows[i] * rowBytes);
            blocks[i] = whole.slice(offset, n).order(ByteOrder.LITTLE_ENDIAN);
            offset += n;
        }
        return blocks;
    }

    /**
     * Multiplies this rank's input by PREMUL_SUM's factor before the sum, as NCCL's PreMulSum does:
     * each rank's own factor, which may differ from rank to rank.
     */
    private void premultiply(ReduceOp op, DataType type, ByteBuffer data, int count) {
        if (op.getType() == ReduceOp.Type.PREMUL_SUM) {
            kernels.scale(type, data, 0, count, op.getFactor());
        }
    }

    private void finish(ReduceOp op, DataType type, ByteBuffer data, int offset, int count) {
        if (op.getType() == ReduceOp.Type.AVG) {
            kernels.divide(type, data, offset, count, transport.getSize());
        }
    }

    private static OpSignature sig(int opcode, DataType type, ReduceOp op, int root, long count) {
        return new OpSignature(
                opcode, type.ordinal(), op == null ? 0 : op.getType().ordinal(), root, count);
    }
}
