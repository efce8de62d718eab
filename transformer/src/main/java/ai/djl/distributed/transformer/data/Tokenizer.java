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

import java.io.IOException;
import java.nio.file.Path;

/**
 * Turns text into token ids and back.
 *
 * <p>Every id is in {@code [0, vocabSize())}. {@code decode(encode(s))} returns {@code s}; decoding
 * an arbitrary id sequence (a model's sample) never fails: bytes that do not form valid UTF-8
 * become U+FFFD. Implementations are immutable and thread-safe.
 */
public interface Tokenizer {

    /**
     * Returns the number of distinct token ids.
     *
     * @return the vocabulary size
     */
    int vocabSize();

    /**
     * Encodes text.
     *
     * @param text the text
     * @return its token ids
     */
    int[] encode(String text);

    /**
     * Decodes token ids.
     *
     * @param ids token ids, each in {@code [0, vocabSize())}
     * @return the text
     * @throws IllegalArgumentException if an id is out of range
     */
    String decode(int[] ids);

    /**
     * Writes this tokenizer to a file that {@link Tokenizers#load(Path)} reads back.
     *
     * @param file the file to write
     * @throws IOException if writing fails
     */
    void save(Path file) throws IOException;
}
