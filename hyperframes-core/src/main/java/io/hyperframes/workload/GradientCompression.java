package io.hyperframes.workload;

import static com.google.common.base.Preconditions.checkArgument;

import io.hyperframes.hardware.Checks;

/**
 * Gradient compression in the data-parallel reduction: what a codec saves on the wire and what
 * it costs on the device.
 *
 * <p>How the compressed gradients are combined decides whether compression pays (Agarwal et al.
 * 2022, "On the Utility of Gradient Compression in Distributed Training Systems", MLSys, §3–4):
 * a codec whose messages add up as they are (a cast to BF16/FP16, PowerSGD's low-rank factors,
 * Vogels et al. 2019, arXiv 1905.13727, §3; random-k with an index set shared through the seed)
 * runs the usual ring all-reduce or reduce-scatter on the compressed bytes
 * ({@code allReduce = true}); a codec whose messages do not (top-k with per-rank indices, sign
 * or INT8 with per-rank scales) must all-gather every rank's message and sum them after
 * decoding ({@code allReduce = false}), so each rank receives (dp − 1) messages: it saves bytes
 * only while the ratio exceeds about dp / 2, and decodes dp − 1 messages a step.
 *
 * @param codec the codec's name, for the report ("topk-0.01-ef")
 * @param ratio FP32 gradient bytes (4 per parameter) over the bytes a rank sends, ≥ 1 (as
 *     {@code hyperframes bench compression} reports it)
 * @param encodeGBps gradient a device encodes per second, GB of FP32 gradient, &gt; 0
 * @param decodeGBps gradient a device decodes (and adds) per second, GB of FP32 gradient per
 *     message, &gt; 0
 * @param allReduce whether the messages can be summed by an all-reduce as they are
 */
public record GradientCompression(String codec, double ratio, double encodeGBps,
    double decodeGBps, boolean allReduce) {

  public GradientCompression {
    checkArgument(codec != null && !codec.isBlank(),
        "workload.gradientCompression.codec: must be given");
    checkArgument(Double.isFinite(ratio) && ratio >= 1,
        "workload.gradientCompression.ratio: must be >= 1, got %s", ratio);
    Checks.positive("workload.gradientCompression.encodeGBps", encodeGBps);
    Checks.positive("workload.gradientCompression.decodeGBps", decodeGBps);
  }

  /** Bytes one rank sends for {@code parameters} gradients. */
  public double messageBytes(double parameters) {
    return 4.0 * parameters / ratio;
  }

  /**
   * Seconds a device spends encoding its gradient and decoding what it receives in a reduction
   * over {@code ranks}: one encode, and one decode of the reduced result (all-reduce) or of the
   * other ranks' messages (all-gather).
   */
  public double codecSeconds(double parameters, int ranks) {
    double fp32 = 4.0 * parameters;
    int decoded = allReduce ? 1 : Math.max(1, ranks - 1);
    return fp32 / (encodeGBps * 1e9) + decoded * fp32 / (decodeGBps * 1e9);
  }
}
