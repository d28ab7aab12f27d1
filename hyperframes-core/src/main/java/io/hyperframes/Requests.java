package io.hyperframes;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.common.collect.ImmutableSet;
import io.hyperframes.hardware.Accelerator;
import io.hyperframes.hardware.Catalog;
import io.hyperframes.hardware.Checks;
import io.hyperframes.hardware.Cluster;
import io.hyperframes.hardware.Fabric;
import io.hyperframes.hardware.NodeTemplate;
import io.hyperframes.json.JsonFields;
import io.hyperframes.model.ModelSpec;
import io.hyperframes.model.ParametersOnlySpec;
import io.hyperframes.parallel.Engine;
import io.hyperframes.parallel.PartialLayout;
import io.hyperframes.parallel.Recompute;
import io.hyperframes.precision.NumberFormat;
import io.hyperframes.precision.Optimizer;
import io.hyperframes.precision.PrecisionRecipe;
import io.hyperframes.workload.Attention;
import io.hyperframes.workload.TrainingWorkload;
import java.util.Locale;
import java.util.Set;

/**
 * Reads estimate requests from their JSON form (the contract in docs/user-guide.md). Every
 * problem is an {@link IllegalArgumentException} whose message starts with the field path and
 * names the offending value.
 */
public final class Requests {
  private Requests() {}

  private static final Set<String> TOP = ImmutableSet.of("model", "cluster", "workload", "layout");
  private static final Set<String> MODEL = ImmutableSet.of("catalog", "name", "layers", "hidden",
      "heads", "kvHeads", "ffnHidden", "gatedMlp", "vocab", "seqLen", "tiedEmbeddings",
      "parameters");
  private static final Set<String> CLUSTER = ImmutableSet.of("accelerator", "template", "devices",
      "devicesPerNode", "interconnect");
  private static final Set<String> WORKLOAD = ImmutableSet.of("type", "precision",
      "globalBatchSize", "trainingTokens", "optimizer", "gradientPrecision", "attention");
  private static final Set<String> LAYOUT = ImmutableSet.of("tp", "pp", "dp", "virtualStages",
      "microBatch", "sequenceParallel", "recompute", "zeroStage", "engine", "shardGroupSize",
      "reshardAfterForward");

  /** Parses a request against the built-in catalog. */
  public static EstimateRequest parse(String json) {
    return parse(json, Catalog.builtIn());
  }

  /** Parses a request against {@code catalog}. */
  public static EstimateRequest parse(String json, Catalog catalog) {
    return fromJson(JsonFields.parseObject("request", json), catalog);
  }

  /** Builds a request from an already parsed JSON object. */
  public static EstimateRequest fromJson(JsonNode root, Catalog catalog) {
    if (root == null || !root.isObject()) {
      throw new IllegalArgumentException("request: must be a JSON object");
    }
    JsonFields.onlyFields(root, "", TOP);
    ModelSpec model = model(JsonFields.object(root, "model", "model"), catalog);
    Cluster cluster = cluster(JsonFields.object(root, "cluster", "cluster"), catalog);
    TrainingWorkload workload = workload(JsonFields.object(root, "workload", "workload"));
    JsonNode layout = JsonFields.optionalObject(root, "layout", "layout");
    return new EstimateRequest(model, cluster, workload,
        layout == null ? PartialLayout.OPEN : layout(layout));
  }

  /**
   * Reads a request's {@code model} object (catalog id, architecture, or parameters only); shared
   * by every job's parser.
   *
   * @throws IllegalArgumentException naming the field and the value
   */
  public static ModelSpec model(JsonNode m, Catalog catalog) {
    JsonFields.onlyFields(m, "model", MODEL);
    String id = JsonFields.optionalString(m, "catalog", "model.catalog");
    if (id != null) {
      if (m.size() > 1) {
        throw new IllegalArgumentException(
            "model.catalog: give either a catalog id or an architecture, not both");
      }
      return catalog.model("model.catalog", id);
    }
    String name = JsonFields.optionalString(m, "name", "model.name");
    if (name == null) {
      throw new IllegalArgumentException("model: missing required field (catalog or name)");
    }
    if (m.has("parameters")) {
      if (m.has("layers") || m.has("hidden")) {
        throw new IllegalArgumentException(
            "model.parameters: give either parameters or an architecture, not both");
      }
      return new ParametersOnlySpec(name, JsonFields.number(m, "parameters", "model.parameters"));
    }
    Checks.positive("model.hidden", JsonFields.integer(m, "hidden", "model.hidden"));
    Checks.positive("model.heads", JsonFields.integer(m, "heads", "model.heads"));
    return Catalog.transformer(m, "model", name);
  }

