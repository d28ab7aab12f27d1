package io.hyperframes.nd4j;

import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.api.ops.impl.transforms.strict.Erf;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.ops.transforms.Transforms;

/**
 * Activation of a fused dense layer, with its oneDNN algorithm and an ND4J reference used by the
 * fallback path.
 *
 * <p>Formulas: ReLU max(0, x); GELU (tanh) 0.5x(1 + tanh(√(2/π)(x + 0.044715x³))) and GELU (erf)
 * 0.5x(1 + erf(x/√2)) (Hendrycks and Gimpel 2016, arXiv 1606.08415); SiLU x·σ(x) (Elfwing et al.
 * 2018, arXiv 1702.03118).
 */
public enum Activation {
  IDENTITY,
  RELU,
  GELU_TANH,
  GELU_ERF,
  SILU;

  private static final double SQRT_2_OVER_PI = Math.sqrt(2.0 / Math.PI);

  /** The activation in double precision (reference for tests and the fallback). */
  public double apply(double x) {
    switch (this) {
      case IDENTITY:
        return x;
      case RELU:
        return Math.max(0.0, x);
      case GELU_TANH:
        return 0.5 * x * (1.0 + Math.tanh(SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)));
      case GELU_ERF:
        return 0.5 * x * (1.0 + org.apache.commons.math3.special.Erf.erf(x / Math.sqrt(2.0)));
      case SILU:
        return x / (1.0 + Math.exp(-x));
      default:
        throw new AssertionError(this);
    }
  }

  /** Derivative of the activation at x, in double precision. */
  public double derivative(double x) {
    switch (this) {
      case IDENTITY:
        return 1.0;
      case RELU:
        return x > 0 ? 1.0 : 0.0;
      case GELU_TANH: {
        double u = SQRT_2_OVER_PI * (x + 0.044715 * x * x * x);
        double t = Math.tanh(u);
        double du = SQRT_2_OVER_PI * (1.0 + 3 * 0.044715 * x * x);
        return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * du;
      }
      case GELU_ERF:
        return 0.5 * (1.0 + org.apache.commons.math3.special.Erf.erf(x / Math.sqrt(2.0)))
            + x * Math.exp(-0.5 * x * x) / Math.sqrt(2.0 * Math.PI);
      case SILU: {
        double s = 1.0 / (1.0 + Math.exp(-x));
        return s * (1.0 + x * (1.0 - s));
      }
      default:
        throw new AssertionError(this);
    }
  }

  /** Applies the activation to an FP32/FP64 ND4J array in place, with ND4J ops (fallback path). */
  void applyInPlace(INDArray z) {
    switch (this) {
      case IDENTITY -> { }
      case RELU -> Transforms.relu(z, false);
      case SILU -> z.muli(Transforms.sigmoid(z, true));
      case GELU_TANH -> {
        INDArray inner = z.mul(z).muli(z).muli(0.044715).addi(z).muli(SQRT_2_OVER_PI);
        z.muli(Transforms.tanh(inner, false).addi(1.0).muli(0.5));
      }
      case GELU_ERF -> {
        INDArray e = erf(z.div(Math.sqrt(2.0)));
        z.muli(e.addi(1.0).muli(0.5));
      }
      default -> throw new AssertionError(this);
    }
  }

  private static INDArray erf(INDArray x) {
    return Nd4j.exec(new Erf(x, x));
  }

  /** dZ = dY ⊙ act'(z) with ND4J ops (fallback path); returns a new FP32 array. */
  INDArray backward(INDArray z, INDArray dY) {
    switch (this) {
      case IDENTITY:
        return dY.dup();
      case RELU:
        return dY.mul(z.gt(0.0).castTo(dY.dataType()));
      case SILU: {
        INDArray s = Transforms.sigmoid(z, true);
        INDArray d = s.rsub(1.0).muli(z).addi(1.0).muli(s);
        return d.muli(dY);
      }
      case GELU_TANH: {
        INDArray u = z.mul(z).muli(z).muli(0.044715).addi(z).muli(SQRT_2_OVER_PI);
        INDArray t = Transforms.tanh(u, false);
        INDArray du = z.mul(z).muli(3 * 0.044715).addi(1.0).muli(SQRT_2_OVER_PI);
        INDArray d = t.mul(t).rsubi(1.0).muli(z).muli(du).muli(0.5).addi(t.addi(1.0).muli(0.5));
        return d.muli(dY);
      }
      case GELU_ERF: {
        INDArray cdf = erf(z.div(Math.sqrt(2.0))).addi(1.0).muli(0.5);
        INDArray pdf = Transforms.exp(z.mul(z).muli(-0.5), false).muli(1.0 / Math.sqrt(2 * Math.PI));
        return pdf.muli(z).addi(cdf).muli(dY);
      }
      default:
        throw new AssertionError(this);
    }
  }
}
