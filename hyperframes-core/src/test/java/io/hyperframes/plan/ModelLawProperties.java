package io.hyperframes.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.catalog.Catalog;
import io.hyperframes.hardware.Cluster;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.parallel.Engine;
import io.hyperframes.parallel.Layout;
import io.hyperframes.parallel.Recompute;
import io.hyperframes.precision.Optimizer;
import io.hyperframes.precision.PrecisionRecipe;
import io.hyperframes.workload.TrainingWorkload;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/** Laws every estimate obeys, over random models and layouts (≥ 1000 tries each). */
class ModelLawProperties {

  private static final TrainingEstimator ESTIMATOR = TrainingEstimator.analytical();

  /** A random transformer, cluster size and fully resolved layout. */
  record Job(TransformerSpec model, Cluster cluster, TrainingWorkload workload, Layout layout) {
    TrainingEstimate estimate() {
      return ESTIMATOR.evaluate(model, cluster, workload, layout);
    }

    Job with(Layout l) {
      return new Job(model, cluster, workload, l);
    }

    Job with(TransformerSpec m) {
      return new Job(m, cluster, workload, layout);
    }

    Job with(TrainingWorkload w) {
      return new Job(model, cluster, w, layout);
    }
  }

  @Provide
  Arbitrary<Job> jobs() {
    Arbitrary<Integer> headDim = Arbitraries.of(64, 128);
    Arbitrary<Integer> heads = Arbitraries.of(8, 16, 32, 64);
    Arbitrary<Integer> layers = Arbitraries.of(4, 8, 16, 24, 32, 48);
    Arbitrary<Boolean> gated = Arbitraries.of(true, false);
    Arbitrary<Integer> seq = Arbitraries.of(512, 1024, 2048, 4096);
    Arbitrary<Integer> kvDiv = Arbitraries.of(1, 2, 4, 8);
    Arbitrary<String> acc = Arbitraries.of("a100-sxm-80gb", "h100-sxm-80gb", "v100-sxm-32gb",
        "mi300x-192gb", "l40s-48gb");
    Arbitrary<TransformerSpec> models = Combinators.combine(headDim, heads, layers, gated, seq,
        kvDiv).as((d, a, l, g, s, kd) -> new TransformerSpec("m", l, d * a, a,
            Math.max(1, a / kd), TransformerSpec.defaultFfnHidden(d * a, g), g, 32000, s, !g));
    Arbitrary<int[]> shape = Combinators.combine(Arbitraries.of(1, 2, 4, 8),
        Arbitraries.of(1, 2, 4), Arbitraries.of(1, 2, 4, 8, 16), Arbitraries.of(1, 2, 4),
        Arbitraries.of(1, 2, 4, 8)).as((tp, pp, dp, mb, accum) -> new int[] {tp, pp, dp, mb,
            accum});
    Arbitrary<Recompute> recompute = Arbitraries.of(Recompute.class);
    Arbitrary<Integer> zero = Arbitraries.integers().between(0, 3);
    Arbitrary<Boolean> sp = Arbitraries.of(true, false);
    Arbitrary<String> precision = Arbitraries.of("fp16-mixed", "bf16-mixed", "fp32");
    return Combinators.combine(models, acc, shape, recompute, zero, sp, precision)
        .as((m, a, sh, r, z, s, p) -> {
          int tp = sh[0];
          int pp = Math.min(sh[1], m.layers());
          int dp = sh[2];
          int devices = tp * pp * dp;
          int perNode = 8; // powers of two: devices <= 8 or a whole number of nodes
          Cluster c = new Cluster(Catalog.builtIn().accelerators().get(a), devices,
              devices > perNode ? perNode : devices, Catalog.builtIn().accelerators().get(a)
                  .intraNode(), Catalog.builtIn().nodes().get(Catalog.builtIn().accelerators()
                      .get(a).defaultNode()).interNode());
          PrecisionRecipe recipe = PrecisionRecipe.named("precision", p);
          int layersPerStage = (m.layers() + pp - 1) / pp;
          int v = pp > 1 && layersPerStage % 2 == 0 && sh[4] % pp == 0 ? 2 : 1;
          TrainingWorkload w = new TrainingWorkload(recipe, Optimizer.ADAM,
              dp * sh[3] * sh[4], 1e9);
          // Megatron-LM runs ZeRO 2/3 (Megatron-FSDP) without a pipeline only (Engine).
          int stage = Engine.MEGATRON.runsZeroStage(z, pp) ? z : 1;
          return new Job(m, c, w, new Layout(tp, pp, dp, v, sh[3], s && tp > 1, r, stage));
        })
        .filter(j -> j.model().heads() % j.layout().tp() == 0)
        .filter(j -> j.cluster().accelerator().supports(j.workload().precision().compute()));
  }

