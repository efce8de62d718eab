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
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A byte-level byte-pair-encoding tokenizer, GPT-2's scheme: ids 0-255 are the bytes of the UTF-8
 * text, and every further id is a merge of two earlier ids, learned from a corpus by repeatedly
 * merging its most frequent adjacent pair.
 *
 * <p>Text is first cut into pieces (a letter run, a digit run or a punctuation run, each with an
 * optional leading space; or a run of white space) and merges never cross a piece boundary. Any
 * text round-trips, whatever the training corpus was. Immutable and thread-safe.
 */
public final class BpeTokenizer implements Tokenizer {

    static final String FORMAT = "bpe";

    private static final Pattern PIECES =
            Pattern.compile(" ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+");

    private final int[][] merges;
    private final Map<Long, Integer> ranks;
    private final byte[][] tokenBytes;

    private BpeTokenizer(int[][] merges) {
        this.merges = merges;
        ranks = new HashMap<>();
        tokenBytes = new byte[ByteTokenizer.VOCAB_SIZE + merges.length][];
        for (int b = 0; b < ByteTokenizer.VOCAB_SIZE; b++) {
            tokenBytes[b] = new byte[] {(byte) b};
        }
        for (int m = 0; m < merges.length; m++) {
            int a = merges[m][0];
            int b = merges[m][1];
            int id = ByteTokenizer.VOCAB_SIZE + m;
            if (a < 0 || a >= id || b < 0 || b >= id) {
                throw new IllegalArgumentException(
                        "merge " + m + ": " + a + " " + b + " (expected: ids below " + id + ")");
            }
            ranks.put(pair(a, b), m);
            byte[] bytes =
                    Arrays.copyOf(tokenBytes[a], tokenBytes[a].length + tokenBytes[b].length);
            System.arraycopy(tokenBytes[b], 0, bytes, tokenBytes[a].length, tokenBytes[b].length);
            tokenBytes[id] = bytes;
        }
    }

    /**
     * Learns merges from texts until the vocabulary has {@code vocabSize} ids, or no adjacent pair
     * occurs twice. Deterministic: ties go to the pair with the smaller ids.
     *
     * @param texts the training texts
     * @param vocabSize the vocabulary size wanted, at least 256
     * @return the tokenizer
     */
    public static BpeTokenizer train(Iterable<String> texts, int vocabSize) {
        if (vocabSize < ByteTokenizer.VOCAB_SIZE) {
            throw new IllegalArgumentException(
                    "vocabSize: " + vocabSize + " (expected: >= " + ByteTokenizer.VOCAB_SIZE + ")");
        }
        Map<String, long[]> counts = new HashMap<>();
        for (String text : texts) {
            Matcher m = PIECES.matcher(text);
            while (m.find()) {
                counts.computeIfAbsent(m.group(), k -> new long[1])[0]++;
            }
        }
        // sorted so that the result does not depend on hash order
        List<String> pieces = new ArrayList<>(counts.keySet());
        pieces.sort(null);
        int[][] words = new int[pieces.size()][];
        long[] freq = new long[pieces.size()];
        Map<Long, Long> pairCounts = new HashMap<>();
        // for each pair, the words that held it when it was counted (some may no longer hold it)
        Map<Long, IntList> where = new HashMap<>();
        for (int w = 0; w < words.length; w++) {
            words[w] = new ByteTokenizer().encode(pieces.get(w));
            freq[w] = counts.get(pieces.get(w))[0];
            addPairs(pairCounts, words[w], freq[w], where, w);
        }
        // most frequent first, ties to the smaller pair; stale entries are skipped when popped
        PriorityQueue<long[]> heap =
                new PriorityQueue<>(
                        (x, y) ->
                                x[0] != y[0] ? Long.compare(y[0], x[0]) : Long.compare(x[1], y[1]));
        pairCounts.forEach((k, c) -> heap.add(new long[] {c, k}));
        int[] seen = new int[words.length];
        List<int[]> learned = new ArrayList<>();
        while (ByteTokenizer.VOCAB_SIZE + learned.size() < vocabSize) {
            long[] top = heap.poll();
            while (top != null && top[0] != pairCounts.getOrDefault(top[1], 0L)) {
                top = heap.poll();
            }
            if (top == null || top[0] < 2) {
                break; // no pair occurs twice: more merges would not shorten the corpus
            }
            long best = top[1];
            int a = (int) (best >>> 32);
            int b = (int) best;
            int id = ByteTokenizer.VOCAB_SIZE + learned.size();
            learned.add(new int[] {a, b});
            Map<Long, Long> touched = new HashMap<>();
            IntList holders = where.remove(best);
            for (int i = 0; i < holders.size; i++) {
                int w = holders.values[i];
                if (seen[w] == id || !contains(words[w], a, b)) {
                    continue;
                }
                seen[w] = id;
                addPairs(touched, words[w], -freq[w], null, w);
                words[w] = merge(words[w], a, b, id);
                addPairs(touched, words[w], freq[w], where, w);
            }
            for (Map.Entry<Long, Long> e : touched.entrySet()) {
                if (e.getValue() == 0) {
                    continue;
                }
                long c = pairCounts.getOrDefault(e.getKey(), 0L) + e.getValue();
                if (c == 0) {
                    pairCounts.remove(e.getKey());
                } else {
                    pairCounts.put(e.getKey(), c);
                    heap.add(new long[] {c, e.getKey()});
                }
            }
        }
        return new BpeTokenizer(learned.toArray(new int[0][]));
    }

