package io.hyperframes.model;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import java.util.Locale;

/**
 * Models from the files teams have: a Hugging Face {@code config.json}.
 *
 * <p>Read now, each by the fields its {@code transformers} configuration class defines
 * ({@code LlamaConfig}, {@code MistralConfig}, {@code Qwen2Config}, {@code Qwen3Config},
 * {@code MixtralConfig}, {@code Qwen3MoeConfig}): {@code LlamaForCausalLM},
 * {@code MistralForCausalLM}, {@code Qwen2ForCausalLM}, {@code Qwen3ForCausalLM} and the
 * mixtures of experts {@code MixtralForCausalLM} and {@code Qwen3MoeForCausalLM}
 * ({@link MoeSpec}), decoder-only transformers with a SwiGLU MLP, RMSNorm and rotary positions
 * ({@link TransformerSpec} with {@code gatedMlp}). The fields read:
 * {@code num_hidden_layers}, {@code hidden_size}, {@code num_attention_heads},
 * {@code num_key_value_heads}, {@code intermediate_size}, {@code vocab_size}, {@code head_dim},
 * {@code tie_word_embeddings}, {@code hidden_act}. Defaults are those of the configuration
 * classes, and only where the class has one: {@code num_key_value_heads} absent is
 * {@code num_attention_heads} (multi-head attention), {@code head_dim} absent is
 * {@code hidden_size / num_attention_heads}, {@code tie_word_embeddings} absent is
 * {@code false} (the four classes' default). Neglected, each under 0.01 % of the parameters of
 * every config read: Qwen2's query/key/value biases and Qwen3's per-head query/key RMSNorm gains.
 *
 * <p>DeepSeek-V3 and R1 ({@code DeepseekV3ForCausalLM}) are read with latent attention
 * ({@link MlaSpec}: {@code q_lora_rank}, {@code kv_lora_rank}, {@code qk_nope_head_dim},
 * {@code qk_rope_head_dim}, {@code v_head_dim}) and their experts ({@code n_routed_experts},
 * {@code num_experts_per_tok}, {@code moe_intermediate_size}, {@code n_shared_experts},
 * {@code first_k_dense_replace}, {@code moe_layer_freq}) and their multi-token-prediction
 * modules ({@code num_nextn_predict_layers}: {@code mtpLayers}, trained and held but not in
 * the parameter count, the convention of the published 671 B).
 *
 * <p>gpt-oss ({@code GptOssForCausalLM}) is read with its experts ({@code num_local_experts},
 * {@code num_experts_per_tok}, experts of {@code intermediate_size}) and its windowed layers
 * ({@link SlidingWindowSpec} from {@code layer_types} and {@code sliding_window}); Mistral and
 * Mixtral window every layer when {@code sliding_window} is set. Neglected, each under 0.05 %
 * of gpt-oss's parameters: its attention and expert biases and the per-head attention sinks.
 *
 * <p>Llama 4 ({@code Llama4ForConditionalGeneration}: its {@code text_config};
 * {@code Llama4ForCausalLM}) is read with its routed and shared experts, its dense layers and
 * its chunked attention ({@link #llama4}).
 *
 * <p>Not read yet, each an {@code IllegalArgumentException} naming the field that says why:
 * latent attention in other architectures ({@code kv_lora_rank}), Qwen's
 * {@code use_sliding_window}, a {@code sliding_window} shorter than the sequence on another
 * architecture, and any other architecture.
 *
 * <p>Gemma 2 and 3 ({@code Gemma2ForCausalLM}, {@code Gemma3ForConditionalGeneration}: its
 * {@code text_config}; {@code Gemma3ForCausalLM}) are read with their gated GELU MLP and their
 * sliding windows ({@link #gemma}).
 */
public final class ModelSpecs {
  private ModelSpecs() {}

  private static final List<String> DENSE = List.of("LlamaForCausalLM", "MistralForCausalLM",
      "Qwen2ForCausalLM", "Qwen3ForCausalLM");

  private static final String DEEPSEEK_V3 = "DeepseekV3ForCausalLM";

