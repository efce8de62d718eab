/**
 * Moving bytes between ranks, ignorant of collectives: {@link
 * ai.djl.distributed.backend.cpu.transport.Transport} (posted sends and receives matched by slot,
 * every frame signed with its operation so that mismatches are caught) with its implementations:
 * TCP (a full mesh driven by one selector thread), shared-memory rings, and both combined on one
 * host ({@link ai.djl.distributed.backend.cpu.transport.HybridTransport}). Between ranks of one
 * host two more mechanisms serve the algorithms directly: the shared-memory board for small
 * collectives ({@link ai.djl.distributed.backend.cpu.transport.ShmBoard}) and copies between the
 * ranks' own memory ({@link ai.djl.distributed.backend.cpu.transport.PeerMemory}).
 */
package ai.djl.distributed.backend.cpu.transport;
