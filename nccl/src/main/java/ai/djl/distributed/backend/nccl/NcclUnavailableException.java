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
package ai.djl.distributed.backend.nccl;

import ai.djl.distributed.DistributedException;

/**
 * The {@code nccl} backend cannot run here: no CUDA driver, no GPU, no NCCL (or one too old), or an
 * NCCL built for another CUDA than the driver's. The message says what was looked for, where, and
 * what was found.
 */
public class NcclUnavailableException extends DistributedException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what was looked for, where, and what was found
     */
    public NcclUnavailableException(String message) {
        super(message);
    }

    /**
     * Creates the exception with a cause.
     *
     * @param message what was looked for, where, and what was found
     * @param cause the underlying failure
     */
    public NcclUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