    /**
     * Returns the learned merges: merge {@code m} makes id {@code 256 + m} from its two ids.
     *
     * @return a copy of the merges, each {@code {left, right}}
     */
    public int[][] merges() {
        int[][] copy = new int[merges.length][];
        for (int m = 0; m < merges.length; m++) {
            copy[m] = merges[m].clone();
        }
        return copy;
    }

    /** {@inheritDoc} */
    @Override
    public int vocabSize() {
        return tokenBytes.length;
    }

    /** {@inheritDoc} */
    @Override
    public int[] encode(String text) {
        Map<String, int[]> cache = new HashMap<>();
        int[] out = new int[Math.max(16, text.length() / 2)];
        int size = 0;
        Matcher m = PIECES.matcher(text);
        while (m.find()) {
            int[] ids = cache.computeIfAbsent(m.group(), this::encodePiece);
            if (size + ids.length > out.length) {
                out = Arrays.copyOf(out, Math.max(out.length * 2, size + ids.length));
            }
            System.arraycopy(ids, 0, out, size, ids.length);
            size += ids.length;
        }
        return Arrays.copyOf(out, size);
    }

    private int[] encodePiece(String piece) {
        int[] ids = new ByteTokenizer().encode(piece);
        while (ids.length > 1) {
            int bestRank = Integer.MAX_VALUE;
            for (int i = 0; i + 1 < ids.length; i++) {
                Integer r = ranks.get(pair(ids[i], ids[i + 1]));
                if (r != null && r < bestRank) {
                    bestRank = r;
                }
            }
            if (bestRank == Integer.MAX_VALUE) {
                break;
            }
            int[] mg = merges[bestRank];
            ids = merge(ids, mg[0], mg[1], ByteTokenizer.VOCAB_SIZE + bestRank);
        }
        return ids;
    }

    /** {@inheritDoc} */
    @Override
    public String decode(int[] ids) {
        int length = 0;
        for (int id : ids) {
            Tokenizers.checkId(id, tokenBytes.length);
            length += tokenBytes[id].length;
        }
        byte[] bytes = new byte[length];
        int at = 0;
        for (int id : ids) {
            System.arraycopy(tokenBytes[id], 0, bytes, at, tokenBytes[id].length);
            at += tokenBytes[id].length;
        }
        return new String(bytes, StandardCharsets.UTF_8);
    }

