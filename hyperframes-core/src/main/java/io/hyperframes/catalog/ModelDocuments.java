package io.hyperframes.catalog;

import static io.hyperframes.json.Json.required;
import static io.hyperframes.json.Json.text;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.databind.JsonNode;
import io.hyperframes.hardware.Checks;
import io.hyperframes.model.DenseStackSpec;
import io.hyperframes.model.MlaSpec;
import io.hyperframes.model.ModelSpec;
import io.hyperframes.model.MoeSpec;
import io.hyperframes.model.ParametersOnlySpec;
import io.hyperframes.model.SlidingWindowSpec;
import io.hyperframes.model.TransformerSpec;
import java.util.List;
import java.util.stream.Stream;

/**
 * The model documents: {@code model} of every request and each model of a catalog file, as
 * records bound by Jackson (one component per field; an unknown field is rejected by the
 * binding), each resolving itself into the model vocabulary with messages that name the field
 * path and the value. Catalog files and requests share them, so a model is written the same way
 * in both.
 */
public final class ModelDocuments {
  private ModelDocuments() {}

  /**
   * {@code model}: a catalog id, a transformer architecture, a dense stack ({@code dense}: the
   * input size then each layer's width), or a name and a parameter count.
   */
  public record Model(String catalog, String name, Integer layers, Integer hidden, Integer heads,
      Integer kvHeads, Integer ffnHidden, Boolean gatedMlp, Integer vocab, Integer seqLen,
      Boolean tiedEmbeddings, Double parameters, List<Integer> dense, Integer headDim,
      com.fasterxml.jackson.databind.JsonNode huggingFace, Moe moe, Mla mla,
      SlidingWindow slidingWindow, Integer mtpLayers) {

    /** A model document without multi-token-prediction modules. */
    public Model(String catalog, String name, Integer layers, Integer hidden, Integer heads,
        Integer kvHeads, Integer ffnHidden, Boolean gatedMlp, Integer vocab, Integer seqLen,
        Boolean tiedEmbeddings, Double parameters, List<Integer> dense, Integer headDim,
        com.fasterxml.jackson.databind.JsonNode huggingFace, Moe moe, Mla mla,
        SlidingWindow slidingWindow) {
      this(catalog, name, layers, hidden, heads, kvHeads, ffnHidden, gatedMlp, vocab, seqLen,
          tiedEmbeddings, parameters, dense, headDim, huggingFace, moe, mla, slidingWindow, null);
    }

    /** A model document whose every layer attends to the whole context. */
    public Model(String catalog, String name, Integer layers, Integer hidden, Integer heads,
        Integer kvHeads, Integer ffnHidden, Boolean gatedMlp, Integer vocab, Integer seqLen,
        Boolean tiedEmbeddings, Double parameters, List<Integer> dense, Integer headDim,
        com.fasterxml.jackson.databind.JsonNode huggingFace, Moe moe, Mla mla) {
      this(catalog, name, layers, hidden, heads, kvHeads, ffnHidden, gatedMlp, vocab, seqLen,
          tiedEmbeddings, parameters, dense, headDim, huggingFace, moe, mla, null, null);
    }

    /** A model document with standard attention. */
    public Model(String catalog, String name, Integer layers, Integer hidden, Integer heads,
        Integer kvHeads, Integer ffnHidden, Boolean gatedMlp, Integer vocab, Integer seqLen,
        Boolean tiedEmbeddings, Double parameters, List<Integer> dense, Integer headDim,
        com.fasterxml.jackson.databind.JsonNode huggingFace, Moe moe) {
      this(catalog, name, layers, hidden, heads, kvHeads, ffnHidden, gatedMlp, vocab, seqLen,
          tiedEmbeddings, parameters, dense, headDim, huggingFace, moe, null);
    }

    /** A model document with a head size and a Hugging Face config but no experts. */
    public Model(String catalog, String name, Integer layers, Integer hidden, Integer heads,
        Integer kvHeads, Integer ffnHidden, Boolean gatedMlp, Integer vocab, Integer seqLen,
        Boolean tiedEmbeddings, Double parameters, List<Integer> dense, Integer headDim,
        com.fasterxml.jackson.databind.JsonNode huggingFace) {
      this(catalog, name, layers, hidden, heads, kvHeads, ffnHidden, gatedMlp, vocab, seqLen,
          tiedEmbeddings, parameters, dense, headDim, huggingFace, null);
    }

    /** A model document without a head size of its own or a Hugging Face config. */
    public Model(String catalog, String name, Integer layers, Integer hidden, Integer heads,
        Integer kvHeads, Integer ffnHidden, Boolean gatedMlp, Integer vocab, Integer seqLen,
        Boolean tiedEmbeddings, Double parameters, List<Integer> dense) {
      this(catalog, name, layers, hidden, heads, kvHeads, ffnHidden, gatedMlp, vocab, seqLen,
          tiedEmbeddings, parameters, dense, null, null);
    }

    /** The architecture of {@code spec} in this vocabulary. */
    public static Model of(TransformerSpec spec) {
      boolean ownHead = spec.mla() == null && (spec.hidden() % spec.heads() != 0
          || spec.headDim() != spec.hidden() / spec.heads());
      return new Model(null, spec.name(), spec.layers(), spec.hidden(), spec.heads(),
          spec.kvHeads(), spec.ffnHidden(), spec.gatedMlp(), spec.vocab(), spec.seqLen(),
          spec.tiedEmbeddings(), null, null, ownHead ? spec.headDim() : null, null,
          spec.moe() == null ? null : Moe.of(spec.moe()),
          spec.mla() == null ? null : Mla.of(spec.mla()),
          spec.slidingWindow() == null ? null : SlidingWindow.of(spec.slidingWindow()),
          spec.mtpLayers() == 0 ? null : spec.mtpLayers());
    }

    /** The dense stack {@code spec} in this vocabulary. */
    public static Model of(DenseStackSpec spec) {
      return new Model(null, spec.name(), null, null, null, null, null, null, null, null, null,
          null, spec.widths());
    }

    /**
     * The model this document names.
     *
     * @throws IllegalArgumentException naming the field and the value
     */
    public ModelSpec resolve(Catalog c) {
      String id = text("model.catalog", catalog);
      if (id != null) {
        boolean more = Stream.of(name, layers, hidden, heads, kvHeads, ffnHidden, gatedMlp, vocab,
            tiedEmbeddings, parameters, dense, headDim, huggingFace, moe, mla,
            slidingWindow, mtpLayers).anyMatch(v -> v != null);
        if (more) {
          throw new IllegalArgumentException("model.catalog: give either a catalog id or an"
              + " architecture, not both (model.seqLen may go beside it: the catalog model at"
              + " that sequence length)");
        }
        io.hyperframes.model.TransformerSpec m = c.model("model.catalog", id);
        return seqLen == null ? m : m.withSeqLen(seqLen);
      }
      if (huggingFace != null) {
        boolean more = Stream.of(layers, hidden, heads, kvHeads, ffnHidden, gatedMlp, vocab,
            tiedEmbeddings, parameters, dense, headDim, moe, mla, slidingWindow, mtpLayers)
            .anyMatch(v -> v != null);
        if (more) {
          throw new IllegalArgumentException("model.huggingFace: give either a Hugging Face"
              + " config or an architecture, not both (model.name and model.seqLen may go"
              + " beside it)");
        }
        if (seqLen == null) {
          throw new IllegalArgumentException("model.seqLen: missing required field beside"
              + " model.huggingFace (the sequence length you train or serve at; a config's"
              + " max_position_embeddings is the model's limit, not that length)");
        }
        return io.hyperframes.model.ModelSpecs.fromHuggingFace("model.huggingFace", huggingFace,
            name == null ? null : text("model.name", name), seqLen);
      }
      String n = text("model.name", name);
      if (n == null) {
        throw new IllegalArgumentException("model: missing required field (catalog or name)");
      }
      if (dense != null) {
        boolean more = Stream.of(layers, hidden, heads, kvHeads, ffnHidden, gatedMlp, vocab,
            seqLen, tiedEmbeddings, parameters, headDim, moe, mla, slidingWindow, mtpLayers)
            .anyMatch(v -> v != null);
        if (more) {
          throw new IllegalArgumentException(
              "model.dense: give either a dense stack or a transformer or parameters, not both");
        }
        return new DenseStackSpec(n, dense);
      }
      if (parameters != null) {
        if (layers != null || hidden != null) {
          throw new IllegalArgumentException(
              "model.parameters: give either parameters or an architecture, not both");
        }
        return new ParametersOnlySpec(n, Checks.finite("model.parameters", parameters));
      }
      return architecture("model", n);
    }

    /** The transformer these fields describe, defaults filled as the catalog does. */
    public TransformerSpec architecture(String path, String n) {
      int h = Checks.positive(path + ".hidden", required(path + ".hidden", hidden));
      int a = Checks.positive(path + ".heads", required(path + ".heads", heads));
      boolean g = Boolean.TRUE.equals(gatedMlp);
      return new TransformerSpec(n, required(path + ".layers", layers), h, a,
          kvHeads != null ? kvHeads : a,
          ffnHidden != null ? ffnHidden : TransformerSpec.defaultFfnHidden(h, g), g,
          required(path + ".vocab", vocab), required(path + ".seqLen", seqLen),
          tiedEmbeddings != null ? tiedEmbeddings : !g,
          headDim == null ? 0 : Checks.positive(path + ".headDim", headDim),
          moe == null ? null : moe.resolve(path + ".moe"),
          mla == null ? null : mla.resolve(path + ".mla"),
          slidingWindow == null ? null : slidingWindow.resolve(path + ".slidingWindow"),
          mtpLayers == null ? 0 : mtpLayers);
    }
  }

