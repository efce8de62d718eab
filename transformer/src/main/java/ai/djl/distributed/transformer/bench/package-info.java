/** Benchmarks of the transformer: training throughput, to compare with PyTorch's. */
package ai.djl.distributed.transformer.bench;
