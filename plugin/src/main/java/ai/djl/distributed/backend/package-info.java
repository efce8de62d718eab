/**
 * The backend SPI under process groups: {@link ai.djl.distributed.backend.Backend}, one method per
 * collective, found through {@link ai.djl.distributed.backend.BackendProvider}; and {@link
 * ai.djl.distributed.backend.CommunicationException}, how a backend reports a dead, mismatched or
 * late peer.
 */
package ai.djl.distributed.backend;
