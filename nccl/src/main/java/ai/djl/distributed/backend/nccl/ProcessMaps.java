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

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The shared libraries mapped into this process, read from {@code /proc/self/maps}: how the backend
 * finds an NCCL or a libtorch that something else (PyTorch's JNI, another library) has already
 * loaded, whatever loader did it. Immutable.
 */
public final class ProcessMaps {

    private static final Path SELF = Path.of("/proc/self/maps");

    /**
     * What the kernel appends to the path of a mapped file no longer on disk (a wheel upgraded or
     * removed under the running process).
     */
    private static final String DELETED = " (deleted)";

    private final List<String> files;

    private ProcessMaps(List<String> files) {
        this.files = List.copyOf(files);
    }

    /**
     * Reads this process's maps now; empty where there is no {@code /proc} (not Linux).
     *
     * @return the mapped files
     */
    public static ProcessMaps ofThisProcess() {
        try {
            return parse(Files.readAllLines(SELF));
        } catch (IOException | UnsupportedOperationException e) {
            return new ProcessMaps(List.of());
        }
    }

    /**
     * Reads maps lines ({@code address perms offset dev inode path}).
     *
     * @param lines the lines of a maps file
     * @return the distinct mapped files, in the order first seen
     */
    public static ProcessMaps parse(List<String> lines) {
        Set<String> files = new LinkedHashSet<>();
        for (String line : lines) {
            // The path is the sixth field and may contain spaces; the first five never do.
            String[] parts = line.trim().split("\\s+", 6);
            if (parts.length == 6 && parts[5].startsWith("/")) {
                files.add(parts[5].trim());
            }
        }
        return new ProcessMaps(new ArrayList<>(files));
    }

    /**
     * Returns every mapped file.
     *
     * @return absolute paths
     */
    public List<String> files() {
        return files;
    }

    /**
     * Returns the mapped files whose name starts with a prefix, e.g. {@code libnccl.so}.
     *
     * @param prefix the start of the file name
     * @return their paths, in the order first mapped
     */
    public List<Path> named(String prefix) {
        List<Path> found = new ArrayList<>();
        for (String f : files) {
            Path p = Path.of(f);
            Path name = p.getFileName();
            if (name != null && name.toString().startsWith(prefix)) {
                found.add(p);
            }
        }
        return found;
    }

    /**
     * Returns a mapped file's name without the kernel's {@code " (deleted)"} mark.
     *
     * @param mapped a path or file name as the maps give it
     * @return the name the file had
     */
    public static String withoutDeletedMark(String mapped) {
        return mapped.endsWith(DELETED)
                ? mapped.substring(0, mapped.length() - DELETED.length())
                : mapped;
    }

    /**
     * Returns how to load a library mapped in this process so as to get that very library: its
     * path, or, where the kernel marks the file deleted, its soname. The path of a deleted file
     * names nothing, or a new file put there since, another file (another inode) that the loader
     * would map as a second copy; by soname it returns the library already loaded.
     *
     * @param mapped the library's path as the maps give it
     * @param soname the library's soname, e.g. {@code libnccl.so.2}
     * @return the path or the soname
     */
    public static String loadName(Path mapped, String soname) {
        String path = mapped.toString();
        return path.equals(withoutDeletedMark(path)) ? path : soname;
    }

    /**
     * Returns the first mapped file whose name starts with a prefix.
     *
     * @param prefix the start of the file name
     * @return its path, if any
     */
    public Optional<Path> first(String prefix) {
        List<Path> found = named(prefix);
        return found.isEmpty() ? Optional.empty() : Optional.of(found.get(0));
    }
}
