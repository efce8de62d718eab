package ai.djl.distributed.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.launch.LauncherProcess;

import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A peer that stalls past a short group timeout, then comes back: the rank that waited fails at its
 * timeout naming the silent peer, and the late peer fails at once naming that rank and its reason
 * (the first cause travels), over every transport, for an all-reduce small enough for the
 * shared-memory board and one large enough to be cut off mid-message.
 */
@Timeout(120)
class SilentPeerTest {

    private static final long TIMEOUT_MS = 2_000;
    private static final long LATE_MS = 3_500;

    @ParameterizedTest
    @CsvSource({
        "tcp, 1024",
        "tcp, 4194304",
        "shm, 1024",
        "shm, 4194304",
        "auto, 1024",
        "auto, 4194304"
    })
    void theRankThatTimedOutIsNamedWithItsReasonByTheLatePeer(String transport, int count)
            throws Exception {
        SharedMemoryFiles shm = SharedMemoryFiles.snapshot();
        try (LauncherProcess djlrun =
                Faults.launch(
                        transport,
                        TIMEOUT_MS,
                        LATE_MS,
                        "--nproc-per-node",
                        "2",
                        FaultWorker.class.getName(),
                        "allreduce:1000",
                        "late:1:" + LATE_MS,
                        "allreduce:" + count)) {
            assertEquals(1, djlrun.waitFor(Faults.WAIT), djlrun::describe);
            String out = djlrun.stdout();
            String waited = Faults.line(out, 0, "FAILED");
            assertTrue(waited.contains("timed out after PT2S"), djlrun::describe);
            assertTrue(waited.contains("waiting for rank 1"), djlrun::describe);
            long ms = Faults.millis(waited);
            assertTrue(ms >= TIMEOUT_MS - 50 && ms < TIMEOUT_MS + 2_000, waited);

            String late = Faults.line(out, 1, "FAILED");
            assertTrue(late.contains("rank 0 aborted its process group: "), djlrun::describe);
            assertTrue(late.contains("timed out after PT2S"), djlrun::describe);
            assertTrue(Faults.millis(late) < 2_000, late);
            for (int rank = 0; rank < 2; rank++) {
                String next = Faults.line(out, rank, "NEXT");
                assertTrue(Faults.millis(next) < 1_000, next);
            }
            Faults.assertAllExited(djlrun);
            shm.assertNothingNew();
        }
    }
}
