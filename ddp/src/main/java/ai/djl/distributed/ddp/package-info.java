/**
 * Distributed data-parallel training for DJL, as PyTorch's {@code DistributedDataParallel}: {@link
 * ai.djl.distributed.ddp.DistributedDataParallel} (a {@code Trainer} that averages gradients over
 * the ranks of a process group in buckets), {@link ai.djl.distributed.ddp.BucketAssignment}, {@link
 * ai.djl.distributed.ddp.CommHook} and {@link ai.djl.distributed.ddp.CommHooks} (how buckets go on
 * the wire) and {@link ai.djl.distributed.ddp.DdpCheckpoint} (saving and resuming). What it shares
 * with FSDP (the sampler, model sync, rank-averaged metrics, rank-0 listeners, flat buffers) is in
 * {@code ai.djl.distributed.parallel}.
 */
package ai.djl.distributed.ddp;
