package ai.djl.distributed.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.transformer.GptCheckpoint;
import ai.djl.distributed.transformer.GptGenerator;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.awt.image.BufferedImage;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import javax.imageio.ImageIO;

class TransformerBasicsTest {

    @Test
    void aFewStepsWriteEveryOutput(@TempDir Path dir) throws Exception {
        GptRunResult r =
                TransformerBasics.runExample(
                        "--preset", "tiny",
                        "--steps", "6",
                        "--batch", "4",
                        "--tokenizer", "bpe",
                        "--vocab", "300",
                        "--max-docs", "60",
                        "--eval-every", "3",
                        "--eval-batches", "1",
                        "--final-eval-batches", "2",
                        "--sample-tokens", "12",
                        "--prompt", "Mr President,",
                        "--out", dir.toString());
        assertEquals(6, r.getSteps());
        assertEquals(6L * 4 * 32, r.getTokens());
        assertTrue(Double.isFinite(r.getValidationLoss()));
        assertTrue(r.getUnigramBaseline() > 0 && r.getUnigramBaselineWholeSplit() > 0);

        List<String> csv = Files.readAllLines(dir.resolve("loss.csv"));
        assertEquals("step,elapsed_s,lr,train_loss,val_loss", csv.get(0));
        assertEquals(1 + 6, csv.size());
        assertTrue(csv.get(3).startsWith("3,") && !csv.get(3).endsWith(","), csv.get(3));
        assertTrue(csv.get(6).startsWith("6,") && !csv.get(6).endsWith(","), "final validation");
        assertTrue(csv.get(1).endsWith(","), "no validation after step 1");

        BufferedImage png = ImageIO.read(dir.resolve("loss.png").toFile());
        assertEquals(900, png.getWidth());
        assertEquals(540, png.getHeight());

        String sample = Files.readString(dir.resolve("sample.txt"), StandardCharsets.UTF_8);
        assertEquals(r.getSample(), sample);
        assertTrue(sample.startsWith("Mr President,"), sample);

        // the saved model and tokenizer reproduce the sample with the same seed and settings
        try (GptCheckpoint cp = GptCheckpoint.load(r.getModelDir())) {
            assertEquals(300, cp.getTokenizer().vocabSize());
            int[] ids =
                    GptGenerator.builder(cp.getBlock())
                            .optTemperature(0.8f)
                            .optTopK(40)
                            .build()
                            .generate(
                                    cp.getModel().getNDManager(),
                                    cp.getTokenizer().encode("Mr President,"),
                                    12,
                                    42);
            assertEquals(sample, cp.getTokenizer().decode(ids));
        }
    }
}
