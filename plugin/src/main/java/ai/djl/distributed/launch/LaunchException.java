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
package ai.djl.distributed.launch;

import ai.djl.distributed.DistributedException;

/**
 * The launcher cannot go on: the nodes did not meet in time, the agent store was lost or cannot be
 * served, or a worker cannot be started. The message says what, where and for how long.
 */
final class LaunchException extends DistributedException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what failed and why
     */
    LaunchException(String message) {
        super(message);
    }

    /**
     * Creates the exception.
     *
     * @param message what failed and why
     * @param cause the underlying failure
     */
    LaunchException(String message, Throwable cause) {
        super(message, cause);
    }
}
