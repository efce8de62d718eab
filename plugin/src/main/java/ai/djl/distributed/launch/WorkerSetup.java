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
package ai.djl.distributed.launch;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How this node's workers are started: each worker's command line, the environment torchrun would
 * give it ({@code local_elastic_agent.py}'s list, in PyTorch 2.6) and the prefix of its output
 * lines. Immutable.
 */
final class WorkerSetup {

    private static final Pattern TEMPLATE_VARIABLE = Pattern.compile("\\$(?:\\{(\\w+)}|(\\w+))");

    private final LaunchOptions options;
    private final NodeAssignment node;
    private final String mainClass;
    private final String classpath;
    private final String java;
    private final String ompNumThreads;
    private final Map<String, String> malloc;
    private final String ncclAsyncErrorHandling;
    private final long agentPid;

    /**
     * Creates the setup.
     *
     * @param options the launch options
     * @param node this node's assignment
     * @param mainClass the workers' main class
     * @param classpath the workers' classpath
     * @param java the {@code java} executable
     * @param ompNumThreads OMP_NUM_THREADS of the workers, or {@code null} to leave it unset
     * @param malloc glibc malloc variables of the workers ({@link MallocSettings}), possibly none
     * @param ncclAsyncErrorHandling TORCH_NCCL_ASYNC_ERROR_HANDLING of the launcher, or {@code
     *     null}
     * @param agentPid the launcher's pid, which the workers watch
     */
    WorkerSetup(
            LaunchOptions options,
            NodeAssignment node,
            String mainClass,
            String classpath,
            String java,
            String ompNumThreads,
            Map<String, String> malloc,
            String ncclAsyncErrorHandling,
            long agentPid) {
        this.options = options;
        this.node = node;
        this.mainClass = mainClass;
        this.classpath = classpath;
        this.java = java;
        this.ompNumThreads = ompNumThreads;
        this.malloc = Map.copyOf(malloc);
        this.ncclAsyncErrorHandling = ncclAsyncErrorHandling;
        this.agentPid = agentPid;
    }

    /**
     * Returns this node's assignment.
     *
     * @return the assignment
     */
    NodeAssignment node() {
        return node;
    }

    /**
     * Returns the variables a worker gets on top of the launcher's own environment: torchrun's,
     * then the malloc settings.
     *
     * @param localRank the worker's local rank
     * @param restartCount how many times the workers were restarted
     * @return the variables, in torchrun's order
     */
    Map<String, String> environment(int localRank, int restartCount) {
        int rank = node.rank(localRank);
        Map<String, String> env = new LinkedHashMap<>();
        env.put("LOCAL_RANK", Integer.toString(localRank));
        env.put("RANK", Integer.toString(rank));
        env.put("GROUP_RANK", Integer.toString(node.groupRank()));
        // one role per job, as with torchrun: role ranks are the global ones
        env.put("ROLE_RANK", Integer.toString(rank));
        env.put("ROLE_NAME", options.role());
        env.put("LOCAL_WORLD_SIZE", Integer.toString(node.localWorldSize()));
        env.put("WORLD_SIZE", Integer.toString(node.worldSize()));
        env.put("GROUP_WORLD_SIZE", Integer.toString(node.groupWorldSize()));
        env.put("ROLE_WORLD_SIZE", Integer.toString(node.worldSize()));
        env.put("MASTER_ADDR", node.masterAddr());
        env.put("MASTER_PORT", Integer.toString(node.masterPort()));
        env.put("TORCHELASTIC_RESTART_COUNT", Integer.toString(restartCount));
        env.put("TORCHELASTIC_MAX_RESTARTS", Integer.toString(options.maxRestarts()));
        env.put("TORCHELASTIC_RUN_ID", options.rdzvId());
        // the launcher always serves (or shares) the store: workers are all its clients
        env.put("TORCHELASTIC_USE_AGENT_STORE", "True");
        env.put(
                "TORCH_NCCL_ASYNC_ERROR_HANDLING",
                ncclAsyncErrorHandling == null ? "1" : ncclAsyncErrorHandling);
        if (ompNumThreads != null) {
            env.put("OMP_NUM_THREADS", ompNumThreads);
        }
        env.putAll(malloc);
        return env;
    }

    /**
     * Returns a worker's command line: this JVM's {@code java}, the JVM options, DJL's thread
     * settings from OMP_NUM_THREADS, and {@link WorkerMain} running the main class.
     *
     * @return the command
     */
    List<String> command() {
        List<String> cmd = new ArrayList<>();
        cmd.add(java);
        cmd.addAll(options.jvmOpts());
        if (ompNumThreads != null && isPositiveInteger(ompNumThreads)) {
            addProperty(cmd, "ai.djl.pytorch.num_threads", ompNumThreads);
            addProperty(cmd, "ai.djl.pytorch.num_interop_threads", "1");
        }
        cmd.add("-D" + WorkerMain.AGENT_PID_PROPERTY + "=" + agentPid);
        cmd.add("-cp");
        cmd.add(classpath);
        cmd.add(WorkerMain.class.getName());
        cmd.add(mainClass);
        cmd.addAll(options.targetArgs());
        return cmd;
    }

    /**
     * Returns the prefix of a worker's output lines, from the template's {@code ${rank}}, {@code
     * ${local_rank}} and {@code ${role_name}} (Python's {@code Template.safe_substitute}: unknown
     * variables stay as written).
     *
     * @param localRank the worker's local rank
     * @return the prefix, possibly empty
     */
    String linePrefix(int localRank) {
        Map<String, String> vars =
                Map.of(
                        "rank", Integer.toString(node.rank(localRank)),
                        "local_rank", Integer.toString(localRank),
                        "role_name", options.role());
        Matcher m = TEMPLATE_VARIABLE.matcher(options.logLinePrefixTemplate());
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            String name = m.group(1) != null ? m.group(1) : m.group(2);
            String value = vars.get(name);
            m.appendReplacement(out, Matcher.quoteReplacement(value != null ? value : m.group()));
        }
        m.appendTail(out);
        return out.toString();
    }

    // The user's own -D setting wins over the one derived from OMP_NUM_THREADS.
    private void addProperty(List<String> cmd, String name, String value) {
        String flag = "-D" + name + "=";
        if (options.jvmOpts().stream().noneMatch(o -> o.startsWith(flag))) {
            cmd.add(flag + value);
        }
    }

    private static boolean isPositiveInteger(String s) {
        try {
            return Integer.parseInt(s.trim()) > 0;
        } catch (NumberFormatException e) {
            return false;
        }
    }
}
