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
package ai.djl.distributed.pg;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.Device;
import ai.djl.distributed.backend.Backend;
import ai.djl.distributed.backend.BackendContext;
import ai.djl.distributed.backend.BackendProvider;
import ai.djl.distributed.store.HashStore;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Each backend's store is where PyTorch puts a process-group backend's: {@code
 * PrefixStore("<device>/", PrefixStore("<group name>/", PrefixStore("default_pg", store)))}, with
 * {@code cuda} for DJL's {@code gpu}. So an NCCL unique id at key {@code 0} of the world lies at
 * {@code default_pg/0//cuda//0} in the user's store, where a Python rank looks for it.
 */
class BackendStoreLayoutTest {

    @Test
    void backendsSeePyTorchsPrefixesForTheirGroupAndDevice() {
        HashStore user = new HashStore();
        List<BackendContext> seen = new ArrayList<>();
        List<String> splits = new ArrayList<>();
        BackendProvider recording =
                new BackendProvider() {
                    @Override
                    public List<String> getNames() {
                        return List.of("recording");
                    }

                    @Override
                    public List<String> getDeviceTypes() {
                        return List.of(Device.Type.CPU, Device.Type.GPU);
                    }

                    @Override
                    public Backend create(BackendContext context) {
                        seen.add(context);
                        return new Backend() {
                            @Override
                            public String getName() {
                                return "recording";
                            }

                            @Override
                            public Optional<Backend> split(int[] members, BackendContext child) {
                                splits.add(
                                        context.deviceType()
                                                + " "
                                                + Arrays.toString(members)
                                                + (child == null
                                                        ? " not a member"
                                                        : " rank "
                                                                + child.rank()
                                                                + " of "
                                                                + child.size()));
                                return Optional.empty();
                            }

                            @Override
                            public void close() {}
                        };
                    }
                };
        Map<String, BackendProvider> providers = new LinkedHashMap<>();
        providers.put(Device.Type.CPU, recording);
        providers.put(Device.Type.GPU, recording);
        GroupSettings settings =
                new GroupSettings(
                        BackendSpec.parse("cpu:recording,gpu:recording"),
                        providers,
                        Map.of(),
                        DebugLevel.OFF);
        GroupContext context = new GroupContext(user, false, settings, 0, 2);
        ProcessGroup world = context.createWorld(Duration.ofSeconds(10));
        ProcessGroup sub = world.newGroup(0).orElseThrow();
        assertTrue(world.newGroup(1).isEmpty());
        // Every rank offers each split to the world's backends, members with the child's context.
        assertEquals(
                List.of(
                        "cpu [0] rank 0 of 1",
                        "gpu [0] rank 0 of 1",
                        "cpu [1] not a member",
                        "gpu [1] not a member"),
                splits);
        assertEquals(4, seen.size());
        String[] expected = {
            "default_pg/0//cpu//k",
            "default_pg/0//cuda//k",
            "default_pg/1//cpu//k",
            "default_pg/1//cuda//k"
        };
        for (int i = 0; i < 4; i++) {
            seen.get(i).store().set("k", new byte[] {(byte) i});
            assertEquals(i, user.get(expected[i])[0], expected[i]);
        }
        sub.close();
        world.close();
    }
}
