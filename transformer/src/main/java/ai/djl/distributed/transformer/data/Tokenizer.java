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
