/**
 * Text for the transformer: the Europarl corpus with its fixed train/validation split, tokenizers
 * (byte-level and byte-pair encoding, saved beside a model), windows of tokens as a DJL {@link
 * ai.djl.training.dataset.RandomAccessDataset}, and the unigram baseline a language model must
 * beat.
 */
package ai.djl.distributed.transformer.data;
