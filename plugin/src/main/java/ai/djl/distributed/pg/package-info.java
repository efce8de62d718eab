/**
 * Process groups and collectives on DJL NDArrays, as {@code torch.distributed}: {@link
 * ai.djl.distributed.pg.ProcessGroup} (the collectives, synchronous and asynchronous), {@link
 * ai.djl.distributed.pg.ProcessGroups} and {@link ai.djl.distributed.pg.Distributed} (creating the
 * world), {@link ai.djl.distributed.pg.DeviceMesh}, and the types they share with the layers below:
 * {@link ai.djl.distributed.ReduceOp}, {@link ai.djl.distributed.Work}.
 */
package ai.djl.distributed.pg;
