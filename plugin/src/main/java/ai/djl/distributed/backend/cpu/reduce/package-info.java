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
