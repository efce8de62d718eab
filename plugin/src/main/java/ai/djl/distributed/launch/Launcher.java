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

import ai.djl.distributed.DistributedException;

import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.security.CodeSource;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The entry point of {@code bin/djlrun [options] TARGET [args]}, torchrun's counterpart: see {@link
 * LaunchOptions#USAGE} ({@code --help}) for the options and the package documentation for how it
 * works.
 */
public final class Launcher {

    private Launcher() {}

    /**
     * Runs the launcher and exits with its status.
     *
     * @param args the command line
     */
    public static void main(String[] args) {
        System.exit(run(Arrays.asList(args), System.getenv(), System.out, System.err));
    }

    /**
     * Runs the launcher: parses the options, checks the TARGET, and runs this node's workers until
     * they end; blocks until then. A shutdown hook stops the workers if the JVM is told to stop
     * (SIGTERM, SIGINT) while they run; the JVM then exits with 128 + the signal's number.
     *
     * @param args the command line
     * @param env the launcher's environment
     * @param out where the workers' stdout goes
     * @param err where the workers' stderr and the launcher's messages go
     * @return the exit status: 0 on success, 1 if a worker failed or the nodes could not meet, 2 on
     *     bad usage
     */
    public static int run(
            List<String> args, Map<String, String> env, PrintStream out, PrintStream err) {
        if (LaunchOptions.wantsHelp(args)) {
            out.println(LaunchOptions.USAGE);
            return 0;
        }
        LaunchOptions options;
        Function<NodeAssignment, WorkerSetup> setups;
        try {
            options = LaunchOptions.parse(args, env);
            String mainClass = Targets.mainClass(options.target());
            String classpath = workerClasspath(options);
            Targets.checkMainClass(options.target(), mainClass, classpath);
            String omp = ompNumThreads(options, env, err);
            Map<String, String> malloc =
                    MallocSettings.forWorkers(env, System.getProperty("os.name"), err);
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            long pid = ProcessHandle.current().pid();
            String nccl = env.get("TORCH_NCCL_ASYNC_ERROR_HANDLING");
            setups =
                    node ->
                            new WorkerSetup(
                                    options, node, mainClass, classpath, java, omp, malloc, nccl,
                                    pid);
        } catch (IllegalArgumentException e) {
            err.println("djlrun: " + e.getMessage());
            err.println("usage: djlrun [options] TARGET [args...] (djlrun --help lists them)");
            return 2;
        }
        return runAgent(new NodeAgent(options, setups, out, err), err);
    }

    private static int runAgent(NodeAgent agent, PrintStream err) {
        Thread hook = new Thread(agent::shutdown, "djlrun-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            return agent.run();
        } catch (IOException | DistributedException e) {
            err.println("djlrun: " + e.getMessage());
            return 1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            err.println("djlrun: interrupted");
            return 1;
        } catch (RuntimeException e) {
            err.println("djlrun: unexpected failure: " + e);
            e.printStackTrace(err);
            return 1;
        } finally {
            agent.close();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException e) {
                // the JVM is shutting down: the hook is running or has run
            }
        }
    }

    // torchrun's rule: with several workers and no OMP_NUM_THREADS, each worker gets one thread.
    private static String ompNumThreads(
            LaunchOptions options, Map<String, String> env, PrintStream err) {
        String omp = env.get("OMP_NUM_THREADS");
        if (omp != null && !omp.isEmpty()) {
            return omp;
        }
        if (options.nprocPerNode() > 1) {
            err.println(
                    "djlrun: setting OMP_NUM_THREADS=1 (and DJL's ai.djl.pytorch.num_threads=1)"
                            + " for each worker by default, to avoid overloading the system;"
                            + " set OMP_NUM_THREADS to tune it for your application");
            return "1";
        }
        return null;
    }

    // The launcher's own classpath, or the one given plus this jar, where WorkerMain lives.
    private static String workerClasspath(LaunchOptions options) {
        if (options.classpath() == null) {
            return System.getProperty("java.class.path");
        }
        CodeSource self = Launcher.class.getProtectionDomain().getCodeSource();
        if (self == null) {
            return options.classpath();
        }
        try {
            return options.classpath() + File.pathSeparator + Path.of(self.getLocation().toURI());
        } catch (URISyntaxException e) {
            return options.classpath();
        }
    }
}
