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
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** Reads tokenizers back from the files {@link Tokenizer#save(Path)} writes. */
public final class Tokenizers {

    private static final String MAGIC = "djl-distributed-tokenizer";
    private static final int VERSION = 1;

    private Tokenizers() {}

    /**
     * Reads a tokenizer saved by {@link Tokenizer#save(Path)}.
     *
     * @param file the file
     * @return the tokenizer
     * @throws IOException if reading fails or the file is not a saved tokenizer
     */
    public static Tokenizer load(Path file) throws IOException {
        try (BufferedReader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            String header = r.readLine();
            String[] parts = header == null ? new String[0] : header.split(" ");
            if (parts.length != 3 || !MAGIC.equals(parts[0])) {
                throw new IOException(
                        file + ": header " + header + " (expected: " + MAGIC + " FORMAT VERSION)");
            }
            if (!Integer.toString(VERSION).equals(parts[2])) {
                throw new IOException(
                        file + ": version " + parts[2] + " (expected: " + VERSION + ")");
            }
            switch (parts[1]) {
                case ByteTokenizer.FORMAT:
                    return new ByteTokenizer();
                case BpeTokenizer.FORMAT:
                    return BpeTokenizer.read(r, file);
                default:
                    throw new IOException(
                            file
                                    + ": format "
                                    + parts[1]
                                    + " (expected: "
                                    + ByteTokenizer.FORMAT
                                    + " or "
                                    + BpeTokenizer.FORMAT
                                    + ")");
            }
        }
    }

    static String header(String format) {
        return MAGIC + " " + format + " " + VERSION;
    }

    static void checkId(int id, int vocabSize) {
        if (id < 0 || id >= vocabSize) {
            throw new IllegalArgumentException(
                    "token id: " + id + " (expected: 0 to " + (vocabSize - 1) + ")");
        }
    }
}
