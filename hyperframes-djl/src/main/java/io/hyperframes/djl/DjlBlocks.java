package io.hyperframes.djl;

import static com.google.common.base.Preconditions.checkArgument;

import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Block;
import ai.djl.nn.Parameter;
import com.google.common.collect.ImmutableMap;
import io.hyperframes.model.ParametersOnlySpec;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What the planner needs of a DJL model, read from its {@link Block} so that it is not restated
 * by hand: the parameters and their shapes.
 *
 * <pre>{@code
 * TrainingEstimate e = HyperFrames.estimate()
 *     .model(DjlBlocks.spec("my-mlp", model.getBlock()))   // parameter count from the block
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
 * known. A parameter count is what model-state memory needs; the planner's step-time model
 * covers transformer architectures, given in the request's {@code model} fields.
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
}
