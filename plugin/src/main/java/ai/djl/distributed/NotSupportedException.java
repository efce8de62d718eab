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
package ai.djl.distributed;

/**
 * An operation that this implementation does not offer, for example queues on a {@code FileStore}.
 * The message names the implementation and the operation.
 */
public class NotSupportedException extends DistributedException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception for an implementation and an operation.
     *
     * @param implementation the store or backend, as the user knows it (e.g. {@code "FileStore"})
     * @param operation the operation it lacks (e.g. {@code "queuePush"})
     */
    public NotSupportedException(String implementation, String operation) {
        super(implementation + " does not support " + operation);
    }
}