    /** {@inheritDoc} */
    @Override
    public void save(Path file) throws IOException {
        try (Writer w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            w.write(Tokenizers.header(FORMAT) + "\n");
            w.write("merges " + merges.length + "\n");
            for (int[] mg : merges) {
                w.write(mg[0] + " " + mg[1] + "\n");
            }
        }
    }

    static BpeTokenizer read(BufferedReader r, Path file) throws IOException {
        try {
            String line = r.readLine();
            if (line == null || !line.startsWith("merges ")) {
                throw new IOException(file + ": line 2: " + line + " (expected: merges N)");
            }
            String count = line.substring("merges ".length()).trim();
            int n;
            try {
                n = Integer.parseInt(count);
            } catch (NumberFormatException e) {
                n = -1;
            }
            if (n < 0) {
                throw new IOException(
                        file
                                + ": line 2: merges "
                                + count
                                + " (expected: a count from 0 to "
                                + Integer.MAX_VALUE
                                + ")");
            }
            // The count is not trusted for an allocation: a corrupt one (2000000000) would take the
            // heap before the file's end is found. The list grows as the merges are read.
            List<int[]> merges = new ArrayList<>(Math.min(n, 1 << 16));
            for (int m = 0; m < n; m++) {
                line = r.readLine();
                if (line == null) {
                    throw new IOException(
                            file
                                    + ": line 2: merges "
                                    + n
                                    + ", but the file ends after "
                                    + m
                                    + " (expected: one line per merge)");
                }
                String[] ab = line.trim().split(" ");
                if (ab.length != 2) {
                    throw new IOException(file + ": merge " + m + ": " + line);
                }
                merges.add(new int[] {Integer.parseInt(ab[0]), Integer.parseInt(ab[1])});
            }
            return new BpeTokenizer(merges.toArray(new int[0][]));
        } catch (IllegalArgumentException e) {
            throw new IOException(file + ": " + e.getMessage(), e);
        }
    }

    private static long pair(int a, int b) {
        return ((long) a << 32) | (b & 0xffffffffL);
    }

    /**
     * Adds {@code delta} to the count of every adjacent pair of a word; with {@code where}, also
     * records that word {@code w} holds each pair.
     */
    private static void addPairs(
            Map<Long, Long> pairCounts, int[] word, long delta, Map<Long, IntList> where, int w) {
        for (int i = 0; i + 1 < word.length; i++) {
            long key = pair(word[i], word[i + 1]);
            long c = pairCounts.getOrDefault(key, 0L) + delta;
            if (c == 0) {
                pairCounts.remove(key);
            } else {
                pairCounts.put(key, c);
            }
            if (where != null) {
                where.computeIfAbsent(key, k -> new IntList()).addIfNotLast(w);
            }
        }
    }

    /** A growable list of ints. */
    private static final class IntList {

        int[] values = new int[4];
        int size;

        void addIfNotLast(int v) {
            if (size > 0 && values[size - 1] == v) {
                return;
            }
            if (size == values.length) {
                values = Arrays.copyOf(values, size * 2);
            }
            values[size++] = v;
        }
    }

    private static boolean contains(int[] word, int a, int b) {
        for (int i = 0; i + 1 < word.length; i++) {
            if (word[i] == a && word[i + 1] == b) {
                return true;
            }
        }
        return false;
    }

    /** Replaces every non-overlapping occurrence of (a, b), left to right, by id. */
    private static int[] merge(int[] word, int a, int b, int id) {
        int[] out = new int[word.length];
        int n = 0;
        for (int i = 0; i < word.length; i++) {
            if (i + 1 < word.length && word[i] == a && word[i + 1] == b) {
                out[n++] = id;
                i++;
            } else {
                out[n++] = word[i];
            }
        }
        return Arrays.copyOf(out, n);
    }

    /** {@inheritDoc} */
    @Override
    public String toString() {
        return "BpeTokenizer(vocab=" + vocabSize() + ")";
    }
}