  /**
   * {@code model.slidingWindow}: the window in tokens (required), every how many layers one
   * attends to the whole context (0, the default: every layer windowed), and {@code chunked}
   * (default false) for chunked local attention, Llama 4's, in place of a sliding window.
   */
  public record SlidingWindow(Integer tokens, Integer fullAttentionEvery, Boolean chunked) {

    /** The document of {@code spec} ({@code chunked} only when true). */
    public static SlidingWindow of(io.hyperframes.model.SlidingWindowSpec spec) {
      return new SlidingWindow(spec.tokens(), spec.fullAttentionEvery(),
          spec.chunked() ? Boolean.TRUE : null);
    }

    /** The windows these fields describe, naming {@code path} in every message. */
    public io.hyperframes.model.SlidingWindowSpec resolve(String path) {
      return new io.hyperframes.model.SlidingWindowSpec(required(path + ".tokens", tokens),
          fullAttentionEvery == null ? 0 : fullAttentionEvery, chunked != null && chunked);
    }
  }

  /**
   * {@code model.mla}: multi-head latent attention; kvLoraRank, qkNopeHeadDim, qkRopeHeadDim and
   * vHeadDim required, qLoraRank 0 (an uncompressed query) by default.
   */
  public record Mla(Integer qLoraRank, Integer kvLoraRank, Integer qkNopeHeadDim,
      Integer qkRopeHeadDim, Integer vHeadDim) {

    /** The document of {@code spec}. */
    public static Mla of(io.hyperframes.model.MlaSpec spec) {
      return new Mla(spec.qLoraRank(), spec.kvLoraRank(), spec.qkNopeHeadDim(),
          spec.qkRopeHeadDim(), spec.vHeadDim());
    }

    /** The latent attention these fields describe, naming {@code path} in every message. */
    public io.hyperframes.model.MlaSpec resolve(String path) {
      return new io.hyperframes.model.MlaSpec(qLoraRank == null ? 0 : qLoraRank,
          required(path + ".kvLoraRank", kvLoraRank),
          required(path + ".qkNopeHeadDim", qkNopeHeadDim),
          required(path + ".qkRopeHeadDim", qkRopeHeadDim),
          required(path + ".vHeadDim", vHeadDim));
    }
  }

