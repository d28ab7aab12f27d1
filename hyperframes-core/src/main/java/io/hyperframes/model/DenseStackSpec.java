package io.hyperframes.model;

import static com.google.common.base.Preconditions.checkArgument;

import com.google.common.collect.ImmutableList;
import java.util.List;

/**
 * A stack of dense (fully connected) layers with biases, each followed by an element-wise
 * activation: a multi-layer perceptron, as {@code io.hyperframes.djl.DjlBlocks} reads it from a
 * DJL block of {@code Linear} layers. {@code widths.get(0)} is the input size and
 * {@code widths.get(i)} the output size of layer i; one sample is one "token" of the planner.
 *
 * <p>Parameters: Σ (w<sub>i−1</sub> + 1)·w<sub>i</sub>. Training FLOPs per sample:
 * 6·Σ w<sub>i−1</sub>·w<sub>i</sub> — the forward matmul is 2·m·n·k, the backward computes
 * the input and the weight gradients, twice that (Kaplan et al. 2020, arXiv 2001.08361, §2.1;
 * the same 3× convention as Narayanan et al. 2021, §5.1, for transformers). Bias additions and
 * activations are element-wise (memory traffic, no FLOPs counted).
 *
 * @param name model name
 * @param widths input size, then each layer's output size (at least two entries)
 */
public record DenseStackSpec(String name, List<Integer> widths) implements ModelSpec {

  public DenseStackSpec {
    checkArgument(name != null && !name.isBlank(), "model.name: must be given");
    checkArgument(widths != null && widths.size() >= 2,
        "model.dense: must list the input size and at least one layer, got %s", widths);
    for (int i = 0; i < widths.size(); i++) {
      Integer w = widths.get(i);
      checkArgument(w != null && w > 0 && w <= 1 << 24,
          "model.dense[%s]: must be in [1, 16777216], got %s", i, w);
    }
    widths = ImmutableList.copyOf(widths);
  }

  /** Dense layers (matmuls). */
  public int layers() {
    return widths.size() - 1;
  }

  /** The layers as blocks ({@link Block.Dense}), input to output. */
  public List<Block> blocks() {
    ImmutableList.Builder<Block> out = ImmutableList.builder();
    for (int i = 1; i < widths.size(); i++) {
      out.add(new Block.Dense(widths.get(i - 1), widths.get(i)));
    }
    return out.build();
  }

  /** The sum of the layers' weights and biases. */
  @Override
  public double parameters() {
    double n = 0;
    for (Block b : blocks()) {
      n += b.parameters();
    }
    return n;
  }

  /** Multiply-adds of one sample's forward pass: Σ w<sub>i−1</sub>·w<sub>i</sub>. */
  public double macsPerSample() {
    double n = 0;
    for (Block b : blocks()) {
      n += b.forwardFlopsPerToken() / 2;
    }
    return n;
  }

  /** Forward + backward FLOPs of one sample (6 per multiply-add, see the class comment). */
  public double trainingFlopsPerSample() {
    return 6.0 * macsPerSample();
  }

  /** Activations of one sample, all layers (the outputs of every layer, input included). */
  public double activationsPerSample() {
    double n = 0;
    for (int w : widths) {
      n += w;
    }
    return n;
  }
}
