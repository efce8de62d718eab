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
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.training.optimizer.Optimizer;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * An optimizer's state, written and read by parameter name. DJL 0.35.1's optimizers keep their
 * state in private fields with no API to save it: the update counters of {@link Optimizer} ({@code
 * numUpdate}, {@code updateCounts}) and, in each optimizer, maps from parameter id to per-device
 * arrays (Adam's {@code means} and {@code variances}, SGD's {@code momentumStates}, ...). They are
 * read and written here by reflection, keyed by parameter name since ids are random per process.
 * DDP's checkpoints use it, and FSDP's sharded checkpoints and trainer, which act on their own ids
 * only ({@link #putCounts}, {@link #remove}) since trainers may share one optimizer.
 *
 * <p>Stateless. Not safe while the optimizer updates on another thread: call it between steps, on
 * the training thread. Nothing blocks beyond the stream's I/O.
 */
public final class OptimizerState {

    private OptimizerState() {}

    /**
     * Writes an optimizer's state: its class, update counters and every state array of the named
     * parameters (those not in {@code nameById} are left out).
     *
     * @param out where to write; not closed
     * @param optimizer the optimizer; read only
     * @param nameById parameter names by id
     * @param device the device whose state array is written when a parameter has several
     * @throws IOException if writing fails
     * @throws IllegalStateException if DJL's optimizer internals cannot be reached
     */
    public static void write(
            DataOutputStream out, Optimizer optimizer, Map<String, String> nameById, Device device)
            throws IOException {
        out.writeUTF(optimizer.getClass().getName());
        out.writeInt((Integer) get(field(Optimizer.class, "numUpdate"), optimizer));
        Map<String, Integer> counts = counts(optimizer);
        List<Map.Entry<String, Integer>> known = new ArrayList<>();
        for (Map.Entry<String, Integer> e : counts.entrySet()) {
            if (nameById.containsKey(e.getKey())) {
                known.add(e);
            }
        }
        out.writeInt(known.size());
        for (Map.Entry<String, Integer> e : known) {
            out.writeUTF(nameById.get(e.getKey()));
            out.writeInt(e.getValue());
        }
        List<Field> fields = stateFields(optimizer.getClass());
        out.writeInt(fields.size());
        for (Field f : fields) {
            out.writeUTF(f.getDeclaringClass().getName() + "." + f.getName());
            Map<String, Map<Device, NDArray>> state = stateMap(f, optimizer);
            List<Map.Entry<String, Map<Device, NDArray>>> entries = new ArrayList<>();
            for (Map.Entry<String, Map<Device, NDArray>> e : state.entrySet()) {
                if (nameById.containsKey(e.getKey()) && !e.getValue().isEmpty()) {
                    entries.add(e);
                }
            }
            out.writeInt(entries.size());
            for (Map.Entry<String, Map<Device, NDArray>> e : entries) {
                NDArray a = e.getValue().get(device);
                byte[] bytes = (a != null ? a : e.getValue().values().iterator().next()).encode();
                out.writeUTF(nameById.get(e.getKey()));
                out.writeInt(bytes.length);
                out.write(bytes);
            }
        }
    }

    /**
     * Decodes and checks the optimizer state that {@link #write} wrote, changing nothing yet.
     *
     * @param in the checkpoint, positioned at the state
     * @param optimizer the trainer's optimizer, of the saved class
     * @param idByName parameter ids by name
     * @param manager owns the decoded arrays until {@link Staged#apply} takes them
     * @param device the trainer's device
     * @return the state, to apply once everything else has been checked too
     * @throws IOException if the stream ends early, or an array's length is negative or more than
     *     the stream holds
     * @throws IllegalStateException if the state was written by another optimizer class or names a
     *     parameter not in {@code idByName}
     */
    public static Staged read(
            DataInputStream in,
            Optimizer optimizer,
            Map<String, String> idByName,
            NDManager manager,
            Device device)
            throws IOException {
        String type = in.readUTF();
        if (!type.equals(optimizer.getClass().getName())) {
            throw new IllegalStateException(
                    "checkpoint: optimizer "
                            + type
                            + " (expected: the trainer's "
                            + optimizer.getClass().getName()
                            + ")");
        }
        int numUpdate = in.readInt();
        Map<String, Integer> counts = new HashMap<>();
        for (int i = in.readInt(); i > 0; i--) {
            counts.put(id(idByName, in.readUTF()), in.readInt());
        }
        List<Field> fields = stateFields(optimizer.getClass());
        Map<Field, Map<String, NDArray>> states = new LinkedHashMap<>();
        int saved = in.readInt();
        for (int k = 0; k < saved; k++) {
            String name = in.readUTF();
            Field f = null;
            for (Field candidate : fields) {
                if (name.equals(
                        candidate.getDeclaringClass().getName() + "." + candidate.getName())) {
                    f = candidate;
                }
            }
            if (f == null) {
                throw new IllegalStateException(
                        "checkpoint: optimizer state "
                                + name
                                + " (expected: one of "
                                + fields
                                + ")");
            }
            Map<String, NDArray> arrays = new HashMap<>();
            for (int i = in.readInt(); i > 0; i--) {
                String param = in.readUTF();
                String id = id(idByName, param);
                byte[] bytes = readBytes(in, "optimizer state " + name + " of " + param);
                arrays.put(id, manager.decode(bytes));
            }
            states.put(f, arrays);
        }
        return new Staged(optimizer, device, numUpdate, counts, states);
    }

    /**
     * Reads a byte array written as its length ({@code writeInt}) then its bytes, as {@link #write}
     * writes each array. The length is checked before it is trusted: a corrupt file's length
     * (negative, or a flipped bit asking for gigabytes) fails naming it, and memory is taken only
     * for the bytes the stream really holds.
     *
     * @param in the stream, positioned at the length
     * @param what names the array in errors
     * @return the bytes
     * @throws IOException if the length is negative or more than the stream holds, naming {@code
     *     what} and the length
     */
    public static byte[] readBytes(DataInputStream in, String what) throws IOException {
        int length = in.readInt();
        if (length < 0) {
            throw new IOException(what + ": length " + length + " (expected: 0 or more bytes)");
        }
        // readNBytes grows its buffer with what it reads, never to the length up front.
        byte[] bytes = in.readNBytes(length);
        if (bytes.length != length) {
            throw new IOException(
                    what
                            + ": length "
                            + length
                            + " (expected: at most the "
                            + bytes.length
                            + " bytes left)");
        }
        return bytes;
    }

    /**
     * Decoded optimizer state, not yet in the optimizer: its arrays belong to the manager given to
     * {@link #read} until {@link #apply} hands them to the optimizer. Not thread-safe.
     */
    public static final class Staged {

        private final Optimizer optimizer;
        private final Device device;
        private final int numUpdate;
        private final Map<String, Integer> counts;
        private final Map<Field, Map<String, NDArray>> states;

        private Staged(
                Optimizer optimizer,
                Device device,
                int numUpdate,
                Map<String, Integer> counts,
                Map<Field, Map<String, NDArray>> states) {
            this.optimizer = optimizer;
            this.device = device;
            this.numUpdate = numUpdate;
            this.counts = counts;
            this.states = states;
        }

        /**
         * Replaces the optimizer's state with this one, closing the arrays it replaces; the
         * optimizer then owns this state's arrays (detached from their manager). Call it once.
         */
        public void apply() {
            // A DDP checkpoint holds the whole optimizer's state: no count of another id survives.
            counts(optimizer).clear();
            putCounts(optimizer, counts, numUpdate);
            for (Map.Entry<Field, Map<String, NDArray>> e : states.entrySet()) {
                Map<String, Map<Device, NDArray>> state = stateMap(e.getKey(), optimizer);
                // State arrays belong to no manager (as Optimizer.withDefaultState makes them):
                // the ones replaced here would otherwise never be freed.
                for (Map<Device, NDArray> perDevice : state.values()) {
                    perDevice.values().forEach(NDArray::close);
                }
                state.clear();
                for (Map.Entry<String, NDArray> a : e.getValue().entrySet()) {
                    a.getValue().detach();
                    Map<Device, NDArray> perDevice = new ConcurrentHashMap<>();
                    perDevice.put(device, a.getValue());
                    state.put(a.getKey(), perDevice);
                }
            }
        }
    }

    /**
     * Returns an optimizer's state arrays for one parameter: Adam's two moments, SGD's momentum,
     * none for plain SGD or before the parameter's first update.
     *
     * @param optimizer the optimizer; read only
     * @param parameterId the parameter's id, as given to {@code Optimizer.update}
     * @return the arrays, every device's; owned by the optimizer
     * @throws IllegalStateException if DJL's optimizer internals cannot be reached
     */
    public static List<NDArray> arrays(Optimizer optimizer, String parameterId) {
        List<NDArray> arrays = new ArrayList<>();
        for (Field f : stateFields(optimizer.getClass())) {
            Map<Device, NDArray> perDevice = stateMap(f, optimizer).get(parameterId);
            if (perDevice != null) {
                arrays.addAll(perDevice.values());
            }
        }
        return arrays;
    }

    /**
     * Returns how many updates an optimizer has counted for one parameter, and in all ({@code
     * counts[0]}: the parameter's, {@code counts[1]}: the optimizer's number of updates, which
     * learning-rate trackers read).
     *
     * @param optimizer the optimizer; read only
     * @param parameterId the parameter's id
     * @return the two counts; zero for a parameter never updated
     * @throws IllegalStateException if DJL's optimizer internals cannot be reached
     */
    public static int[] counts(Optimizer optimizer, String parameterId) {
        return new int[] {
            counts(optimizer).getOrDefault(parameterId, 0),
            (Integer) get(field(Optimizer.class, "numUpdate"), optimizer)
        };
    }

    /**
     * Sets one parameter's state: its state arrays, one per state of the optimizer in the order of
     * {@link #arrays} (Adam: the first and second moments), and its update counts.
     *
     * @param optimizer the optimizer
     * @param parameterId the parameter's id
     * @param arrays the state arrays; the optimizer owns them from now on (detached from their
     *     manager); the arrays they replace are closed
     * @param counts the counts as {@link #counts} returns them
     * @param device the device the state belongs to
     * @throws IllegalArgumentException if the number of arrays is not the optimizer's number of
     *     states
     */
    public static void put(
            Optimizer optimizer,
            String parameterId,
            List<NDArray> arrays,
            int[] counts,
            Device device) {
        List<Field> fields = stateFields(optimizer.getClass());
        if (arrays.size() != fields.size()) {
            throw new IllegalArgumentException(
                    "optimizer state of "
                            + parameterId
                            + ": "
                            + arrays.size()
                            + " arrays (expected: "
                            + fields.size()
                            + " for "
                            + optimizer.getClass().getSimpleName()
                            + ")");
        }
        for (int i = 0; i < fields.size(); i++) {
            Map<String, Map<Device, NDArray>> state = stateMap(fields.get(i), optimizer);
            Map<Device, NDArray> old = state.get(parameterId);
            if (old != null) {
                old.values().forEach(NDArray::close);
            }
            NDArray a = arrays.get(i);
            a.detach();
            Map<Device, NDArray> perDevice = new ConcurrentHashMap<>();
            perDevice.put(device, a);
            state.put(parameterId, perDevice);
        }
        counts(optimizer).put(parameterId, counts[0]);
        set(field(Optimizer.class, "numUpdate"), optimizer, counts[1]);
    }

    /**
     * Sets the update counts of some parameter ids, and the optimizer's number of updates, leaving
     * the other ids' counts and every state array as they are: what a checkpoint restores besides
     * the arrays (learning-rate trackers read the counts, and plain SGD has nothing else).
     *
     * <p>DJL 0.35.1 keeps one count per id but hands its update the optimizer's number of updates,
     * raised to at least the id's count ({@code Optimizer.updateCount}): that one number, which
     * Adam's bias correction and the learning-rate trackers read, belongs to every id of the
     * optimizer, so setting it here sets it for whoever else updates through the optimizer too.
     *
     * @param optimizer the optimizer
     * @param counts the number of updates of each id set; ids not in it keep theirs
     * @param numUpdate the optimizer's number of updates
     * @throws IllegalStateException if DJL's optimizer internals cannot be reached
     */
    public static void putCounts(Optimizer optimizer, Map<String, Integer> counts, int numUpdate) {
        counts(optimizer).putAll(counts);
        set(field(Optimizer.class, "numUpdate"), optimizer, numUpdate);
    }

    /**
     * Drops the state of some parameter ids: closes every state array of theirs (every device's)
     * and forgets them and the ids' update counts, so that the optimizer holds nothing of theirs.
     * What an owner of ids calls once it is done with them: DJL's optimizers detach their state
     * arrays from every manager ({@code Optimizer.withDefaultState}, as {@link #put} does), so
     * closing the manager of the arrays updated frees none of it.
     *
     * <p>The optimizer's number of updates stays as it is: it is the whole optimizer's, not an id's
     * (see {@link #putCounts}). An optimizer of a class this class does not know is handled as
     * elsewhere: its fields of type {@code Map<String, Map<Device, NDArray>>} are its state; state
     * it keeps otherwise is not reached. Other ids' state is left as it is.
     *
     * @param optimizer the optimizer
     * @param parameterIds the ids whose state goes; ids without state are skipped
     * @throws IllegalStateException if DJL's optimizer internals cannot be reached; the state of
     *     the ids is then left as it was
     */
    public static void remove(Optimizer optimizer, Collection<String> parameterIds) {
        // Every field reached before anything changes: a failure leaves the state whole.
        Map<String, Integer> counts = counts(optimizer);
        List<Map<String, Map<Device, NDArray>>> states = new ArrayList<>();
        for (Field f : stateFields(optimizer.getClass())) {
            states.add(stateMap(f, optimizer));
        }
        for (String id : parameterIds) {
            for (Map<String, Map<Device, NDArray>> state : states) {
                // State arrays belong to no manager: closed here, or never freed.
                Map<Device, NDArray> perDevice = state.remove(id);
                if (perDevice != null) {
                    perDevice.values().forEach(NDArray::close);
                }
            }
            counts.remove(id);
        }
    }

    private static String id(Map<String, String> idByName, String name) {
        String id = idByName.get(name);
        if (id == null) {
            throw new IllegalStateException(
                    "checkpoint: optimizer state for parameter "
                            + name
                            + " (expected: a parameter of the model)");
        }
        return id;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Integer> counts(Optimizer optimizer) {
        return (Map<String, Integer>) get(field(Optimizer.class, "updateCounts"), optimizer);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Map<Device, NDArray>> stateMap(Field f, Optimizer optimizer) {
        return (Map<String, Map<Device, NDArray>>) get(f, optimizer);
    }

    /** Fields of type {@code Map<String, Map<Device, NDArray>>}, subclass first. */
    private static List<Field> stateFields(Class<?> c) {
        List<Field> fields = new ArrayList<>();
        for (; c != null && c != Object.class; c = c.getSuperclass()) {
            for (Field f : c.getDeclaredFields()) {
                if (!Modifier.isStatic(f.getModifiers()) && isStateMap(f.getGenericType())) {
                    f.setAccessible(true);
                    fields.add(f);
                }
            }
        }
        return fields;
    }

    private static boolean isStateMap(Type t) {
        if (!(t instanceof ParameterizedType)) {
            return false;
        }
        ParameterizedType p = (ParameterizedType) t;
        Type[] args = p.getActualTypeArguments();
        if (p.getRawType() != Map.class || args[0] != String.class) {
            return false;
        }
        if (!(args[1] instanceof ParameterizedType)) {
            return false;
        }
        ParameterizedType inner = (ParameterizedType) args[1];
        Type[] in = inner.getActualTypeArguments();
        return inner.getRawType() == Map.class && in[0] == Device.class && in[1] == NDArray.class;
    }

    private static Field field(Class<?> c, String name) {
        try {
            Field f = c.getDeclaredField(name);
            f.setAccessible(true);
            return f;
        } catch (NoSuchFieldException | RuntimeException e) {
            throw new IllegalStateException(
                    "cannot reach "
                            + c.getName()
                            + "."
                            + name
                            + " (expected: DJL 0.35's optimizer internals, on the class path)",
                    e);
        }
    }

    private static Object get(Field f, Object target) {
        try {
            return f.get(target);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException("cannot read " + f, e);
        }
    }

    private static void set(Field f, Object target, int value) {
        try {
            f.setInt(target, value);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException("cannot write " + f, e);
        }
    }
}
