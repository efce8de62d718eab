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
package ai.djl.distributed.parallel;

import ai.djl.Device;
import ai.djl.distributed.memory.NdRegion;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.index.NDIndex;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;

import java.nio.ByteBuffer;
import java.util.List;

/**
 * One contiguous one-dimensional array holding several arrays back to back, as PyTorch's DDP
 * buckets and FSDP's flat parameters: slot {@code i} holds {@link #getLength(int)} elements from
 * {@link #getOffset(int)}, shaped like {@link #getShape(int)}. {@link #pack} copies arrays (a
 * parameter's gradient or value) into their slots, so that one collective moves them all; {@link
 * #views()} hands the slots back as arrays shaped like each one, sharing the flat memory, and
 * {@link #unpack} copies a slot back over an array.
 *
 * <p>On a CPU the copies are memory copies (the flat array's memory is written directly); on any
 * other device they are NDArray operations (sliced writes), which need no host memory. The flat
 * array's device decides, once.
 *
 * <p>Owns the flat array and its views (a sub-manager of the manager given), and from the first
 * {@link #zero} without memory copies a 0-d zero (in the manager given): {@link #close()} frees
 * them. Arrays passed in stay owned by their callers. Not thread-safe: one thread packs, reduces
 * and unpacks; a collective running on {@link #getArray()} must end before the next pack.
 */
public final class FlatBuffer implements AutoCloseable {

    private static final byte[] ZEROS = new byte[1 << 16];

    private final String name;
    private final NDManager owner;
    private final NDArray array;
    private final Shape[] shapes;
    private final long[] offsets;
    private final long[] lengths;
    private final ByteBuffer memory;
    private final NDArray[] views;
    private NDArray zero; // what zero() writes without memory copies, once it has been called

    /**
     * Allocates a zeroed flat buffer on the manager's device.
     *
     * @param name names the buffer in errors (e.g. {@code gradient bucket 3})
     * @param manager the buffer's memory is attached to a sub-manager of it
     * @param type the data type of every slot
     * @param shapes the slots' shapes, in buffer order
     * @throws IllegalArgumentException if there is no slot, or on a CPU the buffer would reach 2
     *     GiB (a Java buffer's limit)
     */
    public FlatBuffer(String name, NDManager manager, DataType type, List<Shape> shapes) {
        this(name, manager, type, shapes, null, null);
    }

    /**
     * Lays slots over an existing flat array, which the buffer does not own (a pooled array reused
     * for buffers of the same size): {@link #close()} frees the views only. The array's values are
     * kept.
     *
     * @param name names the buffer in errors
     * @param flat a one-dimensional array whose length is the slots' total; stays the caller's
     * @param shapes the slots' shapes, in buffer order
     * @throws IllegalArgumentException if there is no slot or the lengths differ
     */
    public FlatBuffer(String name, NDArray flat, List<Shape> shapes) {
        this(name, flat.getManager(), flat.getDataType(), shapes, null, flat);
    }

    /**
     * Allocates a flat buffer, copying by memory copy or by NDArray operations as told: the latter
     * also on a CPU, which is how the tests check the path GPUs take. Null chooses by device.
     */
    FlatBuffer(
            String name,
            NDManager manager,
            DataType type,
            List<Shape> shapes,
            Boolean memoryCopies) {
        this(name, manager, type, shapes, memoryCopies, null);
    }

