/**
 * Element-wise reduction kernels of the CPU collectives backend: {@code dst[i] = op(dst[i],
 * src[i])} over little-endian buffers, with PyTorch's semantics per data type.
 *
 * <p>{@link ai.djl.distributed.backend.cpu.reduce.Reductions} is the entry point. The kernels copy
 * both operands in blocks of {@value ai.djl.distributed.backend.cpu.reduce.Scratch#BLOCK_BYTES}
 * bytes into per-thread primitive arrays and combine those with one loop per operation, which
 * HotSpot's C2 vectorizes; the buffers are only touched through bulk copies, so whether they are
 * direct or heap buffers does not pollute the loops' type profiles.
 */
package ai.djl.distributed.backend.cpu.reduce;
