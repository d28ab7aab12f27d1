package io.hyperframes.cli;

import ai.djl.engine.Engine;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDArrays;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.index.NDIndex;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import ai.djl.ndarray.types.SparseFormat;
import ai.djl.nn.Activation;
import ai.djl.training.GradientCollector;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.training.tracker.Tracker;
import io.hyperframes.nd4j.train.FusedTransformer;
import java.util.LinkedHashMap;
import java.util.Map;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * The benchmark transformer written as a JVM user writes it in DJL 0.36 on PyTorch 2.7.1 (CPU):
 * the same Llama-form model as {@link FusedTransformer} (RMSNorm, fused QKV product, rotary
 * embeddings by "rotate half", causal softmax attention with a mask, SwiGLU, untied head), built
 * from DJL's NDArray operations, trained with DJL's autograd ({@link GradientCollector}) and
 * DJL's Adam, FP32 throughout (PyTorch's CPU engine trains in FP32). It starts from a copy of the
 * HyperFrames model's initial weights, so both sides compute the same function and see the same batches:
 * their losses differ only by arithmetic. Decoding keeps a preallocated KV cache per layer,
 * written in place.
 */
final class DjlGpt implements AutoCloseable {

  private final FusedTransformer.Config config;
  private final NDManager manager;
  private final Map<String, NDArray> parameters = new LinkedHashMap<>();
  private final Optimizer adam;
  private final NDArray cos;
  private final NDArray sin;
  private final NDArray mask;

  /**
   * The model of {@code config} with a copy of {@code weights} (the HyperFrames model's
   * parameters by name) on DJL's PyTorch engine (offline).
   */
  DjlGpt(FusedTransformer.Config config, Map<String, INDArray> weights) {
    System.setProperty("ai.djl.offline", "true");
    this.config = config;
    this.manager = NDManager.newBaseManager("PyTorch");
    weights.forEach((name, p) -> {
      NDArray a = manager.create(p.dup('c').data().asFloat(), new Shape(p.shape()));
      a.setRequiresGradient(true);
      parameters.put(name, a);
    });
    adam = Optimizer.adam().optLearningRateTracker(Tracker.fixed((float) config.learningRate()))
        .build();
    int t = config.sequence();
    int d = config.headDim();
    float[] c = new float[t * d];
    float[] s = new float[t * d];
    for (int p = 0; p < t; p++) {
      for (int i = 0; i < d / 2; i++) {
        double angle = p * Math.pow(10_000, -2.0 * i / d);
        c[p * d + i] = c[p * d + i + d / 2] = (float) Math.cos(angle);
        s[p * d + i] = s[p * d + i + d / 2] = (float) Math.sin(angle);
      }
    }
    cos = manager.create(c, new Shape(t, d));
    sin = manager.create(s, new Shape(t, d));
    float[] m = new float[t * t];
    for (int i = 0; i < t; i++) {
      for (int j = i + 1; j < t; j++) {
        m[i * t + j] = Float.NEGATIVE_INFINITY;
      }
    }
    mask = manager.create(m, new Shape(t, t));
  }

  /** One training step on B sequences of T + 1 tokens; the mean cross-entropy before it. */
  double fit(int[][] tokens) {
    try (NDManager step = manager.newSubManager();
        GradientCollector collector = Engine.getInstance().newGradientCollector()) {
      NDArray loss = loss(step, tokens);
      collector.backward(loss);
      double value = loss.getFloat();
      for (Map.Entry<String, NDArray> e : parameters.entrySet()) {
        try (NDArray grad = e.getValue().getGradient()) {
          adam.update(e.getKey(), e.getValue(), grad);
          grad.subi(grad);
        }
      }
      return value;
    }
  }

  /** The mean cross-entropy of each next token, without training. */
  double evaluate(int[][] tokens) {
    try (NDManager step = manager.newSubManager()) {
      return loss(step, tokens).getFloat();
    }
  }

  private NDArray loss(NDManager step, int[][] tokens) {
    int batch = tokens.length;
    int t = tokens[0].length - 1;
    long[] in = new long[batch * t];
    long[] out = new long[batch * t];
    for (int b = 0; b < batch; b++) {
      for (int i = 0; i < t; i++) {
        in[b * t + i] = tokens[b][i];
        out[b * t + i] = tokens[b][i + 1];
      }
    }
    NDArray inputs = step.create(in, new Shape(batch, t));
    NDArray targets = step.create(out, new Shape(batch, t, 1));
    NDArray x = inputs.getNDArrayInternal().embedding(inputs, p("embedding"),
        SparseFormat.DENSE).singletonOrThrow();
    int h = config.hidden();
    int heads = config.heads();
    int d = config.headDim();
    NDArray c = cos.get("0:" + t);
    NDArray s = sin.get("0:" + t);
    NDArray causal = mask.get("0:" + t + ", 0:" + t);
    for (int l = 0; l < config.layers(); l++) {
      NDArray qkv = rms(x, p(l, "attentionNorm")).matMul(p(l, "qkv"));
      NDArray q = rope(heads(qkv, 0, batch, t), c, s);
      NDArray k = rope(heads(qkv, h, batch, t), c, s);
      NDArray v = heads(qkv, 2 * h, batch, t);
      NDArray scores = q.matMul(k.transpose(0, 1, 3, 2)).mul(1 / Math.sqrt(d)).add(causal);
      NDArray o = scores.softmax(-1).matMul(v).transpose(0, 2, 1, 3).reshape(batch, t, h);
      x = x.add(o.matMul(p(l, "output")));
      x = x.add(mlp(x, l));
    }
    NDArray logits = rms(x, p("finalNorm")).matMul(p("head"));
    NDArray loss = logits.logSoftmax(-1).gather(targets, -1).mean().neg();
    loss.attach(step);
    return loss;
  }

