package io.hyperframes.precision;

import io.hyperframes.json.Ids;
import java.util.Map;

/**
 * A number format an accelerator computes or stores in, with its storage size and, for floating
 * formats, its exponent and mantissa widths and largest finite value.
 *
 * <p>Sources: IEEE 754-2019 (FP64, FP32, FP16); NVIDIA A100 architecture whitepaper (TF32, BF16);
 * Micikevicius et al. 2022, "FP8 Formats for Deep Learning" (arXiv 2209.05433), Table 1 (E4M3
 * max 448, E5M2 max 57344). Integer formats are two's complement.
 */
public enum NumberFormat {
  FP64(8.0, 11, 52, Double.MAX_VALUE),
  FP32(4.0, 8, 23, Float.MAX_VALUE),
  /** TF32 is stored as FP32 and computed with a 10-bit mantissa inside the tensor cores. */
  TF32(4.0, 8, 10, 3.40e38),
  FP16(2.0, 5, 10, 65504.0),
  BF16(2.0, 8, 7, 3.3895313892515355e38),
  FP8_E4M3(1.0, 4, 3, 448.0),
  FP8_E5M2(1.0, 5, 2, 57344.0),
  INT8(1.0, 0, 0, 127.0),
  INT4(0.5, 0, 0, 7.0),
  /**
   * NVIDIA's NVFP4: E2M1 elements (largest magnitude 6) in blocks of 16 sharing an E4M3 scale,
   * 4.5 bits an element with the scales (the tensor's one FP32 scale is not counted); the
   * block-scaled FP4 that Blackwell's tensor cores compute in (NVIDIA TransformerEngine,
   * docs/features/low_precision_training/nvfp4/nvfp4.rst @ 41f6cbf1; docs/inference.md, "FP4").
   */
  NVFP4(0.5625, 2, 1, 6.0);

  private final String id = Ids.hyphenated(this);

  private final double bytes;
  private final int exponentBits;
  private final int mantissaBits;
  private final double maxValue;

  NumberFormat(double bytes, int exponentBits, int mantissaBits, double maxValue) {
    this.bytes = bytes;
    this.exponentBits = exponentBits;
    this.mantissaBits = mantissaBits;
    this.maxValue = maxValue;
  }

  /** Lower-case identifier used in catalogs and requests ("bf16", "fp8-e4m3"). */
  public String id() {
    return id;
  }

  /** Storage size of one element in bytes (0.5 for INT4). */
  public double bytes() {
    return bytes;
  }

  /** Exponent width in bits; 0 for integer formats. */
  public int exponentBits() {
    return exponentBits;
  }

  /** Explicit mantissa (fraction) width in bits; 0 for integer formats. */
  public int mantissaBits() {
    return mantissaBits;
  }

  /** Largest finite representable magnitude. */
  public double maxValue() {
    return maxValue;
  }

  /** Whether this is a floating-point format. */
  public boolean isFloating() {
    return exponentBits > 0;
  }

  /** Whether this is one of the two 8-bit floating formats (E4M3, E5M2). */
  public boolean isFp8() {
    return this == FP8_E4M3 || this == FP8_E5M2;
  }

  /**
   * Whether this is a floating format narrower than 16 bits (FP8, NVFP4): engines keep the
   * activations between kernels and attention in 16 bits around its matmuls.
   */
  public boolean isNarrowFloat() {
    return isFp8() || this == NVFP4;
  }

  /**
   * Unit roundoff 2^-(mantissaBits+1) of a floating format: the relative error bound of one
   * rounding (Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed., §2.1).
   *
   * @throws IllegalStateException for integer formats, which have no relative rounding bound
   */
  public double unitRoundoff() {
    if (!isFloating()) {
      throw new IllegalStateException("format " + id + " is an integer format");
    }
    return Math.scalb(1.0, -(mantissaBits + 1));
  }

  /**
   * The format with this identifier (case-insensitive; "fp8" means E4M3).
   *
   * @throws IllegalArgumentException naming the value when it is unknown
   */
  public static NumberFormat fromId(String field, String value) {
    return Ids.byId(NumberFormat.class, NumberFormat::id, Map.of("fp8", FP8_E4M3), field, value,
        "number format");
  }
}