  /**
   * {@code model.moe}: experts, top-k and expert size required; no shared experts, no leading
   * dense layers, every layer an MoE layer, dropless routing and no group-limited routing by
   * default.
   */
  public record Moe(Integer experts, Integer topK, Integer expertFfnHidden,
      Integer sharedExperts, Integer sharedExpertFfnHidden, Integer firstDenseLayers,
      Integer layerInterval, Double capacityFactor, Integer groups, Integer groupTopK) {

    /** The document of {@code spec}. */
    public static Moe of(io.hyperframes.model.MoeSpec spec) {
      return new Moe(spec.experts(), spec.topK(), spec.expertFfnHidden(), spec.sharedExperts(),
          spec.sharedExpertFfnHidden(), spec.firstDenseLayers(), spec.layerInterval(),
          spec.capacityFactor(), spec.groups() == 1 ? null : spec.groups(),
          spec.groups() == 1 ? null : spec.groupTopK());
    }

    /** The mixture these fields describe, naming {@code path} in every message. */
    public io.hyperframes.model.MoeSpec resolve(String path) {
      return new io.hyperframes.model.MoeSpec(required(path + ".experts", experts),
          required(path + ".topK", topK), required(path + ".expertFfnHidden", expertFfnHidden),
          sharedExperts == null ? 0 : sharedExperts,
          sharedExpertFfnHidden == null ? 0 : sharedExpertFfnHidden,
          firstDenseLayers == null ? 0 : firstDenseLayers,
          layerInterval == null ? 1 : layerInterval,
          capacityFactor == null ? 0 : Checks.finite(path + ".capacityFactor", capacityFactor),
          groups == null ? 1 : groups, groupTopK == null ? (groups == null ? 1 : groups)
              : groupTopK);
    }
  }
}
