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
package ai.djl.distributed.backend.cpu.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.rendezvous.DistributedEnv;

import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.NetworkInterface;
import java.util.Map;

/**
 * The interface variables: an error names the variable whose value it rejects, the project's own or
 * gloo's, so that the user fixes the one they set.
 */
class SocketInterfacesTest {

    private static final String GLOO = "GLOO_SOCKET_IFNAME";

    @Test
    void anUnknownInterfaceNamesTheVariableThatGaveIt() {
        assertUnknown(Map.of(SocketInterfaces.IFNAME, "nosuch0"), SocketInterfaces.IFNAME);
        assertUnknown(Map.of(GLOO, "nosuch0"), GLOO);
        // Both set: the project's own wins, and is the one named.
        assertUnknown(
                Map.of(SocketInterfaces.IFNAME, "nosuch0", GLOO, "lo"), SocketInterfaces.IFNAME);
    }

    @Test
    void gloosVariableIsHonouredWhenTheProjectsIsUnset() throws Exception {
        NetworkInterface lo = NetworkInterface.getByInetAddress(InetAddress.getLoopbackAddress());
        InetAddress a =
                SocketInterfaces.localAddress(DistributedEnv.of(Map.of(GLOO, lo.getName())));
        assertTrue(a.isLoopbackAddress(), String.valueOf(a));
    }

    private static void assertUnknown(Map<String, String> env, String variable) {
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> SocketInterfaces.localAddress(DistributedEnv.of(env)));
        assertTrue(
                e.getMessage().startsWith(variable + ": 'nosuch0' (expected: one of ["),
                e.getMessage());
        assertEquals(1, e.getMessage().split("SOCKET_IFNAME", -1).length - 1, e.getMessage());
    }
}
