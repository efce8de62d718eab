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

import ai.djl.distributed.backend.nccl.NcclCandidates.Candidate;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.ptr.IntByReference;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Finds and loads {@code libnccl.so.2}: tries the {@link NcclCandidates} in order, takes the first
 * that loads and is at least {@link NcclVersion#FLOOR}, and logs its path and version. When none
 * does, the {@link NcclUnavailableException} lists every place looked at and what was found there
 * ("no such file", "not a loadable library: ...", "NCCL 2.17.1, below the floor 2.18.0").
 *
 * <p>Opening is injectable ({@link Opener}) so that the order and the messages can be tested
 * without an NCCL; {@link #ofProcess()} reads this process's variables, properties and maps and
 * opens through JNA. Thread-safe (stateless but for its inputs).
 */
public final class NcclLocator {

    private static final Logger logger = LoggerFactory.getLogger(NcclLocator.class);

    /** Opens a library: JNA in production. */
    @FunctionalInterface
    public interface Opener {
        /**
         * Opens a library.
         *
         * @param target an absolute path, or a bare name for the system loader
         * @return the bound library
         * @throws UnsatisfiedLinkError when it cannot be loaded
         */
        NcclLibrary open(String target);
    }

    /**
     * The library found.
     *
     * @param library the bound API
     * @param path the file loaded (for the system loader, the file it picked where known)
     * @param version its version
     * @param place where it was found (a {@link Candidate#place()})
     */
    public record Found(NcclLibrary library, String path, NcclVersion version, String place) {}

    private final List<Candidate> candidates;
    private final Opener opener;

    /**
     * Creates a locator.
     *
     * @param candidates the places to try, in order
     * @param opener how to open one
     */
    public NcclLocator(List<Candidate> candidates, Opener opener) {
        this.candidates = List.copyOf(candidates);
        this.opener = opener;
    }

    /**
     * Creates the locator of this process: its variables, properties and mapped files, JNA.
     *
     * @return the locator
     */
    public static NcclLocator ofProcess() {
        return new NcclLocator(
                NcclCandidates.list(
                        System::getenv, System::getProperty, ProcessMaps.ofThisProcess()),
                NcclLocator::openWithJna);
    }

    /**
     * Returns the places this locator tries, in order.
     *
     * @return the candidates
     */
    public List<Candidate> candidates() {
        return candidates;
    }

    /**
     * Finds, loads and checks the library.
     *
     * @return the first candidate that loads with a version at least the floor
     * @throws NcclUnavailableException listing every place tried and what was found there
     */
    public Found locate() {
        List<String> tried = new ArrayList<>();
        for (Candidate c : candidates) {
            if (!c.bySystemLoader() && !Files.exists(Path.of(c.target()))) {
                tried.add(line(c, "no such file"));
                continue;
            }
            NcclLibrary lib;
            try {
                lib = opener.open(c.target());
            } catch (UnsatisfiedLinkError | IllegalArgumentException e) {
                tried.add(line(c, "not a loadable library: " + firstLine(e.getMessage())));
                continue;
            }
            NcclVersion version;
            try {
                version = versionOf(lib);
            } catch (UnsatisfiedLinkError | IllegalStateException | IllegalArgumentException e) {
                // IllegalArgumentException: a version code NcclVersion cannot read (0 or less).
                tried.add(line(c, "loaded, but not an NCCL: " + firstLine(e.getMessage())));
                continue;
            }
            if (!version.atLeast(NcclVersion.FLOOR)) {
                tried.add(
                        line(
                                c,
                                "NCCL "
                                        + version
                                        + ", below the floor "
                                        + NcclVersion.FLOOR
                                        + " (ncclCommSplit)"));
                continue;
            }
            String path = c.bySystemLoader() ? loadedFile(c.target()) : c.target();
            logger.info("NCCL {} from {} ({})", version, path, c.place());
            return new Found(lib, path, version, c.place());
        }
        throw new NcclUnavailableException(
                "no usable NCCL ("
                        + NcclCandidates.LIBRARY
                        + ", at least "
                        + NcclVersion.FLOOR
                        + "); looked at, in order:\n  "
                        + String.join("\n  ", tried)
                        + "\n(name the library with -D"
                        + NcclCandidates.PROPERTY
                        + "=PATH or "
                        + NcclCandidates.VARIABLE
                        + "=PATH, or install the pip wheel"
                        + " nvidia-nccl-cu12 or -cu13 matching the CUDA of the driver)");
    }

    /**
     * Reads a library's version.
     *
     * @param lib the library
     * @return the version
     * @throws IllegalStateException if {@code ncclGetVersion} fails
     * @throws IllegalArgumentException if the code it reports is no version's
     */
    static NcclVersion versionOf(NcclLibrary lib) {
        IntByReference code = new IntByReference();
        int result = lib.ncclGetVersion(code);
        if (result != NcclResult.SUCCESS.code()) {
            throw new IllegalStateException("ncclGetVersion returned " + result);
        }
        return NcclVersion.fromCode(code.getValue());
    }

    private static NcclLibrary openWithJna(String target) {
        return Native.load(target, NcclLibrary.class);
    }

    /** The file the system loader picked for a name, where JNA or the maps can tell. */
    private static String loadedFile(String name) {
        try {
            File f = NativeLibrary.getInstance(name).getFile();
            if (f != null) {
                return f.getPath();
            }
        } catch (UnsatisfiedLinkError e) {
            // Already loaded through the opener; fall back to the maps.
        }
        return ProcessMaps.ofThisProcess().first(name).map(Path::toString).orElse(name);
    }

    private static String line(Candidate c, String found) {
        return c.place() + ": " + c.target() + " -> " + found;
    }

    /**
     * The reason in a (JNA) message: its first line, and the loader's own line after it where the
     * first only introduces it ("Unable to load library 'x':"); JNA's list of its own search
     * follows and is left out.
     */
    static String firstLine(String message) {
        if (message == null) {
            return "(no message)";
        }
        String[] lines = message.split("\n", 3);
        String first = lines[0].trim();
        return first.endsWith(":") && lines.length > 1 ? first + " " + lines[1].trim() : first;
    }
}
