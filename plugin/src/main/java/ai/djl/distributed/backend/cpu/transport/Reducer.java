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
package ai.djl.distributed.backend.cpu.transport;

import java.nio.ByteBuffer;

/**
 * How a reducing receive combines arriving elements into its buffer ({@link Transport#recvReduce});
 * the transport knows only element sizes, not the reduction.
 */
public interface Reducer {

    /**
     * Returns the size of one element.
     *
     * @return bytes per element
     */
    int elementSize();

    /**
     * Combines {@code count} elements: {@code acc[i] = op(acc[i], src[i])}.
     *
     * @param acc the accumulator
     * @param accOffset its byte offset
     * @param src the arriving elements
     * @param srcOffset their byte offset
     * @param count the number of elements
     */
    void reduce(ByteBuffer acc, int accOffset, ByteBuffer src, int srcOffset, int count);
}
