package io.hyperframes.parallel;

import static com.google.common.base.Preconditions.checkArgument;

import com.google.common.collect.Sets;
import java.util.Set;

/**
 * A layout in which any field may be left open ({@code null}); the estimator chooses open fields by
 * a small search for the shortest feasible step.
 */
public record PartialLayout(Integer tp, Integer pp, Integer dp, Integer virtualStages,
    Integer microBatch, Boolean sequenceParallel, Recompute recompute, Integer zeroStage,
    Engine engine, Integer shardGroupSize, Boolean reshardAfterForward, Integer ep, Integer cp,
    CpCommType cpCommType, Integer etp, Set<RecomputeModule> recomputeModules,
    MoeDispatcher moeDispatcher, Boolean overlapMoeComm, Integer firstStageLayers,
    Integer lastStageLayers, Boolean overlapGradReduce, Boolean overlapParamGather) {

  /** Nothing fixed. */
  public static final PartialLayout OPEN = builder().build();

  /** A partial layout with nothing fixed yet, its fields set by name. */
  public static Builder builder() {
    return new Builder();
  }

  /** A builder holding these fixed fields, to change some by name. */
  public Builder toBuilder() {
    Builder b = new Builder();
    b.tp = tp;
    b.pp = pp;
    b.dp = dp;
    b.virtualStages = virtualStages;
    b.microBatch = microBatch;
    b.sequenceParallel = sequenceParallel;
    b.recompute = recompute;
    b.zeroStage = zeroStage;
    b.engine = engine;
    b.shardGroupSize = shardGroupSize;
    b.reshardAfterForward = reshardAfterForward;
    b.ep = ep;
    b.cp = cp;
    b.cpCommType = cpCommType;
    b.etp = etp;
    b.recomputeModules = recomputeModules;
    b.moeDispatcher = moeDispatcher;
    b.overlapMoeComm = overlapMoeComm;
    b.firstStageLayers = firstStageLayers;
    b.lastStageLayers = lastStageLayers;
    b.overlapGradReduce = overlapGradReduce;
    b.overlapParamGather = overlapParamGather;
    return b;
  }

  /**
   * The fields of a partial layout by name; each left unset stays open (null). The canonical
   * constructor checks them at {@link #build()}.
   */
  public static final class Builder {
    private Integer tp;
    private Integer pp;
    private Integer dp;
    private Integer virtualStages;
    private Integer microBatch;
    private Boolean sequenceParallel;
    private Recompute recompute;
    private Integer zeroStage;
    private Engine engine;
    private Integer shardGroupSize;
    private Boolean reshardAfterForward;
    private Integer ep;
    private Integer cp;
    private CpCommType cpCommType;
    private Integer etp;
    private Set<RecomputeModule> recomputeModules;
    private MoeDispatcher moeDispatcher;
    private Boolean overlapMoeComm;
    private Integer firstStageLayers;
    private Integer lastStageLayers;
    private Boolean overlapGradReduce;
    private Boolean overlapParamGather;

    private Builder() {}

    /** Fixes {@code overlapGradReduce} (null: the engine's default). */
    public Builder overlapGradReduce(Boolean v) {
      overlapGradReduce = v;
      return this;
    }

    /** Fixes {@code overlapParamGather} (null: the engine's default). */
    public Builder overlapParamGather(Boolean v) {
      overlapParamGather = v;
      return this;
    }

    /** Fixes {@code tp} (null: open). */
    public Builder tp(Integer v) {
      tp = v;
      return this;
    }

    /** Fixes {@code pp} (null: open). */
    public Builder pp(Integer v) {
      pp = v;
      return this;
    }

    /** Fixes {@code dp} (null: open). */
    public Builder dp(Integer v) {
      dp = v;
      return this;
    }

    /** Fixes {@code virtualStages} (null: open). */
    public Builder virtualStages(Integer v) {
      virtualStages = v;
      return this;
    }

    /** Fixes {@code microBatch} (null: open). */
    public Builder microBatch(Integer v) {
      microBatch = v;
      return this;
    }

    /** Fixes {@code sequenceParallel} (null: open). */
    public Builder sequenceParallel(Boolean v) {
      sequenceParallel = v;
      return this;
    }

    /** Fixes {@code recompute} (null: open). */
    public Builder recompute(Recompute v) {
      recompute = v;
      return this;
    }

    /** Fixes {@code zeroStage} (null: open). */
    public Builder zeroStage(Integer v) {
      zeroStage = v;
      return this;
    }

    /** Fixes {@code engine} (null: open). */
    public Builder engine(Engine v) {
      engine = v;
      return this;
    }

    /** Fixes {@code shardGroupSize} (null: open). */
    public Builder shardGroupSize(Integer v) {
      shardGroupSize = v;
      return this;
    }

    /** Fixes {@code reshardAfterForward} (null: open). */
    public Builder reshardAfterForward(Boolean v) {
      reshardAfterForward = v;
      return this;
    }

    /** Fixes {@code ep} (null: open). */
    public Builder ep(Integer v) {
      ep = v;
      return this;
    }

    /** Fixes {@code cp} (null: open). */
    public Builder cp(Integer v) {
      cp = v;
      return this;
    }

    /** Fixes {@code cpCommType} (null: open). */
    public Builder cpCommType(CpCommType v) {
      cpCommType = v;
      return this;
    }

    /** Fixes {@code etp} (null: open). */
    public Builder etp(Integer v) {
      etp = v;
      return this;
    }

    /** Fixes {@code recomputeModules} (null: open). */
    public Builder recomputeModules(Set<RecomputeModule> v) {
      recomputeModules = v;
      return this;
    }

    /** Fixes {@code moeDispatcher} (null: open). */
    public Builder moeDispatcher(MoeDispatcher v) {
      moeDispatcher = v;
      return this;
    }

    /** Fixes {@code overlapMoeComm} (null: open). */
    public Builder overlapMoeComm(Boolean v) {
      overlapMoeComm = v;
      return this;
    }

    /** Fixes {@code firstStageLayers} (null: open). */
    public Builder firstStageLayers(Integer v) {
      firstStageLayers = v;
      return this;
    }

    /** Fixes {@code lastStageLayers} (null: open). */
    public Builder lastStageLayers(Integer v) {
      lastStageLayers = v;
      return this;
    }

    /** The partial layout; {@code IllegalArgumentException} naming a field out of range. */
    public PartialLayout build() {
      return new PartialLayout(tp, pp, dp, virtualStages, microBatch, sequenceParallel,
          recompute, zeroStage, engine, shardGroupSize, reshardAfterForward, ep, cp, cpCommType,
          etp, recomputeModules, moeDispatcher, overlapMoeComm, firstStageLayers,
          lastStageLayers, overlapGradReduce, overlapParamGather);
    }
  }

  /** These fixed fields with another engine. */
  public PartialLayout withEngine(Engine e) {
    return toBuilder().engine(e).build();
  }

  /** These fixed fields without context parallelism (cp and cpCommType open). */
  public PartialLayout withoutCp() {
    return toBuilder().cp(null).cpCommType(null).build();
  }

  /** These fixed fields with another expert-parallel degree (null: open). */
  public PartialLayout withEp(Integer degree) {
    return toBuilder().ep(degree).build();
  }

  /** These fixed fields with another expert tensor-parallel degree (null: {@code tp}). */
  public PartialLayout withEtp(Integer degree) {
    return toBuilder().etp(degree).build();
  }

  /** These fixed fields with the expert-parallel overlap open (off). */
  public PartialLayout withoutOverlapMoeComm() {
    return toBuilder().overlapMoeComm(null).build();
  }

  /** Whether the request fixes the layers of the first or the last pipeline rank. */
  public boolean fixesStageLayers() {
    return firstStageLayers != null || lastStageLayers != null;
  }

  /**
   * {@code layout} with the uneven pipeline split these fields fix ({@code layout} itself when
   * they fix none); null when they fix one and {@code layout} has no pipeline to split.
   */
  public Layout withStageLayersOn(Layout layout) {
    if (!fixesStageLayers()) {
      return layout;
    }
    return layout.pp() == 1 ? null : layout.withStageLayers(
        firstStageLayers == null ? 0 : firstStageLayers,
        lastStageLayers == null ? 0 : lastStageLayers);
  }

  /**
   * {@code layout} with the data-parallel overlap this request fixes ({@code overlapGradReduce},
   * {@code overlapParamGather}; an open one keeps the layout's, its engine's default), or null
   * where the layout's engine cannot run a fixed {@code true} (DeepSpeed's pipeline engine, or
   * its step-end parameter gather).
   */
  public Layout withDataParallelOverlapOn(Layout layout) {
    if (overlapGradReduce == null && overlapParamGather == null) {
      return layout;
    }
    boolean gradReduce = overlapGradReduce != null ? overlapGradReduce
        : layout.overlapGradReduce();
    boolean paramGather = overlapParamGather != null ? overlapParamGather
        : layout.overlapParamGather();
    if (layout.engine().overlapUnsupported(layout.pp(), layout.zeroStage(), gradReduce,
        paramGather) != null) {
      return null;
    }
    return layout.withDataParallelOverlap(gradReduce, paramGather);
  }

  /** These fixed fields with another ZeRO stage. */
  public PartialLayout withZeroStage(Integer stage) {
    return toBuilder().zeroStage(stage).build();
  }

  /**
   * The engine: the given one, or the one an estimate assumes ({@link #assumedEngine()}:
   * Megatron-LM unless it cannot run the fixed fields).
   */
  public Engine engineOrDefault() {
    return engine != null ? engine : assumedEngine();
  }

  public PartialLayout {
    positiveOrNull("layout.firstStageLayers", firstStageLayers);
    positiveOrNull("layout.lastStageLayers", lastStageLayers);
    checkArgument(firstStageLayers == null || pp == null || pp > 1, "layout.firstStageLayers: %s"
        + " needs pipeline parallelism (pp > 1)", firstStageLayers);
    checkArgument(lastStageLayers == null || pp == null || pp > 1, "layout.lastStageLayers: %s"
        + " needs pipeline parallelism (pp > 1)", lastStageLayers);
    // Naming modules fixes selective recomputation (Megatron-Core applies --recompute-modules
    // only with --recompute-granularity selective).
    checkArgument(recomputeModules == null || recompute == null
        || recompute == Recompute.SELECTIVE, "layout.recomputeModules: %s needs"
        + " layout.recompute selective (Megatron-Core --recompute-granularity selective), got %s",
        recomputeModules == null ? "" : RecomputeModule.ids(recomputeModules),
        recompute == null ? "" : recompute.id());
    checkArgument(recomputeModules == null || !recomputeModules.isEmpty(),
        "layout.recomputeModules: must name at least one module, got []");
    recomputeModules = recomputeModules == null ? null : Sets.immutableEnumSet(recomputeModules);
    recompute = recomputeModules != null ? Recompute.SELECTIVE : recompute;
    positiveOrNull("layout.tp", tp);
    positiveOrNull("layout.pp", pp);
    positiveOrNull("layout.dp", dp);
    positiveOrNull("layout.virtualStages", virtualStages);
    positiveOrNull("layout.microBatch", microBatch);
    checkArgument(zeroStage == null || (zeroStage >= 0 && zeroStage <= 3),
        "layout.zeroStage: must be 0-3, got %s", zeroStage);
    positiveOrNull("layout.shardGroupSize", shardGroupSize);
    positiveOrNull("layout.ep", ep);
    positiveOrNull("layout.etp", etp);
    // The expert grid (Layout#expertGridFits), checked where its fields are fixed: with etp
    // open or equal to tp it reduces to ep dividing dp·cp, whatever tp.
    // An engine that keeps experts whole under expert parallelism (fsdp) takes etp 1 when open.
    boolean whole = engine != null && !engine.splitsExperts() && ep != null && ep > 1;
    String wholeExperts = whole && etp != null ? engine.expertTensorParallelUnsupported(etp, ep)
        : null;
    checkArgument(wholeExperts == null, "%s", wholeExperts);
    boolean expertsByTp = !whole && (etp == null || etp.equals(tp));
    int c = cp == null ? 1 : cp;
    checkArgument(!expertsByTp || ep == null || dp == null
        || Layout.expertGridFits(1, c, dp, ep, 1),
        "layout.ep: %s does not divide layout.dp·cp %s", ep, dp == null ? 0 : dp * c);
    checkArgument(expertsByTp || ep == null || dp == null || tp == null
        || Layout.expertGridFits(tp, c, dp, ep, whole ? 1 : etp),
        "layout.etp: ep·etp = %s·%s does not divide tp·cp·dp = %s", ep, etp,
        tp == null || dp == null ? 0 : (long) tp * dp * c);
    checkArgument(ep == null || ep == 1 || engine == null || engine.runsExpertParallel(),
        "layout.ep: %s is run by megatron or fsdp in HyperFrames' model, not by %s", ep,
        engine == null ? "" : engine.id());
    positiveOrNull("layout.cp", cp);
    checkArgument(cp == null || cp == 1 || engine == null || engine == Engine.MEGATRON,
        "layout.cp: %s is run by megatron in HyperFrames' model, not by %s", cp,
        engine == null ? "" : engine.id());
    checkArgument(shardGroupSize == null || zeroStage == null || zeroStage == 1
        || zeroStage == 3, "layout.shardGroupSize: %s needs zeroStage 1 or 3, got %s",
        shardGroupSize, zeroStage);
    checkArgument(reshardAfterForward == null || zeroStage == null || zeroStage == 3,
        "layout.reshardAfterForward: needs zeroStage 3, got %s", zeroStage);
    if (engine != null) {
      // (A compact constructor's fields are assigned at its end: the check takes its values.)
      // An open stage is searched among those that run it (ZeRO 0 runs a fixed false wherever
      // any stage does).
      String overlap = engine.overlapUnsupported(pp == null ? 1 : pp,
          zeroStage == null ? 0 : zeroStage, overlapGradReduce, overlapParamGather);
      checkArgument(overlap == null, "%s", overlap);
      // Only what is fixed can be checked here; pp and ZeRO left open are searched within what
      // the engine runs.
      String unsupported = unsupported(engine, pp, virtualStages,
          zeroStage == null ? 0 : zeroStage, shardGroupSize, reshardAfterForward);
      checkArgument(unsupported == null, "%s", unsupported);
    }
  }

  /**
   * The engines that run every fixed field: the fixed engine, or those of
   * {@link Engine#SEARCHED} (default first) that run them.
   */
  public java.util.List<Engine> engines() {
    if (engine != null) {
      return java.util.List.of(engine);
    }
    java.util.List<Engine> out = new java.util.ArrayList<>();
    for (Engine e : Engine.SEARCHED) {
      if (runs(e)) {
        out.add(e);
      }
    }
    return java.util.List.copyOf(out);
  }

  /**
   * The engine an estimate assumes when {@code layout.engine} is open: Megatron-LM (the
   * default) when it runs every fixed field, else the first of {@link Engine#SEARCHED} that
   * does.
   *
   * @throws IllegalArgumentException when no launchable engine runs the fixed fields
   */
  public Engine assumedEngine() {
    java.util.List<Engine> all = engines();
    checkArgument(!all.isEmpty(), "layout: no engine runs these fixed fields (%s); %s", this,
        whyNot(Engine.MEGATRON));
    return all.get(0);
  }

  /** Why {@link #assumedEngine()} is the engine: "layout.engine" or the rule that chose it. */
  public String engineChoice() {
    if (engine != null) {
      return "layout.engine";
    }
    Engine e = assumedEngine();
    return e == Engine.MEGATRON ? "default (layout.engine open)"
        : "layout.engine open and Megatron-LM does not run the fixed fields: "
            + whyNot(Engine.MEGATRON);
  }

  /** Whether {@code e} runs every fixed field (open fields can be chosen within it). */
  private boolean runs(Engine e) {
    return whyNot(e) == null;
  }

  /**
   * Why {@code e} cannot run the fixed fields, or null: expert parallelism, then the options of
   * {@link Engine#unsupported}, hybrid-shard fields implying ZeRO-3 when the stage is open.
   */
  private String whyNot(Engine e) {
    if (ep != null && ep > 1 && !e.runsExpertParallel()) {
      return String.format(java.util.Locale.ROOT, "layout.ep: %s is run by megatron or fsdp in"
          + " HyperFrames' model, not by %s", ep, e.id());
    }
    String wholeExperts = etp != null && ep != null
        ? e.expertTensorParallelUnsupported(etp, ep) : null;
    if (wholeExperts != null) {
      return wholeExperts;
    }
    if (Boolean.TRUE.equals(overlapMoeComm) && e != Engine.MEGATRON) {
      return String.format(java.util.Locale.ROOT, "layout.overlapMoeComm: is run by megatron in"
          + " HyperFrames' model, not by %s", e.id());
    }
    String overlap = e.overlapUnsupported(pp == null ? 1 : pp,
        zeroStage == null ? 0 : zeroStage, overlapGradReduce, overlapParamGather);
    if (overlap != null) {
      return overlap;
    }
    if (moeDispatcher == MoeDispatcher.DEEPEP && !e.runsExpertParallel()) {
      return String.format(java.util.Locale.ROOT, "layout.moeDispatcher: deepep is run by"
          + " megatron or fsdp in HyperFrames' model, not by %s", e.id());
    }
    if ((cp != null && cp > 1 || cpCommType != null) && e != Engine.MEGATRON) {
      return String.format(java.util.Locale.ROOT, "layout.cp: %s is run by megatron in"
          + " HyperFrames' model, not by %s", cp, e.id());
    }
    int z = zeroStage != null ? zeroStage
        : shardGroupSize != null || reshardAfterForward != null ? 3 : 0;
    return unsupported(e, pp, virtualStages, z, shardGroupSize, reshardAfterForward);
  }

  /** {@link Engine#unsupported} with the open fields at their neutral values. */
  private static String unsupported(Engine e, Integer pp, Integer virtualStages, int zeroStage,
      Integer shardGroupSize, Boolean reshardAfterForward) {
    return e.unsupported(pp == null ? 1 : pp, virtualStages == null ? 1 : virtualStages,
        zeroStage, shardGroupSize == null ? 0 : shardGroupSize,
        reshardAfterForward == null || reshardAfterForward);
  }

  /** A partial layout that fixes every field of {@code layout}. */
  public static PartialLayout of(Layout layout) {
    return builder().tp(layout.tp()).pp(layout.pp()).dp(layout.dp())
        .virtualStages(layout.virtualStages()).microBatch(layout.microBatch())
        .sequenceParallel(layout.sequenceParallel()).recompute(layout.recompute())
        .zeroStage(layout.zeroStage()).engine(layout.engine())
        .shardGroupSize(layout.shardGroupSize() == 0 ? null : layout.shardGroupSize())
        .reshardAfterForward(layout.reshardAfterForward()).ep(layout.ep()).cp(layout.cp())
        .cpCommType(layout.cpCommType())
        .etp(layout.etp() == layout.tp() ? null : layout.etp())
        .recomputeModules(layout.recompute() == Recompute.SELECTIVE
            ? layout.recomputeModules() : null)
        .moeDispatcher(layout.moeDispatcher())
        .overlapMoeComm(layout.overlapMoeComm() ? Boolean.TRUE : null)
        .firstStageLayers(layout.firstStageLayers() > 0 ? layout.firstStageLayers() : null)
        .lastStageLayers(layout.lastStageLayers() > 0 ? layout.lastStageLayers() : null)
        .overlapGradReduce(layout.overlapGradReduce())
        .overlapParamGather(layout.overlapParamGather())
        .build();
  }

  private static void positiveOrNull(String field, Integer v) {
    checkArgument(v == null || v > 0, "%s: must be > 0, got %s", field, v);
  }
}
