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

import java.io.File;
import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * What {@code djlrun TARGET} runs: an example's name mapped to its class, else the main class of
 * that name (qualified, or in the default package, as {@code java Train} takes it), checked on the
 * workers' classpath before any worker starts. An example's name wins over a class of the same
 * name.
 */
final class Targets {

    /** The examples' names, as torchrun users know them, and their main classes. */
    static final Map<String, String> EXAMPLES = examples();

    private static final Pattern CLASS_NAME =
            Pattern.compile(
                    "\\p{javaJavaIdentifierStart}\\p{javaJavaIdentifierPart}*"
                            + "(\\.\\p{javaJavaIdentifierStart}\\p{javaJavaIdentifierPart}*)*");

    // What a TARGET may be, for the messages that refuse one.
    private static final String EITHER =
            "one of the examples "
                    + String.join(", ", EXAMPLES.keySet())
                    + ", or a class with public static void main(String[]) on --classpath,"
                    + " $DJL_DIST_CLASSPATH or the launcher's classpath, such as com.example.Train,"
                    + " or Train in the default package";

    private Targets() {}

    private static Map<String, String> examples() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("ddp_basics", "ai.djl.distributed.examples.DdpBasics");
        m.put("fsdp_basics", "ai.djl.distributed.examples.FsdpBasics");
        m.put("transformer_basics", "ai.djl.distributed.examples.TransformerBasics");
        m.put("replica_groups", "ai.djl.distributed.examples.ReplicaGroups");
        return java.util.Collections.unmodifiableMap(m);
    }

    /**
     * Maps a TARGET to its main class: an example's class, else the TARGET itself if it is a class
     * name; {@link #checkMainClass} then looks for it on the workers' classpath.
     *
     * @param target an example's name, or a class name (qualified, or in the default package)
     * @return the class name
     * @throws IllegalArgumentException if the TARGET is neither an example nor a class name
     */
    static String mainClass(String target) {
        String example = EXAMPLES.get(target);
        if (example != null) {
            return example;
        }
        if (!CLASS_NAME.matcher(target).matches()) {
            throw new IllegalArgumentException(
                    "TARGET: '"
                            + target
                            + "' is neither an example nor a class name (expected: "
                            + EITHER
                            + ")");
        }
        return target;
    }

    /**
     * Checks that a main class is on the workers' classpath and has {@code public static void
     * main(String[])}, without running its static initialisers.
     *
     * @param target the TARGET as given, for messages
     * @param className the class
     * @param classpath the workers' classpath
     * @throws IllegalArgumentException naming the class, the classpath's source and, for an
     *     example, how to build it
     */
    static void checkMainClass(String target, String className, String classpath) {
        try (URLClassLoader loader =
                new URLClassLoader(urls(classpath), ClassLoader.getPlatformClassLoader())) {
            Class<?> c = Class.forName(className, false, loader);
            Method main = c.getMethod("main", String[].class);
            if (!Modifier.isStatic(main.getModifiers()) || main.getReturnType() != void.class) {
                throw new IllegalArgumentException(
                        "TARGET: "
                                + className
                                + " (expected: a public static void main(String[]))");
            }
        } catch (ClassNotFoundException | NoClassDefFoundError e) {
            throw new IllegalArgumentException(notFound(target, className), e);
        } catch (NoSuchMethodException e) {
            throw new IllegalArgumentException(
                    "TARGET: " + className + " has no public static void main(String[])", e);
        } catch (LinkageError | IOException e) {
            throw new IllegalArgumentException(
                    "TARGET: " + className + " cannot be loaded from the workers' classpath: " + e,
                    e);
        }
    }

    private static String notFound(String target, String className) {
        if (EXAMPLES.containsKey(target)) {
            return "TARGET: example '"
                    + target
                    + "' needs "
                    + className
                    + ", which is not on the workers' classpath (expected: the examples module"
                    + " built, e.g. mvn -B -DskipTests package; examples: "
                    + String.join(", ", EXAMPLES.keySet())
                    + ")";
        }
        return "TARGET: main class "
                + className
                + " not found on the workers' classpath, and '"
                + target
                + "' is not an example (expected: "
                + EITHER
                + ")";
    }

    /**
     * Turns a classpath into URLs as the {@code java} launcher reads it: entries separated by
     * {@link File#pathSeparator}, and {@code dir/*} standing for the jars in {@code dir}.
     *
     * @param classpath the classpath
     * @return its entries
     * @throws IOException if a wildcard directory cannot be listed
     */
    static URL[] urls(String classpath) throws IOException {
        List<URL> urls = new ArrayList<>();
        for (String entry : classpath.split(Pattern.quote(File.pathSeparator))) {
            if (entry.isEmpty()) {
                continue;
            }
            if (entry.equals("*") || entry.endsWith(File.separator + "*")) {
                Path dir = Path.of(entry.substring(0, entry.length() - 1) + ".");
                if (Files.isDirectory(dir)) {
                    try (DirectoryStream<Path> jars =
                            Files.newDirectoryStream(dir, "*.{jar,JAR}")) {
                        for (Path jar : jars) {
                            urls.add(url(jar));
                        }
                    }
                }
            } else {
                urls.add(url(Path.of(entry)));
            }
        }
        return urls.toArray(new URL[0]);
    }

    private static URL url(Path path) throws MalformedURLException {
        return path.toAbsolutePath().toUri().toURL();
    }
}
