package io.hyperframes.request;

import static io.hyperframes.json.Json.required;
import static io.hyperframes.json.Json.text;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import io.hyperframes.hardware.Accelerator;
import io.hyperframes.json.Json;
import io.hyperframes.catalog.Catalog;
import io.hyperframes.catalog.ModelDocuments.Model;
import io.hyperframes.hardware.Checks;
import io.hyperframes.hardware.Fabric;
import io.hyperframes.hardware.NodeTemplate;
import io.hyperframes.model.DenseStackSpec;
import io.hyperframes.model.ModelSpec;
import io.hyperframes.model.ParametersOnlySpec;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.parallel.Engine;
import io.hyperframes.parallel.PartialLayout;
import io.hyperframes.parallel.Recompute;
import io.hyperframes.precision.NumberFormat;
import io.hyperframes.precision.Optimizer;
import io.hyperframes.precision.PrecisionRecipe;
import io.hyperframes.workload.Attention;
import io.hyperframes.workload.GradientCompression;
import io.hyperframes.workload.Kernels;
import io.hyperframes.workload.TrainingWorkload;
import java.io.IOException;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The request documents of docs/user-guide.md as records bound by Jackson: one record per JSON
 * object, one component per field, so the records are the contract and an unknown field is
 * rejected by the binding. Each part resolves itself against a catalog into the domain types,
 * checking what the binding cannot (ranges, ids, fields that exclude each other) with messages
 * that name the field path and the value.
 */
public final class Documents {
  private Documents() {}

  /**
   * {@code cluster.devices}: a count ({@code 64}) or, in plan requests, a range
   * ({@code "64-512"}).
   */
  @JsonDeserialize(using = Devices.Reader.class)
  public record Devices(int min, int max, boolean range) {

    /** One count. */
    public static Devices count(int n) {
      return new Devices(n, n, false);
    }

    static final class Reader extends JsonDeserializer<Devices> {
      @Override
      public Devices deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
        if (p.currentToken() == JsonToken.VALUE_NUMBER_INT) {
          return count(ctxt.readValue(p, Integer.class));
        }
        if (p.currentToken() != JsonToken.VALUE_STRING) {
          return (Devices) ctxt.handleUnexpectedToken(Integer.class, p);
        }
        String s = p.getText();
        String[] parts = s.trim().split("-", -1);
        try {
          if (parts.length == 2) {
            return new Devices(Integer.parseInt(parts[0].trim()),
                Integer.parseInt(parts[1].trim()), true);
          }
        } catch (NumberFormatException e) {
          // reported below with the value
        }
        throw new IllegalArgumentException("cluster.devices: '" + s
            + "' is neither a count nor a range N-M");
      }
    }

