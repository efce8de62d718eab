/**
 * Interoperability with a real PyTorch (the peer of {@code ../shared/peers}): Python clients on the
 * Java server, the Java client on PyTorch's server, and one FileStore file shared by both. Run with
 * {@code mvn -Pinterop verify}; the default build leaves them out because they need the peer
 * installed.
 */
package ai.djl.distributed.interop;
