package io.hyperframes.nd4j.train;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.nd4j.CausalAttention;
import io.hyperframes.nd4j.FusedDense;
import io.hyperframes.runtime.CheckpointFiles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * The small transformer's backward pass against central finite differences of its own loss, in
 * FP32; the BF16 loss against the FP32 loss of the same weights; and training that learns a
 * periodic sequence in both precisions.
 */
class FusedTransformerTest {

  @BeforeEach
  void needsOneDnn() {
    Assumptions.assumeTrue(CausalAttention.available(), "oneDNN did not load");
  }

  private static FusedTransformer.Config tiny(FusedDense.Precision precision) {
    return new FusedTransformer.Config(13, 2, 16, 2, 24, 8, precision, 1e-2, 7);
  }

  private static int[][] randomTokens(int batch, int length, int vocabulary, long seed) {
    Random random = new Random(seed);
    int[][] tokens = new int[batch][length];
    for (int[] row : tokens) {
      for (int i = 0; i < length; i++) {
        row[i] = random.nextInt(vocabulary);
      }
    }
    return tokens;
  }

  /**
   * Every parameter array's gradient, at its two largest entries and two drawn at random,
   * matches (L(θ + s) − L(θ − s)) / 2s with s = 1e-2 within 2 % of the entry plus 1e-3 of the
   * array's largest gradient. The weights are scaled up from GPT-2's 0.02 so that every path
   * carries gradient; FP32 rounding of the loss (about 1e-7) over 2s and the truncation error
   * (s² times the third derivative) stay well inside the bound.
   */
  @Test
  void gradientsAreTheFiniteDifferencesOfTheLoss() {
    FusedTransformer model = new FusedTransformer(tiny(FusedDense.Precision.FP32));
    model.parameters().forEach((name, p) -> {
      if (p.rank() == 2) {
        p.muli(8);
      }
    });
    int[][] tokens = randomTokens(2, 7, 13, 3);
    Map<String, INDArray> grads = model.gradients(tokens, new double[1]);
    assertEquals(model.parameters().keySet(), grads.keySet());
    Random random = new Random(11);
    double step = 1e-2;
    int checked = 0;
    for (Map.Entry<String, INDArray> e : model.parameters().entrySet()) {
      INDArray p = e.getValue();
      float[] g = grads.get(e.getKey()).data().asFloat();
      assertEquals(p.length(), g.length, e.getKey());
      int[] entries = {largest(g, -1), 0, random.nextInt(g.length), random.nextInt(g.length)};
      entries[1] = largest(g, entries[0]);
      double size = Math.abs(g[entries[0]]);
      assertTrue(size > 0, e.getKey() + ": no gradient at all");
      for (int i : entries) {
        float keep = p.getFloat(i);
        p.putScalar(i, keep + step);
        double up = model.loss(tokens);
        p.putScalar(i, keep - step);
        double down = model.loss(tokens);
        p.putScalar(i, keep);
        double numeric = (up - down) / (2 * step);
        assertEquals(numeric, g[i], 0.02 * Math.abs(numeric) + 1e-3 * size,
            e.getKey() + "[" + i + "]");
        checked++;
      }
    }
    assertEquals(4 * model.parameters().size(), checked);
  }

  private static int largest(float[] g, int except) {
    int best = except == 0 ? 1 : 0;
    for (int i = 0; i < g.length; i++) {
      if (i != except && Math.abs(g[i]) > Math.abs(g[best])) {
        best = i;
      }
    }
    return best;
  }

  /**
   * With the same weights, the BF16 model's loss is the FP32 model's within 1 %: BF16 rounds
   * every product's operands (u = 2⁻⁸), and the loss averages the resulting logit errors.
   */
  @Test
  void bf16LossIsTheFp32LossWithinOnePercent() {
    int[][] tokens = randomTokens(3, 9, 13, 5);
    double fp32 = new FusedTransformer(tiny(FusedDense.Precision.FP32)).loss(tokens);
    double bf16 = new FusedTransformer(tiny(FusedDense.Precision.BF16)).loss(tokens);
    assertEquals(Math.log(13), fp32, 0.1, "a fresh model guesses nearly uniformly");
    assertEquals(fp32, bf16, 0.01 * fp32);
  }

  /** A sequence of period 5 is learned: the loss falls below a fifth of its start in 60 steps. */
  @ParameterizedTest
  @EnumSource(FusedDense.Precision.class)
  void learnsAPeriodicSequence(FusedDense.Precision precision) {
    FusedTransformer model = new FusedTransformer(tiny(precision));
    int[] period = {3, 11, 0, 7, 5};
    int[][] tokens = new int[4][9];
    for (int b = 0; b < 4; b++) {
      for (int i = 0; i < 9; i++) {
        tokens[b][i] = period[(b + i) % 5];
      }
    }
    double first = model.fit(tokens, null);
    double last = first;
    for (int step = 0; step < 60; step++) {
      last = model.fit(tokens, null);
    }
    assertTrue(last < first / 5, precision + ": loss " + first + " then " + last);
  }

