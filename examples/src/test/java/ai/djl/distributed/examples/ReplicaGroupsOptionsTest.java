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
package ai.djl.distributed.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

import java.time.Duration;

class ReplicaGroupsOptionsTest {

    private static ReplicaGroupsOptions parse(String... args) {
        return ReplicaGroupsOptions.parse(args);
    }

    private static String fails(String... args) {
        return assertThrows(IllegalArgumentException.class, () -> parse(args)).getMessage();
    }

    @Test
    void replicaZeroHostsTheMainStoreUnlessToldOtherwise() {
        ReplicaGroupsOptions zero =
                parse("--replica-id", "0", "--num-replicas", "2", "--main-store", "node0:29600");
        assertEquals(0, zero.replicaId());
        assertEquals(2, zero.numReplicas());
        assertEquals("node0", zero.mainStoreHost());
        assertEquals(29600, zero.mainStorePort());
        assertTrue(zero.hostsMainStore());
        assertEquals("cpu", zero.backend());
        assertEquals(Duration.ofSeconds(300), zero.timeout());
        ReplicaGroupsOptions one =
                parse(
                        "--replica-id=1",
                        "--num-replicas=2",
                        "--main-store=[::1]:29600",
                        "--backend",
                        "nccl",
                        "--timeout",
                        "2.5");
        assertFalse(one.hostsMainStore());
        assertEquals("::1", one.mainStoreHost());
        assertEquals("nccl", one.backend());
        assertEquals(Duration.ofMillis(2500), one.timeout());
        String[] external = {"--num-replicas", "2", "--main-store", "h:1", "--host-main-store"};
        assertFalse(parse(concat(external, "false", "--replica-id", "0")).hostsMainStore());
        assertTrue(parse(concat(external, "true", "--replica-id", "1")).hostsMainStore());
    }

    private static String[] concat(String[] a, String... b) {
        String[] all = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
    }

    @Test
    void badOptionsAreNamedWithWhatWasExpected() {
        assertEquals(
                "--num-replicas: -1 (expected: given, at least 1)",
                fails("--replica-id", "0", "--main-store", "h:1"));
        assertEquals(
                "--replica-id: 2 (expected: given, from 0 to 1)",
                fails("--replica-id", "2", "--num-replicas", "2", "--main-store", "h:1"));
        assertEquals(
                "--main-store: missing (expected: HOST:PORT, the same for every replica)",
                fails("--replica-id", "0", "--num-replicas", "2"));
        assertEquals(
                "--main-store: h:x (expected: HOST:PORT with a port from 0 to 65535, e.g."
                        + " 127.0.0.1:29600)",
                fails("--main-store", "h:x"));
        assertEquals(
                "--main-store: port 0 (expected: the port the hosting replica serves on; only the"
                        + " host may pick a free one)",
                fails("--replica-id", "1", "--num-replicas", "2", "--main-store", "h:0"));
        assertEquals("--timeout: 0.0 (expected: > 0 seconds)", fails("--timeout", "0"));
        assertEquals("--replica-id: x (expected: an integer)", fails("--replica-id", "x"));
        assertEquals(
                "--host-main-store: yes (expected: true or false)",
                fails("--host-main-store", "yes"));
        assertEquals("--timeout: missing value (expected: --timeout VALUE)", fails("--timeout"));
        assertTrue(fails("--epochs", "3").startsWith("unknown option: --epochs\nusage:"));
    }
}
