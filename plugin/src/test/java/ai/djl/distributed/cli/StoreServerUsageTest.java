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
package ai.djl.distributed.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;

@Timeout(60)
class StoreServerUsageTest {

    @Test
    void outOfRangeServerOptionsAreBadUsage() {
        // each was refused by the server's builder: status 1, naming its field (ioThreads,
        // warmUp: PT-0.005S) rather than the option
        List<List<String>> bad =
                List.of(
                        List.of("store-server", "--port", "70000"),
                        List.of("store-server", "--port", "-1"),
                        List.of("store-server", "--port", "0", "--io-threads", "0"),
                        List.of("store-server", "--port", "0", "--warm-up-ms", "-5"));
        for (List<String> line : bad) {
            assertEquals(2, Main.run(line), line.toString());
        }
    }
}
