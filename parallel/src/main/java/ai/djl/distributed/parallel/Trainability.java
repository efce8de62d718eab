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
package ai.djl.distributed.parallel;

import ai.djl.nn.Parameter;
import ai.djl.util.Pair;

import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.function.BiFunction;

/**
 * Which parameters train, as they did when a data-parallel trainer laid out its work for them
 * (DDP's buckets, FSDP's units): a parameter frozen after that would go on being reduced and
 * updated, and one unfrozen would never be, so {@link #check} refuses both, as PyTorch's DDP does.
 * The user's intent is read from each {@link Parameter}'s own flag ({@link
 * Parameter#requiresGradient()}, which {@code freezeParameters} sets), not from an array's: FSDP
 * makes the views it hands out take gradients itself. Running statistics are left out (DJL marks
 * them as taking gradients when a block is unfrozen, but nothing trains them). Immutable; reads the
 * parameters' flags on the calling thread.
 */
public final class Trainability {

    private final List<String> names;
    private final List<Parameter> parameters;
    private final boolean[] trained;

    private Trainability(List<String> names, List<Parameter> parameters, boolean[] trained) {
        this.names = names;
        this.parameters = parameters;
        this.trained = trained;
    }

    /**
     * Records whether each parameter trains now.
     *
     * @param parameters the model's parameters, in definition order; a parameter used twice is
     *     recorded once, under the name of its first use (as the units name it)
     * @return the record
     */
    public static Trainability of(Iterable<Pair<String, Parameter>> parameters) {
        List<String> names = new ArrayList<>();
        List<Parameter> params = new ArrayList<>();
        List<Boolean> flags = new ArrayList<>();
        Set<Parameter> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Pair<String, Parameter> p : parameters) {
            Parameter param = p.getValue();
            if (seen.add(param) && !ModelSync.isRunningStatistic(param.getType())) {
                names.add(p.getKey());
                params.add(param);
                flags.add(param.requiresGradient());
            }
        }
        boolean[] trained = new boolean[flags.size()];
        for (int i = 0; i < trained.length; i++) {
            trained[i] = flags.get(i);
        }
        return new Trainability(List.copyOf(names), List.copyOf(params), trained);
    }

    /**
     * Checks that every parameter trains as it did when recorded.
     *
     * @param message the refusal's message, given the first changed parameter's name and whether it
     *     was frozen (else unfrozen) since
     * @throws IllegalStateException with that message, for the first parameter (in definition
     *     order) frozen or unfrozen since
     */
    public void check(BiFunction<String, Boolean, String> message) {
        for (int i = 0; i < trained.length; i++) {
            if (parameters.get(i).requiresGradient() != trained[i]) {
                throw new IllegalStateException(message.apply(names.get(i), trained[i]));
            }
        }
    }
}
