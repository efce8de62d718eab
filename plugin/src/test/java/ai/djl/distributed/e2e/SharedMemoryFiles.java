package ai.djl.distributed.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The project's files in {@code /dev/shm}, listed before a test and compared after it: a failure, a
 * restart or a kill must leave none behind.
 */
final class SharedMemoryFiles {

    private static final Path DIR = Path.of("/dev/shm");

    private final Set<String> before;

    private SharedMemoryFiles(Set<String> before) {
        this.before = before;
    }

    /**
     * Lists the project's files now.
     *
     * @return the snapshot
     */
    static SharedMemoryFiles snapshot() {
        return new SharedMemoryFiles(list());
    }

    /** Asserts that no file of the project's appeared since the snapshot. */
    void assertNothingNew() {
        Set<String> now = list();
        now.removeAll(before);
        assertEquals(Set.of(), now, "left in " + DIR);
    }

    private static Set<String> list() {
        if (!Files.isDirectory(DIR)) {
            return new TreeSet<>();
        }
        try (Stream<Path> files = Files.list(DIR)) {
            return files.map(p -> p.getFileName().toString())
                    .filter(n -> n.startsWith("djl-dist"))
                    .collect(Collectors.toCollection(TreeSet::new));
        } catch (IOException e) {
            throw new IllegalStateException("cannot list " + DIR, e);
        }
    }
}