  private static final String GPT_OSS = "GptOssForCausalLM";

  private static final List<String> MOE = List.of("MixtralForCausalLM", "Qwen3MoeForCausalLM",
      DEEPSEEK_V3, GPT_OSS);

  private static final String LLAMA4 = "Llama4ForConditionalGeneration";

  private static final String GEMMA2 = "Gemma2ForCausalLM";

  private static final String GEMMA3 = "Gemma3ForConditionalGeneration";

  private static final String GEMMA3_TEXT = "Gemma3ForCausalLM";

  private static final String LLAMA4_TEXT = "Llama4ForCausalLM";

  /**
   * The model of a {@code config.json} text, trained or served at its
   * {@code max_position_embeddings} (give the sequence you plan for with
   * {@link #fromHuggingFace(String, JsonNode, String, int)} or {@code model.seqLen}).
   *
   * @throws IllegalArgumentException naming the field and the value
   */
  public static TransformerSpec fromHuggingFace(String json) {
    JsonNode root = parse(json);
    // A multimodal Llama 4 or Gemma 3 keeps its language model's fields in text_config; a
    // Gemma 3 text_config without the length has Gemma3TextConfig's 131072.
    boolean nested = !root.has("max_position_embeddings") && root.path("text_config").isObject();
    JsonNode text = root.path("text_config");
    int length;
    if (!nested) {
      length = intField("model.huggingFace", root, "max_position_embeddings");
    } else if (!text.has("max_position_embeddings")
        && root.path("architectures").path(0).asText().equals(GEMMA3)) {
      length = 131_072;
    } else {
      length = intField("model.huggingFace.text_config", text, "max_position_embeddings");
    }
    return fromHuggingFace("model.huggingFace", root, null, length);
  }

  /**
   * The model of a parsed {@code config.json} at {@code seqLen} tokens.
   *
   * @param field where the config sits in the request, for messages ({@code model.huggingFace})
   * @param name the model's name, or null for the config's {@code _name_or_path} or
   *     architecture
   * @throws IllegalArgumentException naming the field and the value
   */
  public static TransformerSpec fromHuggingFace(String field, JsonNode config, String name,
      int seqLen) {
    if (config != null && config.isTextual()) {
      throw new IllegalArgumentException(field + ": must be a config.json object, got the string"
          + " \"" + config.asText() + "\": put the file's JSON object here, or give the file to"
          + " the command line (plan --model-config FILE --seq-len N)");
    }
    if (config == null || !config.isObject()) {
      throw new IllegalArgumentException(field + ": must be a config.json object");
    }
    JsonNode archs = config.get("architectures");
    if (archs == null || !archs.isArray() || archs.isEmpty() || !archs.get(0).isTextual()) {
      throw new IllegalArgumentException(field + ".architectures: missing required field (the"
          + " model class, e.g. [\"LlamaForCausalLM\"])");
    }
    String arch = archs.get(0).asText();
    if (arch.equals(LLAMA4) || arch.equals(LLAMA4_TEXT)) {
      return llama4(field, config, arch, name, seqLen);
    }
    if (arch.equals(GEMMA2) || arch.equals(GEMMA3) || arch.equals(GEMMA3_TEXT)) {
      return gemma(field, config, arch, name, seqLen);
    }
    if (config.hasNonNull("kv_lora_rank") && !arch.equals(DEEPSEEK_V3)) {
      throw new IllegalArgumentException(field + ".kv_lora_rank: " + config.get("kv_lora_rank")
          + " (" + arch + " uses latent attention, which is read for " + DEEPSEEK_V3 + " only)");
    }
    if (!DENSE.contains(arch) && !MOE.contains(arch)) {
      throw new IllegalArgumentException(field + ".architectures: '" + arch + "' is not read"
          + " (read: " + String.join(", ", DENSE) + ", " + String.join(", ", MOE) + ", "
          + LLAMA4 + ", " + LLAMA4_TEXT + ", " + GEMMA2 + ", " + GEMMA3 + ", " + GEMMA3_TEXT
          + ")");
    }
    Shape shape = swigluShape(field, config, arch);
    int layers = shape.layers();
    int hidden = shape.hidden();
    int heads = shape.heads();
    int kvHeads = shape.kvHeads();
    int headDim = shape.headDim();
    MlaSpec mla = arch.equals(DEEPSEEK_V3) ? mla(field, config) : null;
    SlidingWindowSpec window = slidingWindow(field, arch, config, seqLen);
    JsonNode tied = config.get("tie_word_embeddings");
    if (tied != null && !tied.isBoolean()) {
      throw new IllegalArgumentException(field + ".tie_word_embeddings: must be true or false,"
          + " got " + tied);
    }
    String id = name != null ? name : config.path("_name_or_path").asText(
        arch.replace("ForCausalLM", "").toLowerCase(Locale.ROOT));
    return new TransformerSpec(id.isBlank() ? arch : id, layers, hidden, heads, kvHeads,
        intField(field, config, "intermediate_size"), true, intField(field, config,
            "vocab_size"), seqLen, tied != null && tied.asBoolean(), headDim,
        moe(field, arch, config), mla, window,
        arch.equals(DEEPSEEK_V3) && config.hasNonNull("num_nextn_predict_layers")
            ? nonNegative(field, config, "num_nextn_predict_layers") : 0);
  }

