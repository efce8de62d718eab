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
import ai.djl.Model;
import ai.djl.distributed.pg.ProcessGroup;
import ai.djl.distributed.rendezvous.DistributedEnv;
import ai.djl.nn.Block;
import ai.djl.nn.Parameter;
import ai.djl.training.TrainingConfig;
import ai.djl.training.initializer.Initializer;
import ai.djl.util.Pair;

import java.util.function.Predicate;

/**
 * What the builders of data-parallel trainers (DDP, FSDP) share: the model, the training
 * configuration, the process group and the device, and the checks a trainer makes of them before it
 * is built. Not thread-safe; one thread builds.
 *
 * @param <B> the concrete builder, returned by every setter
 */
public abstract class DataParallelBuilder<B extends DataParallelBuilder<B>> {

    /** The model to train. */
    protected Model model;

    /** The user's training configuration. */
    protected TrainingConfig config;

    /** The group the trainer runs over. */
    protected ProcessGroup group;

    /** The device, or null for the configuration's (by local rank when it lists several). */
    protected Device device;

    /** Creates a builder with nothing set. */
    protected DataParallelBuilder() {}

    /**
     * Returns this builder as its concrete type.
     *
     * @return this
     */
    protected abstract B self();

    /**
     * Sets the model to train; its block must be set.
     *
     * @param model the model
     * @return this builder
     */
    public B setModel(Model model) {
        this.model = model;
        return self();
    }

    /**
     * Sets the training configuration (loss, optimizer, evaluators, listeners, devices).
     *
     * @param config the configuration
     * @return this builder
     */
    public B setTrainingConfig(TrainingConfig config) {
        this.config = config;
        return self();
    }

    /**
     * Sets the process group to train over.
     *
     * @param group the group; not closed by the trainer
     * @return this builder
     */
    public B setProcessGroup(ProcessGroup group) {
        this.group = group;
        return self();
    }

    /**
     * Sets the device this rank trains on (default: the configuration's only device, or with
     * several the one at this process's {@code LOCAL_RANK}).
     *
     * @param device the device
     * @return this builder
     */
    public B optDevice(Device device) {
        this.device = device;
        return self();
    }

    /**
     * Checks the shared settings and applies the configuration's initializers to the block, as
     * {@code model.newTrainer(config)} does.
     *
     * @return the device to train on
     * @throws IllegalArgumentException naming what is missing, or if the configuration lists no
     *     device, or several and {@code LOCAL_RANK} is not an index into them
     */
    protected Device prepare() {
        if (model == null || config == null || group == null) {
            throw new IllegalArgumentException(
                    "model, trainingConfig, processGroup: "
                            + model
                            + ", "
                            + config
                            + ", "
                            + group
                            + " (expected: each set)");
        }
        if (config.getLossFunction() == null) {
            throw new IllegalArgumentException(
                    "trainingConfig: no loss (expected: a loss function, as"
                            + " model.newTrainer(config) requires)");
        }
        Block block = model.getBlock();
        if (block == null) {
            throw new IllegalArgumentException(
                    "model: no block (expected: model.setBlock(...) first)");
        }
        for (Pair<Initializer, Predicate<Parameter>> pair : config.getInitializers()) {
            if (pair.getKey() != null && pair.getValue() != null) {
                block.setInitializer(pair.getKey(), pair.getValue());
            }
        }
        if (device != null) {
            return device;
        }
        return localDevice(config.getDevices(), DistributedEnv.fromProcess());
    }

    /**
     * Returns the device of a configuration's list that a worker with the given environment trains
     * on: the only one, or with several the one at {@code LOCAL_RANK} (0 when unset), as {@code
     * Distributed.localDevice()} picks a GPU.
     *
     * @param devices the configuration's devices
     * @param env the worker's environment
     * @return the device
     * @throws IllegalArgumentException if the list is empty, or {@code LOCAL_RANK} is not an index
     *     into it
     */
    static Device localDevice(Device[] devices, DistributedEnv env) {
        if (devices.length == 0) {
            throw new IllegalArgumentException(
                    "trainingConfig devices: none (expected: at least one, or optDevice)");
        }
        if (devices.length == 1) {
            return devices[0];
        }
        int local = env.getInt("LOCAL_RANK").orElse(0);
        if (local < 0 || local >= devices.length) {
            // Wrapping around would put two ranks on one device, and each would train twice as
            // slowly without saying why.
            throw new IllegalArgumentException(
                    "LOCAL_RANK="
                            + local
                            + " (expected: 0 <= LOCAL_RANK < "
                            + devices.length
                            + ", the training configuration's devices; one worker per device, or"
                            + " optDevice)");
        }
        return devices[local];
    }
}
