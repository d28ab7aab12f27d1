package io.hyperframes.nd4j.train;

import static io.hyperframes.nd4j.train.FusedTransformer.name;
import static io.hyperframes.nd4j.train.FusedTransformer.product;

import io.hyperframes.nd4j.CausalAttention;
import io.hyperframes.nd4j.RmsNorm;
import io.hyperframes.nd4j.SwiGlu;
import java.nio.FloatBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.indexing.INDArrayIndex;
import org.nd4j.linalg.indexing.NDArrayIndex;

/**
 * One forward pass of a {@link FusedTransformer} over a batch, with what its backward pass
 * needs: each block's saved arrays and attention statistics, the softmax of the logits and the
 * loss. {@link #backward()} returns the gradient of every parameter, by name. The arrays live in
 * the caller's workspace: a pass is used within the step that made it.
 */
final class TransformerPass {
  private final FusedTransformer model;

  /** What one block's forward pass keeps for its backward pass. */
  static final class Block {
    INDArray input;
    RmsNorm.Forward attentionNorm;
    /** The QKV product after rotary embeddings, in the products' type. */
    INDArray qkv;
    CausalAttention.Forward[] heads;
    INDArray attention;
    INDArray middle;
    RmsNorm.Forward mlpNorm;
    INDArray gateUp;
    SwiGlu.Forward swiglu;
    INDArray activation;
  }

  final int batch;
  final int length;
  final int rows;
  final int[] inputs;
  final int[] targets;
  final Map<String, INDArray> weights = new LinkedHashMap<>();
  final List<Block> blocks = new ArrayList<>();
  INDArray last;
  RmsNorm.Forward finalNorm;
  /** The softmax of the logits, row-major [rows, vocabulary]. */
  float[] probabilities;
  double loss;

  TransformerPass(FusedTransformer model, int[][] tokens) {
    this.model = model;
    if (tokens == null || tokens.length == 0) {
      throw new IllegalArgumentException("tokens: need at least one sequence");
    }
    batch = tokens.length;
    length = check(tokens);
    rows = batch * length;
    inputs = new int[rows];
    targets = new int[rows];
    for (int b = 0; b < batch; b++) {
      System.arraycopy(tokens[b], 0, inputs, b * length, length);
      System.arraycopy(tokens[b], 1, targets, b * length, length);
    }
    weights.putAll(model.productWeights());
    forward();
  }

  private int check(int[][] tokens) {
    int t = tokens[0] == null ? 0 : tokens[0].length - 1;
    if (t < 1 || t > model.config().sequence()) {
      throw new IllegalArgumentException("tokens[0]: needs 2 to " + (model.config().sequence() + 1)
          + " tokens (T inputs and the next), got " + (tokens[0] == null ? 0
          : tokens[0].length));
    }
    for (int b = 0; b < tokens.length; b++) {
      if (tokens[b] == null || tokens[b].length != t + 1) {
        throw new IllegalArgumentException("tokens[" + b + "]: every sequence needs " + (t + 1)
            + " tokens, as the first");
      }
      for (int i = 0; i < tokens[b].length; i++) {
        if (tokens[b][i] < 0 || tokens[b][i] >= model.config().vocabulary()) {
          throw new IllegalArgumentException("tokens[" + b + "][" + i + "]: " + tokens[b][i]
              + " is outside the vocabulary [0, " + model.config().vocabulary() + ")");
        }
      }
    }
    return t;
  }

  private INDArrayIndex sequence(int b) {
    return NDArrayIndex.interval((long) b * length, (long) (b + 1) * length);
  }

  private INDArrayIndex columns(long from, long count) {
    return NDArrayIndex.interval(from, from + count);
  }

