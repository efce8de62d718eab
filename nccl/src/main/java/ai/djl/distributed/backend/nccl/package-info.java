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
 * The {@code nccl} backend, as PyTorch's {@code ProcessGroupNCCL}: {@link
 * ai.djl.distributed.backend.nccl.NcclBackend} runs every collective on GPU arrays through NCCL,
 * planned as NCCL calls ({@link ai.djl.distributed.backend.nccl.NcclPlans}), on a non-blocking
 * communicator with its own stream ordered against DJL's ({@code NcclCommunicator}), watched by a
 * watchdog thread. Beneath it: JNA bindings to NCCL ({@code libnccl.so.2}) and the CUDA driver
 * ({@code libcuda.so.1}), the discovery of those libraries, device pointers of DJL arrays through
 * libtorch's stable C shim, PyTorch's mapping of reduce ops and data types onto NCCL's, and
 * PyTorch's store keys for the communicators' unique ids.
 *
 * <p>{@link ai.djl.distributed.backend.nccl.NcclBackendProvider} registers the name {@code nccl}
 * for GPU arrays; where the driver, a GPU or NCCL is missing it fails at creation with what it
 * looked for, where, and what it found (see {@code docs/nccl.md}). No class here needs a GPU to
 * load: the native libraries are bound only when asked for. None of it has run on a GPU yet.
 */
package ai.djl.distributed.backend.nccl;
