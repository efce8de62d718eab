/**
 * The end-to-end fault suite: real launcher and worker processes ({@code djlrun}) that are killed,
 * stalled, interrupted and restarted, over every transport, checked from their output, their exit
 * and what they leave in {@code /dev/shm}.
 */
package ai.djl.distributed.e2e;