  /**
   * The windowed layers: gpt-oss by its {@code layer_types} ({@code sliding_attention} /
   * {@code full_attention}, read when full layers recur every n-th layer) and
   * {@code sliding_window}; Mistral and Mixtral ({@code MistralConfig}, {@code MixtralConfig})
   * window every layer when {@code sliding_window} is set; null otherwise. Qwen2/3 with
   * {@code use_sliding_window} true ({@code max_window_layers}) and a {@code sliding_window}
   * shorter than the sequence on another architecture are errors naming the field.
   */
  private static SlidingWindowSpec slidingWindow(String field, String arch, JsonNode config,
      int seqLen) {
    if (arch.equals(GPT_OSS)) {
      JsonNode types = config.get("layer_types");
      if (types == null || !types.isArray() || types.isEmpty()) {
        throw new IllegalArgumentException(field + ".layer_types: missing required field (the"
            + " sliding_attention / full_attention of every layer)");
      }
      int layers = intField(field, config, "num_hidden_layers");
      if (types.size() != layers) {
        throw new IllegalArgumentException(field + ".layer_types: " + types.size()
            + " entries for num_hidden_layers " + layers);
      }
      return windowsOfLayerTypes(field, types, layers,
          intField(field, config, "sliding_window"));
    }
    if (!config.hasNonNull("sliding_window")) {
      return null;
    }
    int tokens = intField(field, config, "sliding_window");
    if (arch.startsWith("Qwen")) {
      if (config.path("use_sliding_window").asBoolean(false) && tokens < seqLen) {
        throw new IllegalArgumentException(field + ".use_sliding_window: true (Qwen's windows"
            + " below max_window_layers are not read; sliding_window " + tokens
            + " is shorter than model.seqLen " + seqLen + ")");
      }
      return null;
    }
    if (arch.equals("MistralForCausalLM") || arch.equals("MixtralForCausalLM")) {
      return new SlidingWindowSpec(tokens, 0);
    }
    if (tokens < seqLen) {
      throw new IllegalArgumentException(field + ".sliding_window: " + tokens + " is shorter"
          + " than model.seqLen " + seqLen + " (" + arch + " is read without sliding windows)");
    }
    return null;
  }

