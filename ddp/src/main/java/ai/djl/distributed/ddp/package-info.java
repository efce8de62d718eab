/**
 * Distributed data-parallel training for DJL, as PyTorch's {@code DistributedDataParallel}: {@link
 * ai.djl.distributed.ddp.DistributedDataParallel} (a {@code Trainer} that averages gradients over
 * the ranks of a process group in buckets), {@link ai.djl.distributed.ddp.BucketAssignment}, {@link
 * ai.djl.distributed.ddp.CommHook} and {@link ai.djl.distributed.ddp.CommHooks} (how buckets go on
 * the wire), {@link ai.djl.distributed.ddp.DistributedSampler} (each rank's share of a dataset) and
 * {@link ai.djl.distributed.ddp.DdpCheckpoint} (saving and resuming).
 */
package ai.djl.distributed.ddp;
