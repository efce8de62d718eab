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

import ai.djl.Device;
import ai.djl.Model;
import ai.djl.distributed.parallel.OptimizerState;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.index.NDIndex;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Parameter;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.util.Pair;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

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
 *       parameters and of the optimizer's state, with the units' sizes and the optimizer's class,
 *       into {@code shard-<rank>-of-<world>.bin}; no communication. {@link #loadSharded} reads it
 *       back at the same world size (the next steps are then bit for bit those of an uninterrupted
 *       run) or at another: each rank reassembles every unit from the files and keeps its new
 *       range, changing nothing unless every file reads and checks. Trainable parameters only:
 *       buffers and frozen parameters are not written.
 * </ul>
 *
 * <p>Every method is a collective or must be called by every rank; they block on file I/O and on
 * the gathers (bounded by the group's timeout). Stateless.
 */
public final class FsdpCheckpoint {

    private static final String MAGIC = "djl-distributed fsdp shard";
    // 2: the optimizer's class follows the version. Files of version 1 still load, unchecked.
    private static final int VERSION = 2;
    private static final int UNCHECKED_VERSION = 1;
    private static final Pattern FILE = Pattern.compile("shard-(\\d{1,9})-of-(\\d{1,9})\\.bin");

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
     * installs them in the model's parameters, runs the writer and puts the shards back. The copies
     * stay on the trainer's device, not moved to the CPU, since a writer may run the model (a
     * sample from it, say). If rank 0 fails to copy, the other ranks still finish the gathers.
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
     * The file is written under a temporary name ({@code .tmp} appended), forced to disk and then
     * renamed over the old one, so that a crash mid-save leaves the previous file whole.
     *
     * @param fsdp the trainer, between steps
     * @param dir the directory, shared by the ranks or not (each rank writes its own file)
     * @throws IOException if writing fails
     */
    public static void saveSharded(FullyShardedDataParallel fsdp, Path dir) throws IOException {
        int rank = fsdp.getProcessGroup().getRank();
        int world = fsdp.getProcessGroup().getSize();
        Files.createDirectories(dir);
        Path file = dir.resolve(fileName(rank, world));
        Path tmp = dir.resolve(fileName(rank, world) + ".tmp");
        try {
            try (FileChannel ch =
                            FileChannel.open(
                                    tmp,
                                    StandardOpenOption.CREATE,
                                    StandardOpenOption.TRUNCATE_EXISTING,
                                    StandardOpenOption.WRITE);
                    DataOutputStream out =
                            new DataOutputStream(
                                    new BufferedOutputStream(Channels.newOutputStream(ch)))) {
                writeShard(fsdp, world, out);
                out.flush();
                ch.force(true);
            }
            try {
                Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE);
            } catch (AtomicMoveNotSupportedException e) {
                // A file system without atomic renames: the replacement is then not atomic.
                Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (IOException | RuntimeException e) {
            try {
                Files.deleteIfExists(tmp);
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    private static void writeShard(FullyShardedDataParallel fsdp, int world, DataOutputStream out)
            throws IOException {
        List<FlatUnit> units = fsdp.units();
        out.writeUTF(MAGIC);
        out.writeInt(VERSION);
        out.writeUTF(fsdp.optimizer().getClass().getName());
        out.writeInt(world);
        out.writeInt(shardSize(fsdp));
        out.writeInt(shardRank(fsdp));
        out.writeInt(units.size());
        for (FlatUnit u : units) {
            // A range past the unit's end (all padding: ceil(L/S) * r >= L) is written as empty at
            // the end, so that every range lies within the unit.
            long lo = Math.min(shardRank(fsdp) * u.chunkElements(), u.totalElements());
            int real = (int) Math.min(u.chunkElements(), u.totalElements() - lo);
            out.writeUTF(u.name());
            out.writeLong(u.totalElements());
            out.writeLong(lo);
            out.writeInt(real);
            writeFloats(out, u.shard(), real);
            List<String> ids = fsdp.optimizerIds(u);
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

    /**
     * Reads a sharded checkpoint written at any world size into this trainer's shards and optimizer
     * state. Every rank reads every file of the first replica, one unit at a time, keeping its own
     * range of each; nothing of the trainer changes until every unit has been read and checked, so
     * a failure leaves the parameters and the optimizer as they were.
     *
     * <p>The files name the optimizer's class, which must be the trainer's: Adam's moments are not
     * SGD's momentum, and an Adam restarted without its moments would still correct their bias as
     * for the saved step. Files of format version 1, which do not name it, load unchecked, but only
     * with the trainer's optimizer's number of states. Only this trainer's optimizer state changes
     * (its ids: its state arrays and update counts, its arrays dropped by a checkpoint without
     * any); other trainers sharing the optimizer keep theirs. The optimizer's number of updates is
     * set to the saved one: DJL 0.35.1 keeps it for the whole optimizer, and Adam's bias correction
     * and the learning-rate trackers of every trainer sharing it read it (each update raises it to
     * at least the updated id's count).
     *
     * @param fsdp the trainer, sharded ({@code initialize} called) and between steps
     * @param dir the directory holding every rank's file of one save, of one world size
     * @throws IOException if a file is missing, unreadable or does not fit the trainer's units or
     *     optimizer (another class, another number of states), or if the directory holds shard
     *     files of several world sizes
     */
    public static void loadSharded(FullyShardedDataParallel fsdp, Path dir) throws IOException {
        List<FlatUnit> units = fsdp.units();
        String optimizer = fsdp.optimizer().getClass().getName();
        List<Path> files = shardFiles(dir, units.size(), optimizer);
        List<Loaded> loaded = new ArrayList<>();
        List<DataInputStream> ins = new ArrayList<>();
        try {
            for (int r = 0; r < files.size(); r++) {
                InputStream is = Files.newInputStream(files.get(r));
                DataInputStream in = new DataInputStream(new BufferedInputStream(is));
                ins.add(in);
                readHeader(in, files.get(r), -1, r, units.size(), optimizer);
            }
            for (FlatUnit u : units) {
                // One optimizer wrote every unit: the same number of states in each (checked in
                // readUnit), so that only install's first put can fail, before any change.
                int states = loaded.isEmpty() ? -1 : loaded.get(0).states().length;
                loaded.add(readUnit(fsdp, u, ins, files, states));
            }
        } finally {
            for (DataInputStream in : ins) {
                in.close();
            }
        }
        install(fsdp, units, loaded, dir);
    }

    /** This rank's part of one unit as read: shard, each optimizer state over it, counts. */
    private record Loaded(float[] shard, float[][] states, int[] counts) {}

    /**
     * Writes what was read into the trainer. The optimizer first: its first {@code put} is where an
     * optimizer of another kind (another number of states) fails, before anything has changed.
     */
    private static void install(
            FullyShardedDataParallel fsdp, List<FlatUnit> units, List<Loaded> loaded, Path dir)
            throws IOException {
        Optimizer optimizer = fsdp.optimizer();
        Map<String, Integer> counts = new LinkedHashMap<>();
        if (loaded.stream().allMatch(l -> l.states().length == 0)) {
            // Nothing of this trainer's present state outlives the load; the state of other
            // trainers sharing the optimizer is theirs, under other ids.
            List<String> ids = new ArrayList<>();
            units.forEach(u -> ids.addAll(fsdp.optimizerIds(u)));
            OptimizerState.remove(optimizer, ids);
        }
        try (NDManager m = fsdp.getManager().newSubManager()) {
            for (int i = 0; i < units.size(); i++) {
                FlatUnit u = units.get(i);
                Loaded l = loaded.get(i);
                List<String> ids = fsdp.optimizerIds(u);
                for (int c = 0; c < ids.size(); c++) {
                    counts.put(ids.get(c), l.counts()[0]);
                    if (l.states().length > 0) {
                        int from = (int) u.sliceStart(c);
                        long length = u.sliceEnd(c) - u.sliceStart(c);
                        List<NDArray> arrays = new ArrayList<>();
                        for (float[] s : l.states()) {
                            arrays.add(slice(m, s, from, length));
                        }
                        put(optimizer, ids.get(c), arrays, l.counts(), u.shard().getDevice(), dir);
                    }
                }
            }
            // Plain SGD and Adam before its first step have no state arrays but do have update
            // counts, which the learning-rate trackers read. This trainer's ids only, but the
            // optimizer's number of updates is every id's (OptimizerState.putCounts).
            if (!loaded.isEmpty()) {
                OptimizerState.putCounts(optimizer, counts, loaded.get(0).counts()[1]);
            }
            for (int i = 0; i < units.size(); i++) {
                FlatUnit u = units.get(i);
                try (NDArray mine = slice(m, loaded.get(i).shard(), 0, u.chunkElements())) {
                    u.shard().set(new NDIndex(":"), mine);
                }
            }
        }
    }

    /**
     * Sets one range's optimizer state. Only the first call can fail, since every unit holds as
     * many states (checked in readUnit), and it fails before changing anything: a file of another
     * optimizer (of format version 1, which does not name it) is then an IOException, as any other
     * checkpoint that does not fit the trainer.
     */
    private static void put(
            Optimizer optimizer,
            String id,
            List<NDArray> arrays,
            int[] counts,
            Device device,
            Path dir)
            throws IOException {
        try {
            OptimizerState.put(optimizer, id, arrays, counts, device);
        } catch (IllegalArgumentException e) {
            throw new IOException(
                    dir
                            + ": "
                            + arrays.size()
                            + " optimizer states per range (expected: as many as the trainer's "
                            + optimizer.getClass().getName()
                            + " keeps: "
                            + e.getMessage()
                            + ")",
                    e);
        }
    }

    /**
     * Reads one unit from every file and keeps this rank's range of it. The files' ranges must tile
     * the unit in order: empty ranges anywhere (all padding), the others contiguous.
     */
    private static Loaded readUnit(
            FullyShardedDataParallel fsdp,
            FlatUnit u,
            List<DataInputStream> ins,
            List<Path> files,
            int expectedStates)
            throws IOException {
        int total = Math.toIntExact(u.totalElements());
        float[] values = new float[total];
        float[][] states = null;
        int[] counts = null;
        int next = 0;
        for (int f = 0; f < ins.size(); f++) {
            DataInputStream in = ins.get(f);
            try {
                String name = in.readUTF();
                long size = in.readLong();
                if (!name.equals(u.name()) || size != total) {
                    throw new IOException(
                            "unit "
                                    + name
                                    + " of "
                                    + size
                                    + " elements (expected: the trainer's unit "
                                    + u.name()
                                    + " of "
                                    + total
                                    + ")");
                }
                long lo = in.readLong();
                int real = in.readInt();
                if (real < 0 || real > 0 && lo != next) {
                    throw new IOException(
                            name + ": " + real + " at " + lo + " (expected: at " + next + ")");
                }
                int at = real == 0 ? 0 : next;
                readFloats(in, values, at, real);
                next += real;
                int[] c = {in.readInt(), in.readInt()};
                // The ranks of one save step together: other counts mean another save (a crash
                // between two ranks' saves left this file behind).
                if (counts != null && !Arrays.equals(c, counts)) {
                    throw new IOException(
                            name
                                    + ": written after "
                                    + c[1]
                                    + " updates, the first file after "
                                    + counts[1]
                                    + " (expected: the files of one save)");
                }
                counts = counts == null ? c : counts;
                int n = in.readInt();
                int expected = states != null ? states.length : expectedStates;
                if (n < 0 || expected >= 0 && n != expected) {
                    throw new IOException(
                            name + ": " + n + " optimizer states (expected: " + expected + ")");
                }
                states = states == null ? new float[n][total] : states;
                for (float[] s : states) {
                    readFloats(in, s, at, real);
                }
            } catch (IOException e) {
                throw new IOException(files.get(f) + ": " + e.getMessage(), e);
            }
        }
        if (next != total) {
            throw new IOException(
                    u.name() + ": the files hold " + next + " of " + total + " elements");
        }
        int lo = (int) (shardRank(fsdp) * u.chunkElements());
        int chunk = Math.toIntExact(u.chunkElements());
        float[][] mine = new float[states.length][];
        for (int s = 0; s < states.length; s++) {
            mine[s] = range(states[s], lo, chunk);
        }
        return new Loaded(range(values, lo, chunk), mine, counts);
    }

    /** Elements {@code [lo, lo + n)} of a unit, zeros past its end (lo may be past it too). */
    private static float[] range(float[] all, int lo, int n) {
        float[] part = new float[n];
        int copy = Math.max(0, Math.min(n, all.length - lo));
        if (copy > 0) {
            System.arraycopy(all, lo, part, 0, copy);
        }
        return part;
    }

    /** Elements {@code [lo, lo + n)} of an array, as a new NDArray of the manager. */
    private static NDArray slice(NDManager m, float[] all, int lo, long n) {
        return m.create(range(all, lo, Math.toIntExact(n)), new Shape(n));
    }

    /**
     * Reads and checks a file's header: magic, version, the optimizer's class (from version 2),
     * world size (when {@code world >= 0}), the rank's shard rank within a shard group that divides
     * the world, and the number of units.
     *
     * @return the shard group's size
     */
    private static int readHeader(
            DataInputStream in, Path f, int world, int rank, int units, String optimizer)
            throws IOException {
        if (!MAGIC.equals(in.readUTF())) {
            throw new IOException(f + ": not an FSDP shard (expected: saveSharded's)");
        }
        int version = in.readInt();
        if (version != VERSION && version != UNCHECKED_VERSION) {
            throw new IOException(
                    f
                            + ": FSDP shard of format version "
                            + version
                            + " (expected: "
                            + UNCHECKED_VERSION
                            + " or "
                            + VERSION
                            + ")");
        }
        String saved = version >= VERSION ? in.readUTF() : null;
        int w = in.readInt();
        int shards = in.readInt();
        int shardRank = in.readInt();
        boolean fits = shards > 0 && w % shards == 0 && shardRank == rank % shards;
        if (world >= 0 && w != world || !fits) {
            // Rank r of a mesh with S columns is shard rank r % S (DeviceMesh: row-major).
            String what = "shard rank " + shardRank + " of " + shards + " at world size " + w;
            throw new IOException(f + ": written by " + what + " (expected: rank " + rank + "'s)");
        }
        int n = in.readInt();
        if (n != units) {
            throw new IOException(f + ": " + n + " units (expected: the trainer's " + units + ")");
        }
        // Checked after what tells whether this is the right file at all.
        if (saved != null && !saved.equals(optimizer)) {
            throw new IOException(
                    f
                            + ": optimizer state of "
                            + saved
                            + " (expected: the trainer's optimizer, "
                            + optimizer
                            + ")");
        }
        return shards;
    }

    /**
     * The files of the first replica, in shard order, with every file's header checked against its
     * name. The directory must hold the files of exactly one world size: two saves of different
     * sizes in one directory are refused rather than one of them picked.
     */
    private static List<Path> shardFiles(Path dir, int units, String optimizer) throws IOException {
        Map<Integer, Set<Integer>> ranksByWorld = new TreeMap<>();
        try (var stream = Files.list(dir)) {
            for (Path p : (Iterable<Path>) stream::iterator) {
                Matcher m = FILE.matcher(dir.relativize(p).toString()); // an entry: its name
                if (m.matches()) {
                    ranksByWorld
                            .computeIfAbsent(Integer.parseInt(m.group(2)), k -> new TreeSet<>())
                            .add(Integer.parseInt(m.group(1)));
                }
            }
        }
        if (ranksByWorld.isEmpty()) {
            throw new IOException(
                    dir + ": no shard-<rank>-of-<world>.bin (expected: saveSharded's)");
        }
        if (ranksByWorld.size() > 1) {
            throw new IOException(
                    dir
                            + ": shard files of world sizes "
                            + ranksByWorld.keySet()
                            + " (expected: one save's)");
        }
        Map.Entry<Integer, Set<Integer>> only = ranksByWorld.entrySet().iterator().next();
        int world = only.getKey();
        for (int r = 0; r < world; r++) {
            if (!only.getValue().contains(r)) {
                throw new IOException(
                        dir.resolve(fileName(r, world))
                                + ": missing (expected: every rank's file)");
            }
        }
        if (only.getValue().size() != world) {
            throw new IOException(dir + ": ranks " + only.getValue() + " of world size " + world);
        }
        // Rank files in order; with hybrid sharding, those of the first replica (shard ranks 0..).
        List<Path> files = new ArrayList<>();
        int shards = -1;
        for (int r = 0; r < world; r++) {
            Path p = dir.resolve(fileName(r, world));
            int s;
            try (DataInputStream in = new DataInputStream(Files.newInputStream(p))) {
                s = readHeader(in, p, world, r, units, optimizer);
            }
            if (shards >= 0 && s != shards) {
                throw new IOException(
                        p + ": shard group of " + s + " (expected: " + shards + " as rank 0's)");
            }
            shards = s;
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

    /** Reads a length and that many floats into {@code into[at..]}; an empty range is empty. */
    private static void readFloats(DataInputStream in, float[] into, int at, int expected)
            throws IOException {
        int n = in.readInt();
        if (n != expected || n > 0 && (at < 0 || at > into.length - n)) {
            throw new IOException(
                    "range of " + n + " elements at " + at + " (expected: " + expected + ")");
        }
        byte[] bytes = new byte[n * 4];
        in.readFully(bytes);
        ByteBuffer.wrap(bytes).order(ByteOrder.nativeOrder()).asFloatBuffer().get(into, at, n);
    }
}