    Devices checked() {
      Checks.positive("cluster.devices", min);
      if (max < min) {
        throw new IllegalArgumentException("cluster.devices: range '" + min + "-" + max
            + "' is empty");
      }
      return this;
    }
  }

  /** {@code cluster.interconnect}: bandwidth and latency overrides. */
  public record Interconnect(IntraNode intraNode, InterNode interNode) {}

  /** {@code cluster.interconnect.intraNode}. */
  public record IntraNode(Double bandwidthGBps, Double latencyUs) {}

  /** {@code cluster.interconnect.interNode}. */
  public record InterNode(Double bandwidthGBpsPerDevice, Double latencyUs) {}

  /** {@code cluster}: an accelerator or node template, devices, fabric overrides. */
  public record Cluster(String accelerator, String template, Devices devices,
      Integer devicesPerNode, Interconnect interconnect) {

    /** The devices, a count or a range, checked. */
    public Devices deviceRange() {
      return required("cluster.devices", devices).checked();
    }

    /**
     * The cluster of {@code count} devices this document describes.
     *
     * @throws IllegalArgumentException naming the field and the value
     */
    public io.hyperframes.hardware.Cluster resolve(Catalog catalog, int count) {
      String templateId = text("cluster.template", template);
      String accId = text("cluster.accelerator", accelerator);
      NodeTemplate node;
      Accelerator acc;
      if (templateId != null) {
        node = catalog.node("cluster.template", templateId);
        acc = catalog.accelerator("cluster.template", node.accelerator());
        if (accId != null
            && !catalog.accelerator("cluster.accelerator", accId).id().equals(acc.id())) {
          throw new IllegalArgumentException("cluster.accelerator: '" + accId
              + "' differs from the accelerator of template " + templateId + " (" + acc.id()
              + ")");
        }
      } else {
        acc = catalog.accelerator("cluster.accelerator",
            required("cluster.accelerator", accId));
        node = catalog.node("cluster.accelerator", acc.defaultNode());
      }
      Checks.positive("cluster.devices", count);
      int dpn = devicesPerNode != null
          ? Checks.positive("cluster.devicesPerNode", devicesPerNode) : node.devicesPerNode();
      Fabric intra = acc.intraNode();
      Fabric inter = node.interNode();
      if (interconnect != null && interconnect.intraNode() != null) {
        IntraNode in = interconnect.intraNode();
        intra = override(intra, "cluster.interconnect.intraNode.bandwidthGBps",
            in.bandwidthGBps(), "cluster.interconnect.intraNode.latencyUs", in.latencyUs());
      }
      if (interconnect != null && interconnect.interNode() != null) {
        InterNode out = interconnect.interNode();
        inter = override(inter, "cluster.interconnect.interNode.bandwidthGBpsPerDevice",
            out.bandwidthGBpsPerDevice(), "cluster.interconnect.interNode.latencyUs",
            out.latencyUs());
      }
      // The template's hosts where they divide the node; a node of the request's own size
      // that they do not divide is one host.
      return new io.hyperframes.hardware.Cluster(acc, count, dpn, intra, inter,
          node.hostCores(), node.hostMemoryBytes(),
          dpn % node.devicesPerHost() == 0 ? node.devicesPerHost() : dpn);
    }

    /** The cluster of the document's device count (a range is refused). */
    public io.hyperframes.hardware.Cluster resolve(Catalog catalog) {
      Devices d = deviceRange();
      if (d.range()) {
        throw new IllegalArgumentException("cluster.devices: must be an integer, got \"" + d.min()
            + "-" + d.max() + "\" (a range is for plans)");
      }
      return resolve(catalog, d.min());
    }

    private static Fabric override(Fabric base, String bwPath, Double bw, String latPath,
        Double lat) {
      double b = bw != null ? Checks.positive(bwPath, bw) * 1e9 : base.bandwidthBytesPerSecond();
      double l = lat != null ? Checks.nonNegative(latPath, lat) * 1e-6 : base.latencySeconds();
      return base.withBandwidthAndLatency(b, l, "user override of " + base.id());
    }
  }

  /** {@code workload.gradientCompression}: a data-parallel gradient codec. */
  public record Compression(String codec, Double ratio, Double encodeGBps, Double decodeGBps,
      Boolean allReduce) {

    /**
     * The codec as the estimator models it.
     *
     * @throws IllegalArgumentException naming the field and the value
     */
    public GradientCompression resolve() {
      String name = required("workload.gradientCompression.codec",
          text("workload.gradientCompression.codec", codec));
      return new GradientCompression(name,
          required("workload.gradientCompression.ratio", ratio),
          required("workload.gradientCompression.encodeGBps", encodeGBps),
          required("workload.gradientCompression.decodeGBps", decodeGBps),
          required("workload.gradientCompression.allReduce", allReduce));
    }
  }

  /** {@code workload} of a training request. */
  public record Training(String type, String precision, Integer globalBatchSize,
      Double trainingTokens, String optimizer, String gradientPrecision, String attention,
      String kernels, Compression gradientCompression, Double moeLoadImbalance) {

    /**
     * The workload this document describes (batch 0 and tokens 0 when absent).
     *
     * @throws IllegalArgumentException naming the field and the value
     */
    public TrainingWorkload resolve() {
      String t = required("workload.type", text("workload.type", type)).toLowerCase(Locale.ROOT);
      if (!t.equals("training")) {
        throw new IllegalArgumentException("workload.type: '" + t
            + "' is not a training workload (the training estimator needs \"training\")");
      }
      PrecisionRecipe recipe = PrecisionRecipe.named("workload.precision",
          required("workload.precision", text("workload.precision", precision)));
      String grad = text("workload.gradientPrecision", gradientPrecision);
      if (grad != null) {
        NumberFormat g = NumberFormat.fromId("workload.gradientPrecision", grad);
        if (g != NumberFormat.FP32 && g != NumberFormat.FP16 && g != NumberFormat.BF16) {
          throw new IllegalArgumentException(
              "workload.gradientPrecision: must be fp32, fp16 or bf16, got '" + grad + "'");
        }
        recipe = recipe.withGradients(g);
      }
      String opt = text("workload.optimizer", optimizer);
      if (globalBatchSize != null) {
        Checks.positive("workload.globalBatchSize", globalBatchSize);
      }
      if (trainingTokens != null) {
        Checks.positive("workload.trainingTokens", trainingTokens);
      }
      String att = text("workload.attention", attention);
      String kern = text("workload.kernels", kernels);
      return new TrainingWorkload(recipe,
          opt == null ? Optimizer.ADAM : Optimizer.fromId("workload.optimizer", opt),
          globalBatchSize == null ? 0 : globalBatchSize,
          trainingTokens == null ? 0.0 : trainingTokens,
          att == null ? null : Attention.fromId("workload.attention", att),
          kern == null ? Kernels.FUSED : Kernels.fromId("workload.kernels", kern),
          gradientCompression == null ? null : gradientCompression.resolve(),
          moeLoadImbalance == null ? TrainingWorkload.DEFAULT_MOE_LOAD_IMBALANCE
              : Checks.finite("workload.moeLoadImbalance", moeLoadImbalance));
    }
  }

  /** {@code layout} of a training request: the fields to fix, the rest searched. */
  public record Layout(Integer tp, Integer pp, Integer dp, Integer virtualStages,
      Integer microBatch, Boolean sequenceParallel, String recompute, Integer zeroStage,
      String engine, Integer shardGroupSize, Boolean reshardAfterForward, Integer ep,
      Integer etp, Integer cp, String cpCommType, List<String> recomputeModules,
      String moeDispatcher, Boolean overlapMoeComm, Integer firstStageLayers,
      Integer lastStageLayers, Boolean overlapGradReduce, Boolean overlapParamGather) {

    /** A layout document whose data-parallel overlap is the engine's default. */
    public Layout(Integer tp, Integer pp, Integer dp, Integer virtualStages,
        Integer microBatch, Boolean sequenceParallel, String recompute, Integer zeroStage,
        String engine, Integer shardGroupSize, Boolean reshardAfterForward, Integer ep,
        Integer etp, Integer cp, String cpCommType, List<String> recomputeModules,
        String moeDispatcher, Boolean overlapMoeComm, Integer firstStageLayers,
        Integer lastStageLayers) {
      this(tp, pp, dp, virtualStages, microBatch, sequenceParallel, recompute, zeroStage, engine,
          shardGroupSize, reshardAfterForward, ep, etp, cp, cpCommType, recomputeModules,
          moeDispatcher, overlapMoeComm, firstStageLayers, lastStageLayers, null, null);
    }

    /** A layout document with the pipeline ranks' layers at their even shares. */
    public Layout(Integer tp, Integer pp, Integer dp, Integer virtualStages,
        Integer microBatch, Boolean sequenceParallel, String recompute, Integer zeroStage,
        String engine, Integer shardGroupSize, Boolean reshardAfterForward, Integer ep,
        Integer etp, Integer cp, String cpCommType, List<String> recomputeModules,
        String moeDispatcher, Boolean overlapMoeComm) {
      this(tp, pp, dp, virtualStages, microBatch, sequenceParallel, recompute, zeroStage, engine,
          shardGroupSize, reshardAfterForward, ep, etp, cp, cpCommType, recomputeModules,
          moeDispatcher, overlapMoeComm, null, null);
    }

    /** A layout document without the expert-parallel overlap. */
    public Layout(Integer tp, Integer pp, Integer dp, Integer virtualStages,
        Integer microBatch, Boolean sequenceParallel, String recompute, Integer zeroStage,
        String engine, Integer shardGroupSize, Boolean reshardAfterForward, Integer ep,
        Integer etp, Integer cp, String cpCommType, List<String> recomputeModules,
        String moeDispatcher) {
      this(tp, pp, dp, virtualStages, microBatch, sequenceParallel, recompute, zeroStage, engine,
          shardGroupSize, reshardAfterForward, ep, etp, cp, cpCommType, recomputeModules,
          moeDispatcher, null);
    }

    /** A layout document with the all-to-all token dispatcher. */
    public Layout(Integer tp, Integer pp, Integer dp, Integer virtualStages,
        Integer microBatch, Boolean sequenceParallel, String recompute, Integer zeroStage,
        String engine, Integer shardGroupSize, Boolean reshardAfterForward, Integer ep,
        Integer etp, Integer cp, String cpCommType, List<String> recomputeModules) {
      this(tp, pp, dp, virtualStages, microBatch, sequenceParallel, recompute, zeroStage, engine,
          shardGroupSize, reshardAfterForward, ep, etp, cp, cpCommType, recomputeModules, null);
    }

    /** A layout document with the default recomputation modules. */
    public Layout(Integer tp, Integer pp, Integer dp, Integer virtualStages,
        Integer microBatch, Boolean sequenceParallel, String recompute, Integer zeroStage,
        String engine, Integer shardGroupSize, Boolean reshardAfterForward, Integer ep,
        Integer etp, Integer cp, String cpCommType) {
      this(tp, pp, dp, virtualStages, microBatch, sequenceParallel, recompute, zeroStage, engine,
          shardGroupSize, reshardAfterForward, ep, etp, cp, cpCommType, null);
    }

    /** A layout document without context parallelism. */
    public Layout(Integer tp, Integer pp, Integer dp, Integer virtualStages,
        Integer microBatch, Boolean sequenceParallel, String recompute, Integer zeroStage,
        String engine, Integer shardGroupSize, Boolean reshardAfterForward, Integer ep,
        Integer etp) {
      this(tp, pp, dp, virtualStages, microBatch, sequenceParallel, recompute, zeroStage, engine,
          shardGroupSize, reshardAfterForward, ep, etp, null, null);
    }

    /** The partial layout (ids resolved; ranges are checked against the model later). */
    public PartialLayout resolve() {
      String r = text("layout.recompute", recompute);
      String e = text("layout.engine", engine);
      Recompute policy = r == null ? null : Recompute.fromId("layout.recompute", r);
      // An estimate's own layout is a valid request: it writes shardGroupSize 0 (sharded over
      // all of dp) and recomputeModules [] under a policy other than selective.
      boolean noModules = recomputeModules != null && recomputeModules.isEmpty()
          && policy != null && policy != Recompute.SELECTIVE;
      return PartialLayout.builder().tp(tp).pp(pp).dp(dp).virtualStages(virtualStages)
          .microBatch(microBatch).sequenceParallel(sequenceParallel).recompute(policy)
          .zeroStage(zeroStage)
          .engine(e == null ? null : Engine.fromId("layout.engine", e))
          .shardGroupSize(shardGroupSize != null && shardGroupSize == 0 ? null : shardGroupSize)
          .reshardAfterForward(zeroStage != null && zeroStage != 3
              && Boolean.TRUE.equals(reshardAfterForward) ? null : reshardAfterForward)
          .ep(ep).cp(cp).cpCommType(cpType()).etp(etp)
          .recomputeModules(io.hyperframes.parallel.RecomputeModule.setOf(
              "layout.recomputeModules", noModules ? null : recomputeModules))
          .moeDispatcher(text("layout.moeDispatcher", moeDispatcher) == null ? null
              : io.hyperframes.parallel.MoeDispatcher.fromId("layout.moeDispatcher",
                  moeDispatcher))
          .overlapMoeComm(overlapMoeComm)
          .firstStageLayers(firstStageLayers != null && firstStageLayers == 0 ? null
              : firstStageLayers)
          .lastStageLayers(lastStageLayers != null && lastStageLayers == 0 ? null
              : lastStageLayers)
          .overlapGradReduce(overlapGradReduce)
          .overlapParamGather(overlapParamGather)
          .build();
    }

    /**
     * The context-parallel exchange named, or null: also null for Megatron-LM's default p2p
     * without context parallelism (as an estimate's own layout writes it).
     */
    private io.hyperframes.parallel.CpCommType cpType() {
      if (text("layout.cpCommType", cpCommType) == null) {
        return null;
      }
      io.hyperframes.parallel.CpCommType t = io.hyperframes.parallel.CpCommType.fromId(
          "layout.cpCommType", cpCommType);
      return t == io.hyperframes.parallel.CpCommType.P2P && cp != null && cp == 1 ? null : t;
    }
  }

  /** A training estimate request. */
  public record Estimate(Model model, Cluster cluster, Training workload, Layout layout) {}

  /** {@code constraints} of a plan request. */
  public record Constraints(Double memoryHeadroom, Double deadlineDays, Integer minGlobalBatch,
      Integer maxGlobalBatch, List<String> precisions) {}

  /** {@code pricing} of a plan request. */
  public record Pricing(Double pricePerDeviceHour, Double powerWatts, Double pue,
      Double electricityPerKwh) {}

  /** {@code search} of a plan request. */
  public record Search(Integer alternatives, Boolean exhaustive) {}

  /** A training plan request. */
  public record Plan(Model model, Cluster cluster, Training workload, Layout layout,
      Constraints constraints, String objective, Pricing pricing, Search search) {}

  /**
   * {@code workload.latencySlo} of a serving request; {@code tpotPercentile} (mode slo) the
   * percentile of the requests' times per output token the TPOT target applies to (absent: the
   * median request's).
   */
  public record Slo(Double ttftSeconds, Double tpotSeconds, Double percentile,
      Double tpotPercentile) {}

  /**
   * {@code workload} of a serving request. {@code promptTokens} and {@code outputTokens} are a
   * number, or with {@code mode} capacity a list of {@code [tokens, weight]} pairs (or
   * {@code {"tokens", "weight"}} objects); {@code mode} is fixed (the default) or capacity, whose
   * scheduler fields are {@code engine}, {@code maxNumSeqs}, {@code maxNumTokens},
   * {@code memoryFraction}, {@code chunkedPrefill} and {@code engineSettings} ("defaults" or
   * "trtllm-bench": the limits trtllm-bench picks).
   */
  public record Inference(String type, String precision, String kvCachePrecision,
      Integer batchSize, com.fasterxml.jackson.databind.JsonNode promptTokens,
      com.fasterxml.jackson.databind.JsonNode outputTokens, Double arrivalRatePerSecond,
      Slo latencySlo, Integer concurrency, Integer blockTokens, String decodeAttention,
      String attention, Speculation speculative, Double prefixCacheHitRate, String mode,
      String engine, Integer maxNumSeqs, Integer maxNumTokens, Double memoryFraction,
      Boolean chunkedPrefill, String engineSettings, Double moeLoadImbalance) {}

  /**
   * {@code workload.speculative} of a serving request: {@code method} (mtp, eagle, draft),
   * {@code tokens} drafted per step, {@code acceptance} per draft token, and for method draft
   * the {@code draftModel} (a model object, as {@code model}).
   */
  public record Speculation(String method, Integer tokens, Double acceptance,
      Model draftModel) {}

  /**
   * {@code layout} of a serving request: one pool of replicas ({@code tp}, {@code ep},
   * {@code pp}, {@code dp}; {@code twoBatchOverlap} where ep &gt; tp; {@code redundantExperts},
   * copies of routed experts beside them, where ep &gt; 1), or {@code disaggregated} prefill and
   * decode pools.
   */
  public record ServingLayout(Integer tp, Integer ep, Integer pp, Integer dp,
      Disaggregated disaggregated, Boolean twoBatchOverlap, Integer redundantExperts) {

    /** One pool of replicas. */
    public ServingLayout(Integer tp, Integer ep, Integer pp, Integer dp) {
      this(tp, ep, pp, dp, null, null, null);
    }
  }

  /** {@code layout.disaggregated}: the prefill and decode pools. */
  public record Disaggregated(ServingPool prefill, ServingPool decode) {}

  /**
   * A pool of {@code layout.disaggregated}: replicas of tp devices, ep, its batch, two-batch
   * overlap and redundant experts.
   */
  public record ServingPool(Integer tp, Integer ep, Integer replicas, Integer batch,
      Boolean twoBatchOverlap, Integer redundantExperts) {}

  /** A serving estimate request. */
  public record Serve(Model model, Cluster cluster, Inference workload, ServingLayout layout) {}

  /** {@code constraints} of a serving plan. */
  public record ServingConstraints(List<String> weightFormats, List<String> kvFormats) {}

  /** {@code pricing} of a serving plan. */
  public record ServingPricing(Double pricePerDeviceHour) {}

  /** {@code search} of a serving plan. */
  public record ServingSearch(Integer alternatives) {}

  /**
   * A serving plan request: the serving request's model, cluster and workload plus the formats
   * to choose among, the price and the number of alternatives; its layout is chosen, not given.
   */
  public record ServePlan(Model model, Cluster cluster, Inference workload,
      ServingConstraints constraints, ServingPricing pricing, ServingSearch search) {}

  /**
   * A validation document: {@code {"cases": [...]}}. Fields other than those read (version,
   * sources, notes) are the document's own annotations and are ignored.
   */
  @JsonIgnoreProperties(ignoreUnknown = true)
  public record Cases(List<Case> cases) {}

  /**
   * One published measurement: an estimate or serving request (kept as JSON until its type is
   * known) or a collective, and the figures it reached ({@code expected}; text entries are
   * notes).
   */
  @JsonIgnoreProperties(ignoreUnknown = true)
  public record Case(String id, JsonNode request, CollectiveCase collective,
      Map<String, JsonNode> expected) {

    /**
     * The request's {@code workload.type} ("training", "inference"), which decides how the
     * request is read; "" when absent or for a collective.
     */
    public String workloadType() {
      JsonNode type = request == null ? null : request.path("workload").path("type");
      return type != null && type.isTextual() ? type.asText() : "";
    }
  }

  /** A measured collective: the cluster it ran on, the operation and the message size. */
  public record CollectiveCase(String accelerator, String template, Integer devices,
      Integer devicesPerNode, Interconnect interconnect, String op, Double messageBytes) {

    /** The cluster the collective ran on. */
    public io.hyperframes.hardware.Cluster cluster(Catalog catalog) {
      return new Cluster(required("collective.accelerator", accelerator), template,
          Devices.count(required("collective.devices", devices)),
          required("collective.devicesPerNode", devicesPerNode), interconnect).resolve(catalog);
    }
  }
}