  @Property(tries = 1000)
  void everyFigureIsFiniteAndNonNegative(@ForAll("jobs") Job job) {
    TrainingEstimate e = job.estimate();
    MemoryBreakdown m = e.memory();
    TimeBreakdown t = e.time();
    double[] values = {m.weightsBytes(), m.gradientsBytes(), m.optimizerBytes(),
        m.activationsBytes(), m.otherBytes(), m.totalBytes(), t.computeSeconds(),
        t.recomputeSeconds(), t.tensorParallelCommSeconds(), t.pipelineCommSeconds(),
        t.dataParallelCommSeconds(), t.bubbleSeconds(), t.optimizerSeconds(), t.stepSeconds(),
        e.mfu(), e.hfu(), e.flopsPerSecondPerDevice(), e.tokensPerSecond(), e.commShare(),
        e.scalingEfficiency(), e.trainingDays(), e.gpuHours()};
    for (double v : values) {
      assertTrue(Double.isFinite(v) && v >= 0, () -> "bad figure " + v + " in " + e);
    }
    assertTrue(t.stepSeconds() > 0);
    assertTrue(e.mfu() <= e.hfu() + 1e-12);
    assertTrue(e.hfu() <= 1.0, () -> "HFU above 1: " + e.hfu());
  }

  @Property(tries = 1000)
  void memoryNeverDecreasesWhenMicroBatchGrows(@ForAll("jobs") Job job) {
    Layout l = job.layout();
    Layout bigger = new Layout(l.tp(), l.pp(), l.dp(), l.virtualStages(), l.microBatch() * 2,
        l.sequenceParallel(), l.recompute(), l.zeroStage());
    TrainingWorkload w = job.workload();
    // Same number of micro-batches: the global batch doubles with the micro-batch.
    Job twice = job.with(bigger).with(new TrainingWorkload(w.precision(), w.optimizer(),
        w.globalBatchSize() * 2, w.trainingTokens()));
    assertTrue(twice.estimate().memory().totalBytes() >= job.estimate().memory().totalBytes());
  }

  @Property(tries = 1000)
  void memoryNeverDecreasesWhenSequenceGrows(@ForAll("jobs") Job job) {
    TransformerSpec m = job.model();
    TransformerSpec longer = new TransformerSpec(m.name(), m.layers(), m.hidden(), m.heads(),
        m.kvHeads(), m.ffnHidden(), m.gatedMlp(), m.vocab(), m.seqLen() * 2, m.tiedEmbeddings());
    assertTrue(job.with(longer).estimate().memory().totalBytes()
        >= job.estimate().memory().totalBytes());
  }

  /**
   * A head size of the model's own (Qwen3's 128 at hidden/heads 64): doubling it adds exactly the
   * wider Q, K, V and output projections to the parameters (biases too, GPT style), and never
   * makes the step faster or the memory smaller.
   */
  @Property(tries = 1000)
  void widerHeadsAddTheirProjectionsAndNeverSpeedUpTheStep(@ForAll("jobs") Job job) {
    TransformerSpec m = job.model();
    TransformerSpec wide = new TransformerSpec(m.name(), m.layers(), m.hidden(), m.heads(),
        m.kvHeads(), m.ffnHidden(), m.gatedMlp(), m.vocab(), m.seqLen(), m.tiedEmbeddings(),
        2 * m.headDim());
    double h = m.hidden();
    double dq = m.qDim();
    double dkv = m.kvDim();
    double perLayer = h * (dq + 2 * dkv) + dq * h + (m.gatedMlp() ? 0 : dq + 2 * dkv);
    assertEquals(m.layers() * perLayer, wide.parameters() - m.parameters(),
        1e-9 * wide.parameters());
    TrainingEstimate narrow = job.estimate();
    TrainingEstimate wider = job.with(wide).estimate();
    assertTrue(Double.isFinite(wider.stepSeconds()) && wider.stepSeconds() > 0);
    assertTrue(wider.stepSeconds() >= narrow.stepSeconds() * (1 - 1e-12),
        () -> wider.stepSeconds() + " < " + narrow.stepSeconds());
    assertTrue(wider.memory().totalBytes() >= narrow.memory().totalBytes());
  }