  /**
   * Llama 4's language model ({@code Llama4TextConfig} and {@code Llama4TextMoe} in transformers,
   * {@code configuration_llama4.py} @ 008e5743 and {@code modeling_llama4.py} @ 63210d0e): the
   * fields of {@code text_config} for {@code Llama4ForConditionalGeneration} (the vision tower is
   * not read: the published 109 B and 400 B include it), of the config itself for
   * {@code Llama4ForCausalLM}.
   * <ul>
   *   <li>MoE layers: {@code moe_layers}, or by the class's default every
   *       {@code interleave_moe_layer_step}-th layer from layer step − 1; each has
   *       {@code num_local_experts} routed experts of {@code intermediate_size}, top
   *       {@code num_experts_per_tok} (never defaulted), and one shared expert of
   *       {@code intermediate_size} ({@code Llama4TextMoe.shared_expert}); the other layers a
   *       dense MLP of {@code intermediate_size_mlp}.
   *   <li>Attention: chunked local attention of {@code attention_chunk_size} tokens
   *       ({@link SlidingWindowSpec} {@code chunked}) in every layer {@code layer_types} calls
   *       {@code chunked_attention}, full attention in the others; without {@code layer_types},
   *       the class derives them from {@code no_rope_layers} (1: rotary and chunked, 0: NoPE and
   *       full), and without that from {@code no_rope_layer_interval} (default 4: every fourth
   *       layer full). {@code attention_chunk_size} null is full attention everywhere.
   *   <li>{@code tie_word_embeddings}: the config's or its text_config's, false by the classes'
   *       default. Neglected: the weightless query/key L2 norm ({@code use_qk_norm}).
   * </ul>
   */
  private static TransformerSpec llama4(String outerField, JsonNode outer, String arch,
      String name, int seqLen) {
    boolean nested = arch.equals(LLAMA4);
    String field = nested ? outerField + ".text_config" : outerField;
    JsonNode config = nested ? textConfig(outerField, outer, arch) : outer;
    Shape shape = swigluShape(field, config, "Llama 4");
    int layers = shape.layers();
    int hidden = shape.hidden();
    int heads = shape.heads();
    int kvHeads = shape.kvHeads();
    int headDim = shape.headDim();
    int expert = intField(field, config, "intermediate_size");
    int step = config.hasNonNull("interleave_moe_layer_step")
        ? intField(field, config, "interleave_moe_layer_step") : 1;
    MoeSpec moe = new MoeSpec(intField(field, config, "num_local_experts"),
        intField(field, config, "num_experts_per_tok"), expert, 1, expert, step - 1, step, 0);
    JsonNode listed = config.get("moe_layers");
    if (listed != null && !listed.isNull()) {
      if (!listed.isArray()) {
        throw new IllegalArgumentException(field + ".moe_layers: must be a list of layer"
            + " indices, got " + listed);
      }
      java.util.Set<Integer> given = new java.util.TreeSet<>();
      listed.forEach(v -> given.add(v.asInt(-1)));
      java.util.Set<Integer> pattern = new java.util.TreeSet<>();
      for (int i = 0; i < layers; i++) {
        if (moe.isMoeLayer(i)) {
          pattern.add(i);
        }
      }
      if (!given.equals(pattern)) {
        throw new IllegalArgumentException(field + ".moe_layers: " + listed + " (read when they"
            + " are every " + step + "-th layer from " + (step - 1)
            + ", interleave_moe_layer_step " + step + ")");
      }
    }
    // Absent, the dense MLP is unused (every layer MoE, checked next): the class default.
    int dense = config.hasNonNull("intermediate_size_mlp")
        ? intField(field, config, "intermediate_size_mlp") : 16384;
    if (!config.hasNonNull("intermediate_size_mlp") && moe.moeLayers(layers) < layers) {
      throw new IllegalArgumentException(field + ".intermediate_size_mlp: missing required"
          + " field (the dense layers' MLP)");
    }
    JsonNode tied = outer.has("tie_word_embeddings") ? outer.get("tie_word_embeddings")
        : config.get("tie_word_embeddings");
    if (tied != null && !tied.isNull() && !tied.isBoolean()) {
      throw new IllegalArgumentException(outerField + ".tie_word_embeddings: must be true or"
          + " false, got " + tied);
    }
    String id = name != null ? name : outer.path("_name_or_path").asText("llama4");
    return new TransformerSpec(id.isBlank() ? "llama4" : id, layers, hidden, heads, kvHeads,
        dense, true, intField(field, config, "vocab_size"), seqLen,
        tied != null && tied.asBoolean(), headDim, moe, null,
        chunkedAttention(field, config, layers), 0);
  }

