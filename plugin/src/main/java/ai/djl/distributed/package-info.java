/**
 * DJL Distributed: torch.distributed for DJL.
 *
 * <p>This package holds what every layer shares: the unchecked root exception {@link
 * ai.djl.distributed.DistributedException} and its few subclasses. Rendezvous lives in {@code
 * ai.djl.distributed.store}; process groups, backends and the launcher in their own packages.
 */
package ai.djl.distributed;
