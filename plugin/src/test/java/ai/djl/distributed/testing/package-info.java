/** Test harness: child JVMs for multi-process tests, and waiting helpers. */
package ai.djl.distributed.testing;
