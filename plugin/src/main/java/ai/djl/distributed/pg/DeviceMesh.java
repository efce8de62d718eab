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
package ai.djl.distributed.pg;

import java.util.Optional;

/**
 * A 2-D layout of the world's ranks, as {@code init_device_mesh(device, (rows, cols))}: rank r sits
 * at row {@code r / cols}, column {@code r % cols}. Dimension 0 runs down a column (typically data
 * parallel: ranks holding the same model shard), dimension 1 along a row (typically model
 * parallel). Creating a mesh is collective over the world: every rank creates every row and column
 * group, in the same order, and keeps the two it belongs to.
 *
 * <p>Closing the mesh destroys its groups (the world group stays). Thread-safe.
 */
public final class DeviceMesh implements AutoCloseable {

    private final int rows;
    private final int cols;
    private final int row;
    private final int col;
    private final ProcessGroup rowGroup;
    private final ProcessGroup colGroup;

    private DeviceMesh(int rows, int cols, int rank, ProcessGroup rowGroup, ProcessGroup colGroup) {
        this.rows = rows;
        this.cols = cols;
        this.row = rank / cols;
        this.col = rank % cols;
        this.rowGroup = rowGroup;
        this.colGroup = colGroup;
    }

    /**
     * Lays the world out as {@code rows x cols}; blocks until the groups have connected.
     *
     * @param world the world group (or a group of every world rank)
     * @param rows the size of dimension 0
     * @param cols the size of dimension 1
     * @return the mesh
     * @throws IllegalArgumentException if the sizes do not multiply to the world size, or {@code
     *     world} is a sub-group: its members alone would call {@link ProcessGroup#newGroup}, which
     *     every world rank must call, and with its ranks taken as world ranks
     */
    public static DeviceMesh create(ProcessGroup world, int rows, int cols) {
        int worldSize = world.context().worldSize();
        boolean whole = world.getSize() == worldSize;
        for (int i = 0; whole && i < worldSize; i++) {
            whole = world.getGlobalRank(i) == i;
        }
        if (!whole) {
            throw new IllegalArgumentException(
                    "world: "
                            + world
                            + " (expected: the world group, of all "
                            + worldSize
                            + " ranks)");
        }
        if (rows <= 0 || cols <= 0 || (long) rows * cols != world.getSize()) {
            throw new IllegalArgumentException(
                    "mesh: "
                            + rows
                            + " x "
                            + cols
                            + " (expected: positive sizes whose product is the world size "
                            + world.getSize()
                            + ")");
        }
        int rank = world.getRank();
        ProcessGroup mine = null;
        for (int r = 0; r < rows; r++) {
            int[] ranks = new int[cols];
            for (int c = 0; c < cols; c++) {
                ranks[c] = r * cols + c;
            }
            Optional<ProcessGroup> g = world.newGroup(ranks);
            if (g.isPresent()) {
                mine = g.get();
            }
        }
        ProcessGroup rowGroup = mine;
        mine = null;
        for (int c = 0; c < cols; c++) {
            int[] ranks = new int[rows];
            for (int r = 0; r < rows; r++) {
                ranks[r] = r * cols + c;
            }
            Optional<ProcessGroup> g = world.newGroup(ranks);
            if (g.isPresent()) {
                mine = g.get();
            }
        }
        return new DeviceMesh(rows, cols, rank, rowGroup, mine);
    }

    /**
     * Returns the group along one dimension: for dimension 0 the ranks of this rank's column, for
     * dimension 1 those of its row.
     *
     * @param dim 0 or 1
     * @return the group
     */
    public ProcessGroup getGroup(int dim) {
        if (dim == 0) {
            return colGroup;
        } else if (dim == 1) {
            return rowGroup;
        }
        throw new IllegalArgumentException("dim: " + dim + " (expected: 0 or 1)");
    }

    /**
     * Returns this rank's coordinates.
     *
     * @return {row, column}
     */
    public int[] getCoordinate() {
        return new int[] {row, col};
    }

    /**
     * Returns the mesh's shape.
     *
     * @return {rows, columns}
     */
    public int[] getShape() {
        return new int[] {rows, cols};
    }

    /** Destroys the row and column groups: both, even when the first fails to close. */
    @Override
    public void close() {
        try {
            rowGroup.close();
        } catch (RuntimeException | Error e) {
            try {
                colGroup.close();
            } catch (RuntimeException | Error ex) {
                e.addSuppressed(ex);
            }
            throw e;
        }
        colGroup.close();
    }
}