  /**
   * Gemma 2 and 3 ({@code Gemma2Config}, transformers {@code configuration_gemma2.py} @ 008e5743;
   * {@code Gemma3TextConfig}, {@code configuration_gemma3.py} @ 008f5c8c): the fields of
   * {@code text_config} for {@code Gemma3ForConditionalGeneration} (the SigLIP vision tower not
   * read), of the config for {@code Gemma2ForCausalLM} and {@code Gemma3ForCausalLM}.
   * <ul>
   *   <li>A gated MLP with a GELU ({@code hidden_activation} gelu_pytorch_tanh: gate, up and down
   *       projections, the shape of SwiGLU's).
   *   <li>Sliding windows of {@code sliding_window} tokens: by {@code layer_types} where given,
   *       else Gemma 2 alternates from a windowed first layer and Gemma 3 has one full layer in
   *       {@code sliding_window_pattern} (the classes' {@code layer_types} and
   *       {@code is_sliding} rules).
   *   <li>Defaults, the classes' own and only where they have one: {@code vocab_size} (Gemma 3
   *       262208), {@code head_dim} 256, {@code num_key_value_heads}, {@code sliding_window}
   *       4096, {@code sliding_window_pattern} 6, {@code tie_word_embeddings} true. Layers,
   *       hidden size, heads and the MLP size are required.
   *   <li>Neglected: the logit soft-capping and query scaling (no parameters, element-wise),
   *       the extra RMSNorm gains (four per layer, under 0.01 % of the parameters).
   * </ul>
   */
  private static TransformerSpec gemma(String outerField, JsonNode outer, String arch,
      String name, int seqLen) {
    boolean nested = arch.equals(GEMMA3);
    String field = nested ? outerField + ".text_config" : outerField;
    JsonNode config = nested ? textConfig(outerField, outer, arch) : outer;
    boolean three = !arch.equals(GEMMA2);
    String act = config.hasNonNull("hidden_activation")
        ? config.get("hidden_activation").asText() : config.path("hidden_act")
            .asText("gelu_pytorch_tanh");
    if (!act.equals("gelu_pytorch_tanh") && !act.equals("gelu")) {
      throw new IllegalArgumentException(field + ".hidden_activation: '" + act + "' (Gemma is"
          + " read with a gated GELU MLP, gelu_pytorch_tanh)");
    }
    int layers = intField(field, config, "num_hidden_layers");
    int heads = intField(field, config, "num_attention_heads");
    int kvHeads = config.hasNonNull("num_key_value_heads")
        ? intField(field, config, "num_key_value_heads") : three ? 4 : heads;
    int headDim = config.hasNonNull("head_dim") ? intField(field, config, "head_dim") : 256;
    int vocab = config.hasNonNull("vocab_size") ? intField(field, config, "vocab_size")
        : three ? 262_208 : 256_000;
    int window = config.hasNonNull("sliding_window") ? intField(field, config, "sliding_window")
        : 4096;
    int every = 2;
    if (three) {
      every = config.hasNonNull("sliding_window_pattern")
          ? intField(field, config, "sliding_window_pattern") : 6;
    }
    SlidingWindowSpec w = every == 1 ? null : new SlidingWindowSpec(window, every);
    JsonNode types = config.get("layer_types");
    if (types != null && !types.isNull()) {
      w = windowsOfLayerTypes(field, types, layers, window);
    }
    JsonNode tied = outer.has("tie_word_embeddings") ? outer.get("tie_word_embeddings")
        : config.get("tie_word_embeddings");
    if (tied != null && !tied.isNull() && !tied.isBoolean()) {
      throw new IllegalArgumentException(outerField + ".tie_word_embeddings: must be true or"
          + " false, got " + tied);
    }
    String id = name != null ? name : outer.path("_name_or_path").asText(three ? "gemma3"
        : "gemma2");
    return new TransformerSpec(id.isBlank() ? arch : id, layers,
        intField(field, config, "hidden_size"), heads, kvHeads,
        intField(field, config, "intermediate_size"), true, vocab, seqLen,
        tied == null || tied.isNull() || tied.asBoolean(), headDim, null, null, w, 0);
  }

