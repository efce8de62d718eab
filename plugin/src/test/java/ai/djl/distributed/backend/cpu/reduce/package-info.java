/** Tests of the reduction kernels, against reference arithmetic written independently. */
package ai.djl.distributed.backend.cpu.reduce;
