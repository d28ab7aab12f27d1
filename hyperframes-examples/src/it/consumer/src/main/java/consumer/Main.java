package consumer;

import io.hyperframes.HyperFrames;
import io.hyperframes.nd4j.Activation;
import io.hyperframes.nd4j.FusedDense;
import io.hyperframes.plan.Objective;
import io.hyperframes.plan.Plan;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/** Plans a job and runs a fused kernel as an adopting application would; fails loudly if not. */
public final class Main {
  public static void main(String[] args) {
    for (String leaked : new String[] {"org.slf4j.simple.SimpleLogger",
        "org.junit.jupiter.api.Test", "net.jqwik.api.Property"}) {
      try {
        Class.forName(leaked);
        throw new IllegalStateException("leaked onto the consumer's class path: " + leaked);
      } catch (ClassNotFoundException expected) {
        // not on the class path, as it should be
      }
    }
    Plan plan = HyperFrames.plan()
        .model("llama2-7b").accelerator("h100-sxm-80gb").devices(8, 64)
        .training(t -> t.precision("bf16-mixed").tokens(1e11))
        .minimize(Objective.COST)
        .run();
    if (!plan.feasible() || plan.best().estimate().stepSeconds() <= 0) {
      throw new IllegalStateException("no feasible plan: " + plan.reasons());
    }
    INDArray x = Nd4j.rand(DataType.FLOAT, 4, 8);
    INDArray w = Nd4j.rand(DataType.FLOAT, 8, 3);
    INDArray b = Nd4j.rand(DataType.FLOAT, 3);
    INDArray y = FusedDense.of(Activation.RELU, FusedDense.Precision.FP32).forward(x, w, b, null);
    INDArray expected = org.nd4j.linalg.ops.transforms.Transforms.relu(x.mmul(w).addRowVector(b));
    if (!y.equalsWithEps(expected, 1e-4)) {
      throw new IllegalStateException("fused dense differs from ND4J: " + y + " vs " + expected);
    }
    System.out.println("consumer ok: " + plan.best().estimate().devices() + " devices, "
        + plan.best().estimate().layout());
  }
}
