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

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

class TokenizerTest {

    private static final String MIXED =
            "Ο Πρόεδρος: die Sitzung ist eröffnet. 2004-03-30  ok\n\tñ €";

    @Test
    void bytesAreUtf8() {
        ByteTokenizer t = new ByteTokenizer();
        assertArrayEquals(new int[] {0x68, 0xc3, 0xa9}, t.encode("hé"));
        assertEquals(MIXED, t.decode(t.encode(MIXED)));
        assertEquals("\ufffd", t.decode(new int[] {0xc3})); // a cut character decodes, replaced
        assertThrows(IllegalArgumentException.class, () -> t.decode(new int[] {256}));
    }

    @Test
    void bpeLearnsTheMostFrequentPairsFirst() {
        // pieces "aaab", " aaab", " ab": pairs (a,a)=4, (a,b)=3, ( ,a)=2 -> merge aa (256);
        // then "aa a b" twice and " a b": (a,b)=3, (aa,a)=2, ( ,aa)=1, ( ,a)=1 -> merge ab (257)
        BpeTokenizer t = BpeTokenizer.train(List.of("aaab aaab ab"), 258);
        assertArrayEquals(new int[][] {{'a', 'a'}, {'a', 'b'}}, t.merges());
        assertArrayEquals(new int[] {256, 257, ' ', 256, 257}, t.encode("aaab aaab"));
        assertArrayEquals(new int[] {'b', 256, 'a'}, t.encode("baaa")); // left to right
    }

    @Test
    void bpeBreaksTiesTowardsSmallerIdsAndStopsWhenNoPairRepeats() {
        // pieces "abab", " cdcd": (a,b)=2 and (c,d)=2 tie; then every pair occurs once
        BpeTokenizer t = BpeTokenizer.train(List.of("abab cdcd"), 1000);
        assertArrayEquals(new int[][] {{'a', 'b'}, {'c', 'd'}}, t.merges());
        assertEquals(258, t.vocabSize());
    }

    @Test
    void bpeRoundTripsAnyText(@TempDir Path dir) throws IOException {
        BpeTokenizer t = BpeTokenizer.train(List.of(MIXED, MIXED, "die die die Sitzung"), 300);
        for (String s : new String[] {MIXED, "", "unseen 日本語 text!", "  spaces   "}) {
            assertEquals(s, t.decode(t.encode(s)));
        }
        assertTrue(t.encode(MIXED).length < new ByteTokenizer().encode(MIXED).length);
        Path file = dir.resolve("tok.txt");
        t.save(file);
        Tokenizer back = Tokenizers.load(file);
        assertEquals(t.vocabSize(), back.vocabSize());
        assertArrayEquals(t.encode(MIXED), back.encode(MIXED));
    }

    @Test
    void loadRejectsOtherFiles(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("x.txt");
        Files.writeString(file, "hello\n");
        IOException e = assertThrows(IOException.class, () -> Tokenizers.load(file));
        assertEquals(
                file + ": header hello (expected: djl-distributed-tokenizer FORMAT VERSION)",
                e.getMessage());
        new ByteTokenizer().save(file);
        assertEquals(256, Tokenizers.load(file).vocabSize());
    }

    /**
     * A corrupt merges count is an IOException naming the file and the value: -1 was a
     * NegativeArraySizeException, and 2000000000 an OutOfMemoryError (an array of that many).
     */
    @Test
    void aCorruptMergesCountIsAnIoException(@TempDir Path dir) throws IOException {
        String header = "djl-distributed-tokenizer bpe 1\n";
        Path file = dir.resolve("tokenizer.txt");
        for (String count : List.of("-1", "x", "99999999999")) {
            Files.writeString(file, header + "merges " + count + "\n0 0\n");
            IOException e = assertThrows(IOException.class, () -> Tokenizers.load(file), count);
            assertEquals(
                    file
                            + ": line 2: merges "
                            + count
                            + " (expected: a count from 0 to 2147483647)",
                    e.getMessage());
        }
        Files.writeString(file, header + "merges 2000000000\n97 98\n");
        IOException e = assertThrows(IOException.class, () -> Tokenizers.load(file));
        assertEquals(
                file
                        + ": line 2: merges 2000000000, but the file ends after 1 (expected: one"
                        + " line per merge)",
                e.getMessage());
        // the count the file holds loads: 256 bytes and one merge
        Files.writeString(file, header + "merges 1\n97 98\n");
        assertEquals(257, Tokenizers.load(file).vocabSize());
    }
}
