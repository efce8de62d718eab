/**
 * The backend SPI under process groups: {@link ai.djl.distributed.backend.Backend}, one method per
 * collective, found through {@link ai.djl.distributed.backend.BackendProvider}; and {@link
 * ai.djl.distributed.backend.CommunicationException}, how a backend reports a dead, mismatched or
 * late peer. Helpers backends share: {@link ai.djl.distributed.backend.CallerWaits} (a blocking
 * caller's hint) and {@link ai.djl.distributed.backend.Waits} (bounded waits that an interrupt does
 * not cut short).
 */
package ai.djl.distributed.backend;
