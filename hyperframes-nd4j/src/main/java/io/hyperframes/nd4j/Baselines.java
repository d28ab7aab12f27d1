package io.hyperframes.nd4j;

import org.nd4j.linalg.activations.IActivation;
import org.nd4j.linalg.activations.impl.ActivationGELU;
import org.nd4j.linalg.activations.impl.ActivationIdentity;
import org.nd4j.linalg.activations.impl.ActivationReLU;
import org.nd4j.linalg.activations.impl.ActivationSwish;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.api.ops.impl.transforms.custom.XwPlusB;
import org.nd4j.linalg.factory.Nd4j;

/**
 * What ND4J users write today, for side-by-side measurements: the unfused dense layer (mmul,
 * addiRowVector, the ND4J activation, addi), the same with the {@code xw_plus_b} custom op, and the
 * unfused backward. Public so that JMH benchmarks and the CLI time exactly the same code.
 */
public final class Baselines {
  private Baselines() {}

  /** The ND4J activation function a DL4J layer would use for {@code a}. */
  public static IActivation nd4jActivation(Activation a) {
    switch (a) {
      case IDENTITY:
        return new ActivationIdentity();
      case RELU:
        return new ActivationReLU();
      case GELU_TANH:
        return new ActivationGELU(true);
      case GELU_ERF:
        return new ActivationGELU(false);
      case SILU:
        return new ActivationSwish();
      default:
        throw new AssertionError(a);
    }
  }

  /** y = act(x·W + b) + r, step by step: mmul, addiRowVector, activation, addi. */
  public static INDArray unfusedForward(IActivation act, INDArray x, INDArray w, INDArray b,
      INDArray r) {
    INDArray y = x.mmul(w);
    y.addiRowVector(b);
    act.getActivation(y, true);
    return y.addi(r);
  }

  /** The same with ND4J's {@code xw_plus_b} custom op for the first two steps. */
  public static INDArray xwPlusBForward(IActivation act, INDArray x, INDArray w, INDArray b,
      INDArray r) {
    INDArray y = Nd4j.exec(new XwPlusB(x, w, b.reshape(b.length())))[0];
    act.getActivation(y, true);
    return y.addi(r);
  }

  /**
   * The unfused backward: dZ from the ND4J activation's backprop at z, dX = dZ·Wᵀ,
   * dW = xᵀ·dZ, db = Σ_rows dZ. Returns {dX, dW, db}.
   */
  public static INDArray[] unfusedBackward(IActivation act, INDArray x, INDArray w, INDArray z,
      INDArray dY) {
    INDArray dZ = act.backprop(z.dup(), dY.dup()).getFirst();
    INDArray dX = dZ.mmul(w.transpose());
    INDArray dW = x.transpose().mmul(dZ);
    INDArray db = dZ.sum(true, 0);
    return new INDArray[] {dX, dW, db};
  }
}
