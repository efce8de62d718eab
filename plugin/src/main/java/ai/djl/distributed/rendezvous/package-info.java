/**
 * Rendezvous: how the ranks of a job find their store, as {@code torch.distributed.rendezvous}
 * does. {@link ai.djl.distributed.rendezvous.Rendezvous} turns an init method ({@code env://},
 * {@code tcp://host:port}, {@code file:///path}) into a store, a rank and a world size; {@link
 * ai.djl.distributed.rendezvous.DistributedEnv} is the one place that reads the launcher's
 * environment (RANK, WORLD_SIZE, MASTER_ADDR, ... as torchrun sets them).
 */
package ai.djl.distributed.rendezvous;
