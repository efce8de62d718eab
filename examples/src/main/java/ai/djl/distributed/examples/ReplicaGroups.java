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
import ai.djl.distributed.DistributedException;
import ai.djl.distributed.ReduceOp;
import ai.djl.distributed.pg.ProcessGroup;
import ai.djl.distributed.pg.ProcessGroups;
import ai.djl.distributed.rendezvous.DistributedEnv;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.translate.TranslateException;

import java.io.IOException;

/**
 * {@code replica_groups}: independent jobs (replicas) that reduce across one another through a
 * store they share, as PyTorch's torchrun seed does with two launcher jobs of two ranks each. Each
 * replica is its own {@code bin/djlrun} job, with its own world and launcher store:
 *
 * <pre>
 * bin/djlrun --nproc-per-node 2 replica_groups --replica-id 0 --num-replicas 2 \
 *     --main-store 127.0.0.1:29600
 * bin/djlrun --nproc-per-node 2 replica_groups --replica-id 1 --num-replicas 2 \
 *     --main-store 127.0.0.1:29600
 * </pre>
 *
 * <p>Every rank contributes {@code 10 * replica + rank + 1}. The sum is all-reduced within the
 * replica, then across replicas by each replica's rank 0 (its leader) in a group created directly
 * on {@code PrefixStore("replicas", mainStore)} with the replica id as rank and the replica count
 * as size, then broadcast back within the replica. Every rank prints the result and checks it
 * against the closed form; a wrong one exits 1.
 *
 * <p>The main store is served by the hosting replica's leader (replica 0 by default) and outlives
 * that replica's own use of it: the leader stops it only when every leader has marked itself done
 * ({@link MainStore}). A replica whose peers never come fails at {@code --timeout}, naming them.
 * The other ranks of a replica give their leader twice that long, so that they never time out
 * before it: when it fails, it names the cause and tears its replica's world down, ending them.
 */
public final class ReplicaGroups {

    /**
     * What one rank saw.
     *
     * @param replicaId its replica
     * @param rank its rank in the replica's world
     * @param contribution what it contributed
     * @param replicaSum the sum over its replica
     * @param sum the sum over every rank of every replica
     * @param ranks how many ranks contributed to {@code sum}
     */
    public record Result(
            int replicaId, int rank, long contribution, long replicaSum, long sum, long ranks) {}

    private final ReplicaGroupsOptions options;
    private final ProcessGroup world;

    private ReplicaGroups(ReplicaGroupsOptions options, ProcessGroup world) {
        this.options = options;
        this.world = world;
    }

    /**
     * Runs the example from the command line; exits 1 if it fails, 2 on bad usage.
     *
     * @param args the options
     */
    public static void main(String[] args) {
        if (args.length > 0 && ("--help".equals(args[0]) || "-h".equals(args[0]))) {
            System.out.println(ReplicaGroupsOptions.USAGE);
            return;
        }
        try {
            runExample(args);
        } catch (IllegalArgumentException e) { // a bad option, or an unknown --backend
            System.err.println("replica_groups: " + e.getMessage());
            System.exit(2);
        } catch (DistributedException e) {
            System.err.println("replica_groups: " + e.getMessage());
            System.exit(1);
        }
    }

    /**
     * Runs the example: under a launcher (WORLD_SIZE set) as one rank of its replica, else as a
     * replica of one rank.
     *
     * @param args the options, as on the command line
     * @return what this rank saw
     * @throws IllegalArgumentException on bad options, or a backend that does not exist
     * @throws DistributedException if the replicas do not meet in time, or the result is wrong
     */
    public static Result runExample(String... args) {
        return run(ReplicaGroupsOptions.parse(args));
    }

    private static Result run(ReplicaGroupsOptions options) {
        try {
            return ExampleGroup.run(
                    options.backend(),
                    options.timeout().multipliedBy(2),
                    world -> new ReplicaGroups(options, world).run());
        } catch (IOException | TranslateException e) {
            // ExampleGroup's bodies may read data; this one does not
            throw new IllegalStateException(e);
        }
    }

    private Result run() {
        int rank = world.getRank();
        try (NDManager manager = NDManager.newBaseManager(device())) {
            // [sum, number of ranks], so that every replica sees how many ranks contributed
            long contribution = 10L * options.replicaId() + rank + 1;
            NDArray x = manager.create(new long[] {contribution, 1});
            world.allReduce(x, ReduceOp.SUM); // 1. within the replica
            long replicaSum = x.getLong(0);
            MainStore main = rank == 0 ? MainStore.join(options) : null;
            try {
                if (main != null) {
                    acrossReplicas(main, x); // 2. across the replicas, leaders only
                }
                world.broadcast(x, 0); // 3. back to every rank of the replica
                Result result =
                        new Result(
                                options.replicaId(),
                                rank,
                                contribution,
                                replicaSum,
                                x.getLong(0),
                                x.getLong(1));
                if (main != null && options.hostsMainStore()) {
                    main.awaitFinished(); // the other replicas no longer need the store
                }
                report(result);
                return result;
            } finally {
                if (main != null) {
                    main.close();
                }
            }
        }
    }

    private void acrossReplicas(MainStore main, NDArray x) {
        System.out.println(
                "replica_groups: replica "
                        + options.replicaId()
                        + (options.hostsMainStore() ? " serves" : " reached")
                        + " the main store at "
                        + main.endpoint()
                        + "; waiting for "
                        + count(options.numReplicas(), "replica"));
        main.arrive(world.getSize());
        try (ProcessGroup replicas =
                ProcessGroups.init(
                        options.backend(),
                        main.replicas(),
                        options.replicaId(),
                        options.numReplicas(),
                        options.timeout())) {
            replicas.allReduce(x, ReduceOp.SUM);
        }
        main.finish();
    }

    // Prints the result, then checks it against the closed form: with R replicas of W ranks,
    // replica r sums 10rW + W(W+1)/2, and all of them 10W R(R-1)/2 + R W(W+1)/2.
    private void report(Result r) {
        long w = world.getSize();
        long n = options.numReplicas();
        long replicaSum = 10 * r.replicaId() * w + w * (w + 1) / 2;
        long sum = 10 * w * n * (n - 1) / 2 + n * w * (w + 1) / 2;
        System.out.printf(
                "replica_groups: replica %d/%d, rank %d/%d: contributed %d, replica sum %d,"
                        + " sum over all replicas %d from %s (expected %d from %d)%n",
                r.replicaId(),
                n,
                r.rank(),
                w,
                r.contribution(),
                r.replicaSum(),
                r.sum(),
                count(r.ranks(), "rank"),
                sum,
                n * w);
        if (r.replicaSum() != replicaSum || r.sum() != sum || r.ranks() != n * w) {
            throw new DistributedException(
                    "replica "
                            + r.replicaId()
                            + ", rank "
                            + r.rank()
                            + ": wrong result "
                            + r
                            + " (expected: replica sum "
                            + replicaSum
                            + ", sum "
                            + sum
                            + " from "
                            + n * w
                            + " ranks)");
        }
    }

    private static String count(long n, String noun) {
        return n + " " + noun + (n == 1 ? "" : "s");
    }

    // The arrays live where the backend works: the CPU, or (NCCL, later) each rank's own GPU.
    private Device device() {
        if ("nccl".equalsIgnoreCase(options.backend())) {
            return Device.gpu(DistributedEnv.fromProcess().getInt("LOCAL_RANK").orElse(0));
        }
        return Device.cpu();
    }
}
