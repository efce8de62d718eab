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

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;

class EuroparlCorpusTest {

    private static EuroparlCorpus corpus;

    @BeforeAll
    static void load() throws Exception {
        corpus = EuroparlCorpus.load();
    }

    @Test
    void splitIsFixed() throws Exception {
        // expected values computed outside Java (Python's gzip and hashlib) from the same
        // resource: 17,597 lines, line i (from 0) held out when i % 20 == 19, a document
        // being title + "\n" + body, hashed as UTF-8 with a NUL after each document
        assertEquals(16718, corpus.train().size());
        assertEquals(879, corpus.validation().size());
        assertEquals(
                "0796954a80483f1f56ae7273e332accfa92029f4b44f9cdbefc4afffe1bb0ba5",
                sha256(corpus.validation()));
        assertEquals(
                "6a42b39d59ea1739408882e41ef2ceada8e5f8f4df1758d897d8956f52474d58",
                sha256(corpus.train()));
        assertTrue(corpus.validation().get(0).startsWith("3. Somalia (Aussprache)\nwurde in"));
    }

    @Test
    void loadingAgainGivesTheSameSplit() throws Exception {
        EuroparlCorpus again = EuroparlCorpus.load();
        assertEquals(corpus.train(), again.train());
        assertEquals(corpus.validation(), again.validation());
    }

    @Test
    void aPrefixOfTheCorpusIsSplitTheSameWay() throws Exception {
        EuroparlCorpus head = EuroparlCorpus.load(100);
        assertEquals(corpus.train().subList(0, 95), head.train());
        assertEquals(corpus.validation().subList(0, 5), head.validation());
    }

    @Test
    void encodedDocumentsAreSeparatedByABlankLine() {
        int[] ids = EuroparlCorpus.encode(new ByteTokenizer(), List.of("a", "é"));
        assertEquals("a\n\né\n\n", new ByteTokenizer().decode(ids));
        assertEquals(7, ids.length); // é is two bytes in UTF-8
    }

    private static String sha256(List<String> documents) throws Exception {
        MessageDigest md = MessageDigest.getInstance("SHA-256");
        for (String d : documents) {
            md.update(d.getBytes(StandardCharsets.UTF_8));
            md.update((byte) 0);
        }
        return HexFormat.of().formatHex(md.digest());
    }
}
