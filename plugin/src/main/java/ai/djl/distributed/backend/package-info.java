/**
 * The backend SPI under process groups: {@link ai.djl.distributed.backend.Backend}, one method per
 * collective, found through {@link ai.djl.distributed.backend.BackendProvider}. Helpers backends
 * share: {@link ai.djl.distributed.backend.FutureWork} (a {@link ai.djl.distributed.Work} over a
 * future), {@link ai.djl.distributed.backend.AbortNotices} (why a rank aborted, told through the
 * store), {@link ai.djl.distributed.backend.CallerWaits} (a blocking caller's hint) and {@link
 * ai.djl.distributed.backend.Waits} (bounded waits that an interrupt does not cut short). A backend
 * reports a dead, mismatched or late peer with {@link ai.djl.distributed.CommunicationException}.
 */
package ai.djl.distributed.backend;
