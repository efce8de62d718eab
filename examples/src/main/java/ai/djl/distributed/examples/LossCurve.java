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

import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.XYStyler;
import org.knowm.xchart.style.lines.SeriesLines;
import org.knowm.xchart.style.markers.SeriesMarkers;

import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.io.OutputStream;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The losses of a training run, step by step: written as CSV ({@code
 * step,elapsed_s,lr,train_loss,val_loss}, the validation loss only on the steps where it was
 * measured) and drawn as a PNG plot with XChart (headless). Not thread-safe: one training loop
 * records into it.
 */
public final class LossCurve {

    /** The plot's width in pixels. */
    public static final int WIDTH = 900;

    /** The plot's height in pixels. */
    public static final int HEIGHT = 540;

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
     * Draws the plot with XChart (headless): training loss (raw and smoothed), validation loss and
     * the baseline, {@value #WIDTH} by {@value #HEIGHT} pixels.
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
        XYChart chart =
                new XYChartBuilder()
                        .width(WIDTH)
                        .height(HEIGHT)
                        .title(title)
                        .xAxisTitle("step")
                        .yAxisTitle("loss (nats/token)")
                        .build();
        XYStyler style = chart.getStyler();
        style.setLegendPosition(Styler.LegendPosition.InsideNE);
        style.setChartBackgroundColor(Color.WHITE);
        style.setPlotBackgroundColor(Color.WHITE);
        style.setYAxisMin(0.0);
        style.setYAxisMax(maxLoss(baseline));
        style.setXAxisMin(0.0);
        style.setXAxisMax(maxStep());
        add(chart, "train loss", train, 3, new Color(150, 180, 230), SeriesLines.SOLID);
        add(
                chart,
                "train loss (smoothed)",
                smoothed(),
                1,
                new Color(30, 80, 200),
                SeriesLines.SOLID);
        add(chart, "validation loss", validation, 1, new Color(220, 90, 20), SeriesLines.SOLID);
        List<double[]> flat =
                List.of(new double[] {0, baseline}, new double[] {maxStep(), baseline});
        add(
                chart,
                String.format(Locale.ROOT, "unigram baseline %.3f", baseline),
                flat,
                1,
                Color.GRAY,
                SeriesLines.DASH_DASH);
        try (OutputStream out = Files.newOutputStream(file)) {
            BitmapEncoder.saveBitmap(chart, out, BitmapEncoder.BitmapFormat.PNG);
        }
    }

    // One line of the plot: the points' step against their value in column, non-finite ones left
    // out; a series without points is left out (XChart refuses an empty one).
    private static void add(
            XYChart chart,
            String name,
            List<double[]> points,
            int column,
            Color color,
            BasicStroke line) {
        List<Double> xs = new ArrayList<>();
        List<Double> ys = new ArrayList<>();
        for (double[] p : points) {
            if (Double.isFinite(p[column])) {
                xs.add(p[0]);
                ys.add(p[column]);
            }
        }
        if (xs.isEmpty()) {
            return;
        }
        XYSeries series = chart.addSeries(name, xs, ys);
        series.setMarker(SeriesMarkers.NONE);
        series.setLineColor(color);
        series.setLineStyle(line);
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
}