  private void forward() {
    int h = model.config().hidden();
    int d = model.config().headDim();
    double scale = 1 / Math.sqrt(d);
    INDArray x = model.parameters().get("embedding").getRows(inputs);
    for (int l = 0; l < model.config().layers(); l++) {
      Block k = new Block();
      k.input = x;
      k.attentionNorm = model.norm.forward(x, model.parameters().get(name(l, "attentionNorm")),
          model.computeType());
      k.qkv = product(k.attentionNorm.out(), false, weights.get(name(l, "qkv")), false);
      k.heads = new CausalAttention.Forward[batch * model.config().heads()];
      k.attention = Nd4j.createUninitialized(DataType.FLOAT, rows, h);
      for (int b = 0; b < batch; b++) {
        model.rotary.rotate(k.qkv.get(sequence(b), columns(0, 2L * h)), 0);
      }
      // One conversion of the whole product; each head reads its columns in place.
      k.qkv = model.compute(k.qkv);
      List<Consumer<CausalAttention>> heads = new ArrayList<>();
      for (int b = 0; b < batch; b++) {
        for (int head = 0; head < model.config().heads(); head++) {
          // Each head writes its output into its own columns of the layer's.
          int item = b * model.config().heads() + head;
          INDArray q = slice(k.qkv, b, head * d);
          INDArray key = slice(k.qkv, b, h + head * d);
          INDArray value = slice(k.qkv, b, 2 * h + head * d);
          INDArray out = k.attention.get(sequence(b), columns(head * d, d));
          heads.add(a -> k.heads[item] = a.forward(q, key, value, scale, out));
        }
      }
      model.runHeads(heads);
      k.attention = model.compute(k.attention);
      k.middle = product(k.attention, false, weights.get(name(l, "output")), false).addi(x);
      k.mlpNorm = model.norm.forward(k.middle, model.parameters().get(name(l, "mlpNorm")),
          model.computeType());
      k.gateUp = product(k.mlpNorm.out(), false, weights.get(name(l, "gateUp")), false);
      k.swiglu = SwiGlu.forwardTraining(k.gateUp, model.computeType());
        k.activation = k.swiglu.out();
      x = product(k.activation, false, weights.get(name(l, "down")), false).addi(k.middle);
      blocks.add(k);
    }
    last = x;
    finalNorm = model.norm.forward(x, model.parameters().get("finalNorm"), model.computeType());
    INDArray logits = product(finalNorm.out(), false, weights.get("head"), false);
    loss = softmaxCrossEntropy(logits);
  }

  /** Head {@code column / d} of sequence {@code b}'s rows: a view (rows 3h apart). */
  private INDArray slice(INDArray qkv, int b, long column) {
    return qkv.get(sequence(b), columns(column, model.config().headDim()));
  }

  /**
   * The softmax of each row of the logits, kept as {@link #probabilities}, and the mean
   * cross-entropy of the targets (log-sum-exp from each row's maximum, in FP64).
   */
  private double softmaxCrossEntropy(INDArray logits) {
    int v = model.config().vocabulary();
    float[] z = model.rowScratch(rows * v);
    FusedAdam.buffer(logits).get(0, z, 0, rows * v);
    double total = 0;
    for (int r = 0; r < rows; r++) {
      int row = r * v;
      float max = Float.NEGATIVE_INFINITY;
      for (int i = 0; i < v; i++) {
        max = Math.max(max, z[row + i]);
      }
      double target = z[row + targets[r]];
      // One exponential per logit: e = exp(z − max), kept, then scaled by 1 / Σe.
      double sum = 0;
      for (int i = 0; i < v; i++) {
        double e = Math.exp(z[row + i] - max);
        sum += e;
        z[row + i] = (float) e;
      }
      total += max + Math.log(sum) - target;
      float inv = (float) (1 / sum);
      for (int i = 0; i < v; i++) {
        z[row + i] *= inv;
      }
    }
    probabilities = z;
    return total / rows;
  }

