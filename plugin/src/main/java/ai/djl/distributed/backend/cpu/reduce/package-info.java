/**
 * Element-wise reduction kernels of the CPU collectives backend: {@code dst[i] = op(dst[i],
 * src[i])} over little-endian buffers, with PyTorch's semantics per data type.
 *
 * <p>{@link ai.djl.distributed.backend.cpu.reduce.Reductions} is the entry point, in pure Java. Its
 * kernels copy both operands in blocks of 2 KiB into per-thread primitive arrays and combine those
 * with one loop per operation and type, which HotSpot's C2 vectorizes; the buffers are touched only
 * through bulk copies, so whether they are direct or heap buffers does not pollute the loops' type
 * profiles. {@link ai.djl.distributed.backend.cpu.reduce.TorchReductions} hands large direct
 * float32, float64 and float16 operands to libtorch without copying them, and everything else to
 * {@code Reductions}.
 */
package ai.djl.distributed.backend.cpu.reduce;
