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
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.backend.nccl.NcclCandidates.Candidate;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

class NcclLocatorTest {

    @TempDir Path tmp;

    private static Path fake(Path file) throws IOException {
        Files.createDirectories(file.getParent());
        return Files.writeString(file, "not a shared library\n");
    }

    private static List<String> targets(List<Candidate> candidates) {
        List<String> out = new ArrayList<>();
        for (Candidate c : candidates) {
            out.add(c.target());
        }
        return out;
    }

    @Test
    void everyPlaceIsListedInTheDocumentedOrder() throws IOException {
        Path venv = tmp.resolve("venv");
        Path site = venv.resolve("lib/python3.11/site-packages");
        Files.createDirectories(site.resolve("torch/lib"));
        Files.createDirectories(venv.resolve("lib/python3.12/site-packages"));
        Path djlTorch = tmp.resolve("djl/pytorch/2.7.1-cpu/libtorch_cpu.so");
        Map<String, String> env = new HashMap<>();
        env.put("PYTORCH_LIBRARY_PATH", site.resolve("torch/lib").toString());
        env.put("VIRTUAL_ENV", venv.toString());
        env.put("CONDA_PREFIX", tmp.resolve("conda").toString());
        ProcessMaps maps =
                ProcessMaps.parse(
                        List.of(
                                "7f20-7f30 r-xp 00000000 08:01 124 " + djlTorch,
                                "7f30-7f40 rw-p 00000000 00:00 0 ",
                                "7f40-7f50 rw-p 00000000 00:00 0 [heap]"));
        List<Candidate> list = NcclCandidates.list(env::get, k -> null, maps);
        String wheel = "nvidia/nccl/lib/libnccl.so.2";
        assertEquals(
                List.of(
                        site.resolve(wheel).toString(),
                        tmp.resolve("djl").resolve(wheel).toString(),
                        // python3.11's wheel is PyTorch's, tried once (above).
                        venv.resolve("lib/python3.12/site-packages").resolve(wheel).toString(),
                        tmp.resolve("conda/lib/libnccl.so.2").toString(),
                        "libnccl.so.2"),
                targets(list));
        assertTrue(list.get(0).place().contains("PYTORCH_LIBRARY_PATH"), list.get(0).place());
        assertTrue(list.get(1).place().contains("libtorch loaded"), list.get(1).place());
        assertTrue(list.get(2).place().contains("VIRTUAL_ENV"), list.get(2).place());
        assertTrue(list.get(3).place().contains("CONDA_PREFIX"), list.get(3).place());
        assertTrue(list.get(4).bySystemLoader());
        assertTrue(list.get(4).place().startsWith("system loader"), list.get(4).place());
    }

    @Test
    void anNcclAlreadyLoadedIsTheOnlyPlaceTried() {
        Map<String, String> env = Map.of("CONDA_PREFIX", "/conda");
        ProcessMaps maps =
                ProcessMaps.parse(
                        List.of(
                                "7f00-7f10 r-xp 00000000 08:01 123 /opt/nccl/libnccl.so.2.21.5",
                                "7f10-7f20 r--p 00001000 08:01 123 /opt/nccl/libnccl.so.2.21.5"));
        List<Candidate> list = NcclCandidates.list(env::get, k -> null, maps);
        assertEquals(List.of("/opt/nccl/libnccl.so.2.21.5"), targets(list));
        assertTrue(list.get(0).place().contains("already loaded"), list.get(0).place());
    }

    @Test
    void anNcclMappedFromAFileSinceReplacedIsLoadedBySoname() {
        // The kernel marks a mapped file no longer on disk (a wheel upgraded under the process);
        // by path the loader would find nothing, or load the new file as a second NCCL.
        String wheel = "/venv/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2";
        ProcessMaps maps =
                ProcessMaps.parse(
                        List.of("7f00-7f10 r-xp 00000000 08:01 42 " + wheel + " (deleted)"));
        Map<String, String> env = Map.of("CONDA_PREFIX", "/conda");
        List<Candidate> list = NcclCandidates.list(env::get, k -> null, maps);
        assertEquals(List.of("libnccl.so.2"), targets(list));
        assertTrue(list.get(0).bySystemLoader());
        assertTrue(list.get(0).place().contains(wheel + " since replaced"), list.get(0).place());
        List<String> opened = new ArrayList<>();
        NcclLocator locator =
                new NcclLocator(
                        list,
                        t -> {
                            opened.add(t);
                            return NativeFakes.nccl(22809);
                        });
        assertEquals(new NcclVersion(2, 28, 9), locator.locate().version());
        assertEquals(List.of("libnccl.so.2"), opened);
    }

    @Test
    void aLibraryWithABadVersionCodeIsListedAndTheNextTried() {
        NcclLibrary bad = NativeFakes.nccl(0);
        NcclLibrary good = NativeFakes.nccl(22809);
        List<Candidate> candidates =
                List.of(
                        new Candidate("first", "libnotnccl.so", true),
                        new Candidate("second", "libnccl.so.2", true));
        NcclLocator.Found found =
                new NcclLocator(candidates, t -> t.equals("libnotnccl.so") ? bad : good).locate();
        assertSame(good, found.library());
        assertEquals("second", found.place());
        NcclLocator onlyBad = new NcclLocator(candidates.subList(0, 1), t -> bad);
        NcclUnavailableException e = assertThrows(NcclUnavailableException.class, onlyBad::locate);
        assertTrue(
                e.getMessage()
                        .contains(
                                "first: libnotnccl.so -> loaded, but not an NCCL: NCCL version"
                                        + " code: 0"),
                e.getMessage());
    }

