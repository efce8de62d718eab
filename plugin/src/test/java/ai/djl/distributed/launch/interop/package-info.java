/**
 * The launcher against PyTorch's own: Java workers started by torchrun (from the peer of {@code
 * ../shared/peers}) and by djlrun see the same variables and rendezvous through the agent store.
 * Left out of the default build, as every {@code interop} package; run with {@code mvn -Pinterop}.
 */
package ai.djl.distributed.launch.interop;