  /**
   * Reads a request's {@code cluster} object (accelerator or node template, devices, fabric
   * overrides); shared by every job's parser.
   *
   * @throws IllegalArgumentException naming the field and the value
   */
  public static Cluster cluster(JsonNode c, Catalog catalog) {
    JsonFields.onlyFields(c, "cluster", CLUSTER);
    String templateId = JsonFields.optionalString(c, "template", "cluster.template");
    String accId = JsonFields.optionalString(c, "accelerator", "cluster.accelerator");
    NodeTemplate template;
    Accelerator acc;
    if (templateId != null) {
      template = catalog.node("cluster.template", templateId);
      acc = catalog.accelerator("cluster.template", template.accelerator());
      if (accId != null && !catalog.accelerator("cluster.accelerator", accId).id().equals(acc.id())) {
        throw new IllegalArgumentException("cluster.accelerator: '" + accId
            + "' differs from the accelerator of template " + templateId + " (" + acc.id() + ")");
      }
    } else {
      if (accId == null) {
        throw new IllegalArgumentException("cluster.accelerator: missing required field");
      }
      acc = catalog.accelerator("cluster.accelerator", accId);
      template = catalog.node("cluster.accelerator", acc.defaultNode());
    }
    int devices = JsonFields.integer(c, "devices", "cluster.devices");
    Checks.positive("cluster.devices", devices);
    Integer perNode = JsonFields.optionalInteger(c, "devicesPerNode", "cluster.devicesPerNode");
    int dpn = perNode != null ? Checks.positive("cluster.devicesPerNode", perNode)
        : template.devicesPerNode();
    Fabric intra = acc.intraNode();
    Fabric inter = template.interNode();
    JsonNode ic = JsonFields.optionalObject(c, "interconnect", "cluster.interconnect");
    if (ic != null) {
      JsonFields.onlyFields(ic, "cluster.interconnect", ImmutableSet.of("intraNode", "interNode"));
      JsonNode in = JsonFields.optionalObject(ic, "intraNode", "cluster.interconnect.intraNode");
      if (in != null) {
        JsonFields.onlyFields(in, "cluster.interconnect.intraNode",
            ImmutableSet.of("bandwidthGBps", "latencyUs"));
        intra = override(intra, in, "cluster.interconnect.intraNode", "bandwidthGBps");
      }
      JsonNode out = JsonFields.optionalObject(ic, "interNode", "cluster.interconnect.interNode");
      if (out != null) {
        JsonFields.onlyFields(out, "cluster.interconnect.interNode",
            ImmutableSet.of("bandwidthGBpsPerDevice", "latencyUs"));
        inter = override(inter, out, "cluster.interconnect.interNode", "bandwidthGBpsPerDevice");
      }
    }
    return new Cluster(acc, devices, dpn, intra, inter, template.hostCores(),
        template.hostMemoryBytes());
  }

  private static Fabric override(Fabric base, JsonNode n, String path, String bwField) {
    Double bw = JsonFields.optionalNumber(n, bwField, path + "." + bwField);
    Double lat = JsonFields.optionalNumber(n, "latencyUs", path + ".latencyUs");
    double b = bw != null ? Checks.positive(path + "." + bwField, bw) * 1e9
        : base.bandwidthBytesPerSecond();
    double l = lat != null ? Checks.nonNegative(path + ".latencyUs", lat) * 1e-6
        : base.latencySeconds();
    return base.withBandwidthAndLatency(b, l, "user override of " + base.id());
  }

  static TrainingWorkload workload(JsonNode w) {
    JsonFields.onlyFields(w, "workload", WORKLOAD);
    String type = JsonFields.string(w, "type", "workload.type").toLowerCase(Locale.ROOT);
    if (!type.equals("training")) {
      throw new IllegalArgumentException("workload.type: '" + type
          + "' is not a training workload (the training estimator needs \"training\")");
    }
    PrecisionRecipe recipe = PrecisionRecipe.named("workload.precision",
        JsonFields.string(w, "precision", "workload.precision"));
    String grad = JsonFields.optionalString(w, "gradientPrecision", "workload.gradientPrecision");
    if (grad != null) {
      NumberFormat g = NumberFormat.fromId("workload.gradientPrecision", grad);
      if (g != NumberFormat.FP32 && g != NumberFormat.FP16 && g != NumberFormat.BF16) {
        throw new IllegalArgumentException(
            "workload.gradientPrecision: must be fp32, fp16 or bf16, got '" + grad + "'");
      }
      recipe = recipe.withGradients(g);
    }
    String opt = JsonFields.optionalString(w, "optimizer", "workload.optimizer");
    Integer batch = JsonFields.optionalInteger(w, "globalBatchSize", "workload.globalBatchSize");
    if (batch != null) {
      Checks.positive("workload.globalBatchSize", batch);
    }
    Double tokens = JsonFields.optionalNumber(w, "trainingTokens", "workload.trainingTokens");
    if (tokens != null) {
      Checks.positive("workload.trainingTokens", tokens);
    }
    String attention = JsonFields.optionalString(w, "attention", "workload.attention");
    return new TrainingWorkload(recipe,
        opt == null ? Optimizer.ADAM : Optimizer.fromId("workload.optimizer", opt),
        batch == null ? 0 : batch, tokens == null ? 0.0 : tokens,
        attention == null ? null : Attention.fromId("workload.attention", attention));
  }

  static PartialLayout layout(JsonNode l) {
    JsonFields.onlyFields(l, "layout", LAYOUT);
    String r = JsonFields.optionalString(l, "recompute", "layout.recompute");
    String engine = JsonFields.optionalString(l, "engine", "layout.engine");
    return new PartialLayout(
        JsonFields.optionalInteger(l, "tp", "layout.tp"),
        JsonFields.optionalInteger(l, "pp", "layout.pp"),
        JsonFields.optionalInteger(l, "dp", "layout.dp"),
        JsonFields.optionalInteger(l, "virtualStages", "layout.virtualStages"),
        JsonFields.optionalInteger(l, "microBatch", "layout.microBatch"),
        JsonFields.optionalBoolean(l, "sequenceParallel", "layout.sequenceParallel"),
        r == null ? null : Recompute.fromId("layout.recompute", r),
        JsonFields.optionalInteger(l, "zeroStage", "layout.zeroStage"),
        engine == null ? null : Engine.fromId("layout.engine", engine),
        JsonFields.optionalInteger(l, "shardGroupSize", "layout.shardGroupSize"),
        JsonFields.optionalBoolean(l, "reshardAfterForward", "layout.reshardAfterForward"));
  }
}