  /**
   * Decoding token by token with the KV cache gives, at every position, the next-token
   * distribution of the full forward pass over the same prefix: within 1e-4 in FP32 (the same
   * arithmetic in another order); within 2⁻⁵ in BF16, where the full pass rounds the attention
   * probabilities to BF16 and the cache does not. A reset starts the same sequence again.
   */
  @ParameterizedTest
  @EnumSource(FusedDense.Precision.class)
  void decodingIsTheFullForwardPass(FusedDense.Precision precision) {
    FusedTransformer model = new FusedTransformer(tiny(precision));
    model.parameters().forEach((name, p) -> {
      if (p.rank() == 2) {
        p.muli(8);
      }
    });
    int[] sequence = randomTokens(1, 8, 13, 9)[0];
    float[] full = model.probabilities(sequence);
    FusedTransformer.Decoder decoder = model.decoder(8);
    double bound = precision == FusedDense.Precision.FP32 ? 1e-4 : 0x1p-5;
    float[] first = null;
    for (int i = 0; i < sequence.length; i++) {
      INDArray logits = decoder.next(sequence[i]);
      float[] p = softmax(logits.data().asFloat());
      if (i == 0) {
        first = p;
      }
      for (int c = 0; c < 13; c++) {
        assertEquals(full[i * 13 + c], p[c], bound, "position " + i + ", token " + c);
      }
    }
    assertEquals(8, decoder.length());
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> decoder.next(1));
    assertEquals("decoder full: 8 tokens (its capacity)", e.getMessage());
    decoder.reset();
    float[] again = softmax(decoder.next(sequence[0]).data().asFloat());
    for (int c = 0; c < 13; c++) {
      assertEquals(first[c], again[c], 0f, "after reset, token " + c);
    }
    assertThrows(IllegalArgumentException.class, () -> decoder.next(13));
    assertThrows(IllegalArgumentException.class, () -> model.decoder(9));
    // Greedy decoding's step picks the token of the largest logit that next returns.
    FusedTransformer.Decoder greedy = model.decoder(8);
    decoder.reset();
    for (int i = 0; i < sequence.length; i++) {
      float[] z = decoder.next(sequence[i]).data().asFloat();
      int best = 0;
      for (int c = 1; c < z.length; c++) {
        best = z[c] > z[best] ? c : best;
      }
      assertEquals(best, greedy.nextGreedy(sequence[i]), "greedy token at position " + i);
    }
    assertThrows(IllegalStateException.class, () -> greedy.nextGreedy(1));
  }

  /**
   * The decoder's Java garbage per token does not grow with the model's width: its row loops
   * work in kept arrays, so a model eight times as wide (hidden 512, SwiGLU 1536, as
   * {@code bench transformer}'s) allocates per token within 4 KB of what the narrow one does
   * (before they were kept, the wide one made about 180 KB of row arrays a token more). What is
   * left is per call (buffer wrappers, oneDNN operands): the bound on it, 16 KB a layer, keeps it
   * from creeping back.
   */
  @Test
  void decodingAllocatesNoRowsPerToken() {
    Assumptions.assumeTrue(java.lang.management.ManagementFactory.getThreadMXBean()
        instanceof com.sun.management.ThreadMXBean, "this JVM does not count allocated bytes");
    double narrow = bytesPerToken(64, 192);
    double wide = bytesPerToken(512, 1536);
    assertTrue(wide - narrow < 4096, "wide " + wide + " B against narrow " + narrow
        + " B a token");
    assertTrue(wide < 2 * 16384, "wide " + wide + " B a token over two layers");
  }

  private static double bytesPerToken(int hidden, int feedForward) {
    FusedTransformer model = new FusedTransformer(new FusedTransformer.Config(256, 2, hidden, 8,
        feedForward, 64, FusedDense.Precision.BF16, 1e-3, 7));
    FusedTransformer.Decoder decoder = model.decoder(64);
    var threads = (com.sun.management.ThreadMXBean)
        java.lang.management.ManagementFactory.getThreadMXBean();
    long id = Thread.currentThread().getId();
    int token = 65;
    for (int i = 0; i < 2000; i++) {
      if (decoder.length() == 64) {
        decoder.reset();
      }
      token = decoder.nextGreedy(token);
    }
    int tokens = 500;
    long before = threads.getThreadAllocatedBytes(id);
    for (int i = 0; i < tokens; i++) {
      if (decoder.length() == 64) {
        decoder.reset();
      }
      token = decoder.nextGreedy(token);
    }
    return (threads.getThreadAllocatedBytes(id) - before) / (double) tokens;
  }

  private static float[] softmax(float[] z) {
    double max = Double.NEGATIVE_INFINITY;
    for (float v : z) {
      max = Math.max(max, v);
    }
    double sum = 0;
    for (float v : z) {
      sum += Math.exp(v - max);
    }
    float[] p = new float[z.length];
    for (int i = 0; i < z.length; i++) {
      p[i] = (float) (Math.exp(z[i] - max) / sum);
    }
    return p;
  }

  /**
   * A checkpoint written after three steps and restored into a fresh model continues training
   * exactly: the next two losses are those of the model that went on, to the bit. A checkpoint of
   * another shape, a file cut short and a file that is no checkpoint are refused by name.
   */
  @Test
  void aRestoredCheckpointContinuesTrainingExactly(@TempDir Path dir) throws Exception {
    int[][][] batches = new int[5][][];
    for (int i = 0; i < 5; i++) {
      batches[i] = randomTokens(2, 9, 13, 100 + i);
    }
    FusedTransformer model = new FusedTransformer(tiny(FusedDense.Precision.BF16));
    for (int i = 0; i < 3; i++) {
      model.fit(batches[i], null);
    }
    Path file;
    try (CheckpointFiles files = new CheckpointFiles(dir, 2,
        FusedTransformer.CHECKPOINT_EXTENSION)) {
      file = model.checkpoint(files, 3).get();
    }
    double[] went = {model.fit(batches[3], null), model.fit(batches[4], null)};
    FusedTransformer fresh = new FusedTransformer(new FusedTransformer.Config(13, 2, 16, 2, 24,
        8, FusedDense.Precision.BF16, 1e-2, 99));
    fresh.restore(file);
    assertEquals(went[0], fresh.fit(batches[3], null), 0.0);
    assertEquals(went[1], fresh.fit(batches[4], null), 0.0);

    FusedTransformer other = new FusedTransformer(new FusedTransformer.Config(13, 2, 16, 2, 32,
        8, FusedDense.Precision.BF16, 1e-2, 7));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> other.restore(file));
    assertTrue(e.getMessage().contains("has feedForward 24, this model 32"), e.getMessage());
    byte[] bytes = Files.readAllBytes(file);
    Path cut = dir.resolve("cut.hftf");
    Files.write(cut, java.util.Arrays.copyOf(bytes, bytes.length / 2));
    double before = fresh.loss(batches[0]);
    e = assertThrows(IllegalArgumentException.class, () -> fresh.restore(cut));
    assertTrue(e.getMessage().endsWith("cut.hftf is cut short"), e.getMessage());
    assertEquals(before, fresh.loss(batches[0]), 0.0, "a refused checkpoint changes nothing");
    Path text = dir.resolve("text.hftf");
    Files.writeString(text, "not a checkpoint at all");
    e = assertThrows(IllegalArgumentException.class, () -> fresh.restore(text));
    assertTrue(e.getMessage().contains("is not a FusedTransformer checkpoint"), e.getMessage());
  }

  @Test
  void badInputNamesTheField() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> new FusedTransformer.Config(13, 2, 18, 4, 24, 8, FusedDense.Precision.FP32, 1e-2,
            7));
    assertTrue(e.getMessage().startsWith("heads: hidden 18 / heads 4"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class,
        () -> new FusedTransformer.Config(0, 2, 16, 2, 24, 8, FusedDense.Precision.FP32, 1e-2,
            7));
    assertTrue(e.getMessage().startsWith("vocabulary: must be >= 1, got 0"), e.getMessage());
    FusedTransformer model = new FusedTransformer(tiny(FusedDense.Precision.FP32));
    e = assertThrows(IllegalArgumentException.class,
        () -> model.loss(new int[][] {{1, 2, 3}, {1, 13, 2}}));
    assertTrue(e.getMessage().startsWith("tokens[1][1]: 13 is outside the vocabulary [0, 13)"),
        e.getMessage());
    e = assertThrows(IllegalArgumentException.class,
        () -> model.loss(new int[][] {{1, 2, 3}, {1, 2}}));
    assertTrue(e.getMessage().startsWith("tokens[1]: every sequence needs 3 tokens"),
        e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> model.loss(new int[][] {new int[10]}));
    assertTrue(e.getMessage().startsWith("tokens[0]: needs 2 to 9 tokens"), e.getMessage());
  }
}
