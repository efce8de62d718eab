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
package ai.djl.distributed.ddp;

/**
 * The options of a {@link DistributedDataParallel}, as its builder collected them: immutable, and
 * checked once by {@link #validate()}.
 *
 * @param hook how buckets are reduced
 * @param firstBucketBytes the size limit of the first bucket
 * @param bucketCapBytes the size limit of later buckets
 * @param broadcastBuffers whether each step re-broadcasts the buffers from rank 0
 * @param findUnusedParameters whether parameters no rank used are found and left out of updates
 * @param overlapWithForward whether a step's reductions may overlap the next forward pass
 * @param stagedBackward whether reductions start during a staged backward pass
 */
record DdpOptions(
        CommHook hook,
        long firstBucketBytes,
        long bucketCapBytes,
        boolean broadcastBuffers,
        boolean findUnusedParameters,
        boolean overlapWithForward,
        boolean stagedBackward) {

    /**
     * Returns the options every rank must share, as a line of the layout's signature: those that
     * decide which collectives a step issues (the buckets, the unused-parameter map, the buffers'
     * broadcast, and the staged backward pass, which never rebuilds its buckets). A rank that
     * differs would issue collectives its peers do not expect: a hang, or sums of unrelated
     * buffers, on backends that cannot tell.
     *
     * @return one line, ending with a newline
     */
    String signature() {
        return "DDP options: firstBucketBytes "
                + firstBucketBytes
                + ", bucketCapBytes "
                + bucketCapBytes
                + ", findUnusedParameters "
                + findUnusedParameters
                + ", broadcastBuffers "
                + broadcastBuffers
                + ", stagedBackward "
                + stagedBackward
                + "\n";
    }

    /**
     * Checks the options together.
     *
     * @throws IllegalArgumentException if a limit is not positive, the hook is missing, or the
     *     staged backward pass is combined with an option it excludes
     */
    void validate() {
        if (bucketCapBytes <= 0 || firstBucketBytes <= 0) {
            throw new IllegalArgumentException(
                    "bucket limits: "
                            + firstBucketBytes
                            + ", "
                            + bucketCapBytes
                            + " bytes (expected: > 0)");
        }
        if (hook == null) {
            throw new IllegalArgumentException("commHook: null (expected: a CommHook)");
        }
        if (stagedBackward && (overlapWithForward || findUnusedParameters)) {
            throw new IllegalArgumentException(
                    "stagedBackward with overlapWithForward "
                            + overlapWithForward
                            + ", findUnusedParameters "
                            + findUnusedParameters
                            + " (expected: neither, with a staged backward pass)");
        }
    }
}
