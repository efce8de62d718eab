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
package ai.djl.distributed.ddp;

import ai.djl.distributed.parallel.DistributedSampler;
import ai.djl.distributed.parallel.InPlace;
import ai.djl.distributed.parallel.OptimizerState;
import ai.djl.distributed.pg.ProcessGroup;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.nn.Parameter;
import ai.djl.util.Pair;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Checkpoints of a {@link DistributedDataParallel} trainer, for resuming: every parameter and
 * buffer, the optimizer's state (moments, momentum, update counters) and the caller's metadata
 * (epoch, step, ...), in one file.
 *
 * <p>Every rank calls {@link #save} and {@link #load} at the same point. Rank 0 alone writes the
 * file (to a temporary file renamed into place) and alone reads it, broadcasting its bytes, so the
 * path need only exist on rank 0's host. Training resumed from a checkpoint takes the same steps as
 * training that was never interrupted, provided the data order resumes too ({@link
 * DistributedSampler#setEpoch}) and the model draws no random numbers (dropout).
 *
 * <p>The file is held in memory whole, and must stay under 2 GiB ({@link #MAX_BYTES}): a larger one
 * fails with an {@link IOException} naming its size, on every rank.
 */
public final class DdpCheckpoint {

    /**
     * The largest checkpoint, in bytes: the JVM's largest byte array, less the byte {@link #load}
     * adds to frame it (a little under 2 GiB).
     */
    public static final long MAX_BYTES = Integer.MAX_VALUE - 16;

    private static final int MAGIC = 0x444A4450; // "DJDP"
    private static final int VERSION = 1;

    private DdpCheckpoint() {}

    /**
     * Saves a checkpoint. Blocks until rank 0 has written it.
     *
     * @param trainer the trainer
     * @param file where rank 0 writes
     * @param metadata what the caller needs to resume (e.g. {@code epoch}), as strings
     * @throws IOException if rank 0 cannot write, or the checkpoint would pass {@link #MAX_BYTES}
     *     (on every rank; on rank 0 an {@link Error} is rethrown as it is, once the others know)
     */
    public static void save(
            DistributedDataParallel trainer, Path file, Map<String, String> metadata)
            throws IOException {
        save(trainer, file, metadata, MAX_BYTES);
    }

    /** Saves as {@link #save(DistributedDataParallel, Path, Map)}, with another size limit. */
    static void save(
            DistributedDataParallel trainer, Path file, Map<String, String> metadata, long maxBytes)
            throws IOException {
        List<Pair<String, Parameter>> params = trainer.namedParameters();
        ProcessGroup group = trainer.getProcessGroup();
        Throwable failure = null;
        byte[] outcome = null;
        if (group.getRank() == 0) {
            try {
                write(trainer, params, file, metadata, maxBytes);
                outcome = new byte[0];
            } catch (Throwable e) { // an Error too (out of memory): the others wait for the outcome
                failure = e;
                outcome = e.toString().getBytes(StandardCharsets.UTF_8);
            }
        }
        // Every rank learns the outcome, and none moves on (and perhaps loads) before the file is
        // in place: a failure on rank 0 fails every rank, rather than leaving the others to time
        // out in their next collective.
        if (group.getSize() > 1) {
            outcome = broadcast(group, outcome, failure);
        }
        rethrowIfError(failure);
        if (failure instanceof IOException io) {
            throw io;
        }
        if (outcome.length > 0) {
            throw new IOException(
                    "rank 0 could not write "
                            + file
                            + ": "
                            + new String(outcome, StandardCharsets.UTF_8),
                    failure);
        }
    }

    /**
     * Loads a checkpoint into the trainer's parameters and optimizer, in place.
     *
     * @param trainer the trainer, built like the one that saved
     * @param file the checkpoint, read by rank 0
     * @return the metadata saved with it
     * @throws IOException if rank 0 cannot read it, it is larger than {@link #MAX_BYTES}, or it is
     *     corrupt (on every rank; on rank 0 an {@link Error} is rethrown as it is, once the others
     *     know)
     * @throws IllegalStateException if the checkpoint does not fit the trainer (a parameter's name
     *     or shape, the optimizer); nothing is changed then
     */
    public static Map<String, String> load(DistributedDataParallel trainer, Path file)
            throws IOException {
        List<Pair<String, Parameter>> params = trainer.namedParameters();
        ProcessGroup group = trainer.getProcessGroup();
        Throwable failure = null;
        byte[] payload = null;
        if (group.getRank() == 0) {
            try {
                payload = frame((byte) 0, readFile(file));
            } catch (Throwable e) { // an Error too (out of memory): the others wait for the outcome
                failure = e;
                payload = frame((byte) 1, e.toString().getBytes(StandardCharsets.UTF_8));
            }
        }
        if (group.getSize() > 1) {
            payload = broadcast(group, payload, failure);
        }
        rethrowIfError(failure);
        byte[] body = java.util.Arrays.copyOfRange(payload, 1, payload.length);
        if (payload[0] != 0) {
            throw new IOException(
                    "rank 0 could not read "
                            + file
                            + ": "
                            + new String(body, StandardCharsets.UTF_8),
                    failure);
        }
        return read(trainer, params, body, file);
    }

    /** Reads a checkpoint whole, once its size is known to fit. */
    private static byte[] readFile(Path file) throws IOException {
        long size = Files.size(file);
        if (size > MAX_BYTES) {
            throw new IOException(
                    file + ": " + size + " bytes (expected: at most " + MAX_BYTES + ")");
        }
        return Files.readAllBytes(file);
    }

    /**
     * Broadcasts rank 0's outcome. Should the broadcast fail on rank 0 after its own work did, that
     * work's failure is the one thrown, with the broadcast's attached.
     */
    private static byte[] broadcast(ProcessGroup group, byte[] outcome, Throwable failure) {
        try {
            return group.objects().broadcast(outcome, 0);
        } catch (RuntimeException e) {
            if (failure == null) {
                throw e;
            }
            failure.addSuppressed(e);
            rethrowIfError(failure);
            return outcome; // an exception, which the caller throws
        }
    }

    /** Throws an {@link Error} as it is; returns for anything else. */
    private static void rethrowIfError(Throwable failure) {
        if (failure instanceof Error e) {
            throw e;
        }
    }

    private static byte[] frame(byte status, byte[] body) {
        byte[] framed = new byte[body.length + 1];
        framed[0] = status;
        System.arraycopy(body, 0, framed, 1, body.length);
        return framed;
    }

    private static void write(
            DistributedDataParallel trainer,
            List<Pair<String, Parameter>> params,
            Path file,
            Map<String, String> metadata,
            long maxBytes)
            throws IOException {
        // The parameters alone are checked before anything is encoded, the whole file as it grows:
        // a checkpoint too large fails naming its size, not with an out-of-memory error.
        long raw = 0;
        for (Pair<String, Parameter> p : params) {
            NDArray v = trainer.value(p.getValue());
            raw += v.size() * v.getDataType().getNumOfBytes();
        }
        if (raw > maxBytes) {
            throw new IOException(
                    file
                            + ": parameters of "
                            + raw
                            + " bytes (expected: a checkpoint of at most "
                            + maxBytes
                            + " bytes in all)");
        }
        BoundedBytes bytes = new BoundedBytes(file, maxBytes);
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeInt(MAGIC);
            out.writeInt(VERSION);
            Map<String, String> sorted = new TreeMap<>(metadata);
            out.writeInt(sorted.size());
            for (Map.Entry<String, String> e : sorted.entrySet()) {
                out.writeUTF(e.getKey());
                out.writeUTF(e.getValue());
            }
            out.writeInt(params.size());
            Map<String, String> nameById = new HashMap<>();
            for (Pair<String, Parameter> p : params) {
                byte[] encoded = trainer.value(p.getValue()).encode();
                out.writeUTF(p.getKey());
                out.writeInt(encoded.length);
                out.write(encoded);
                nameById.put(p.getValue().getId(), p.getKey());
            }
            OptimizerState.write(out, trainer.getOptimizer(), nameById, trainer.getDevice());
        }
        Path dir = file.toAbsolutePath().getParent();
        Path name = file.getFileName();
        if (dir == null || name == null) {
            throw new IllegalArgumentException(
                    "checkpoint file: " + file + " (expected: a file's path, not a root)");
        }
        Files.createDirectories(dir);
        Path tmp = Files.createTempFile(dir, name.toString(), ".tmp");
        try {
            Files.write(tmp, bytes.bytes.toByteArray());
            Files.move(
                    tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    private static Map<String, String> read(
            DistributedDataParallel trainer,
            List<Pair<String, Parameter>> params,
            byte[] body,
            Path file)
            throws IOException {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(body));
                NDManager m = trainer.getManager().newSubManager(trainer.getDevice())) {
            if (in.readInt() != MAGIC || in.readInt() != VERSION) {
                throw new IOException(
                        file + ": not a DDP checkpoint (expected: version " + VERSION + ")");
            }
            Map<String, String> metadata = new TreeMap<>();
            for (int i = in.readInt(); i > 0; i--) {
                metadata.put(in.readUTF(), in.readUTF());
            }
            Map<String, Parameter> byName = new HashMap<>();
            Map<String, String> idByName = new HashMap<>();
            for (Pair<String, Parameter> p : params) {
                byName.put(p.getKey(), p.getValue());
                idByName.put(p.getKey(), p.getValue().getId());
            }
            int count = in.readInt();
            if (count != params.size()) {
                throw new IllegalStateException(
                        file
                                + ": "
                                + count
                                + " parameters (expected: the model's "
                                + params.size()
                                + ")");
            }
            // Everything is decoded and checked before anything changes: a checkpoint that does
            // not fit leaves the model and optimizer as they were.
            List<NDArray> targets = new ArrayList<>(count);
            List<NDArray> values = new ArrayList<>(count);
            List<String> names = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                String name = in.readUTF();
                byte[] encoded = OptimizerState.readBytes(in, file + ": parameter " + name);
                Parameter p = byName.get(name);
                if (p == null) {
                    throw new IllegalStateException(
                            file
                                    + ": parameter "
                                    + name
                                    + " (expected: one of "
                                    + byName.keySet()
                                    + ")");
                }
                NDArray saved = m.decode(encoded);
                NDArray target = trainer.value(p);
                if (!saved.getShape().equals(target.getShape())
                        || saved.getDataType() != target.getDataType()) {
                    throw new IllegalStateException(
                            file
                                    + ": parameter "
                                    + name
                                    + " is "
                                    + saved.getDataType()
                                    + " "
                                    + saved.getShape()
                                    + " (expected: "
                                    + target.getDataType()
                                    + " "
                                    + target.getShape()
                                    + ")");
                }
                targets.add(target);
                values.add(saved);
                names.add(name);
            }
            OptimizerState.Staged optimizerState;
            try {
                optimizerState =
                        OptimizerState.read(
                                in, trainer.getOptimizer(), idByName, m, trainer.getDevice());
            } catch (IOException e) {
                if (e instanceof java.io.EOFException) {
                    throw e; // a truncated file, reported below
                }
                // The optimizer's state does not know the file: its errors name it here.
                throw new IOException(file + ": " + e.getMessage(), e);
            }
            for (int i = 0; i < count; i++) {
                InPlace.copy(values.get(i), targets.get(i), names.get(i));
            }
            optimizerState.apply();
            return metadata;
        } catch (java.io.EOFException e) {
            throw new IOException(file + ": truncated checkpoint", e);
        }
    }

    /** The checkpoint's bytes, refusing to grow past a limit. */
    private static final class BoundedBytes extends OutputStream {

        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        private final Path file;
        private final long maxBytes;

        BoundedBytes(Path file, long maxBytes) {
            this.file = file;
            this.maxBytes = maxBytes;
        }

        @Override
        public void write(int b) throws IOException {
            reserve(1);
            bytes.write(b);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            reserve(len);
            bytes.write(b, off, len);
        }

        private void reserve(int len) throws IOException {
            long size = (long) bytes.size() + len;
            if (size > maxBytes) {
                throw new IOException(
                        file
                                + ": at least "
                                + size
                                + " bytes (expected: a checkpoint of at most "
                                + maxBytes
                                + ")");
            }
        }
    }
}