  /** Layer {@code l}'s feed-forward branch: RMSNorm, gate-and-up product, SwiGLU, down. */
  private NDArray mlp(NDArray x, int l) {
    int f = config.feedForward();
    NDArray gateUp = rms(x, p(l, "mlpNorm")).matMul(p(l, "gateUp"));
    NDArray a = gateUp.get("..., 0:" + f);
    return a.mul(Activation.sigmoid(a)).mul(gateUp.get("..., " + f + ":")).matMul(p(l, "down"));
  }

  /** Columns [from, from + h) of a [B, T, 3h] product as heads [B, H, T, d]. */
  private NDArray heads(NDArray qkv, int from, int batch, int t) {
    return qkv.get("..., " + from + ":" + (from + config.hidden()))
        .reshape(batch, t, config.heads(), config.headDim()).transpose(0, 2, 1, 3);
  }

  private NDArray rms(NDArray x, NDArray gain) {
    return x.mul(x.square().mean(new int[] {-1}, true).add(1e-5).pow(-0.5)).mul(gain);
  }

  /** x·cos + rotate_half(x)·sin over the last axis. */
  private NDArray rope(NDArray x, NDArray c, NDArray s) {
    int half = config.headDim() / 2;
    NDArray rotated = NDArrays.concat(new NDList(x.get("..., " + half + ":").neg(),
        x.get("..., 0:" + half)), -1);
    return x.mul(c).add(rotated.mul(s));
  }

  private NDArray p(String name) {
    return parameters.get(name);
  }

  private NDArray p(int layer, String part) {
    return parameters.get("layer" + layer + "." + part);
  }

  /** A decoder of one sequence at batch 1 with KV caches of {@code capacity} positions. */
  Decoder decoder(int capacity) {
    return new Decoder(capacity);
  }

  /** Greedy decoding, one token a call, against preallocated caches written in place. */
  final class Decoder implements AutoCloseable {
    private final NDManager caches = manager.newSubManager();
    private final NDArray[] keys = new NDArray[config.layers()];
    private final NDArray[] values = new NDArray[config.layers()];
    private int length;

    Decoder(int capacity) {
      for (int l = 0; l < keys.length; l++) {
        keys[l] = caches.zeros(new Shape(config.heads(), capacity, config.headDim()));
        values[l] = caches.zeros(new Shape(config.heads(), capacity, config.headDim()));
      }
    }

    /** Tokens fed since the last reset. */
    int length() {
      return length;
    }

    /** Starts a new sequence (the caches are overwritten from position 0). */
    void reset() {
      length = 0;
    }

    /** Feeds {@code token}; the most likely next token. */
    int next(int token) {
      int h = config.hidden();
      int heads = config.heads();
      int d = config.headDim();
      int pos = length;
      try (NDManager call = manager.newSubManager()) {
        NDArray x = p("embedding").get(token).reshape(1, h);
        x.attach(call);
        NDArray c = cos.get(pos);
        NDArray s = sin.get(pos);
        c.attach(call);
        s.attach(call);
        for (int l = 0; l < keys.length; l++) {
          NDArray qkv = rms(x, p(l, "attentionNorm")).matMul(p(l, "qkv"));
          NDArray q = rope(qkv.get("..., 0:" + h).reshape(heads, 1, d), c, s);
          NDArray k = rope(qkv.get("..., " + h + ":" + 2 * h).reshape(heads, 1, d), c, s);
          NDArray v = qkv.get("..., " + 2 * h + ":").reshape(heads, 1, d);
          keys[l].set(new NDIndex(":, {}:{}, :", pos, pos + 1), k);
          values[l].set(new NDIndex(":, {}:{}, :", pos, pos + 1), v);
          NDArray kk = keys[l].get(new NDIndex(":, 0:{}, :", pos + 1));
          NDArray vv = values[l].get(new NDIndex(":, 0:{}, :", pos + 1));
          kk.attach(call);
          vv.attach(call);
          NDArray o = q.matMul(kk.transpose(0, 2, 1)).mul(1 / Math.sqrt(d)).softmax(-1)
              .matMul(vv).reshape(1, h);
          x = x.add(o.matMul(p(l, "output")));
          x = x.add(mlp(x, l));
        }
        length = pos + 1;
        return (int) rms(x, p("finalNorm")).matMul(p("head")).argMax(-1).getLong();
      }
    }

    @Override
    public void close() {
      caches.close();
    }
  }

  @Override
  public void close() {
    manager.close();
  }
}
