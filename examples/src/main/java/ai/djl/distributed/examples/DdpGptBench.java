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
import ai.djl.distributed.ddp.CommHook;
import ai.djl.distributed.ddp.CommHooks;
import ai.djl.distributed.ddp.DistributedDataParallel;
import ai.djl.distributed.ddp.NoSync;
import ai.djl.distributed.pg.Distributed;
import ai.djl.distributed.pg.ProcessGroup;
import ai.djl.distributed.transformer.CausalLmLoss;
import ai.djl.distributed.transformer.GptConfig;
import ai.djl.distributed.transformer.GptModel;
import ai.djl.distributed.transformer.bench.GptTrainBench;
import ai.djl.engine.Engine;
import ai.djl.metric.Metric;
import ai.djl.metric.Metrics;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.training.DefaultTrainingConfig;
import ai.djl.training.Trainer;
import ai.djl.training.optimizer.Optimizer;

import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * DDP's share of a training step, as PyTorch's peer {@code torch_gpt_bench.py} measures it under
 * {@code launch_torch.sh}: the GPT of the transformer module trained with AdamW on one fixed batch
 * of random tokens per rank, first with gradients averaged ({@link DistributedDataParallel}), then
 * the same steps inside {@link DistributedDataParallel#noSync()}; the communication share is (DDP
 * step - local step) / DDP step. After 2 warm-up steps of each kind, blocks of DDP steps and of
 * local steps alternate ({@code rounds} of each, {@code steps} in all of each kind), so that the
 * machine's changing load weighs on both alike; the peer runs all DDP steps, then all local ones.
 *
 * <p>Run under a launcher: {@code bin/djlrun --nproc-per-node 2
 * ai.djl.distributed.examples.DdpGptBench [layers=4] [heads=4] [width=128] [context=128] [batch=16]
 * [steps=20] [rounds=4] [warmup=2] [vocab=256] [bucket_kib=25600] [first_bucket_kib=1024]
 * [overlap=0] [staged=0]}, one thread per rank. Rank 0 prints the peer's line ({@code params=...
 * world=2 step_ms=... tokens_per_s_per_rank=... local_step_ms=... comm_share=...}), then the
 * medians of a DDP step's reduce-and-update phase and of the time it waited for reductions (the
 * communication nothing overlapped). {@code overlap=1} lets reductions overlap the next forward
 * pass ({@link DistributedDataParallel.Builder#optOverlapWithForward}); {@code staged=1} starts
 * each bucket's reduction during the backward pass ({@link
 * DistributedDataParallel.Builder#optStagedBackward}).
 */
public final class DdpGptBench {

    private DdpGptBench() {}

    /**
     * Runs the benchmark.
     *
     * @param args {@code key=value} arguments, as the Python peer's
     */
    public static void main(String[] args) {
        Map<String, Integer> a = arguments(args);
        GptConfig config = GptTrainBench.config(a);
        int batch = a.get("batch");
        int context = a.get("context");
        Engine.getInstance().setRandomSeed(0);
        Optimizer adamW = GptTrainBench.peerAdamW();
        ProcessGroup group = Distributed.initProcessGroup("cpu");
        try (Model model = Model.newInstance("gpt-ddp-bench");
                NDManager manager = NDManager.newBaseManager(Device.cpu())) {
            model.setBlock(new GptModel(config));
            DefaultTrainingConfig tc =
                    new DefaultTrainingConfig(new CausalLmLoss())
                            .optOptimizer(adamW)
                            .optDevices(new Device[] {Device.cpu()});
            try (DistributedDataParallel trainer =
                    DistributedDataParallel.builder()
                            .setModel(model)
                            .setTrainingConfig(tc)
                            .setProcessGroup(group)
                            .optBucketCapBytes(a.get("bucket_kib") * 1024L)
                            .optFirstBucketBytes(a.get("first_bucket_kib") * 1024L)
                            .optOverlapWithForward(a.get("overlap") != 0)
                            .optStagedBackward(a.get("staged") != 0)
                            .optCommHook(
                                    a.get("sync_only") != 0 ? syncOnly() : CommHooks.allReduce())
                            .build()) {
                trainer.initialize(new Shape(batch, context));
                // each rank its own batch, as the peer (torch.randint after the same seed gives
                // every rank the same tokens there; the work per step is the same either way)
                NDArray[] xy =
                        GptTrainBench.randomBatch(
                                manager, config.getVocabSize(), batch, context, group.getRank());
                NDArray x = xy[0];
                NDArray y = xy[1];
                // Warm both phases up, then alternate blocks of DDP and local steps so that a
                // change in the machine's load weighs on both alike.
                int warmup = a.get("warmup");
                int rounds = a.get("rounds");
                int block = Math.max(1, a.get("steps") / rounds);
                timed(trainer, manager, x, y, warmup);
                NoSync scope = trainer.noSync();
                try {
                    timed(trainer, manager, x, y, warmup);
                } finally {
                    scope.close();
                }
                Metrics metrics = new Metrics();
                trainer.setMetrics(metrics);
                double ddpSeconds = 0;
                double localSeconds = 0;
                Metrics localMetrics = new Metrics();
                for (int r = 0; r < rounds; r++) {
                    // Untimed barriers: local steps let the ranks drift apart, which the first
                    // DDP step after them would otherwise absorb.
                    group.barrier();
                    trainer.setMetrics(metrics);
                    // With overlap=1 the block's last step leaves its reductions and their
                    // optimizer updates pending; they belong to the DDP block, not to the first
                    // local step after it (which would otherwise complete them, timed as local).
                    long blockStart = System.nanoTime();
                    timed(trainer, manager, x, y, block);
                    trainer.finishPendingUpdates();
                    ddpSeconds += (System.nanoTime() - blockStart) / 1e9;
                    group.barrier();
                    trainer.setMetrics(localMetrics);
                    scope = trainer.noSync();
                    try {
                        localSeconds += timed(trainer, manager, x, y, block);
                    } finally {
                        scope.close();
                    }
                }
                double ddp = ddpSeconds / (rounds * block);
                double local = localSeconds / (rounds * block);
                double reduceMs = median(metrics.getMetric("ddp-reduce-and-update")) / 1e6;
                double waitMs = median(metrics.getMetric("ddp-wait")) / 1e6;
                double ddpStepMs = median(metrics.getMetric("step")) / 1e6;
                double localStepMs = median(localMetrics.getMetric("step")) / 1e6;
                double ddpComputeMs = median(metrics.getMetric("forward-backward")) / 1e6;
                double localComputeMs = median(localMetrics.getMetric("forward-backward")) / 1e6;
                System.out.printf(
                        Locale.ROOT,
                        "rank=%d wait_ms=%.1f ddp_step_call_ms=%.1f local_step_call_ms=%.1f"
                                + " forward_backward_ms=%.1f local_forward_backward_ms=%.1f%n",
                        group.getRank(),
                        waitMs,
                        ddpStepMs,
                        localStepMs,
                        ddpComputeMs,
                        localComputeMs);
                if (group.getRank() == 0) {
                    System.out.printf(
                            Locale.ROOT,
                            "params=%d world=%d step_ms=%.1f tokens_per_s_per_rank=%.0f"
                                    + " local_step_ms=%.1f comm_share=%.3f reduce_and_update_ms=%.1f"
                                    + " wait_ms=%.1f buckets=%d%n",
                            config.paramCount(),
                            group.getSize(),
                            ddp * 1e3,
                            batch * context / ddp,
                            local * 1e3,
                            (ddp - local) / ddp,
                            reduceMs,
                            waitMs,
                            trainer.getBucketAssignment().size());
                }
                group.barrier();
            }
        } finally {
            Distributed.destroyProcessGroup();
        }
    }

    /**
     * Parses and checks the arguments, before the process group is set up: a bad value fails here
     * rather than in every rank after the rendezvous.
     *
     * @param args {@code key=value} arguments
     * @return every key's value
     * @throws IllegalArgumentException naming the key, its value and what was expected
     */
    static Map<String, Integer> arguments(String[] args) {
        Map<String, Integer> a =
                GptTrainBench.parse(
                        args,
                        Map.of(
                                "rounds", 4,
                                "bucket_kib", 25 * 1024,
                                "first_bucket_kib", 1024,
                                "overlap", 0,
                                "staged", 0,
                                "sync_only", 0));
        // GptTrainBench.parse checked the model's and the run's keys; these are this bench's own.
        GptTrainBench.atLeast(a, "rounds", 1);
        GptTrainBench.atLeast(a, "bucket_kib", 1);
        GptTrainBench.atLeast(a, "first_bucket_kib", 1);
        return a;
    }

    /**
     * A hook for analysis only: one 4-byte all-reduce per bucket instead of the gradients (which
     * stay unaveraged), so that a step costs the ranks' synchronization without the data.
     */
    private static CommHook syncOnly() {
        return (group, bucket) -> {
            NDArray one = bucket.getManager().zeros(new Shape(1));
            return group.allReduceAsync(one, ReduceOp.SUM)
                    .getFuture()
                    .thenApply(v -> bucket.getBuffer());
        };
    }

    /** Runs steps; returns the seconds they took. */
    private static double timed(
            Trainer trainer, NDManager manager, NDArray x, NDArray y, int steps) {
        long t0 = System.nanoTime();
        for (int i = 0; i < steps; i++) {
            GptTrainBench.step(trainer, manager, x, y);
        }
        return (System.nanoTime() - t0) / 1e9;
    }

    private static double median(List<Metric> values) {
        if (values == null || values.isEmpty()) {
            return Double.NaN;
        }
        double[] v =
                values.stream().mapToDouble(m -> m.getValue().doubleValue()).sorted().toArray();
        return v[v.length / 2];
    }
}