    private FlatBuffer(
            String name,
            NDManager manager,
            DataType type,
            List<Shape> shapes,
            Boolean memoryCopies,
            NDArray existing) {
        if (shapes.isEmpty()) {
            throw new IllegalArgumentException(name + ": no arrays (expected: at least one)");
        }
        this.name = name;
        this.shapes = shapes.toArray(new Shape[0]);
        offsets = new long[this.shapes.length];
        lengths = new long[this.shapes.length];
        long n = 0;
        for (int i = 0; i < this.shapes.length; i++) {
            offsets[i] = n;
            lengths[i] = this.shapes[i].size();
            n += lengths[i];
        }
        boolean cpu = Device.Type.CPU.equals(manager.getDevice().getDeviceType());
        boolean copyMemory = memoryCopies != null ? memoryCopies : cpu;
        if (copyMemory && n * type.getNumOfBytes() > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(
                    name
                            + ": "
                            + n * type.getNumOfBytes()
                            + " bytes (expected: under 2 GiB; an array that large alone cannot be"
                            + " reduced)");
        }
        if (existing != null && (existing.getShape().dimension() != 1 || existing.size() != n)) {
            throw new IllegalArgumentException(
                    name
                            + ": "
                            + existing.getShape()
                            + " (expected: ("
                            + n
                            + "), the slots' total)");
        }
        owner = manager.newSubManager();
        try {
            array = existing != null ? existing : owner.zeros(new Shape(n), type);
            memory = copyMemory ? NdRegion.view(array, name) : null;
            views = slots(array);
            if (existing != null) {
                for (NDArray v : views) {
                    v.attach(owner);
                }
            }
        } catch (RuntimeException e) {
            owner.close();
            throw e;
        }
    }

    /**
     * Returns the flat array: every slot back to back, one dimension.
     *
     * @return the array; owned by this buffer, valid until {@link #close()}
     */
    public NDArray getArray() {
        return array;
    }

    /**
     * Returns the number of slots.
     *
     * @return the number of arrays the buffer holds
     */
    public int size() {
        return shapes.length;
    }

    /**
     * Returns where slot {@code i} starts.
     *
     * @param i the slot
     * @return its offset, in elements
     */
    public long getOffset(int i) {
        return offsets[i];
    }

    /**
     * Returns the number of elements of slot {@code i}.
     *
     * @param i the slot
     * @return its length, in elements
     */
    public long getLength(int i) {
        return lengths[i];
    }

    /**
     * Returns the shape of slot {@code i}.
     *
     * @param i the slot
     * @return the shape of the array it holds
     */
    public Shape getShape(int i) {
        return shapes[i];
    }

    /**
     * Returns whether copies are memory copies (a CPU buffer) rather than NDArray operations.
     *
     * @return whether the memory-copy path is used
     */
    public boolean copiesMemory() {
        return memory != null;
    }

    /**
     * Copies an array's values into slot {@code i}, or zeros when it is null.
     *
     * @param i the slot
     * @param source the values: the buffer's type and the slot's element count, any shape, any
     *     device; not closed, still owned by the caller. Null writes zeros.
     * @throws IllegalArgumentException if the type or element count differ
     */
    public void pack(int i, NDArray source) {
        if (lengths[i] == 0) {
            return;
        }
        if (source == null) {
            zero(i);
            return;
        }
        InPlace.checkElements(source, array.getDataType(), shapes[i], name + ", slot " + i);
        if (memory != null && NdRegion.onCpu(source)) {
            int width = array.getDataType().getNumOfBytes();
            memory.put(
                    Math.toIntExact(offsets[i] * width),
                    NdRegion.read(source),
                    0,
                    Math.toIntExact(lengths[i] * width));
            return;
        }
        // A detached source: a value that requires gradients must not make the buffer part of an
        // autograd graph.
        try (NDArray detached = source.stopGradient();
                NDArray flat = detached.reshape(lengths[i])) {
            array.set(slot(i), flat);
        }
    }

    /**
     * Copies arrays into every slot, in order: {@link #pack(int, NDArray)} for each.
     *
     * @param sources one array (or null, for zeros) per slot
     * @throws IllegalArgumentException if the count, a type or an element count differ
     */
    public void pack(List<NDArray> sources) {
        checkCount(sources);
        for (int i = 0; i < shapes.length; i++) {
            pack(i, sources.get(i));
        }
    }

