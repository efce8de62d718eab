/**
 * Runnable examples of DJL Distributed, each a class with a {@code main} and a {@code runExample}
 * that tests call: {@link ai.djl.distributed.examples.TransformerBasics} trains the GPT of the
 * transformer module on the Europarl corpus ({@code bin/djlrun transformer_basics}); {@link
 * ai.djl.distributed.examples.DdpBasics} trains a small classifier data-parallel ({@code bin/djlrun
 * --nproc-per-node N ddp_basics}); {@link ai.djl.distributed.examples.ReplicaGroups} reduces across
 * independent jobs through a store they share ({@code bin/djlrun --nproc-per-node N replica_groups
 * --replica-id I ...}, one job per replica).
 */
package ai.djl.distributed.examples;
