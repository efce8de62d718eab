/**
 * The pure-Java CPU backend ({@code "cpu"}, alias {@code "gloo"}): collectives in place on CPU
 * NDArrays' memory. Algorithms live in {@code algorithm}, byte transport in {@code transport},
 * element-wise reductions in {@code reduce}; this package ties them to the backend SPI.
 */
package ai.djl.distributed.backend.cpu;
