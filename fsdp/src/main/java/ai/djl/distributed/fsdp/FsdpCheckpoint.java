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

import ai.djl.Model;
import ai.djl.distributed.parallel.OptimizerState;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.index.NDIndex;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Parameter;
import ai.djl.util.Pair;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * FSDP's checkpoints, as PyTorch's full and sharded state dicts.
 *
 * <ul>
 *   <li><b>Full</b> ({@link #saveFull}): every parameter gathered one unit at a time and written by
 *       rank 0 as a plain DJL model, which loads without FSDP ({@code Model.load}, or {@code
 *       GptCheckpoint.load} when written through {@code GptCheckpoint.save}). Rank 0 holds the full
 *       parameters while it writes; the other ranks one unit at a time. To resume from it, load it
 *       into the model before the trainer shards it. The optimizer's state is not in it.
 *   <li><b>Sharded</b> ({@link #saveSharded}): each rank writes its ranges of every unit's
 *       parameters and of the optimizer's state, with the units' sizes, into {@code
 *       shard-<rank>-of-<world>.bin}; no communication. {@link #loadSharded} reads it back at the
 *       same world size (the next steps are then bit for bit those of an uninterrupted run) or at
 *       another: each rank reassembles every unit from the files and keeps its new range. Trainable
 *       parameters only: buffers and frozen parameters are not written.
 * </ul>
 *
 * <p>Every method is a collective or must be called by every rank; they block on file I/O and on
 * the gathers (bounded by the group's timeout). Stateless.
 */
public final class FsdpCheckpoint {

    private static final String MAGIC = "djl-distributed fsdp shard";
    private static final int VERSION = 1;

    /** Writes a model whose parameters hold their full values (on rank 0). */
    @FunctionalInterface
    public interface ModelWriter {

        /**
         * Writes the model.
         *
         * @param model the trainer's model, its parameters holding full values during the call
         * @throws IOException if writing fails
         */
        void write(Model model) throws IOException;
    }

    private FsdpCheckpoint() {}

    /**
     * Writes a full checkpoint as a plain DJL model: {@code model.save(dir, name)} on rank 0.
     *
     * @param fsdp the trainer
     * @param dir the directory
     * @param name the model's name (the parameter file's prefix)
     * @throws IOException if writing fails (on rank 0)
     */
    public static void saveFull(FullyShardedDataParallel fsdp, Path dir, String name)
            throws IOException {
        saveFull(
                fsdp,
                model -> {
                    Files.createDirectories(dir);
                    model.save(dir, name);
                });
    }

    /**
     * Writes a full checkpoint through a writer (such as {@code m -> GptCheckpoint.save(dir, m,
     * tokenizer)}): the parameters are gathered one unit at a time, rank 0 keeps a copy of each,
     * installs them in the model's parameters, runs the writer and puts the shards back.
     *
     * @param fsdp the trainer
     * @param writer runs on rank 0 only
     * @throws IOException if the writer fails (on rank 0)
     */
    public static void saveFull(FullyShardedDataParallel fsdp, ModelWriter writer)
            throws IOException {
        boolean root = fsdp.getProcessGroup().getRank() == 0;
        Map<String, Parameter> byName = new HashMap<>();
        for (Pair<String, Parameter> p : fsdp.getModel().getBlock().getParameters()) {
            byName.put(p.getKey(), p.getValue());
        }
        try (NDManager m = fsdp.getManager().newSubManager()) {
            Map<Parameter, NDArray> full = new IdentityHashMap<>();
            fsdp.forEachFullParameter(
                    (name, value) -> {
                        if (root) {
                            NDArray copy = value.duplicate();
                            copy.attach(m);
                            full.put(byName.get(name), copy.reshape(value.getShape()));
                        }
                    });
            if (!root) {
                return;
            }
            Map<Parameter, NDArray> shards = new IdentityHashMap<>();
            try {
                for (Map.Entry<Parameter, NDArray> e : full.entrySet()) {
                    shards.put(e.getKey(), ParameterArrays.swap(e.getKey(), e.getValue()));
                }
                writer.write(fsdp.getModel());
            } finally {
                shards.forEach(ParameterArrays::swap);
            }
        }
    }

    /**
     * Writes this rank's shards and optimizer state into {@code dir/shard-<rank>-of-<world>.bin}.
     *
     * @param fsdp the trainer, between steps
     * @param dir the directory, shared by the ranks or not (each rank writes its own file)
     * @throws IOException if writing fails
     */
    public static void saveSharded(FullyShardedDataParallel fsdp, Path dir) throws IOException {
        List<FlatUnit> units = fsdp.units();
        int rank = fsdp.getProcessGroup().getRank();
        int world = fsdp.getProcessGroup().getSize();
        Files.createDirectories(dir);
        Path file = dir.resolve(fileName(rank, world));
        try (OutputStream os = Files.newOutputStream(file);
                DataOutputStream out = new DataOutputStream(new BufferedOutputStream(os))) {
            out.writeUTF(MAGIC);
            out.writeInt(VERSION);
            out.writeInt(world);
            out.writeInt(shardSize(fsdp));
            out.writeInt(fsdp.shardGroup() == null ? 0 : fsdp.shardGroup().getRank());
            out.writeInt(units.size());
            for (FlatUnit u : units) {
                long lo = shardRank(fsdp) * u.chunkElements();
                int real = (int) Math.max(0, Math.min(u.chunkElements(), u.totalElements() - lo));
                out.writeUTF(u.name());
                out.writeLong(u.totalElements());
                out.writeLong(lo);
                out.writeInt(real);
                writeFloats(out, u.shard(), real);
                List<String> ids = FullyShardedDataParallel.optimizerIds(u);
                int[] counts = OptimizerState.counts(fsdp.optimizer(), ids.get(0));
                out.writeInt(counts[0]);
                out.writeInt(counts[1]);
                // Each state (Adam's two moments) over the shard's ranges, in order.
                List<List<NDArray>> ranges = new ArrayList<>();
                for (String id : ids) {
                    ranges.add(OptimizerState.arrays(fsdp.optimizer(), id));
                }
                int states = ranges.get(0).size();
                out.writeInt(states);
                for (int k = 0; k < states; k++) {
                    out.writeInt(real);
                    int left = real;
                    for (List<NDArray> range : ranges) {
                        int n = (int) Math.min(left, range.get(k).size());
                        writeRaw(out, range.get(k), n);
                        left -= n;
                    }
                }
            }
        }
    }

    /**
     * Reads a sharded checkpoint written at any world size into this trainer's shards and optimizer
     * state. Every rank reads every file of the first replica, one unit at a time.
     *
     * @param fsdp the trainer, sharded ({@code initialize} called) and between steps
     * @param dir the directory holding every rank's file
     * @throws IOException if a file is missing, unreadable or does not fit the trainer's units
     */
    public static void loadSharded(FullyShardedDataParallel fsdp, Path dir) throws IOException {
        List<FlatUnit> units = fsdp.units();
        List<Path> files = shardFiles(dir);
        List<DataInputStream> ins = new ArrayList<>();
        try {
            for (Path f : files) {
                InputStream is = Files.newInputStream(f);
                DataInputStream in = new DataInputStream(new BufferedInputStream(is));
                ins.add(in);
                readHeader(in, f, units.size());
            }
            for (FlatUnit u : units) {
                loadUnit(fsdp, u, ins, files);
            }
        } finally {
            for (DataInputStream in : ins) {
                in.close();
            }
        }
    }

    private static void loadUnit(
            FullyShardedDataParallel fsdp, FlatUnit u, List<DataInputStream> ins, List<Path> files)
            throws IOException {
        int total = Math.toIntExact(u.totalElements());
        float[] values = new float[total];
        List<float[]> states = new ArrayList<>();
        int[] counts = null;
        for (int f = 0; f < ins.size(); f++) {
            DataInputStream in = ins.get(f);
            String name = in.readUTF();
            long size = in.readLong();
            if (!name.equals(u.name()) || size != total) {
                throw new IOException(
                        files.get(f)
                                + ": unit "
                                + name
                                + " of "
                                + size
                                + " elements (expected: the trainer's unit "
                                + u.name()
                                + " of "
                                + total
                                + ")");
            }
            int lo = Math.toIntExact(in.readLong());
            int real = in.readInt();
            readFloats(in, values, lo, real);
            int[] c = {in.readInt(), in.readInt()};
            counts = counts == null ? c : counts;
            int n = in.readInt();
            for (int s = 0; s < n; s++) {
                if (states.size() <= s) {
                    states.add(new float[total]);
                }
                readFloats(in, states.get(s), lo, real);
            }
        }
        NDManager m = fsdp.getManager();
        long chunk = u.chunkElements();
        int lo = (int) (shardRank(fsdp) * chunk);
        try (NDArray mine = slice(m, values, lo, chunk)) {
            u.shard().set(new NDIndex(":"), mine);
        }
        if (!states.isEmpty()) {
            List<String> ids = FullyShardedDataParallel.optimizerIds(u);
            for (int c = 0; c < ids.size(); c++) {
                List<NDArray> arrays = new ArrayList<>();
                int from = lo + (int) u.sliceStart(c);
                long length = u.sliceEnd(c) - u.sliceStart(c);
                for (float[] s : states) {
                    arrays.add(slice(m, s, from, length));
                }
                OptimizerState.put(
                        fsdp.optimizer(), ids.get(c), arrays, counts, u.shard().getDevice());
            }
        }
    }

    /** Elements {@code [lo, lo + chunk)} of a unit, zeros past its end, as a new array. */
    private static NDArray slice(NDManager m, float[] all, int lo, long chunk) {
        float[] part = new float[Math.toIntExact(chunk)];
        int n = Math.max(0, Math.min(part.length, all.length - lo));
        System.arraycopy(all, lo, part, 0, n);
        return m.create(part, new Shape(chunk));
    }

    private static void readHeader(DataInputStream in, Path f, int units) throws IOException {
        if (!MAGIC.equals(in.readUTF()) || in.readInt() != VERSION) {
            throw new IOException(f + ": not an FSDP shard of version " + VERSION);
        }
        in.readInt();
        in.readInt();
        in.readInt();
        int n = in.readInt();
        if (n != units) {
            throw new IOException(f + ": " + n + " units (expected: the trainer's " + units + ")");
        }
    }

    /** The files of the first replica, in shard order. */
    private static List<Path> shardFiles(Path dir) throws IOException {
        int world = -1;
        try (var stream = Files.list(dir)) {
            for (Path p : (Iterable<Path>) stream::iterator) {
                String n = dir.relativize(p).toString(); // an entry of dir: its file name
                if (n.startsWith("shard-") && n.endsWith(".bin")) {
                    world = Integer.parseInt(n.substring(n.indexOf("-of-") + 4, n.length() - 4));
                }
            }
        }
        if (world < 0) {
            throw new IOException(
                    dir + ": no shard-<rank>-of-<world>.bin (expected: saveSharded's)");
        }
        // Rank files in order; with hybrid sharding, those of the first replica (shard ranks 0..).
        List<Path> files = new ArrayList<>();
        int shards = -1;
        for (int r = 0; r < world; r++) {
            Path p = dir.resolve(fileName(r, world));
            if (!Files.exists(p)) {
                throw new IOException(
                        p + ": missing (expected: every rank's file of " + world + ")");
            }
            try (DataInputStream in = new DataInputStream(Files.newInputStream(p))) {
                in.readUTF();
                in.readInt();
                in.readInt();
                shards = shards < 0 ? in.readInt() : shards;
            }
            if (r < shards) {
                files.add(p);
            }
        }
        return files;
    }

    private static String fileName(int rank, int world) {
        return "shard-" + rank + "-of-" + world + ".bin";
    }

    private static int shardSize(FullyShardedDataParallel fsdp) {
        return fsdp.shardGroup() == null ? 1 : fsdp.shardGroup().getSize();
    }

    private static int shardRank(FullyShardedDataParallel fsdp) {
        return fsdp.shardGroup() == null ? 0 : fsdp.shardGroup().getRank();
    }

    private static void writeFloats(DataOutputStream out, NDArray a, int count) throws IOException {
        out.writeInt(count);
        writeRaw(out, a, count);
    }

    /** The first {@code count} elements of a float32 array, without a length. */
    private static void writeRaw(DataOutputStream out, NDArray a, int count) throws IOException {
        if (a.getDataType() != DataType.FLOAT32) {
            throw new IOException("array: " + a.getDataType() + " (expected: float32)");
        }
        if (count > 0) {
            try (NDArray part = a.get(new NDIndex("0:" + count))) {
                out.write(part.toByteArray());
            }
        }
    }

    private static void readFloats(DataInputStream in, float[] into, int at, int expected)
            throws IOException {
        int n = in.readInt();
        if (n != expected || at + n > into.length) {
            throw new IOException(
                    "range of " + n + " elements at " + at + " (expected: " + expected + ")");
        }
        byte[] bytes = new byte[n * 4];
        in.readFully(bytes);
        ByteBuffer.wrap(bytes).order(ByteOrder.nativeOrder()).asFloatBuffer().get(into, at, n);
    }
}
