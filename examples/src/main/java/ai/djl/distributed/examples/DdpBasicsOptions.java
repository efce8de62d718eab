package ai.djl.distributed.examples;

import java.nio.file.Path;
import java.util.Locale;

/**
 * The command line of {@code ddp_basics}: {@code --name value} (or {@code --name=value}) pairs,
 * each optional. Immutable once parsed.
 */
public final class DdpBasicsOptions {

    /** The options, their defaults and meaning, as {@code --help} prints them. */
    public static final String USAGE =
            String.join(
                    "\n",
                    "options (all optional):",
                    "  --epochs N        epochs to train, in all (default 8)",
                    "  --batch B         samples per rank per step (default 32)",
                    "  --samples N       training samples, shared among the ranks (default 6000)",
                    "  --lr LR           Adam's learning rate (default 0.01)",
                    "  --hook NAME       gradient reduction: allreduce (default) or fp16",
                    "  --seed S          seed of the data, initialisation and shuffling (default 7)",
                    "  --checkpoint DIR  rank 0 writes DIR/ddp.ckpt after every epoch",
                    "  --resume          resume from DIR/ddp.ckpt when it exists",
                    "  --overlap         reductions overlap the next forward pass",
                    "  --quiet           no progress bar");

    int epochs = 8;
    int batch = 32;
    int samples = 6000;
    float lr = 0.01f;
    String hook = "allreduce";
    int seed = 7;
    Path checkpoint;
    boolean resume;
    boolean overlap;
    boolean quiet;

    private DdpBasicsOptions() {}

    /**
     * Parses the command line.
     *
     * @param args the arguments
     * @return the options
     * @throws IllegalArgumentException on an unknown option, a missing or malformed value
     */
    public static DdpBasicsOptions parse(String... args) {
        DdpBasicsOptions o = new DdpBasicsOptions();
        for (int i = 0; i < args.length; i++) {
            String name = args[i];
            if ("--resume".equals(name)) {
                o.resume = true;
                continue;
            }
            if ("--quiet".equals(name)) {
                o.quiet = true;
                continue;
            }
            if ("--overlap".equals(name)) {
                o.overlap = true;
                continue;
            }
            String value;
            int eq = name.indexOf('=');
            if (eq > 0) {
                value = name.substring(eq + 1);
                name = name.substring(0, eq);
            } else if (i + 1 < args.length) {
                value = args[++i];
            } else {
                throw new IllegalArgumentException(name + ": no value (expected: " + name + " X)");
            }
            try {
                switch (name) {
                    case "--epochs" -> o.epochs = positive(name, Integer.parseInt(value));
                    case "--batch" -> o.batch = positive(name, Integer.parseInt(value));
                    case "--samples" -> o.samples = positive(name, Integer.parseInt(value));
                    case "--lr" -> o.lr = Float.parseFloat(value);
                    case "--seed" -> o.seed = Integer.parseInt(value);
                    case "--checkpoint" -> o.checkpoint = Path.of(value);
                    case "--hook" -> {
                        o.hook = value.toLowerCase(Locale.ROOT);
                        if (!o.hook.equals("allreduce") && !o.hook.equals("fp16")) {
                            throw new IllegalArgumentException(
                                    "--hook: " + value + " (expected: allreduce or fp16)");
                        }
                    }
                    default ->
                            throw new IllegalArgumentException(
                                    "unknown option: " + name + "\n" + USAGE);
                }
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(
                        name + ": " + value + " (expected: a number)", e);
            }
        }
        if (o.resume && o.checkpoint == null) {
            throw new IllegalArgumentException("--resume: no --checkpoint DIR to resume from");
        }
        return o;
    }

    private static int positive(String name, int v) {
        if (v <= 0) {
            throw new IllegalArgumentException(name + ": " + v + " (expected: > 0)");
        }
        return v;
    }
}
