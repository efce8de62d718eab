/**
 * Moving bytes between ranks, ignorant of collectives: {@link
 * ai.djl.distributed.backend.cpu.transport.Transport} (posted sends and receives matched by slot,
 * every frame signed with its operation so that mismatches are caught) and its TCP implementation,
 * a full mesh driven by one selector thread.
 */
package ai.djl.distributed.backend.cpu.transport;