    @Test
    void anExplicitPathIsTheOnlyPlaceTried() throws IOException {
        Path dir = Files.createDirectories(tmp.resolve("mine"));
        Map<String, String> env = Map.of("DJL_DIST_NCCL_LIBRARY", "/from/env/libnccl.so.2");
        ProcessMaps maps = ProcessMaps.parse(List.of("1-2 r-xp 0 0:0 1 /opt/libnccl.so.2"));
        List<Candidate> byEnv = NcclCandidates.list(env::get, k -> null, maps);
        assertEquals(List.of("/from/env/libnccl.so.2"), targets(byEnv));
        assertTrue(byEnv.get(0).place().contains("DJL_DIST_NCCL_LIBRARY"));
        // The property wins over the variable; a folder means the library inside it.
        Map<String, String> props = Map.of("djl.dist.nccl.library", dir.toString());
        List<Candidate> byProperty = NcclCandidates.list(env::get, props::get, maps);
        assertEquals(List.of(dir.resolve("libnccl.so.2").toString()), targets(byProperty));
        assertTrue(byProperty.get(0).place().contains("djl.dist.nccl.library"));
    }

    @Test
    void withNothingUsableTheErrorListsEveryPlaceAndWhatWasThere() throws IOException {
        Path torchLib = tmp.resolve("site-packages/torch/lib");
        Files.createDirectories(torchLib);
        fake(tmp.resolve("site-packages/nvidia/nccl/lib/libnccl.so.2"));
        fake(tmp.resolve("conda/lib/libnccl.so.2"));
        Map<String, String> env =
                Map.of(
                        "PYTORCH_LIBRARY_PATH", torchLib.toString(),
                        "VIRTUAL_ENV", tmp.resolve("novenv").toString(),
                        "CONDA_PREFIX", tmp.resolve("conda").toString());
        // The real loader (JNA): the fakes are files, but no libraries.
        NcclLocator locator =
                new NcclLocator(
                        NcclCandidates.list(env::get, k -> null, ProcessMaps.parse(List.of())),
                        target -> com.sun.jna.Native.load(target, NcclLibrary.class));
        NcclUnavailableException e = assertThrows(NcclUnavailableException.class, locator::locate);
        String m = e.getMessage();
        String[] lines = m.split("\n");
        assertTrue(lines[0].contains("libnccl.so.2") && lines[0].contains("2.18.0"), m);
        assertTrue(lines[1].contains("PYTORCH_LIBRARY_PATH"), m);
        assertTrue(lines[1].contains("not a loadable library"), m);
        // dlopen's own reason for the fake, not just JNA's preamble.
        assertTrue(lines[1].contains("ELF") || lines[1].contains("too short"), m);
        assertTrue(lines[2].contains("VIRTUAL_ENV") && lines[2].endsWith("no such file"), m);
        assertTrue(lines[3].contains("CONDA_PREFIX"), m);
        assertTrue(lines[3].contains("not a loadable library"), m);
        assertTrue(lines[4].startsWith("  system loader"), m);
        assertTrue(lines[4].contains("not a loadable library"), m);
        assertTrue(m.contains("djl.dist.nccl.library"), m);
    }

    @Test
    void librariesBelowTheFloorArePassedOver() throws IOException {
        Path old = fake(tmp.resolve("old/libnccl.so.2"));
        Path good = fake(tmp.resolve("good/libnccl.so.2"));
        NcclLibrary oldLib = NativeFakes.nccl(21703);
        NcclLibrary goodLib = NativeFakes.nccl(22105);
        List<Candidate> candidates =
                List.of(
                        new Candidate("first", old.toString(), false),
                        new Candidate("second", good.toString(), false));
        NcclLocator locator =
                new NcclLocator(
                        candidates,
                        t -> t.startsWith(old.getParent().toString()) ? oldLib : goodLib);
        NcclLocator.Found found = locator.locate();
        assertSame(goodLib, found.library());
        assertEquals(new NcclVersion(2, 21, 5), found.version());
        assertEquals(good.toString(), found.path());
        assertEquals("second", found.place());

        NcclLocator onlyOld = new NcclLocator(candidates.subList(0, 1), t -> oldLib);
        NcclUnavailableException e = assertThrows(NcclUnavailableException.class, onlyOld::locate);
        assertTrue(e.getMessage().contains("NCCL 2.17.3, below the floor 2.18.0"), e.getMessage());
    }

    @Test
    void mapsLinesAreRead() {
        ProcessMaps maps =
                ProcessMaps.parse(
                        List.of(
                                "55d0-55d1 r--p 00000000 fd:01 42 /usr/bin/java",
                                "7f01-7f02 r-xp 00000000 fd:01 43 /a b/libcudart.so.13.0.48",
                                "7f02-7f03 r-xp 00000000 fd:01 43 /a b/libcudart.so.13.0.48",
                                "7f03-7f04 rw-p 00000000 00:00 0",
                                "7ffd-7ffe rw-p 00000000 00:00 0 [stack]"));
        assertEquals(List.of("/usr/bin/java", "/a b/libcudart.so.13.0.48"), maps.files());
        assertEquals(Path.of("/a b/libcudart.so.13.0.48"), maps.first("libcudart.so").get());
        assertTrue(maps.first("libnccl").isEmpty());
    }
}
