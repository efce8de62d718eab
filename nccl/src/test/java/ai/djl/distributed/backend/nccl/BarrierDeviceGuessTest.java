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
package ai.djl.distributed.backend.nccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * The GPU a first barrier guesses, as {@code Distributed.localDevice} picks it: a worker given its
 * own GPU by {@code CUDA_VISIBLE_DEVICES} sees one, GPU 0, whatever its {@code LOCAL_RANK}. The
 * variable is set in a process of its own ({@link BarrierDeviceRank}).
 */
@Timeout(120)
class BarrierDeviceGuessTest {

    @Test
    void aWorkerThatSeesOneGpuRunsItsBarrierOnGpuZeroWhateverItsLocalRank(@TempDir Path dir)
            throws Exception {
        // The output goes to a file, read once the rank has exited: reading its pipe would block
        // past any bound if the rank hung.
        Path log = dir.resolve("rank.log");
        ProcessBuilder pb =
                new ProcessBuilder(
                                ProcessHandle.current().info().command().orElse("java"),
                                "-cp",
                                System.getProperty("java.class.path"),
                                BarrierDeviceRank.class.getName())
                        .redirectErrorStream(true)
                        .redirectOutput(log.toFile());
        pb.environment().put("LOCAL_RANK", "1");
        Process rank = pb.start();
        try {
            boolean exited = rank.waitFor(60, TimeUnit.SECONDS);
            if (!exited) {
                rank.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
            String out = Files.readString(log, StandardCharsets.UTF_8);
            assertTrue(exited, "the rank hangs: " + out);
            assertEquals(0, rank.exitValue(), out);
            assertTrue(
                    out.contains(
                            BarrierDeviceRank.DONE
                                    + "nccl (rank 1 of 2, NCCL communicator,"
                                    + " rank 1 of 2 on GPU 0)"),
                    out);
        } finally {
            rank.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }
}
