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

/**
 * What the nodes agreed at their rendezvous: this node's place and where the workers meet.
 *
 * @param groupRank this node's rank (GROUP_RANK)
 * @param groupWorldSize the number of nodes (GROUP_WORLD_SIZE)
 * @param baseRank the global rank of this node's local rank 0
 * @param worldSize the number of workers of all nodes (WORLD_SIZE)
 * @param localWorldSize the number of workers of this node (LOCAL_WORLD_SIZE)
 * @param masterAddr the agent store's host, as every node reaches it (MASTER_ADDR)
 * @param masterPort the agent store's port (MASTER_PORT)
 */
record NodeAssignment(
        int groupRank,
        int groupWorldSize,
        int baseRank,
        int worldSize,
        int localWorldSize,
        String masterAddr,
        int masterPort) {

    /**
     * Returns the global rank of a local worker.
     *
     * @param localRank 0 to {@code localWorldSize - 1}
     * @return its RANK
     */
    int rank(int localRank) {
        return baseRank + localRank;
    }

    /**
     * Describes the assignment in a line.
     *
     * @return e.g. {@code "ranks 2 to 3 of 4, node 1 of 2"}
     */
    String describe() {
        String ranks =
                localWorldSize == 1
                        ? "rank " + baseRank
                        : "ranks " + baseRank + " to " + (baseRank + localWorldSize - 1);
        return ranks + " of " + worldSize + ", node " + groupRank + " of " + groupWorldSize;
    }
}