  /**
   * Windows from {@code layer_types} ({@code sliding_attention} / {@code full_attention}),
   * read when full layers recur every n-th layer (null when every layer is full).
   */
  private static SlidingWindowSpec windowsOfLayerTypes(String field, JsonNode types, int layers,
      int window) {
    if (!types.isArray() || types.size() != layers) {
      throw new IllegalArgumentException(field + ".layer_types: must list num_hidden_layers "
          + layers + " entries, got " + types);
    }
    boolean[] windowed = new boolean[layers];
    for (int i = 0; i < layers; i++) {
      String t = types.get(i).asText();
      if (!t.equals("sliding_attention") && !t.equals("full_attention")) {
        throw new IllegalArgumentException(field + ".layer_types[" + i + "]: '" + t
            + "' (read: sliding_attention, full_attention)");
      }
      windowed[i] = t.equals("sliding_attention");
    }
    int every = fullAttentionEvery(windowed);
    SlidingWindowSpec w = every == 1 ? null : new SlidingWindowSpec(window, every);
    int broken = firstBreak(w, windowed);
    if (broken >= 0) {
      throw new IllegalArgumentException(field + ".layer_types[" + broken + "]: '"
          + types.get(broken).asText() + "' breaks the pattern of a full layer every " + every
          + " (read when full layers recur every n-th layer)");
    }
    return w;
  }

  /** Every how many layers one attends fully, counted from the first full one (0: none). */
  private static int fullAttentionEvery(boolean[] windowed) {
    for (int i = 0; i < windowed.length; i++) {
      if (!windowed[i]) {
        return i + 1;
      }
    }
    return 0;
  }

  /** The first layer whose kind {@code w} does not give (null: every layer full), or −1. */
  private static int firstBreak(SlidingWindowSpec w, boolean[] windowed) {
    for (int i = 0; i < windowed.length; i++) {
      if (windowed[i] != (w != null && w.windowed(i))) {
        return i;
      }
    }
    return -1;
  }

  /** A decoder's sizes: layers, hidden size, heads, KV heads and head size (0: hidden/heads). */
  private record Shape(int layers, int hidden, int heads, int kvHeads, int headDim) {}

  /**
   * The sizes of a SwiGLU decoder config ({@code hidden_act} silu, else an error naming what
   * reads it): {@code num_key_value_heads} absent is multi-head attention and {@code head_dim}
   * absent is hidden/heads, the configuration classes' defaults.
   */
  private static Shape swigluShape(String field, JsonNode config, String what) {
    String act = config.path("hidden_act").asText("silu");
    if (!act.equals("silu")) {
      throw new IllegalArgumentException(field + ".hidden_act: '" + act + "' (" + what
          + " is read with a SwiGLU MLP, hidden_act silu)");
    }
    int layers = intField(field, config, "num_hidden_layers");
    int hidden = intField(field, config, "hidden_size");
    int heads = intField(field, config, "num_attention_heads");
    return new Shape(layers, hidden, heads, config.hasNonNull("num_key_value_heads")
        ? intField(field, config, "num_key_value_heads") : heads,
        config.hasNonNull("head_dim") ? intField(field, config, "head_dim") : 0);
  }

  /** The language model of a multimodal config: its {@code text_config}, named in messages. */
  private static JsonNode textConfig(String field, JsonNode outer, String arch) {
    JsonNode config = outer.get("text_config");
    if (config == null || !config.isObject()) {
      throw new IllegalArgumentException(field + ".text_config: missing required field (the"
          + " language model of " + arch + ")");
    }
    return config;
  }

