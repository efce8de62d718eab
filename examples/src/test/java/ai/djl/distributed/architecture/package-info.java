/** The architecture test: the layers of every module, and no package cycles. */
package ai.djl.distributed.architecture;
