/**
 * Benchmarks run by {@code bin/djl-dist bench}: measurements, not tests. Each prints one line per
 * measurement so runs side by side with PyTorch's peers can be compared as ratios.
 */
package ai.djl.distributed.bench;
