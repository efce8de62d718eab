/**
 * The command line behind {@code bin/djl-dist}: a standalone store server, an operator's store
 * client, and benchmarks. Each subcommand is one class; {@link ai.djl.distributed.cli.Main}
 * dispatches.
 */
package ai.djl.distributed.cli;
