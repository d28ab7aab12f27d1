package io.hyperframes.djl;

import static com.google.common.base.Preconditions.checkArgument;

import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Block;
import ai.djl.nn.Parameter;
import ai.djl.nn.core.Linear;
import com.google.common.collect.ImmutableMap;
import io.hyperframes.model.DenseStackSpec;
import io.hyperframes.model.ParametersOnlySpec;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What the planner needs of a DJL model, read from its {@link Block} so that it is not restated
 * by hand: the parameters and their shapes.
 *
 * <pre>{@code
 * Plan p = HyperFrames.plan()
 *     .model(DjlBlocks.dense("my-mlp", model.getBlock()))  // widths and count from the block
 *     .accelerator("a100-sxm-80gb").devices(1, 64)
 *     .training(t -> t.precision("bf16-mixed").globalBatchSize(4096).tokens(1e10))  // samples
 *     .run();
 *
 * TrainingEstimate e = HyperFrames.estimate()
 *     .model(DjlBlocks.spec("my-net", model.getBlock()))   // any block: parameter count
 *     .accelerator("a100-sxm-80gb").devices(8)
 *     .training(t -> t.precision("bf16-mixed").globalBatchSize(256))
 *     .layout(l -> l.zeroStage(1))
 *     .run();
 * e.memory();                                              // weights, gradients, optimizer per device
 * }</pre>
 *
 * <p>The count is DJL's own: the product of every parameter's shape, over
 * {@link Block#getParameters()} (weights and biases, trainable or frozen). The block must be
 * initialised ({@code block.initialize(manager, dataType, inputShape)}) so that the shapes are
 * known. A parameter count is what model-state memory needs ({@link #spec}); a block of
 * {@code Linear} layers is also a dense stack ({@link #dense}), which the planner estimates and
 * plans (data parallelism and ZeRO; step time from the matmul roofline).
 */
public final class DjlBlocks {

  private DjlBlocks() {}

  /**
   * Every parameter's shape, by DJL's parameter path ({@code "01Linear_weight"}).
   *
   * @throws IllegalArgumentException when the block is not initialised
   */
  public static Map<String, Shape> shapes(Block block) {
    checkArgument(block != null, "block: must be given");
    Map<String, Shape> out = new LinkedHashMap<>();
    for (var pair : block.getParameters()) {
      Parameter p = pair.getValue();
      checkArgument(p.isInitialized(), "block: parameter %s is not initialised (call"
          + " block.initialize(manager, dataType, inputShape) first)", pair.getKey());
      out.put(pair.getKey(), p.getArray().getShape());
    }
    return ImmutableMap.copyOf(out);
  }

  /**
   * The parameter count: the sum of the sizes of {@link #shapes}.
   *
   * @throws IllegalArgumentException when the block is not initialised or has no parameters
   */
  public static long parameters(Block block) {
    long n = 0;
    for (Shape s : shapes(block).values()) {
      n = Math.addExact(n, s.size());
    }
    checkArgument(n > 0, "block: has no parameters");
    return n;
  }

  /** The block as the planner's parameters-only model named {@code name}. */
  public static ParametersOnlySpec spec(String name, Block block) {
    return new ParametersOnlySpec(name, parameters(block));
  }

  /**
   * The block as a dense stack the planner estimates and plans ({@code HyperFrames.plan()
   * .model(DjlBlocks.dense("mlp", block))}): its {@link Linear} layers in order, nested
   * sequential blocks flattened, parameter-free children (activations, lambdas, dropout)
   * skipped. The widths come from each layer's weight shape (units × inputs), so the stack's
   * parameter count equals {@link #parameters} for the block.
   *
   * @throws IllegalArgumentException when a child with parameters is not a {@code Linear} with
   *     a bias (normalisation, convolution, embedding: use {@link #spec} for the count), when the
   *     layers do not chain (one's units differ from the next one's inputs), or when the block
   *     is not initialised
   */
  public static DenseStackSpec dense(String name, Block block) {
    checkArgument(block != null, "block: must be given");
    List<Integer> widths = new ArrayList<>();
    collect(block, "block", widths);
    checkArgument(widths.size() >= 2, "block: has no Linear layer");
    DenseStackSpec spec = new DenseStackSpec(name, widths);
    long counted = parameters(block);
    checkArgument(spec.parameters() == counted, "block: its Linear layers hold %s parameters,"
        + " the block %s (parameters outside Linear layers): use DjlBlocks.spec for the count",
        (long) spec.parameters(), counted);
    return spec;
  }

  private static void collect(Block b, String path, List<Integer> widths) {
    if (b instanceof Linear) {
      Shape weight = null;
      boolean bias = false;
      for (var pair : b.getDirectParameters()) {
        Parameter p = pair.getValue();
        checkArgument(p.isInitialized(), "%s: parameter %s is not initialised (call"
            + " block.initialize(manager, dataType, inputShape) first)", path, pair.getKey());
        if (p.getType() == Parameter.Type.WEIGHT) {
          weight = p.getArray().getShape();
        } else if (p.getType() == Parameter.Type.BIAS) {
          bias = true;
        }
      }
      checkArgument(weight != null && weight.dimension() == 2, "%s: a Linear layer without a"
          + " 2-d weight", path);
      checkArgument(bias, "%s: a Linear layer without a bias; the dense stack counts biases:"
          + " use DjlBlocks.spec for the count", path);
      int units = Math.toIntExact(weight.get(0));
      int inputs = Math.toIntExact(weight.get(1));
      if (widths.isEmpty()) {
        widths.add(inputs);
      } else {
        checkArgument(widths.get(widths.size() - 1) == inputs, "%s: takes %s inputs but the"
            + " layer before it gives %s", path, inputs, widths.get(widths.size() - 1));
      }
      widths.add(units);
      return;
    }
    if (!b.getDirectParameters().isEmpty()) {
      throw new IllegalArgumentException(path + ": " + b.getClass().getSimpleName()
          + " has parameters and is not a Linear layer: a dense stack is Linear layers and"
          + " parameter-free activations; use DjlBlocks.spec for the count");
    }
    for (var child : b.getChildren()) {
      collect(child.getValue(), path + "/" + child.getKey(), widths);
    }
  }
}
