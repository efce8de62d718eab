package ai.djl.distributed.pg;

/** The collectives of a process group, as the mismatch check names and numbers them. */
enum Collective {
    BROADCAST,
    ALL_REDUCE,
    REDUCE,
    ALL_GATHER,
    ALL_GATHER_INTO_TENSOR,
    GATHER,
    SCATTER,
    REDUCE_SCATTER,
    REDUCE_SCATTER_TENSOR,
    ALL_TO_ALL,
    ALL_TO_ALL_SINGLE,
    BARRIER
}
