/*
 * Copyright 2026 The DJL Distributed Authors.
 *
 * Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
 * in compliance with the License. You may obtain a copy of the License at
 *
 * http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software distributed under the License
 * is distributed on an "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express
 * or implied. See the License for the specific language governing permissions and limitations under
 * the License.
 */
/**
 * {@code bin/djlrun}, torchrun's counterpart: starts this node's worker JVMs with torchrun's
 * environment (RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT, TORCHELASTIC_*, ...),
 * prefixes their output lines with their rank, stops them all when one fails, restarts them (on
 * every node together) while {@code --max-restarts} allows, and forwards SIGTERM and SIGINT.
 *
 * <p>As torchrun's agent does, the launcher serves the job's TCPStore ({@code
 * TORCHELASTIC_USE_AGENT_STORE=True}): on a single node on a free port, with several nodes on node
 * 0 ({@code --master-addr/--master-port}) or on the rendezvous endpoint ({@code --rdzv-endpoint}).
 * The launchers of the nodes meet in the same store, under the prefix {@code djlrun/RUN_ID}.
 *
 * <p>{@link ai.djl.distributed.launch.Launcher} is the entry point; {@link
 * ai.djl.distributed.launch.WorkerMain} is the workers'.
 */
package ai.djl.distributed.launch;
