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
package ai.djl.distributed.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import javax.imageio.ImageIO;

/** The loss curve's CSV and its XChart plot, without a training run. */
class LossCurveTest {

    @Test
    void csvAndPngAreWritten(@TempDir Path dir) throws IOException {
        LossCurve curve = new LossCurve();
        for (int step = 1; step <= 40; step++) {
            curve.addTrain(step, step * 0.5, 1e-3, 6.0 - step * 0.05);
        }
        curve.addTrain(41, 20.5, 1e-3, Double.NaN); // left out of the plot, kept in the CSV
        curve.addValidation(20, 5.2);
        curve.addValidation(40, 4.1);
        curve.writeCsv(dir.resolve("loss.csv"));
        curve.writePng(dir.resolve("loss.png"), "a test run", 5.5);

        List<String> csv = Files.readAllLines(dir.resolve("loss.csv"));
        assertEquals("step,elapsed_s,lr,train_loss,val_loss", csv.get(0));
        assertEquals(1 + 41, csv.size());
        assertEquals("20,10.000,0.00100000,5.000000,5.200000", csv.get(20));
        assertEquals("21,10.500,0.00100000,4.950000,", csv.get(21));

        BufferedImage png = ImageIO.read(dir.resolve("loss.png").toFile());
        assertNotNull(png, "loss.png decodes as an image");
        assertEquals(900, png.getWidth());
        assertEquals(540, png.getHeight());
        // something was drawn: the corner (background) and the middle of the plot differ somewhere
        int background = png.getRGB(0, 0);
        boolean drawn = false;
        for (int x = 100; x < 800 && !drawn; x++) {
            for (int y = 100; y < 450 && !drawn; y++) {
                drawn = png.getRGB(x, y) != background;
            }
        }
        assertNotEquals(false, drawn, "the plot area holds lines, not only background");
    }

    @Test
    void aCurveWithoutValidationIsStillPlotted(@TempDir Path dir) throws IOException {
        LossCurve curve = new LossCurve();
        curve.addTrain(1, 0.1, 1e-3, 5.0);
        curve.writePng(dir.resolve("one.png"), "one step", 5.5);
        assertEquals(540, ImageIO.read(dir.resolve("one.png").toFile()).getHeight());
    }
}
