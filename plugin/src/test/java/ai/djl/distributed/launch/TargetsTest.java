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

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

/**
 * How {@code djlrun TARGET} finds what to run: an example's name first, else a main class of that
 * name on the workers' classpath, the default package included. The classes are compiled here, into
 * a directory given as {@code --classpath}, so they exist nowhere else.
 */
@Timeout(90)
class TargetsTest {

    private static final Duration WAIT = Duration.ofSeconds(60);

    // Package-private, as `class Train` usually is in the default package: `java Train` runs it.
    private static final String TRAIN =
            "class Train {\n"
                    + "    public static void main(String[] args) {\n"
                    + "        System.out.println(\"Train: rank \" + System.getenv(\"RANK\")\n"
                    + "                + \" of \" + System.getenv(\"WORLD_SIZE\")\n"
                    + "                + \", args \" + String.join(\",\", args));\n"
                    + "    }\n"
                    + "}\n";

    private static final String NO_MAIN = "public class Helper { static void main() {} }\n";

    @TempDir Path dir;

    /** Compiles one source file of the default package into {@code dir/classes}. */
    private Path compile(String className, String source) throws IOException {
        Path src = Files.createDirectories(dir.resolve("src")).resolve(className + ".java");
        Files.writeString(src, source, StandardCharsets.UTF_8);
        Path classes = Files.createDirectories(dir.resolve("classes"));
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        ByteArrayOutputStream errors = new ByteArrayOutputStream();
        int status = javac.run(null, null, errors, "-d", classes.toString(), src.toString());
        assertEquals(0, status, () -> errors.toString(StandardCharsets.UTF_8));
        return classes;
    }

    @Test
    void aMainClassOfTheDefaultPackageRunsOnEveryWorker() throws Exception {
        Path classes = compile("Train", TRAIN);
        try (LauncherProcess djlrun =
                LauncherProcess.start(
                        Map.of(),
                        "--jvm-opts",
                        LauncherProcess.SMALL_JVM,
                        "--nproc-per-node",
                        "2",
                        "--classpath",
                        classes.toString(),
                        "Train",
                        "--epochs",
                        "3")) {
            assertEquals(0, djlrun.waitFor(WAIT), djlrun::describe);
            for (int rank = 0; rank < 2; rank++) {
                assertTrue(
                        djlrun.stdout()
                                .contains(
                                        "[rank"
                                                + rank
                                                + "]: Train: rank "
                                                + rank
                                                + " of 2, args --epochs,3\n"),
                        djlrun::describe);
            }
        }
    }

    @Test
    void aNameThatIsNeitherAnExampleNorAMainClassIsRefusedNamingBoth() throws Exception {
        String either =
                " (expected: one of the examples ddp_basics, fsdp_basics, transformer_basics,"
                        + " replica_groups, or a class with public static void main(String[]) on"
                        + " --classpath, $DJL_DIST_CLASSPATH or the launcher's classpath, such as"
                        + " com.example.Train, or Train in the default package)\n";
        assertRefused(
                "main class ddp_basic not found on the workers' classpath, and 'ddp_basic' is not"
                        + " an example"
                        + either,
                "ddp_basic");
        assertRefused("'ddp-basics' is neither an example nor a class name" + either, "ddp-basics");
        Path classes = compile("Helper", NO_MAIN);
        assertRefused(
                "Helper has no public static void main(String[])",
                "--classpath",
                classes.toString(),
                "Helper");
    }

    /** Runs djlrun in this JVM and checks that it refuses the TARGET, as bad usage. */
    private static void assertRefused(String message, String... args) {
        LaunchOptionsTest.Result r = LaunchOptionsTest.run(args);
        assertEquals(2, r.status(), r::err);
        assertTrue(r.err().startsWith("djlrun: TARGET: " + message), r.err());
    }
}
