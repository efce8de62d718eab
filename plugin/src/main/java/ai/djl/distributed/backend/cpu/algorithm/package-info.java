/**
 * Collective algorithms, one class per collective as in gloo: each sees only a {@link
 * ai.djl.distributed.backend.cpu.algorithm.CollectiveContext} (rank, size, send/receive by index,
 * the board and peer memory where the group has them, deadline, reduction, scratch), never the
 * transport's mechanism.
 */
package ai.djl.distributed.backend.cpu.algorithm;
