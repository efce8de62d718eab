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
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The byte-level tokenizer: a token is one byte of the text's UTF-8 encoding, 256 ids. It needs no
 * training and covers every language of the corpus.
 */
public final class ByteTokenizer implements Tokenizer {

    /** The tokenizer's vocabulary size: one id per byte value. */
    public static final int VOCAB_SIZE = 256;

    static final String FORMAT = "byte";

    /** {@inheritDoc} */
    @Override
    public int vocabSize() {
        return VOCAB_SIZE;
    }

    /** {@inheritDoc} */
    @Override
    public int[] encode(String text) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        int[] ids = new int[bytes.length];
        for (int i = 0; i < bytes.length; i++) {
            ids[i] = bytes[i] & 0xff;
        }
        return ids;
    }

    /** {@inheritDoc} */
    @Override
    public String decode(int[] ids) {
        byte[] bytes = new byte[ids.length];
        for (int i = 0; i < ids.length; i++) {
            Tokenizers.checkId(ids[i], VOCAB_SIZE);
            bytes[i] = (byte) ids[i];
        }
        return new String(bytes, StandardCharsets.UTF_8);
    }

    /** {@inheritDoc} */
    @Override
    public void save(Path file) throws IOException {
        Files.write(file, List.of(Tokenizers.header(FORMAT)), StandardCharsets.UTF_8);
    }

    /** {@inheritDoc} */
    @Override
    public String toString() {
        return "ByteTokenizer(vocab=256)";
    }
}
