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

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.geom.Path2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import javax.imageio.ImageIO;

/**
 * The losses of a training run, step by step: written as CSV ({@code
 * step,elapsed_s,lr,train_loss,val_loss}, the validation loss only on the steps where it was
 * measured) and drawn as a PNG plot with {@code java.awt} (headless; no other library).
 */
public final class LossCurve {

    private static final int WIDTH = 900;
    private static final int HEIGHT = 540;
    private static final int MARGIN_LEFT = 70;
    private static final int MARGIN_RIGHT = 30;
    private static final int MARGIN_TOP = 50;
    private static final int MARGIN_BOTTOM = 60;

    private final List<double[]> train = new ArrayList<>();
    private final List<double[]> validation = new ArrayList<>();

    /**
     * Records one training step.
     *
     * @param step the step, from 1
     * @param elapsedSeconds the time since training started
     * @param lr the learning rate of the step
     * @param loss the step's training loss
     */
    public void addTrain(int step, double elapsedSeconds, double lr, double loss) {
        train.add(new double[] {step, elapsedSeconds, lr, loss});
    }

    /**
     * Records a validation measurement made after a step.
     *
     * @param step the step after which it was measured
     * @param loss the validation loss
     */
    public void addValidation(int step, double loss) {
        validation.add(new double[] {step, loss});
    }

    /**
     * Returns the number of training steps recorded.
     *
     * @return the number of steps
     */
    public int size() {
        return train.size();
    }

    /**
     * Returns the mean training loss over the last steps (at most {@code n}).
     *
     * @param n how many steps to average
     * @return the mean, or NaN when nothing is recorded
     */
    public double recentTrainLoss(int n) {
        int from = Math.max(0, train.size() - n);
        double sum = 0;
        for (int i = from; i < train.size(); i++) {
            sum += train.get(i)[3];
        }
        return train.size() == from ? Double.NaN : sum / (train.size() - from);
    }

    /**
     * Writes the CSV file.
     *
     * @param file the file
     * @throws IOException if writing fails
     */
    public void writeCsv(Path file) throws IOException {
        try (Writer w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            w.write("step,elapsed_s,lr,train_loss,val_loss\n");
            int v = 0;
            for (double[] t : train) {
                String val = "";
                while (v < validation.size() && validation.get(v)[0] <= t[0]) {
                    if (validation.get(v)[0] == t[0]) {
                        val = String.format(Locale.ROOT, "%.6f", validation.get(v)[1]);
                    }
                    v++;
                }
                w.write(
                        String.format(
                                Locale.ROOT,
                                "%d,%.3f,%.6g,%.6f,%s%n",
                                (int) t[0],
                                t[1],
                                t[2],
                                t[3],
                                val));
            }
        }
    }

