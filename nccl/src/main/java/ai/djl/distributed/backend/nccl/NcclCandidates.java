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
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;

/**
 * Where {@link NcclLocator} looks for {@code libnccl.so.2}, in order (see {@code docs/nccl.md}):
 *
 * <ol>
 *   <li>an explicit path: the system property {@value #PROPERTY}, else the variable {@value
 *       #VARIABLE} (a file, or a folder holding {@value #LIBRARY}); when given, nothing else is
 *       tried ({@code NCCL_} variables are NCCL's own parameters, hence the {@code DJL_} prefix);
 *   <li>an NCCL already mapped in this process ({@code /proc/self/maps}): a process must not load a
 *       second one, so when there is one, nothing else is tried (one whose file was since replaced
 *       on disk is loaded by its soname, which gives the library already loaded);
 *   <li>the pip wheel next to a PyTorch install, as {@code libtorch_cuda.so}'s RPATH finds it:
 *       {@code $PYTORCH_LIBRARY_PATH/../../nvidia/nccl/lib}, then the same beside a libtorch
 *       already mapped in this process (DJL's, wherever DJL found it);
 *   <li>the active virtual environment: {@code $VIRTUAL_ENV/lib/python3*}{@code
 *       /site-packages/nvidia/nccl/lib};
 *   <li>conda: {@code $CONDA_PREFIX/lib};
 *   <li>the system loader ({@code LD_LIBRARY_PATH}, {@code ld.so.cache}, the default folders).
 * </ol>
 *
 * Pure: it reads only what it is given (variables, properties, the process's maps) and lists the
 * file system only to expand {@code python3*}. Immutable.
 */
public final class NcclCandidates {

    /** The system property naming the library (a file or its folder). */
    public static final String PROPERTY = "djl.dist.nccl.library";

    /** The environment variable naming the library, read when the property is not set. */
    public static final String VARIABLE = "DJL_DIST_NCCL_LIBRARY";

    /** The library's file name. */
    public static final String LIBRARY = "libnccl.so.2";

    private static final String WHEEL = "nvidia/nccl/lib/" + LIBRARY;

    /**
     * One place to try.
     *
     * @param place where it comes from, for the log and the error (e.g. "pip wheel next to PyTorch
     *     ($PYTORCH_LIBRARY_PATH=/x)")
     * @param target an absolute path, or for the system loader the bare name
     * @param bySystemLoader whether {@code target} is a name for the system loader
     */
    public record Candidate(String place, String target, boolean bySystemLoader) {}

    private NcclCandidates() {}

    /**
     * Lists the places to try, in order.
     *
     * @param env reads an environment variable (null when unset)
     * @param properties reads a system property (null when unset)
     * @param maps the files mapped in the process
     * @return the candidates: only the explicit one when a path is given
     */
    public static List<Candidate> list(
            UnaryOperator<String> env, UnaryOperator<String> properties, ProcessMaps maps) {
        List<Candidate> out = new ArrayList<>();
        String explicit = properties.apply(PROPERTY);
        String source = "system property " + PROPERTY;
        if (blank(explicit)) {
            explicit = env.apply(VARIABLE);
            source = "environment variable " + VARIABLE;
        }
        if (!blank(explicit)) {
            Path p = Path.of(explicit.trim()).toAbsolutePath().normalize();
            Path file = Files.isDirectory(p) ? p.resolve(LIBRARY) : p;
            out.add(
                    new Candidate(
                            "explicit path (" + source + "=" + explicit + ")", file + "", false));
            return out;
        }
        for (Path mapped : maps.named("libnccl.so")) {
            String name = ProcessMaps.loadName(mapped, LIBRARY);
            out.add(
                    !name.equals(mapped.toString())
                            ? new Candidate(
                                    "already loaded in this process, from "
                                            + ProcessMaps.withoutDeletedMark(mapped.toString())
                                            + " since replaced on disk: by its soname",
                                    name,
                                    true)
                            : new Candidate("already loaded in this process", name, false));
        }
        if (!out.isEmpty()) {
            return distinct(out); // a second NCCL in one process is never loaded
        }
        String torch = env.apply("PYTORCH_LIBRARY_PATH");
        if (!blank(torch)) {
            out.add(
                    new Candidate(
                            "pip wheel next to PyTorch ($PYTORCH_LIBRARY_PATH=" + torch + ")",
                            wheelBeside(Path.of(torch.trim())),
                            false));
        }
        maps.first("libtorch_cpu.so")
                .ifPresent(
                        lib ->
                                out.add(
                                        new Candidate(
                                                "pip wheel next to the libtorch loaded in this"
                                                        + " process ("
                                                        + lib
                                                        + ")",
                                                wheelBeside(lib.toAbsolutePath().getParent()),
                                                false)));
        String venv = env.apply("VIRTUAL_ENV");
        if (!blank(venv)) {
            Path lib = Path.of(venv.trim()).toAbsolutePath().normalize().resolve("lib");
            List<Path> pythons = pythonFolders(lib);
            if (pythons.isEmpty()) {
                out.add(
                        new Candidate(
                                "active virtualenv ($VIRTUAL_ENV=" + venv + ")",
                                lib.resolve("python3*/site-packages/" + WHEEL).toString(),
                                false));
            }
            for (Path python : pythons) {
                out.add(
                        new Candidate(
                                "active virtualenv ($VIRTUAL_ENV=" + venv + ")",
                                python.resolve("site-packages/" + WHEEL).toString(),
                                false));
            }
        }
        String conda = env.apply("CONDA_PREFIX");
        if (!blank(conda)) {
            out.add(
                    new Candidate(
                            "conda ($CONDA_PREFIX=" + conda + ")",
                            Path.of(conda.trim())
                                            .toAbsolutePath()
                                            .normalize()
                                            .resolve("lib/" + LIBRARY)
                                    + "",
                            false));
        }
        String ld = env.apply("LD_LIBRARY_PATH");
        out.add(
                new Candidate(
                        "system loader (LD_LIBRARY_PATH="
                                + (blank(ld) ? "<unset>" : ld)
                                + ", ld.so.cache, default folders)",
                        LIBRARY,
                        true));
        return distinct(out);
    }

    /** The first candidate of each target: PyTorch's folder may be found two ways. */
    private static List<Candidate> distinct(List<Candidate> all) {
        List<Candidate> out = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        for (Candidate c : all) {
            if (seen.add(c.target())) {
                out.add(c);
            }
        }
        return out;
    }

    /** {@code <torch lib folder>/../../nvidia/nccl/lib/libnccl.so.2}, as PyTorch's RPATH. */
    private static String wheelBeside(Path torchLib) {
        Path dir = torchLib.toAbsolutePath().normalize();
        Path torch = dir.getParent();
        Path sitePackages = torch == null ? null : torch.getParent();
        return (sitePackages == null ? dir : sitePackages).resolve(WHEEL).toString();
    }

    private static List<Path> pythonFolders(Path lib) {
        if (!Files.isDirectory(lib)) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(lib)) {
            return s.filter(p -> p.getFileName().toString().startsWith("python3"))
                    .filter(Files::isDirectory)
                    .sorted()
                    .toList();
        } catch (IOException e) {
            return List.of();
        }
    }

    private static boolean blank(String s) {
        return s == null || s.isBlank();
    }
}