  /** Llama 4's chunked layers ({@link #llama4}); null when every layer attends fully. */
  private static SlidingWindowSpec chunkedAttention(String field, JsonNode config, int layers) {
    JsonNode chunk = config.get("attention_chunk_size");
    if (chunk == null || chunk.isNull()) {
      return null;
    }
    int tokens = intField(field, config, "attention_chunk_size");
    boolean[] chunked = new boolean[layers];
    JsonNode types = config.get("layer_types");
    JsonNode rope = config.get("no_rope_layers");
    String source;
    if (types != null && !types.isNull()) {
      source = "layer_types";
      if (!types.isArray() || types.size() != layers) {
        throw new IllegalArgumentException(field + ".layer_types: must list num_hidden_layers "
            + layers + " entries, got " + types);
      }
      for (int i = 0; i < layers; i++) {
        String t = types.get(i).asText();
        if (!t.equals("chunked_attention") && !t.equals("full_attention")) {
          throw new IllegalArgumentException(field + ".layer_types[" + i + "]: '" + t
              + "' (read: chunked_attention, full_attention)");
        }
        chunked[i] = t.equals("chunked_attention");
      }
    } else if (rope != null && !rope.isNull() && !(rope.isArray() && rope.isEmpty())) {
      source = "no_rope_layers";
      if (!rope.isArray() || rope.size() < layers) {
        throw new IllegalArgumentException(field + ".no_rope_layers: must list at least"
            + " num_hidden_layers " + layers + " entries, got " + rope);
      }
      for (int i = 0; i < layers; i++) {
        chunked[i] = rope.get(i).asInt() != 0;
      }
    } else {
      source = "no_rope_layer_interval";
      int interval = config.hasNonNull("no_rope_layer_interval")
          ? intField(field, config, "no_rope_layer_interval") : 4;
      for (int i = 0; i < layers; i++) {
        chunked[i] = (i + 1) % interval != 0;
      }
    }
    int every = fullAttentionEvery(chunked);
    if (every == 1) {
      throw new IllegalArgumentException(field + "." + source + ": layer 0 attends fully (read"
          + " when full layers recur every n-th layer, n > 1)");
    }
    SlidingWindowSpec w = new SlidingWindowSpec(tokens, every, true);
    int broken = firstBreak(w, chunked);
    if (broken >= 0) {
      throw new IllegalArgumentException(field + "." + source + ": layer " + broken + " breaks"
          + " the pattern of a full layer every " + every + " (read when full layers recur"
          + " every n-th layer)");
    }
    return w;
  }

  /**
   * The latent attention of a DeepSeek-V3 configuration ({@code DeepseekV3Config}):
   * {@code q_lora_rank} (null: an uncompressed query), {@code kv_lora_rank},
   * {@code qk_nope_head_dim}, {@code qk_rope_head_dim}, {@code v_head_dim}.
   */
  private static MlaSpec mla(String field, JsonNode config) {
    JsonNode q = config.get("q_lora_rank");
    return new MlaSpec(q == null || q.isNull() ? 0 : intField(field, config, "q_lora_rank"),
        intField(field, config, "kv_lora_rank"), intField(field, config, "qk_nope_head_dim"),
        intField(field, config, "qk_rope_head_dim"), intField(field, config, "v_head_dim"));
  }