  /** The same model with its MLP written as a mixture of one expert routed to by every token. */
  static TransformerSpec oneExpert(TransformerSpec m) {
    return new TransformerSpec(m.name(), m.layers(), m.hidden(), m.heads(), m.kvHeads(),
        m.ffnHidden(), m.gatedMlp(), m.vocab(), m.seqLen(), m.tiedEmbeddings(), m.headDim(),
        new io.hyperframes.model.MoeSpec(1, 1, m.ffnHidden(), 0, 0, 0, 1, 0));
  }

  /** The job with each sequence split over {@code cp} more devices (same nodes' fabric). */
  static Job contextParallel(Job job, int cp, io.hyperframes.parallel.CpCommType type) {
    Cluster c = job.cluster();
    int devices = c.devices() * cp;
    Cluster wider = new Cluster(c.accelerator(), devices, Math.min(8, devices), c.intraNode(),
        c.interNode());
    return new Job(job.model(), wider, job.workload(), job.layout().withCp(cp, type));
  }

  /**
   * Context parallelism divides each rank's activations by cp (strictly less memory per device
   * for activations as cp grows), keeps every figure finite and positive, and its KV exchange is
   * there exactly when cp > 1.
   */
  @Property(tries = 1000)
  void activationMemoryPerDeviceFallsWithCp(@ForAll("jobs") Job job,
      @ForAll("cpTypes") io.hyperframes.parallel.CpCommType type) {
    TransformerSpec m = job.model();
    double previous = Double.MAX_VALUE;
    for (int cp = 1; cp <= 8; cp *= 2) {
      if (m.seqLen() % (2 * cp) != 0 || ((type == io.hyperframes.parallel.CpCommType.A2A
          || type == io.hyperframes.parallel.CpCommType.A2A_P2P)
          && (m.heads() / job.layout().tp()) % cp != 0)) {
        continue;
      }
      TrainingEstimate e = contextParallel(job, cp, type).estimate();
      double activations = e.memory().activationsBytes();
      assertTrue(activations < previous || cp == 1, () -> "cp grew activations: " + e);
      previous = activations;
      assertTrue(Double.isFinite(e.stepSeconds()) && e.stepSeconds() > 0, () -> e.toString());
      assertTrue(e.mfu() > 0 && e.mfu() <= 1);
      // Nothing without context parallelism; the unoverlapped exchanges always cost time (a
      // ring may hide entirely behind the attention it feeds, and a2a+p2p is a ring when no
      // two context-parallel ranks share a node).
      double kv = e.time().contextParallelSeconds();
      assertTrue(cp > 1 ? kv >= 0 : kv == 0, () -> e.toString());
      assertTrue(cp == 1 || type == io.hyperframes.parallel.CpCommType.P2P
          || type == io.hyperframes.parallel.CpCommType.A2A_P2P || kv > 0, () -> e.toString());
    }
  }

  @Provide
  Arbitrary<io.hyperframes.parallel.CpCommType> cpTypes() {
    return Arbitraries.of(io.hyperframes.parallel.CpCommType.class);
  }

  static TransformerSpec windowed(TransformerSpec m, int tokens, int every) {
    return new TransformerSpec(m.name(), m.layers(), m.hidden(), m.heads(), m.kvHeads(),
        m.ffnHidden(), m.gatedMlp(), m.vocab(), m.seqLen(), m.tiedEmbeddings(), m.headDim(),
        m.moe(), m.mla(), new io.hyperframes.model.SlidingWindowSpec(tokens, every));
  }

