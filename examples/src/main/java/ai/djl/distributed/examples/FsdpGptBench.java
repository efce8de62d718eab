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
package ai.djl.distributed.examples;

import ai.djl.Device;
import ai.djl.Model;
import ai.djl.distributed.ReduceOp;
import ai.djl.distributed.ddp.DistributedDataParallel;
import ai.djl.distributed.fsdp.FullyShardedDataParallel;
import ai.djl.distributed.fsdp.ShardingStrategy;
import ai.djl.distributed.pg.Distributed;
import ai.djl.distributed.pg.ProcessGroup;
import ai.djl.distributed.transformer.CausalLmLoss;
import ai.djl.distributed.transformer.GptConfig;
import ai.djl.distributed.transformer.GptModel;
import ai.djl.distributed.transformer.bench.GptTrainBench;
import ai.djl.engine.Engine;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.training.DefaultTrainingConfig;
import ai.djl.training.Trainer;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * FSDP's side of PyTorch's {@code torch_fsdp_bench.py}: the GPT of the transformer module (the
 * peer's architecture: tied head, vocabulary 256, AdamW lr 3e-4) trained on one fixed batch of
 * random tokens per rank under {@link FullyShardedDataParallel} with a sharding strategy, or under
 * {@link DistributedDataParallel} ({@code strategy=DDP}), one unit per transformer block. After
 * {@code warmup} steps, {@code steps} steps are timed.
 *
 * <p>Run under a launcher: {@code bin/djlrun --nproc-per-node 2
 * ai.djl.distributed.examples.FsdpGptBench [strategy=FULL_SHARD|SHARD_GRAD_OP|NO_SHARD|DDP]
 * [layers=8] [heads=12] [width=768] [context=64] [batch=2] [steps=10] [warmup=2] [heap_kib=4096]
 * [checkpointing=0]}, one thread per rank ({@code heap_kib}: FSDP's {@code optHeapThreshold}, 0 to
 * leave the heap; {@code checkpointing=1}: FSDP's {@code optActivationCheckpointing}). Rank 0
 * prints the peer's line: {@code strategy=... world=... params=... local_params=... step_ms=...
 * tokens_per_s_per_rank=... peak_rss_mib=... loss=...}, where {@code local_params} counts the
 * parameter elements this rank holds at rest and {@code peak_rss_mib} is the largest peak resident
 * memory of any rank (VmHWM), then {@code rest_mib}: the parameter, gradient and optimizer bytes
 * rank 0 holds at rest, counted from the arrays.
 */
public final class FsdpGptBench {

    private FsdpGptBench() {}

    /**
     * Runs the benchmark.
     *
     * @param args {@code key=value} arguments, as the Python peer's
     * @throws IOException if /proc cannot be read
     */
    public static void main(String[] args) throws IOException {
        String strategy = "FULL_SHARD";
        List<String> rest = new ArrayList<>();
        for (String arg : args) {
            if (arg.startsWith("strategy=")) {
                strategy = arg.substring("strategy=".length());
            } else {
                rest.add(arg);
            }
        }
        if (!List.of("FULL_SHARD", "SHARD_GRAD_OP", "NO_SHARD", "DDP").contains(strategy)) {
            throw new IllegalArgumentException(
                    "strategy: "
                            + strategy
                            + " (expected: FULL_SHARD, SHARD_GRAD_OP, NO_SHARD or DDP)");
        }
        Map<String, Integer> defaults =
                Map.of(
                        "layers",
                        8,
                        "heads",
                        12,
                        "width",
                        768,
                        "context",
                        64,
                        "batch",
                        2,
                        "steps",
                        10,
                        "heap_kib",
                        4096,
                        "checkpointing",
                        0);
        Map<String, Integer> a = GptTrainBench.parse(new String[0], Map.of());
        a.putAll(defaults);
        a.putAll(GptTrainBench.parse(rest.toArray(new String[0]), defaults));
        GptConfig config = GptTrainBench.config(a);
        int batch = a.get("batch");
        int context = a.get("context");
        Engine.getInstance().setRandomSeed(0);
        ProcessGroup group = Distributed.initProcessGroup("cpu");
        try (Model model = Model.newInstance("gpt-fsdp-bench");
                NDManager manager = NDManager.newBaseManager(Device.cpu())) {
            model.setBlock(new GptModel(config));
            DefaultTrainingConfig tc =
                    new DefaultTrainingConfig(new CausalLmLoss())
                            .optOptimizer(GptTrainBench.peerAdamW())
                            .optDevices(new Device[] {Device.cpu()});
            try (Trainer trainer =
                    trainer(
                            strategy,
                            model,
                            tc,
                            group,
                            a.get("heap_kib"),
                            a.get("checkpointing") != 0)) {
                trainer.initialize(new Shape(batch, context));
                NDArray[] xy =
                        GptTrainBench.randomBatch(
                                manager, config.getVocabSize(), batch, context, group.getRank());
                for (int i = 0; i < a.get("warmup"); i++) {
                    GptTrainBench.step(trainer, manager, xy[0], xy[1]);
                }
                long t0 = System.nanoTime();
                int steps = a.get("steps");
                for (int i = 0; i < steps; i++) {
                    GptTrainBench.step(trainer, manager, xy[0], xy[1]);
                }
                double step = (System.nanoTime() - t0) / 1e9 / steps;
                float loss = lastLoss(trainer, manager, xy);
                long local = config.paramCount();
                long restBytes = 16 * config.paramCount();
                if (trainer instanceof FullyShardedDataParallel) {
                    FullyShardedDataParallel.MemoryAtRest m =
                            ((FullyShardedDataParallel) trainer).memoryAtRest();
                    local = m.parameters() / 4;
                    restBytes = m.total();
                }
                double peak;
                try (NDManager m = manager.newSubManager()) {
                    NDArray p = m.create(new double[] {peakRssMib()});
                    group.allReduce(p, ReduceOp.MAX);
                    peak = p.getDouble(0);
                }
                if (group.getRank() == 0) {
                    System.out.printf(
                            Locale.ROOT,
                            "strategy=%s world=%d params=%d local_params=%d step_ms=%.1f"
                                    + " tokens_per_s_per_rank=%.0f peak_rss_mib=%.0f loss=%.4f"
                                    + " rest_mib=%.1f%n",
                            strategy,
                            group.getSize(),
                            config.paramCount(),
                            local,
                            step * 1e3,
                            batch * context / step,
                            peak,
                            loss,
                            restBytes / 1048576.0);
                }
                group.barrier();
            }
        } finally {
            Distributed.destroyProcessGroup();
        }
    }

    private static Trainer trainer(
            String strategy,
            Model model,
            DefaultTrainingConfig tc,
            ProcessGroup group,
            int heapKib,
            boolean checkpointing) {
        if ("DDP".equals(strategy)) {
            return DistributedDataParallel.builder()
                    .setModel(model)
                    .setTrainingConfig(tc)
                    .setProcessGroup(group)
                    .build();
        }
        return FullyShardedDataParallel.builder()
                .setModel(model)
                .setTrainingConfig(tc)
                .setProcessGroup(group)
                .optStrategy(ShardingStrategy.valueOf(strategy))
                .optHeapThreshold(heapKib * 1024L)
                .optActivationCheckpointing(checkpointing)
                .build();
    }

    /** The loss of one more forward pass (no update), for the printed line. */
    private static float lastLoss(Trainer trainer, NDManager manager, NDArray[] xy) {
        try (NDManager m = manager.newSubManager()) {
            NDArray x = xy[0].duplicate();
            NDArray y = xy[1].duplicate();
            x.attach(m);
            y.attach(m);
            NDArray logits = trainer.evaluate(new NDList(x)).head();
            return trainer.getLoss().evaluate(new NDList(y), new NDList(logits)).getFloat();
        }
    }

    /** This process's peak resident memory (VmHWM), in MiB. */
    static double peakRssMib() throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("VmHWM:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024.0;
            }
        }
        return Double.NaN;
    }
}