  /**
   * The experts of a Mixtral ({@code MixtralConfig}: {@code num_local_experts},
   * {@code num_experts_per_tok}, every layer sparse, each expert of {@code intermediate_size})
   * or Qwen3-MoE configuration ({@code Qwen3MoeConfig}: {@code num_experts},
   * {@code num_experts_per_tok}, {@code moe_intermediate_size}; read when every layer is sparse,
   * {@code decoder_sparse_step} 1 and no {@code mlp_only_layers}); null for a dense one. Top-k is
   * never defaulted.
   */
  private static MoeSpec moe(String field, String arch, JsonNode config) {
    return switch (arch) {
      case "MixtralForCausalLM" -> new MoeSpec(intField(field, config, "num_local_experts"),
          intField(field, config, "num_experts_per_tok"),
          intField(field, config, "intermediate_size"), 0, 0, 0, 1, 0);
      case "Qwen3MoeForCausalLM" -> {
        if (config.hasNonNull("decoder_sparse_step")
            && intField(field, config, "decoder_sparse_step") != 1) {
          throw new IllegalArgumentException(field + ".decoder_sparse_step: "
              + config.get("decoder_sparse_step") + " (read with every layer sparse, 1)");
        }
        JsonNode dense = config.get("mlp_only_layers");
        if (dense != null && !(dense.isArray() && dense.isEmpty())) {
          throw new IllegalArgumentException(field + ".mlp_only_layers: " + dense + " (read"
              + " with every layer sparse, [])");
        }
        yield new MoeSpec(intField(field, config, "num_experts"),
            intField(field, config, "num_experts_per_tok"),
            intField(field, config, "moe_intermediate_size"), 0, 0, 0, 1, 0);
      }
      case GPT_OSS -> new MoeSpec(intField(field, config, "num_local_experts"),
          intField(field, config, "num_experts_per_tok"),
          intField(field, config, "intermediate_size"), 0, 0, 0, 1, 0);
      case DEEPSEEK_V3 -> {
        // DeepseekV3MoE: n_routed_experts of moe_intermediate_size, num_experts_per_tok routed
        // per token, one shared MLP of moe_intermediate_size · n_shared_experts (read as
        // n_shared_experts experts of moe_intermediate_size: the same weights and FLOPs); layer
        // i is MoE when i >= first_k_dense_replace and i % moe_layer_freq == 0.
        int freq = config.hasNonNull("moe_layer_freq")
            ? intField(field, config, "moe_layer_freq") : 1;
        int first = config.hasNonNull("first_k_dense_replace")
            ? nonNegative(field, config, "first_k_dense_replace") : 0;
        if (freq != 1 && first % freq != 0) {
          throw new IllegalArgumentException(field + ".moe_layer_freq: " + freq + " (read when"
              + " it divides first_k_dense_replace " + first + ")");
        }
        int shared = config.hasNonNull("n_shared_experts")
            ? nonNegative(field, config, "n_shared_experts") : 0;
        int expert = intField(field, config, "moe_intermediate_size");
        // Group-limited routing: n_group groups of experts, a token's from topk_group of them
        // (DeepSeek-V3's config: 8 and 4; absent or 1: no grouping).
        int groups = config.hasNonNull("n_group") ? intField(field, config, "n_group") : 1;
        int groupTopK = config.hasNonNull("topk_group")
            ? intField(field, config, "topk_group") : groups;
        yield new MoeSpec(intField(field, config, "n_routed_experts"),
            intField(field, config, "num_experts_per_tok"), expert, shared,
            shared > 0 ? expert : 0, first, freq, 0, groups, groupTopK);
      }
      default -> {
        for (String key : List.of("num_local_experts", "num_experts", "n_routed_experts")) {
          if (config.hasNonNull(key) && config.get(key).asInt(0) > 1) {
            throw new IllegalArgumentException(field + "." + key + ": " + config.get(key)
                + " (" + arch + " is read as a dense model)");
          }
        }
        yield null;
      }
    };
  }

  private static int nonNegative(String field, JsonNode config, String key) {
    JsonNode v = config.get(key);
    if (!v.canConvertToInt() || !v.isIntegralNumber() || v.asInt() < 0) {
      throw new IllegalArgumentException(field + "." + key + ": must be an integer >= 0, got "
          + v);
    }
    return v.asInt();
  }

  private static int intField(String field, JsonNode config, String key) {
    JsonNode v = config.get(key);
    if (v == null || v.isNull()) {
      throw new IllegalArgumentException(field + "." + key + ": missing required field");
    }
    if (!v.canConvertToInt() || !v.isIntegralNumber() || v.asInt() <= 0) {
      throw new IllegalArgumentException(field + "." + key + ": must be a positive integer, got "
          + v);
    }
    return v.asInt();
  }

  private static JsonNode parse(String json) {
    if (json == null) {
      throw new IllegalArgumentException("model.huggingFace: must be given");
    }
    try {
      return new ObjectMapper().readTree(json);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("model.huggingFace: not JSON ("
          + e.getOriginalMessage() + ")", e);
    }
  }
}