  /**
   * A sliding window at least as long as the sequence changes nothing (every figure equal to
   * 1e-12); a shorter one never makes the compute or the FLOPs larger, nor the step slower,
   * and keeps every figure finite and positive.
   */
  @Property(tries = 1000)
  void aWindowCoveringTheSequenceChangesNothingAndAShorterOneNeverCostsMore(
      @ForAll("jobs") Job job, @ForAll("windowShares") double share,
      @ForAll("fullEvery") int every) {
    TransformerSpec m = job.model();
    TrainingEstimate full = job.estimate();
    TrainingEstimate covering = job.with(windowed(m, m.seqLen() + (int) (share * 1000), every))
        .estimate();
    double[][] pairs = {
        {full.memory().totalBytes(), covering.memory().totalBytes()},
        {full.stepSeconds(), covering.stepSeconds()},
        {full.modelFlopsPerStep(), covering.modelFlopsPerStep()},
        {full.hardwareFlopsPerStep(), covering.hardwareFlopsPerStep()}};
    for (double[] p : pairs) {
      assertEquals(p[0], p[1], 1e-12 * Math.abs(p[0]), () -> full + " vs " + covering);
    }
    int tokens = Math.max(1, (int) (share * m.seqLen()));
    TrainingEstimate shorter = job.with(windowed(m, tokens, every)).estimate();
    assertTrue(Double.isFinite(shorter.stepSeconds()) && shorter.stepSeconds() > 0);
    double compute = full.time().computeSeconds() + full.time().recomputeSeconds();
    assertTrue(shorter.time().computeSeconds() + shorter.time().recomputeSeconds()
        <= compute * (1 + 1e-12));
    // Every stage, ZeRO-2 included since its gather and reduce-scatters hide behind different
    // windows (DataParallelTime#exposedSeconds): a shorter compute exposes at most what
    // it saves.
    assertTrue(shorter.stepSeconds() <= full.stepSeconds() * (1 + 1e-12),
        () -> shorter.stepSeconds() + " > " + full.stepSeconds());
    assertTrue(shorter.modelFlopsPerStep() <= full.modelFlopsPerStep() * (1 + 1e-12));
    assertTrue(shorter.modelFlopsPerStep() > 0 && shorter.mfu() > 0 && shorter.mfu() <= 1);
  }

  @Provide
  Arbitrary<Double> windowShares() {
    return Arbitraries.doubles().between(0.0, 1.0);
  }

  @Provide
  Arbitrary<Integer> fullEvery() {
    return Arbitraries.of(0, 2, 3, 4, 6);
  }

  /**
   * A mixture of experts with experts = topK = 1 is the dense model: every figure the same, to
   * the rounding of the average over layers (1e-12).
   */
  @Property(tries = 1000)
  void aMixtureOfOneExpertIsTheDenseModel(@ForAll("jobs") Job job) {
    TrainingEstimate dense = job.estimate();
    TrainingEstimate moe = job.with(oneExpert(job.model())).estimate();
    double[][] pairs = {
        {dense.parameters(), moe.parameters()},
        {dense.activeParameters(), moe.activeParameters()},
        {dense.memory().totalBytes(), moe.memory().totalBytes()},
        {dense.memory().activationsBytes(), moe.memory().activationsBytes()},
        {dense.memory().modelStatesBytes(), moe.memory().modelStatesBytes()},
        {dense.time().computeSeconds(), moe.time().computeSeconds()},
        {dense.time().recomputeSeconds(), moe.time().recomputeSeconds()},
        {dense.time().bubbleSeconds(), moe.time().bubbleSeconds()},
        {dense.time().dataParallelCommSeconds(), moe.time().dataParallelCommSeconds()},
        {dense.stepSeconds(), moe.stepSeconds()},
        {dense.modelFlopsPerStep(), moe.modelFlopsPerStep()},
        {dense.hardwareFlopsPerStep(), moe.hardwareFlopsPerStep()}};
    for (double[] p : pairs) {
      assertEquals(p[0], p[1], 1e-12 * Math.abs(p[0]), () -> dense + " vs " + moe);
    }
    assertEquals(dense.feasible(), moe.feasible());
  }

  /**
   * A mixture of E experts of which each token uses k: every figure finite and positive, more
   * parameters held than used, and the step no faster than the same model with one expert of
   * the same size (the router and the k experts' work only add).
   */
  @Property(tries = 1000)
  void mixturesAreFiniteHoldMoreThanTheyUseAndNeverBeatOneExpert(@ForAll("jobs") Job job,
      @ForAll("expertCounts") int experts, @ForAll("topKs") int topK) {
    TransformerSpec m = job.model();
    int k = Math.min(topK, experts);
    TransformerSpec moe = new TransformerSpec(m.name(), m.layers(), m.hidden(), m.heads(),
        m.kvHeads(), m.ffnHidden(), m.gatedMlp(), m.vocab(), m.seqLen(), m.tiedEmbeddings(),
        m.headDim(), new io.hyperframes.model.MoeSpec(experts, k, m.ffnHidden(), 0, 0, 0, 1, 0));
    TrainingEstimate e = job.with(moe).estimate();
    assertTrue(Double.isFinite(e.stepSeconds()) && e.stepSeconds() > 0, () -> e.toString());
    assertTrue(Double.isFinite(e.memory().totalBytes()) && e.memory().totalBytes() > 0);
    assertTrue(e.mfu() > 0 && e.mfu() <= 1.0);
    assertTrue(e.parameters() > e.activeParameters() || experts == k);
    assertTrue(e.stepSeconds() >= job.with(oneExpert(m)).estimate().stepSeconds() * (1 - 1e-12));
  }

