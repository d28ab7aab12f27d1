package io.hyperframes.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.EstimateBuilder;
import io.hyperframes.HyperFrames;
import io.hyperframes.catalog.Catalog;
import io.hyperframes.hardware.KernelEfficiency;
import io.hyperframes.model.MoeSpec;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.parallel.Engine;
import io.hyperframes.parallel.Layout;
import io.hyperframes.parallel.Recompute;
import io.hyperframes.precision.NumberFormat;
import io.hyperframes.workload.Kernels;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The element-wise bandwidth fraction (KernelEfficiency#elementwiseBandwidthFraction) slows the
 * element-wise kernels and nothing else: the eager kernels' extra bytes, which are element-wise
 * only, cost exactly 1/fraction times as long; memory and model FLOPs do not move.
 */
class ElementwiseBandwidthTest {

  @TempDir Path dir;

  private static Catalog withFraction(double fraction) {
    Catalog c = Catalog.builtIn();
    KernelEfficiency k = c.kernels().get("ampere").get(NumberFormat.BF16);
    return c.withKernel("ampere", NumberFormat.BF16, k.withElementwiseBandwidthFraction(fraction));
  }

  private static TrainingEstimate run(Catalog c, Kernels kernels) {
    EstimateBuilder b = HyperFrames.estimate().catalog(c).model("llama2-7b")
        .accelerator("a100-sxm-80gb").devices(64)
        .training(t -> t.precision("bf16-mixed").globalBatchSize(128).kernels(kernels))
        .layout(l -> l.tp(1).pp(1).dp(64).microBatch(2).recompute(Recompute.NONE).zeroStage(3)
            .engine(Engine.FSDP));
    return b.run();
  }

  @Test
  void theEagerKernelsExtraTimeScalesAsOneOverTheFraction() {
    Catalog full = withFraction(1.0);
    Catalog half = withFraction(0.5);
    double extraFull = run(full, Kernels.EAGER).time().computeSeconds()
        - run(full, Kernels.FUSED).time().computeSeconds();
    double extraHalf = run(half, Kernels.EAGER).time().computeSeconds()
        - run(half, Kernels.FUSED).time().computeSeconds();
    assertTrue(extraFull > 0, "eager kernels add element-wise time");
    assertEquals(2 * extraFull, extraHalf, 1e-9 * extraHalf);
  }

  @Test
  void aLowerFractionSlowsTheStepAndChangesNothingElse() {
    TrainingEstimate full = run(withFraction(1.0), Kernels.FUSED);
    TrainingEstimate slow = run(withFraction(0.4), Kernels.FUSED);
    assertTrue(slow.stepSeconds() > full.stepSeconds());
    assertEquals(full.memory(), slow.memory());
    assertEquals(full.modelFlopsPerStep(), slow.modelFlopsPerStep(), 0.0);
  }

  @Test
  void theBuiltInAmpereKernelsStreamAtTheFullBandwidth() {
    assertEquals(1.0, Catalog.builtIn().kernels().get("ampere").get(NumberFormat.BF16)
        .elementwiseBandwidthFraction());
    assertEquals(run(Catalog.builtIn(), Kernels.FUSED).time(),
        run(withFraction(1.0), Kernels.FUSED).time());
  }

  @Test
  void aFractionOutsideItsRangeIsNamed() throws IOException {
    Path file = Files.writeString(dir.resolve("override.json"), """
        {"kernels": [{"generation": "hopper", "formats": ["bf16", "fp16"],
          "matmulEfficiency": 0.76, "matmulHalfDim": 700, "matmulHalfRows": 64,
          "attentionEfficiency": 0.5, "layerOverheadUs": 0,
          "elementwiseBandwidthFraction": 1.5, "source": "a test"}]}
        """);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Catalog.builtIn().withOverrides(file));
    assertTrue(e.getMessage().contains("elementwiseBandwidthFraction")
        && e.getMessage().contains("1.5"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> Catalog.builtIn().kernels().get("hopper")
        .get(NumberFormat.BF16).withElementwiseBandwidthFraction(0.0));
  }

  @Test
  void fp8CastsReadOnceAndWriteTwicePerLinearLayer() {
    // LLaMA-2-70B-like: h 8192, 64 heads of 128, 8 KV heads, gated FFN 28672; BF16 activations.
    TransformerSpec m = new TransformerSpec("dense", 80, 8192, 64, 8, 28672, true, 32000, 4096,
        false);
    double e = 2.0;
    double[] one = LayerTime.fp8CastBytesPerToken(m,
        new Layout(1, 1, 8, 1, 1, false, Recompute.NONE, 1), e);
    // Forward: QKV and up take h, the output projection 8192 values, down 28672.
    assertEquals((8192 + 8192 + 8192 + 28672) * (e + 2), one[0], 1e-6);
    // Backward: QKV's 8192 + 2 x 1024, the output projection's h, up's 2 x 28672, down's h.
    assertEquals((10240 + 8192 + 2 * 28672 + 8192) * (e + 2), one[1], 1e-6);
    // tp 8 with sequence parallelism divides everything by 8; without it the hidden-wide tensors
    // stay whole on every rank.
    double[] sp = LayerTime.fp8CastBytesPerToken(m,
        new Layout(8, 1, 1, 1, 1, true, Recompute.NONE, 1), e);
    assertEquals(one[0] / 8, sp[0], 1e-6);
    assertEquals(one[1] / 8, sp[1], 1e-6);
    double[] noSp = LayerTime.fp8CastBytesPerToken(m,
        new Layout(8, 1, 1, 1, 1, false, Recompute.NONE, 1), e);
    assertEquals((2 * 8192 + (8192 + 28672) / 8.0) * (e + 2), noSp[0], 1e-6);
    // One expert routed to by top-1 is the dense MLP.
    TransformerSpec moe = new TransformerSpec("moe", 80, 8192, 64, 8, 28672, true, 32000, 4096,
        false, 0, new MoeSpec(1, 1, 28672, 0, 0, 0, 1, 0));
    double[] same = LayerTime.fp8CastBytesPerToken(moe,
        new Layout(1, 1, 8, 1, 1, false, Recompute.NONE, 1), e);
    assertEquals(one[0], same[0], 1e-6);
    assertEquals(one[1], same[1], 1e-6);
  }

  @Test
  void anFp8RunsElementWiseKernelsUseTheActivationFormatsFraction() {
    EstimateBuilder b = HyperFrames.estimate().model("llama2-70b").accelerator("h100-sxm-80gb")
        .devices(64).layout(l -> l.tp(4).pp(2).dp(8).microBatch(1).sequenceParallel(true)
            .recompute(Recompute.SELECTIVE).zeroStage(1).engine(Engine.MEGATRON));
    Catalog full = Catalog.builtIn();
    KernelEfficiency bf16 = full.kernels().get("hopper").get(NumberFormat.BF16);
    Catalog slow = full.withKernel("hopper", NumberFormat.BF16,
        bf16.withElementwiseBandwidthFraction(bf16.elementwiseBandwidthFraction() / 2));
    // Halving the BF16 element-wise fraction slows an FP8 run too: its element-wise kernels,
    // casts included, run on BF16 activations.
    TrainingEstimate fp8 = b.catalog(full).training(t -> t.precision("fp8-mixed")
        .globalBatchSize(256)).run();
    TrainingEstimate fp8Slow = b.catalog(slow).training(t -> t.precision("fp8-mixed")
        .globalBatchSize(256)).run();
    assertTrue(fp8Slow.time().computeSeconds() > fp8.time().computeSeconds());
  }
}
