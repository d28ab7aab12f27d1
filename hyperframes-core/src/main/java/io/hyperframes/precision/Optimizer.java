package io.hyperframes.precision;

import io.hyperframes.json.Ids;
import java.util.Map;


/**
 * Optimizer, by the state it keeps per parameter in FP32.
 *
 * <p>Adam keeps two moments (8 bytes; Kingma and Ba 2015); SGD with momentum one (4 bytes);
 * Adafactor a factored second moment whose size is negligible next to the parameters (Shazeer and
 * Stern 2018, arXiv 1804.04235, §3), counted here as 0 bytes per parameter.
 */
public enum Optimizer {
  ADAM(8.0),
  SGD(4.0),
  ADAFACTOR(0.0);

  private final String id = Ids.lowerCase(this);

  private final double stateBytesPerParameter;

  Optimizer(double stateBytesPerParameter) {
    this.stateBytesPerParameter = stateBytesPerParameter;
  }

  public String id() {
    return id;
  }

  /** FP32 optimizer state per parameter, excluding any master copy of the weights. */
  public double stateBytesPerParameter() {
    return stateBytesPerParameter;
  }

  /** The optimizer with this id; {@code IllegalArgumentException} naming the value otherwise. */
  public static Optimizer fromId(String field, String value) {
    return Ids.byId(Optimizer.class, Optimizer::id, Map.of("adamw", ADAM), field, value,
        "optimizer");
  }
}