    /**
     * Sets slot {@code i} to zeros.
     *
     * @param i the slot
     */
    public void zero(int i) {
        if (memory == null) {
            if (zero == null) {
                // An array value, made once: a number would make DJL create a scalar array in the
                // buffer's manager on every zero(), freed only with the buffer. Made on the first
                // zero(), not with the buffer: many buffers (FSDP's gathers, one per unit per
                // pass) never zero. In the manager given, not the buffer's own, which then holds
                // what the buffer was built with only; close() closes it, and so does closing that
                // manager, as owners of buffers that are never closed one by one do.
                zero = owner.getParentManager().zeros(new Shape(), array.getDataType());
            }
            array.set(slot(i), zero);
            return;
        }
        int width = array.getDataType().getNumOfBytes();
        int at = Math.toIntExact(offsets[i] * width);
        int len = Math.toIntExact(lengths[i] * width);
        for (int z = 0; z < len; z += ZEROS.length) {
            memory.put(at + z, ZEROS, 0, Math.min(ZEROS.length, len - z));
        }
    }

    /**
     * Returns every slot as an array shaped like it, sharing the flat array's memory: what the flat
     * array holds now (after a collective, the reduced values) without a copy.
     *
     * @return one view per slot; owned by this buffer, valid until {@link #close()}
     */
    public NDArray[] views() {
        return views.clone();
    }

    /**
     * Returns every slot of another flat array laid out as this one (a collective's result that is
     * not {@link #getArray()}) as arrays shaped like each slot, sharing its memory.
     *
     * @param flat a one-dimensional array of this buffer's type and total length
     * @return one view per slot, attached to {@code flat}'s manager
     * @throws IllegalArgumentException if the type or length differ
     */
    public NDArray[] views(NDArray flat) {
        if (flat == array) {
            return views();
        }
        if (flat.getDataType() != array.getDataType() || flat.size() != array.size()) {
            throw new IllegalArgumentException(
                    name
                            + ": "
                            + flat.getDataType()
                            + " "
                            + flat.getShape()
                            + " (expected: "
                            + array.getDataType()
                            + " "
                            + array.getShape()
                            + ")");
        }
        return slots(flat);
    }

    private NDArray[] slots(NDArray flat) {
        NDArray[] vs = new NDArray[shapes.length];
        for (int i = 0; i < shapes.length; i++) {
            NDArray slice = flat.get(slot(i));
            vs[i] = slice.reshape(shapes[i]);
            if (vs[i] != slice) {
                // The one-dimensional slice is only a step to the view; left open, it would stay
                // in the flat array's manager, which outlives this buffer when the array is given.
                slice.close();
            }
        }
        return vs;
    }

    /**
     * Copies slot {@code i} over an array, in place: a reduced gradient or a gathered value back
     * into the array it came from.
     *
     * @param i the slot
     * @param target the array written: the buffer's type and the slot's element count, any shape;
     *     on a CPU (when the buffer is one) contiguous. It may require gradients. Not closed.
     * @throws IllegalArgumentException if the type or element count differ
     */
    public void unpack(int i, NDArray target) {
        InPlace.copy(
                views[i], target, name + ", slot " + i, memory != null && NdRegion.onCpu(target));
    }

    /**
     * Copies every slot over its array, in order: {@link #unpack(int, NDArray)} for each.
     *
     * @param targets one array per slot
     * @throws IllegalArgumentException if the count, a type or an element count differ
     */
    public void unpack(List<NDArray> targets) {
        checkCount(targets);
        for (int i = 0; i < shapes.length; i++) {
            unpack(i, targets.get(i));
        }
    }

    /** Frees the flat array (unless it was given), its views and the zero it made. Idempotent. */
    @Override
    public void close() {
        try {
            if (zero != null) {
                zero.close();
                zero = null;
            }
        } finally {
            owner.close();
        }
    }

    private void checkCount(List<NDArray> arrays) {
        if (arrays.size() != shapes.length) {
            throw new IllegalArgumentException(
                    name + ": " + arrays.size() + " arrays (expected: " + shapes.length + ")");
        }
    }

    private NDIndex slot(int i) {
        return new NDIndex().addSliceDim(offsets[i], offsets[i] + lengths[i]);
    }
}
