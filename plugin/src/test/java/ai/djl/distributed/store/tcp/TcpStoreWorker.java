package ai.djl.distributed.store.tcp;

import java.time.Duration;
import java.util.List;

/**
 * A child process of {@link TcpStoreMultiProcessTest}: joins the parent's server as a worker, adds
 * to a shared counter, publishes its rank and meets everyone at a store barrier.
 */
public final class TcpStoreWorker {

    private TcpStoreWorker() {}

    /**
     * Runs the worker.
     *
     * @param args port, rank, world size, adds; or port and "hang" to block on a key forever
     */
    public static void main(String[] args) {
        int port = Integer.parseInt(args[0]);
        if (args[1].equals("hang")) {
            try (TcpStore store =
                    TcpStore.builder()
                            .setHost("127.0.0.1")
                            .setPort(port)
                            .optTimeout(Duration.ofSeconds(120))
                            .build()) {
                store.set("hanger/ready", "1");
                store.get("never");
            }
            return;
        }
        int rank = Integer.parseInt(args[1]);
        int world = Integer.parseInt(args[2]);
        int adds = Integer.parseInt(args[3]);
        try (TcpStore store =
                TcpStore.builder()
                        .setHost("127.0.0.1")
                        .setPort(port)
                        .optWorldSize(world)
                        .optTimeout(Duration.ofSeconds(60))
                        .build()) {
            for (int i = 0; i < adds; ++i) {
                store.add("counter", 1);
            }
            store.set("rank/" + rank, "pid " + ProcessHandle.current().pid());
            if (store.add("barrier", 1) == world) {
                store.set("barrier/last", "1");
            }
            store.waitFor(List.of("barrier/last"));
            System.out.println("worker " + rank + " saw counter " + store.add("counter", 0));
        }
    }
}