    /**
     * Draws the plot: training loss (raw and smoothed), validation loss and the baseline.
     *
     * @param file the PNG file
     * @param title the title above the plot
     * @param baseline the unigram baseline, drawn as a dashed line
     * @throws IOException if writing fails
     */
    public void writePng(Path file, String title, double baseline) throws IOException {
        if (System.getProperty("java.awt.headless") == null) {
            System.setProperty("java.awt.headless", "true");
        }
        BufferedImage image = new BufferedImage(WIDTH, HEIGHT, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = image.createGraphics();
        try {
            g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
            g.setColor(Color.WHITE);
            g.fillRect(0, 0, WIDTH, HEIGHT);
            Plot p = new Plot(maxStep(), maxLoss(baseline));
            p.drawAxes(g, title);
            g.setStroke(new BasicStroke(1f));
            p.drawSeries(g, train, 3, new Color(150, 180, 230));
            g.setStroke(new BasicStroke(2f));
            p.drawSeries(g, smoothed(), 1, new Color(30, 80, 200));
            p.drawSeries(g, validation, 1, new Color(220, 90, 20));
            float[] dash = {8f, 6f};
            g.setStroke(
                    new BasicStroke(
                            2f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, dash, 0));
            g.setColor(Color.GRAY);
            g.drawLine(p.x(0), p.y(baseline), p.x(p.maxX), p.y(baseline));
            p.drawLegend(g, baseline);
        } finally {
            g.dispose();
        }
        ImageIO.write(image, "png", file.toFile());
    }

    private List<double[]> smoothed() {
        List<double[]> out = new ArrayList<>();
        double ema = Double.NaN;
        for (double[] t : train) {
            ema = Double.isNaN(ema) ? t[3] : 0.95 * ema + 0.05 * t[3];
            out.add(new double[] {t[0], ema});
        }
        return out;
    }

    private double maxStep() {
        return train.isEmpty() ? 1 : Math.max(1, train.get(train.size() - 1)[0]);
    }

    private double maxLoss(double baseline) {
        double max = baseline;
        for (double[] t : train) {
            if (Double.isFinite(t[3])) {
                max = Math.max(max, t[3]);
            }
        }
        return Math.ceil(max * 1.05);
    }

    /** Maps data coordinates to pixels and draws the frame. */
    private static final class Plot {

        final double maxX;
        final double maxY;

        Plot(double maxX, double maxY) {
            this.maxX = maxX;
            this.maxY = maxY;
        }

        int x(double step) {
            return MARGIN_LEFT + (int) (step / maxX * (WIDTH - MARGIN_LEFT - MARGIN_RIGHT));
        }

        int y(double loss) {
            double clipped = Math.max(0, Math.min(maxY, loss));
            return HEIGHT
                    - MARGIN_BOTTOM
                    - (int) (clipped / maxY * (HEIGHT - MARGIN_TOP - MARGIN_BOTTOM));
        }

        void drawAxes(Graphics2D g, String title) {
            g.setColor(Color.BLACK);
            g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 15));
            g.drawString(title, MARGIN_LEFT, 30);
            g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
            g.drawLine(x(0), y(0), x(maxX), y(0));
            g.drawLine(x(0), y(0), x(0), y(maxY));
            for (int i = 0; i <= 5; i++) {
                double step = maxX * i / 5;
                g.drawLine(x(step), y(0), x(step), y(0) + 5);
                g.drawString(String.format(Locale.ROOT, "%.0f", step), x(step) - 12, y(0) + 20);
                double loss = maxY * i / 5;
                g.drawLine(x(0) - 5, y(loss), x(0), y(loss));
                g.drawString(String.format(Locale.ROOT, "%.1f", loss), x(0) - 40, y(loss) + 4);
            }
            g.drawString("step", x(maxX / 2), HEIGHT - 15);
            g.drawString("loss (nats/token)", 5, MARGIN_TOP - 8);
        }

        void drawSeries(Graphics2D g, List<double[]> points, int column, Color color) {
            Path2D.Double path = new Path2D.Double();
            boolean started = false;
            for (double[] p : points) {
                if (!Double.isFinite(p[column])) {
                    continue;
                }
                if (started) {
                    path.lineTo(x(p[0]), y(p[column]));
                } else {
                    path.moveTo(x(p[0]), y(p[column]));
                    started = true;
                }
            }
            g.setColor(color);
            g.draw(path);
        }

        void drawLegend(Graphics2D g, double baseline) {
            String[] labels = {
                "train loss",
                "train loss (smoothed)",
                "validation loss",
                String.format(Locale.ROOT, "unigram baseline %.3f", baseline)
            };
            Color[] colors = {
                new Color(150, 180, 230), new Color(30, 80, 200), new Color(220, 90, 20), Color.GRAY
            };
            g.setStroke(new BasicStroke(2f));
            int top = MARGIN_TOP + 10;
            int left = WIDTH - MARGIN_RIGHT - 220;
            for (int i = 0; i < labels.length; i++) {
                g.setColor(colors[i]);
                g.drawLine(left, top + 18 * i, left + 25, top + 18 * i);
                g.setColor(Color.BLACK);
                g.drawString(labels[i], left + 32, top + 18 * i + 4);
            }
        }
    }
}