  /**
   * Expert parallelism shards the experts: model states never grow with ep, the all-to-all is
   * there exactly when ep > 1, and every figure stays finite.
   */
  @Property(tries = 1000)
  void expertParallelismShardsTheExpertsAndPaysItsAllToAll(@ForAll("jobs") Job job,
      @ForAll("expertCounts") int experts) {
    TransformerSpec m = job.model();
    Layout l = job.layout();
    TransformerSpec moe = new TransformerSpec(m.name(), m.layers(), m.hidden(), m.heads(),
        m.kvHeads(), m.ffnHidden(), m.gatedMlp(), m.vocab(), m.seqLen(), m.tiedEmbeddings(),
        m.headDim(), new io.hyperframes.model.MoeSpec(experts, Math.min(2, experts),
            m.ffnHidden() / 4, 0, 0, 0, 1, 0));
    double previous = Double.MAX_VALUE;
    for (int ep = 1; ep <= l.dp(); ep *= 2) {
      if (l.dp() % ep != 0 || experts % ep != 0) {
        continue;
      }
      TrainingEstimate e = job.with(moe).with(l.withEp(ep)).estimate();
      assertTrue(Double.isFinite(e.stepSeconds()) && e.stepSeconds() > 0);
      assertEquals(ep > 1, e.time().allToAllSeconds() > 0, "ep " + ep);
      assertTrue(e.memory().modelStatesBytes() <= previous * (1 + 1e-12), "ep " + ep);
      previous = e.memory().modelStatesBytes();
    }
  }

  @Provide
  Arbitrary<Integer> expertCounts() {
    return Arbitraries.of(2, 4, 8, 16, 64, 128, 256);
  }

  @Provide
  Arbitrary<Integer> topKs() {
    return Arbitraries.of(1, 2, 4, 8);
  }

  @Property(tries = 1000)
  void higherZeroStageNeverNeedsMoreMemory(@ForAll("jobs") Job job) {
    Layout l = job.layout();
    double previous = Double.MAX_VALUE;
    for (int z = 0; z <= 3; z++) {
      if (!Engine.MEGATRON.runsZeroStage(z, l.pp())) {
        continue;
      }
      double total = job.with(new Layout(l.tp(), l.pp(), l.dp(), l.virtualStages(),
          l.microBatch(), l.sequenceParallel(), l.recompute(), z)).estimate().memory()
          .totalBytes();
      assertTrue(total <= previous, "stage " + z + " needs more than stage " + (z - 1));
      previous = total;
    }
  }

  @Property(tries = 1000)
  void moreRecomputationNeverNeedsMoreActivationsNorLessTime(@ForAll("jobs") Job job) {
    Layout l = job.layout();
    double previousMemory = Double.MAX_VALUE;
    double previousTime = 0.0;
    for (Recompute r : new Recompute[] {Recompute.NONE, Recompute.SELECTIVE, Recompute.FULL}) {
      TrainingEstimate e = job.with(new Layout(l.tp(), l.pp(), l.dp(), l.virtualStages(),
          l.microBatch(), l.sequenceParallel(), r, l.zeroStage())).estimate();
      assertTrue(e.memory().activationsBytes() <= previousMemory, "activations grew at " + r);
      // Equal up to rounding when the step is bound by overlapped communication.
      assertTrue(e.stepSeconds() >= previousTime * (1 - 1e-12), "time fell at " + r);
      previousMemory = e.memory().activationsBytes();
      previousTime = e.stepSeconds();
    }
  }

  @Property(tries = 1000)
  void theSameRequestGivesTheSameResult(@ForAll("jobs") Job job) {
    assertEquals(job.estimate(), job.estimate());
  }
}
