package io.hyperframes.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.hyperframes.json.Json;
import io.hyperframes.nd4j.CausalAttention;
import io.hyperframes.nd4j.FusedDense;
import io.hyperframes.nd4j.KernelComparison;
import io.hyperframes.nd4j.train.FusedTransformer;
import io.hyperframes.runtime.BenchmarkRecord;
import io.hyperframes.stat.Quantile;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.function.IntSupplier;
import java.util.function.IntUnaryOperator;
import java.util.function.ToDoubleFunction;
import org.nd4j.linalg.api.ndarray.INDArray;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code hyperframes bench transformer}: a small GPT in HyperFrames and in DJL on PyTorch. */
@Command(name = "transformer", mixinStandardHelpOptions = true,
    description = "Train and decode the same small byte-level GPT (Llama form) with the"
        + " HyperFrames fused kernels and in DJL on PyTorch, from the same initial weights on"
        + " the same batches of a text file, in one run: training samples/s, the loss on a"
        + " held-out batch after the steps, decode latency per token at batch 1 with a KV"
        + " cache (p50, p99), and the ratios.")
final class BenchTransformerCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Option(names = "--layers", defaultValue = "6", description = "Blocks (default 6).")
  int layers;

  @Option(names = "--hidden", defaultValue = "512", description = "Model width (default 512).")
  int hidden;

  @Option(names = "--heads", defaultValue = "8", description = "Attention heads (default 8).")
  int heads;

  @Option(names = "--ffn", defaultValue = "1536",
      description = "SwiGLU width (default 1536, 3 × hidden).")
  int ffn;

  @Option(names = "--sequence", defaultValue = "512",
      description = "Tokens per training sequence (default 512).")
  int sequence;

  @Option(names = "--batch", defaultValue = "4", description = "Sequences a step (default 4).")
  int batch;

  @Option(names = "--steps", defaultValue = "10",
      description = "Timed training steps, after the warm-up steps (default 10).")
  int steps;

  @Option(names = "--warm-up-steps", defaultValue = "3", paramLabel = "N",
      description = "Untimed training steps before the timed ones, the same on both sides"
          + " (default 3: on 2 cores the JIT compiler still takes a core from the first steps,"
          + " docs/performance.md).")
  int warmUpSteps;

  @Option(names = "--decode-tokens", defaultValue = "128",
      description = "Tokens decoded one at a time and timed each, after a warm-up of at least 200"
          + " until the JIT is quiet for a second (default 128; also the decoder's length).")
  int decodeTokens;

  @Option(names = "--learning-rate", defaultValue = "1e-3",
      description = "Adam's step size on both sides (default 1e-3).")
  double learningRate;

  /** The HyperFrames side's products (DJL's PyTorch CPU engine trains in FP32). */
  @Mixin PrecisionOption precision;

  @Option(names = "--corpus", defaultValue = "docs/user-guide.md", paramLabel = "FILE",
      description = "Text whose bytes are the tokens (default docs/user-guide.md of this"
          + " repository).")
  Path corpus;

  @Option(names = "--seed", defaultValue = "42", description = "Weights and batches (default 42).")
  long seed;

  @Option(names = "--djl", negatable = true, defaultValue = "true", fallbackValue = "true",
      description = "Also run DJL on PyTorch (default on).")
  boolean djl;

  @Mixin FormatOption format;

  @Mixin RecordOption record;

  /** One side's measurements. */
  private record Side(double samplesPerSecond, double initialLoss, double loss,
      double[] stepSeconds, double[] decodeSeconds) {}

  @Override
  public Integer call() throws IOException {
    FusedTransformer.Config config = config();
    if (!CausalAttention.available()) {
      spec.commandLine().getErr().println("bench transformer: oneDNN did not load, and the"
          + " attention needs it");
      return 1;
    }
    byte[] text = corpus();
    Random random = new Random(seed);
    int[][][] batches = new int[warmUpSteps + steps][][];
    for (int s = 0; s < batches.length; s++) {
      batches[s] = windows(text, random);
    }
    int[][] heldOut = windows(text, random);
    FusedTransformer model = new FusedTransformer(config);
    ObjectNode root = Json.mapper().createObjectNode();
    // DJL starts from these weights; its engine is loaded only after the HyperFrames side has
    // run, so that neither side's threads share the cores with the other's.
    Map<String, INDArray> initial = new LinkedHashMap<>();
    model.parameters().forEach((name, p) -> initial.put(name, p.dup('c')));
    Side hf = measure(batches, heldOut, tokens -> model.fit(tokens, null), model::loss,
        decoder(model));
    root.set("hyperframes", side(hf));
    Map<String, Side> sides = new LinkedHashMap<>();
    sides.put("hyperframes", hf);
    if (djl) {
      Side d;
      try (DjlGpt twin = new DjlGpt(config, initial);
          DjlGpt.Decoder dec = twin.decoder(decodeTokens)) {
        d = measure(batches, heldOut, twin::fit, twin::evaluate,
            cycling(dec::next, dec::length, dec::reset));
      }
      root.set("djlPytorch", side(d));
      sides.put("djlPytorch", d);
      root.put("djlSpeedup", hf.samplesPerSecond() / d.samplesPerSecond());
      root.put("lossDifference", hf.loss() / d.loss() - 1);
      root.put("djlP50Ratio", percentile(hf.decodeSeconds(), 0.5)
          / percentile(d.decodeSeconds(), 0.5));
      root.put("djlP99Ratio", percentile(hf.decodeSeconds(), 0.99)
          / percentile(d.decodeSeconds(), 0.99));
    }
    if (record.wanted()) {
      Map<String, BenchmarkRecord.Metric> metrics = new LinkedHashMap<>();
      sides.forEach((name, side) -> {
        metrics.put(name + ".stepSeconds", RecordOption.seconds(side.stepSeconds()));
        metrics.put(name + ".decodeSeconds", RecordOption.seconds(side.decodeSeconds()));
      });
      record.write(Map.of("layers", "" + layers, "hidden", "" + hidden, "heads", "" + heads,
          "ffn", "" + ffn, "sequence", "" + sequence, "batch", "" + batch, "steps", "" + steps,
          "warmUpSteps", "" + warmUpSteps,
          "precision", precision.name(), "corpus", corpus.toString()), metrics);
    }
    ObjectNode m = root.putObject("model");
    m.put("layers", layers);
    m.put("hidden", hidden);
    m.put("heads", heads);
    m.put("feedForward", ffn);
    m.put("sequence", sequence);
    m.put("vocabulary", 256);
    m.put("parameters", model.parameterCount());
    root.put("precision", precision.name());
    root.put("precisionRequested", precision.requested());
    root.put("batch", batch);
    root.put("steps", steps);
    root.put("warmUpSteps", warmUpSteps);
    root.put("learningRate", learningRate);
    root.put("corpus", corpus.toString());
    root.put("corpusBytes", text.length);
    limit(root);
    root.set("machine", BenchKernelsCommand.machine());
    var out = spec.commandLine().getOut();
    if (format.json()) {
      out.println(Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(root));
    } else {
      out.print(table(root));
    }
    out.flush();
    return 0;
  }

  private FusedTransformer.Config config() {
    FusedDense.Precision p = precision.resolved();
    atLeastOne("--batch", batch);
    atLeastOne("--steps", steps);
    if (warmUpSteps < 0) {
      throw new ParameterException(spec.commandLine(), "--warm-up-steps: must be >= 0, got "
          + warmUpSteps);
    }
    atLeastOne("--decode-tokens", decodeTokens);
    if (decodeTokens > sequence) {
      throw new ParameterException(spec.commandLine(), "--decode-tokens: " + decodeTokens
          + " is more than --sequence " + sequence + " (the positions the model covers)");
    }
    try {
      return new FusedTransformer.Config(256, layers, hidden, heads, ffn, sequence, p,
          learningRate, seed);
    } catch (IllegalArgumentException e) {
      throw new ParameterException(spec.commandLine(), "--" + option(e.getMessage()) + ": "
          + e.getMessage());
    }
  }

  private void atLeastOne(String option, int value) {
    if (value < 1) {
      throw new ParameterException(spec.commandLine(), option + ": must be >= 1, got " + value);
    }
  }

  /** The option behind a configuration component named first in {@code message}. */
  private static String option(String message) {
    String component = message.substring(0, Math.max(0, message.indexOf(':')));
    return switch (component) {
      case "feedForward" -> "ffn";
      case "learningRate" -> "learning-rate";
      default -> component;
    };
  }

  private byte[] corpus() throws IOException {
    byte[] text;
    try {
      text = Files.readAllBytes(corpus);
    } catch (NoSuchFileException e) {
      throw new ParameterException(spec.commandLine(), "--corpus: no file " + corpus);
    }
    if (text.length < sequence + 2) {
      throw new ParameterException(spec.commandLine(), "--corpus: " + corpus + " has "
          + text.length + " bytes, fewer than --sequence + 2 (" + (sequence + 2) + ")");
    }
    return text;
  }

  /** {@code batch} windows of sequence + 1 bytes at random offsets. */
  private int[][] windows(byte[] text, Random random) {
    int[][] rows = new int[batch][sequence + 1];
    for (int[] row : rows) {
      int at = random.nextInt(text.length - sequence);
      for (int i = 0; i <= sequence; i++) {
        row[i] = text[at + i] & 0xFF;
      }
    }
    return rows;
  }

  /** Greedy decoding with {@code model}'s decoder: the most likely next token. */
  private IntUnaryOperator decoder(FusedTransformer model) {
    FusedTransformer.Decoder d = model.decoder(decodeTokens);
    return cycling(d::nextGreedy, d::length, d::reset);
  }

  /** {@code next}, starting the decoder over once it holds {@code decodeTokens} tokens. */
  private IntUnaryOperator cycling(IntUnaryOperator next, IntSupplier length, Runnable reset) {
    return token -> {
      int chosen = next.applyAsInt(token);
      if (length.getAsInt() == decodeTokens) {
        reset.run();
      }
      return chosen;
    };
  }

  /**
   * Loss on the held-out batch, {@code warmUpSteps} untimed steps, {@code steps} timed ones,
   * the held-out loss again; then greedy decoding from the corpus's first byte (the decoder starting over every
   * {@code decodeTokens} tokens): warm-up calls by {@link TrainBench#latencySamples}'s rule, then
   * {@code decodeTokens} timed ones.
   */
  private Side measure(int[][][] batches, int[][] heldOut, ToDoubleFunction<int[][]> step,
      ToDoubleFunction<int[][]> loss, IntUnaryOperator decode) {
    double initial = loss.applyAsDouble(heldOut);
    for (int s = 0; s < warmUpSteps; s++) {
      step.applyAsDouble(batches[s]);
    }
    double[] stepSeconds = new double[steps];
    for (int s = 0; s < steps; s++) {
      long t0 = System.nanoTime();
      step.applyAsDouble(batches[warmUpSteps + s]);
      stepSeconds[s] = (System.nanoTime() - t0) / 1e9;
    }
    double seconds = Arrays.stream(stepSeconds).sum();
    double after = loss.applyAsDouble(heldOut);
    // Warm-up as bench infer's: at least 200 tokens and until the JIT has compiled nothing for a
    // second, so that no compiler thread takes a core inside the timed tokens.
    int[] token = {batches[0][0][0]};
    double[] times = TrainBench.latencySamples(() -> token[0] = decode.applyAsInt(token[0]),
        decodeTokens);
    return new Side((double) steps * batch / seconds, initial, after, stepSeconds, times);
  }

  private static double percentile(double[] values, double q) {
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    return Quantile.ofSorted(sorted, q, Quantile.Definition.LINEAR);
  }

  private static ObjectNode side(Side s) {
    ObjectNode o = Json.mapper().createObjectNode();
    o.put("samplesPerSecond", s.samplesPerSecond());
    o.put("initialLoss", s.initialLoss());
    o.put("loss", s.loss());
    ArrayNode steps = o.putArray("stepSeconds");
    for (double t : s.stepSeconds()) {
      steps.add(t);
    }
    ObjectNode d = o.putObject("decode");
    d.put("tokens", s.decodeSeconds().length);
    d.put("p50Seconds", percentile(s.decodeSeconds(), 0.5));
    d.put("p99Seconds", percentile(s.decodeSeconds(), 0.99));
    return o;
  }

  /**
   * Training against this machine's own limit: {@code flopsPerSample}, 6 × the weights of the
   * products (embedding lookups excluded) × the sequence plus the causal attention products
   * (forward 2·T²·hidden a layer, backward twice that), the GFLOP/s of each side, and the matmul
   * 1024³ of the HyperFrames side's format measured now (oneDNN) with the fractions of it.
   */
  private void limit(ObjectNode root) {
    double weights = (double) layers * (4.0 * hidden * hidden + 3.0 * hidden * ffn)
        + 256.0 * hidden;
    double flops = 6 * weights * sequence + 6.0 * layers * sequence * (double) sequence * hidden;
    double limit = new KernelComparison(1.0, 5).matmulGflops(
        PrecisionOption.matmulType(precision.resolved()), 1024, 1024, 1024);
    ObjectNode o = root.putObject("limit");
    o.put("flopsPerSample", flops);
    o.put("matmulLimitGflops", limit);
    for (String side : new String[] {"hyperframes", "djlPytorch"}) {
      if (root.has(side)) {
        double g = root.get(side).get("samplesPerSecond").asDouble() * flops / 1e9;
        ((ObjectNode) root.get(side)).put("gflopsPerSecond", g);
        ((ObjectNode) root.get(side)).put("fractionOfLimit", g / limit);
      }
    }
  }

  private static String table(JsonNode root) {
    StringBuilder b = new StringBuilder();
    JsonNode m = root.get("model");
    b.append(String.format(Locale.ROOT, "GPT %d layers, hidden %d, %d heads, SwiGLU %d, sequence"
        + " %d, %d parameters; batch %d, %d steps, %s%n", m.get("layers").asInt(),
        m.get("hidden").asInt(), m.get("heads").asInt(), m.get("feedForward").asInt(),
        m.get("sequence").asInt(), m.get("parameters").asLong(), root.get("batch").asInt(),
        root.get("steps").asInt(), root.get("precision").asText()));
    b.append(String.format(Locale.ROOT, "%-13s %10s %8s %10s %11s %11s %9s%n", "", "samples/s",
        "GFLOP/s", "loss", "decode p50", "decode p99", "of limit"));
    for (String side : new String[] {"hyperframes", "djlPytorch"}) {
      if (root.has(side)) {
        JsonNode s = root.get(side);
        b.append(String.format(Locale.ROOT, "%-13s %10.2f %8.1f %4.3f→%4.3f %8.2f ms %8.2f ms"
            + " %8.1f%%%n", side.equals("hyperframes") ? "HyperFrames" : "DJL PyTorch",
            s.get("samplesPerSecond").asDouble(), s.get("gflopsPerSecond").asDouble(),
            s.get("initialLoss").asDouble(), s.get("loss").asDouble(),
            1e3 * s.get("decode").get("p50Seconds").asDouble(),
            1e3 * s.get("decode").get("p99Seconds").asDouble(),
            100 * s.get("fractionOfLimit").asDouble()));
      }
    }
    b.append(String.format(Locale.ROOT, "matmul 1024^3 now: %.1f GFLOP/s%n",
        root.get("limit").get("matmulLimitGflops").asDouble()));
    if (root.has("djlSpeedup")) {
      b.append(String.format(Locale.ROOT, "training ×%.2f DJL; loss %+.2f %% of DJL's; decode p50"
          + " ×%.2f, p99 ×%.2f of DJL's%n", root.get("djlSpeedup").asDouble(),
          100 * root.get("lossDifference").asDouble(), root.get("djlP50Ratio").asDouble(),
          root.get("djlP99Ratio").asDouble()));
    }
    return b.toString();
  }
}
