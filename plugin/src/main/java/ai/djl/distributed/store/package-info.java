/**
 * Stores: the key-value rendezvous through which the ranks of a job meet, compatible with PyTorch's
 * c10d stores.
 *
 * <p>{@link ai.djl.distributed.store.Store} mirrors {@code torch.distributed.Store}. {@link
 * ai.djl.distributed.store.HashStore} lives in one process, {@link
 * ai.djl.distributed.store.PrefixStore} namespaces another store, {@link
 * ai.djl.distributed.store.FileStore} shares PyTorch's on-disk format and locking, and {@code
 * ai.djl.distributed.store.tcp.TcpStore} speaks PyTorch's TCPStore wire protocol, so Java and
 * Python ranks can meet in one store.
 */
package ai.djl.distributed.store;
