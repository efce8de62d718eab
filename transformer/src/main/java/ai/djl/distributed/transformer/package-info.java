/**
 * A GPT-style decoder-only transformer as DJL blocks, on DJL's PyTorch engine.
 *
 * <p>{@link ai.djl.distributed.transformer.GptConfig} gives the shape (presets {@code tiny} and
 * {@code mini}); {@link ai.djl.distributed.transformer.GptModel} is the model (embeddings, {@link
 * ai.djl.distributed.transformer.GptBlock}s of {@link
 * ai.djl.distributed.transformer.CausalSelfAttention} and {@link
 * ai.djl.distributed.transformer.Mlp}, a tied head), trained with {@link
 * ai.djl.distributed.transformer.CausalLmLoss} through DJL's {@code Trainer}; {@link
 * ai.djl.distributed.transformer.GptGenerator} samples text with a {@link
 * ai.djl.distributed.transformer.KvCache}; {@link ai.djl.distributed.transformer.GptCheckpoint}
 * saves and loads a model with its tokenizer.
 */
package ai.djl.distributed.transformer;
