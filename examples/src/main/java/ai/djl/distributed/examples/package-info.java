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
 * Runnable examples of DJL Distributed, each a class with a {@code main} and a {@code runExample}
 * that tests call: {@link ai.djl.distributed.examples.TransformerBasics} trains the GPT of the
 * transformer module on the Europarl corpus ({@code bin/djlrun transformer_basics}); {@link
 * ai.djl.distributed.examples.DdpBasics} trains a small classifier data-parallel ({@code bin/djlrun
 * --nproc-per-node N ddp_basics}); {@link ai.djl.distributed.examples.ReplicaGroups} reduces across
 * independent jobs through a store they share ({@code bin/djlrun --nproc-per-node N replica_groups
 * --replica-id I ...}, one job per replica).
 */
package ai.djl.distributed.examples;