  Map<String, INDArray> backward() {
    int h = model.config().hidden();
    int d = model.config().headDim();
    double scale = 1 / Math.sqrt(d);
    Map<String, INDArray> grads = new LinkedHashMap<>();
    // d loss / d logits = (softmax − one-hot) / rows.
    int v = model.config().vocabulary();
    // In place: the probabilities are not read after this.
    float[] grad = probabilities;
    probabilities = null;
    for (int r = 0; r < rows; r++) {
      grad[r * v + targets[r]] -= 1f;
    }
    int n = rows * v;
    for (int i = 0; i < n; i++) {
      grad[i] /= rows;
    }
    INDArray dLogits32 = Nd4j.createUninitialized(DataType.FLOAT, rows, v);
    FusedAdam.buffer(dLogits32).put(0, grad, 0, n);
    INDArray dLogits = model.compute(dLogits32);
    grads.put("head", product(finalNorm.out(), true, dLogits, false));
    RmsNorm.Gradients fn = model.norm.backward(product(dLogits, false, weights.get("head"), true),
        last, model.parameters().get("finalNorm"), finalNorm);
    grads.put("finalNorm", fn.dGain());
    INDArray dx = fn.dx();
    for (int l = model.config().layers() - 1; l >= 0; l--) {
      Block k = blocks.get(l);
      INDArray dz = model.compute(dx);
      grads.put(name(l, "down"), product(k.activation, true, dz, false));
      INDArray dGateUp = SwiGlu.backward(product(dz, false, weights.get(name(l, "down")), true),
            k.gateUp, k.swiglu, model.computeType());
      grads.put(name(l, "gateUp"), product(k.mlpNorm.out(), true, dGateUp, false));
      RmsNorm.Gradients mn = model.norm.backward(
          product(dGateUp, false, weights.get(name(l, "gateUp")), true), k.middle,
          model.parameters().get(name(l, "mlpNorm")), k.mlpNorm);
      grads.put(name(l, "mlpNorm"), mn.dGain());
      INDArray dMiddle = mn.dx().addi(dx);
      INDArray dy = model.compute(dMiddle);
      grads.put(name(l, "output"), product(k.attention, true, dy, false));
      INDArray dAttention = product(dy, false, weights.get(name(l, "output")), true);
      INDArray dQkv = Nd4j.createUninitialized(DataType.FLOAT, rows, 3L * h);
      List<Consumer<CausalAttention>> heads = new ArrayList<>();
      for (int b = 0; b < batch; b++) {
        for (int head = 0; head < model.config().heads(); head++) {
          // Each head's gradients go straight into their columns of dQkv.
          INDArray q = slice(k.qkv, b, head * d);
          INDArray key = slice(k.qkv, b, h + head * d);
          INDArray value = slice(k.qkv, b, 2 * h + head * d);
          CausalAttention.Forward forward = k.heads[b * model.config().heads() + head];
          INDArray dOut = dAttention.get(sequence(b), columns(head * d, d));
          INDArray dq = dQkv.get(sequence(b), columns(head * d, d));
          INDArray dk = dQkv.get(sequence(b), columns(h + head * d, d));
          INDArray dv = dQkv.get(sequence(b), columns(2 * h + head * d, d));
          heads.add(a -> a.backward(q, key, value, forward, dOut, scale, dq, dk, dv));
        }
      }
      model.runHeads(heads);
      for (int b = 0; b < batch; b++) {
        model.rotary.rotateBack(dQkv.get(sequence(b), columns(0, 2L * h)), 0);
      }
      INDArray dq = model.compute(dQkv);
      grads.put(name(l, "qkv"), product(k.attentionNorm.out(), true, dq, false));
      RmsNorm.Gradients an = model.norm.backward(
          product(dq, false, weights.get(name(l, "qkv")), true), k.input,
          model.parameters().get(name(l, "attentionNorm")), k.attentionNorm);
      grads.put(name(l, "attentionNorm"), an.dGain());
      dx = an.dx().addi(dMiddle);
    }
    FloatBuffer dxs = FusedAdam.buffer(dx);
    float[] dEmbedding = new float[v * h];
    float[] row = new float[h];
    for (int r = 0; r < rows; r++) {
      dxs.get(r * h, row, 0, h);
      int at = inputs[r] * h;
      for (int i = 0; i < h; i++) {
        dEmbedding[at + i] += row[i];
      }
    }
    grads.put("embedding", Nd4j.createFromArray(dEmbedding).reshape(v, h));
    Map<String, INDArray> ordered = new LinkedHashMap<>();
    model.parameters().keySet().forEach(name -> ordered.put(name, reshaped(grads.get(name),
        model.parameters().get(name))));
    return ordered;
  }

  private INDArray reshaped(INDArray grad, INDArray like) {
    if (java.util.Arrays.equals(grad.shape(), like.shape()) && !grad.isView()
        && grad.ordering() == 'c') {
      return grad;
    }
    INDArray g = grad.reshape(like.shape());
    return g.isView() || g.ordering() != 'c' ? g.dup('c') : g;
  }
}
