package io.hyperframes;

import io.hyperframes.catalog.ModelDocuments;
import io.hyperframes.catalog.Catalog;
import io.hyperframes.model.DenseStackSpec;
import io.hyperframes.model.ParametersOnlySpec;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.request.Documents;
import io.hyperframes.json.Json;
import java.util.function.UnaryOperator;

/**
 * What every job names: a model, an accelerator and how many, the catalog and the models to use.
 * Builders are immutable (each call returns a new builder) and each field may be set once
 * ({@link IllegalStateException} showing the old value); values are checked when the job runs,
 * by the same code and with the same messages as the JSON form ({@code toJson()}).
 *
 * @param <B> the concrete builder
 */
public abstract class JobBuilder<B extends JobBuilder<B>> {

  final Tree tree;
  final Catalog catalog;
  final Models models;

  JobBuilder(Tree tree, Catalog catalog, Models models) {
    this.tree = tree;
    this.catalog = catalog;
    this.models = models;
  }

  abstract B copy(Tree tree, Catalog catalog, Models models);

  /** This builder with {@code workload} set from the training fields (estimates and plans). */
  B withTraining(UnaryOperator<TrainingSpec> fields) {
    if (fields == null) {
      throw new IllegalArgumentException("workload: must be given");
    }
    return copy(tree.withAll("workload", fields.apply(TrainingSpec.empty()).tree), catalog,
        models);
  }

  /** {@code model.catalog}: a model of the catalog ("llama2-70b"). */
  public B model(String catalogId) {
    return copy(tree.with("model.catalog", catalogId), catalog, models);
  }

  /**
   * {@code model.seqLen}: beside {@link #model(String)}, the catalog model at this sequence length
   * (by default its own).
   */
  public B seqLen(int tokens) {
    return copy(tree.with("model.seqLen", tokens), catalog, models);
  }

  /** {@code model}: an architecture given in full. */
  public B model(TransformerSpec architecture) {
    return copy(tree.with("model", Tree.model(architecture)), catalog, models);
  }

  /**
   * {@code model.name} and {@code model.dense}: a stack of dense layers (an MLP; for example
   * read from a DJL block by {@code io.hyperframes.djl.DjlBlocks.dense}). Estimated and planned
   * with data parallelism and ZeRO (no tensor or pipeline split).
   */
  public B model(DenseStackSpec stack) {
    if (stack == null) {
      throw new IllegalArgumentException("model: must be given");
    }
    return copy(tree.with("model", Json.tree(ModelDocuments.Model.of(stack))), catalog, models);
  }

  /**
   * {@code model.name} and {@code model.parameters}: a model known only by its parameter count
   * (for example read from a DJL block by {@code io.hyperframes.djl.DjlBlocks}). Enough for
   * model-state memory under every ZeRO stage; the step time and planning need an architecture.
   */
  public B model(ParametersOnlySpec counted) {
    if (counted == null) {
      throw new IllegalArgumentException("model: must be given");
    }
    return copy(tree.with("model.name", counted.name()).with("model.parameters",
        counted.parameters()), catalog, models);
  }

  /** {@code cluster.accelerator}: a catalog accelerator ("h100-sxm-80gb"). */
  public B accelerator(String id) {
    return copy(tree.with("cluster.accelerator", id), catalog, models);
  }

  /** {@code cluster.devices}: how many. */
  public B devices(int count) {
    return copy(tree.with("cluster.devices", count), catalog, models);
  }

  /** {@code cluster.devicesPerNode}. */
  public B devicesPerNode(int count) {
    return copy(tree.with("cluster.devicesPerNode", count), catalog, models);
  }

  /** {@code cluster.template}: the node design ("dgx-h100"), when not the accelerator's default. */
  public B node(String template) {
    return copy(tree.with("cluster.template", template), catalog, models);
  }

  /**
   * {@code cluster.interconnect.intraNode}: the link inside a node, in place of the catalog's:
   * bandwidth per device and direction (GB/s) and latency (µs).
   */
  public B intraNode(double bandwidthGBps, double latencyUs) {
    return copy(tree.with("cluster.interconnect.intraNode.bandwidthGBps", bandwidthGBps)
        .with("cluster.interconnect.intraNode.latencyUs", latencyUs), catalog, models);
  }

  /**
   * {@code cluster.interconnect.interNode}: the network between nodes, in place of the node
   * template's: bandwidth per device and direction (GB/s) and latency (µs).
   */
  public B interNode(double bandwidthGBpsPerDevice, double latencyUs) {
    return copy(tree.with("cluster.interconnect.interNode.bandwidthGBpsPerDevice",
        bandwidthGBpsPerDevice).with("cluster.interconnect.interNode.latencyUs", latencyUs),
        catalog, models);
  }

  /** {@code layout}: the fields of the parallel layout to fix (the rest are searched). */
  public B layout(UnaryOperator<LayoutSpec> fields) {
    if (fields == null) {
      throw new IllegalArgumentException("layout: must be given");
    }
    return copy(tree.withAll("layout", fields.apply(LayoutSpec.empty()).tree), catalog, models);
  }

  /** The catalog to resolve ids against (default {@link Catalog#builtIn()}). */
  public B catalog(Catalog c) {
    if (c == null) {
      throw new IllegalArgumentException("catalog: must be given");
    }
    if (catalog != null) {
      throw new IllegalStateException("catalog: already set to version " + catalog.version());
    }
    return copy(tree, c, models);
  }

  /** The models to compute with (default {@link Models#analytical()}). */
  public B models(Models m) {
    if (m == null) {
      throw new IllegalArgumentException("models: must be given");
    }
    if (models != null) {
      throw new IllegalStateException("models: already set to " + models);
    }
    return copy(tree, catalog, m);
  }

  /** The request as JSON: the same document {@code hyperframes} reads with {@code --request}. */
  public String toJson() {
    return tree.text();
  }

  Catalog catalogOrDefault() {
    return catalog == null ? Catalog.builtIn() : catalog;
  }

  Models modelsOrDefault() {
    return models == null ? Models.analytical() : models;
  }
}
