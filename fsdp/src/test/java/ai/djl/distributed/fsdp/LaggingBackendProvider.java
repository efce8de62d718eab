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
package ai.djl.distributed.fsdp;

import ai.djl.distributed.DistributedException;
import ai.djl.distributed.ReduceOp;
import ai.djl.distributed.Work;
import ai.djl.distributed.backend.Backend;
import ai.djl.distributed.backend.BackendContext;
import ai.djl.distributed.backend.BackendProvider;
import ai.djl.distributed.backend.PeerTransfer;
import ai.djl.distributed.backend.cpu.CpuBackendProvider;
import ai.djl.ndarray.NDArray;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * The CPU backend with reduce-scatters that can be made to lag, as an NCCL collective outlives a
 * wait: while a rank's backend {@linkplain Lagging#hold holds}, its reduce-scatters are not started
 * and waits for them give up at once ("it keeps running"), their work not completed; {@link
 * Lagging#startHeld} starts them, in order, on the CPU backend. Every other operation is the CPU
 * backend's. Registered for the tests under {@value #NAME}.
 */
public final class LaggingBackendProvider implements BackendProvider {

    /** The backend's name. */
    static final String NAME = "lagging-cpu";

    private static final Map<Integer, Lagging> BY_RANK = new ConcurrentHashMap<>();

    /** The last backend made for a rank of a world group. */
    static Lagging backend(int rank) {
        return BY_RANK.get(rank);
    }

    @Override
    public List<String> getNames() {
        return List.of(NAME);
    }

    @Override
    public Backend create(BackendContext context) {
        Lagging b = new Lagging(new CpuBackendProvider().create(context));
        BY_RANK.put(context.rank(), b);
        return b;
    }

    /** The CPU backend, its reduce-scatters held while told to. */
    static final class Lagging implements Backend {

        private final Backend cpu;
        private final List<Held> held = new ArrayList<>();
        private final List<NDArray> heldArrays = new ArrayList<>();
        private boolean holding;

        Lagging(Backend cpu) {
            this.cpu = cpu;
        }

        /** Holds the reduce-scatters started from now on. */
        synchronized void hold() {
            holding = true;
        }

        /** The outputs and inputs of the reduce-scatters held. */
        synchronized List<NDArray> heldArrays() {
            return List.copyOf(heldArrays);
        }

        /** Starts the held reduce-scatters, in order, and holds no more. */
        synchronized void startHeld() {
            holding = false;
            for (Held h : held) {
                h.start();
            }
            held.clear();
        }

        @Override
        public String getName() {
            return NAME;
        }

        @Override
        public synchronized Work reduceScatterTensor(NDArray output, NDArray input, ReduceOp op) {
            if (!holding) {
                return cpu.reduceScatterTensor(output, input, op);
            }
            Held h = new Held(() -> cpu.reduceScatterTensor(output, input, op));
            held.add(h);
            heldArrays.add(output);
            heldArrays.add(input);
            return h;
        }

        @Override
        public Work broadcast(NDArray array, int root) {
            return cpu.broadcast(array, root);
        }

        @Override
        public Work allReduce(List<NDArray> arrays, ReduceOp op) {
            return cpu.allReduce(arrays, op);
        }

        @Override
        public Work reduce(NDArray array, int root, ReduceOp op) {
            return cpu.reduce(array, root, op);
        }

        @Override
        public Work allGather(List<NDArray> outputs, NDArray input) {
            return cpu.allGather(outputs, input);
        }

        @Override
        public Work allGatherIntoTensor(NDArray output, NDArray input) {
            return cpu.allGatherIntoTensor(output, input);
        }

        @Override
        public Work gather(List<NDArray> outputs, NDArray input, int root) {
            return cpu.gather(outputs, input, root);
        }

        @Override
        public Work scatter(NDArray output, List<NDArray> inputs, int root) {
            return cpu.scatter(output, inputs, root);
        }

        @Override
        public Work reduceScatter(NDArray output, List<NDArray> inputs, ReduceOp op) {
            return cpu.reduceScatter(output, inputs, op);
        }

        @Override
        public Work allToAllSingle(
                NDArray output, NDArray input, long[] outputSplits, long[] inputSplits) {
            return cpu.allToAllSingle(output, input, outputSplits, inputSplits);
        }

        @Override
        public Work allToAll(List<NDArray> outputs, List<NDArray> inputs) {
            return cpu.allToAll(outputs, inputs);
        }

        @Override
        public Work barrier() {
            return cpu.barrier();
        }

        @Override
        public Work send(NDArray array, int dst, int tag) {
            return cpu.send(array, dst, tag);
        }

        @Override
        public Work recv(NDArray array, int src, int tag) {
            return cpu.recv(array, src, tag);
        }

        @Override
        public List<Work> sendRecvBatch(List<PeerTransfer> transfers) {
            return cpu.sendRecvBatch(transfers);
        }

        @Override
        public Optional<Backend> split(int[] members, BackendContext child) {
            return cpu.split(members, child);
        }

        @Override
        public void close() {
            cpu.close();
        }
    }

    /** A collective not started yet: not completed, and a wait for it gives up at once. */
    private static final class Held implements Work {

        private final Supplier<Work> starter;
        private final CompletableFuture<Void> future = new CompletableFuture<>();
        private volatile Work started;

        Held(Supplier<Work> starter) {
            this.starter = starter;
        }

        void start() {
            Work w = starter.get();
            started = w;
            w.getFuture()
                    .whenComplete(
                            (v, e) -> {
                                if (e == null) {
                                    future.complete(null);
                                } else {
                                    future.completeExceptionally(e);
                                }
                            });
        }

        @Override
        public boolean isCompleted() {
            Work w = started;
            return w != null && w.isCompleted();
        }

        @Override
        public boolean isSuccess() {
            Work w = started;
            return w != null && w.isSuccess();
        }

        @Override
        public Throwable getException() {
            Work w = started;
            return w == null ? null : w.getException();
        }

        @Override
        public void waitFor(Duration timeout) {
            startedOrGiveUp(timeout).waitFor(timeout);
        }

        @Override
        public void waitFor() {
            startedOrGiveUp(null).waitFor();
        }

        private Work startedOrGiveUp(Duration timeout) {
            Work w = started;
            if (w == null) {
                throw new DistributedException(
                        "held reduce-scatter did not complete"
                                + (timeout == null ? "" : " within " + timeout)
                                + " (it keeps running)");
            }
            return w;
        }

        @Override
        public CompletableFuture<Void> getFuture() {
            return future;
        }
    }
}
