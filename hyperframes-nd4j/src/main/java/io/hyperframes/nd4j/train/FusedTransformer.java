package io.hyperframes.nd4j.train;

import com.google.common.util.concurrent.ThreadFactoryBuilder;
import io.hyperframes.nd4j.Activation;
import io.hyperframes.nd4j.CausalAttention;
import io.hyperframes.nd4j.FusedDense;
import io.hyperframes.nd4j.Kernels;
import io.hyperframes.nd4j.KvCache;
import io.hyperframes.nd4j.Matmul;
import io.hyperframes.nd4j.RmsNorm;
import io.hyperframes.nd4j.Rotary;
import io.hyperframes.nd4j.SwiGlu;
import io.hyperframes.runtime.CheckpointFiles;
import io.hyperframes.runtime.StepMeter;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.FloatBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.memory.MemoryWorkspace;
import org.nd4j.linalg.api.memory.conf.WorkspaceConfiguration;
import org.nd4j.linalg.api.memory.enums.AllocationPolicy;
import org.nd4j.linalg.api.memory.enums.LearningPolicy;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.indexing.NDArrayIndex;

/**
 * A small decoder-only language model of the Llama form, trained in plain ND4J code with the
 * fused kernels: token embedding; {@code layers} pre-norm blocks of RMSNorm, a fused QKV product,
 * rotary embeddings on queries and keys, tiled causal attention ({@link CausalAttention}), an
 * output projection and a residual, then RMSNorm, a fused gate-and-up product, {@link SwiGlu}, a
 * down projection and a residual; a final RMSNorm, an untied output head and the mean
 * cross-entropy of each next token. No biases. Initialisation as GPT-2 (Radford et al. 2019,
 * §2.3): weights N(0, 0.02²), the two projections into the residual stream scaled by 1/√(2·layers),
 * gains 1. Adam ({@link FusedAdam}) on FP32 master weights.
 *
 * <p>With {@link FusedDense.Precision#BF16} every product takes BF16 operands with FP32
 * accumulation (the normalised activations, the SwiGLU output and the gradients entering a
 * product are rounded to BF16 once, the weights once a step); the residual stream, the
 * statistics, the attention output and every gradient are FP32. With FP32 everything is FP32.
 *
 * <p>A batch is B sequences of T + 1 tokens (T ≤ {@code sequence}): the first T are the input,
 * the last T the targets, and every sequence starts at position 0. Needs oneDNN (the attention
 * runs there: {@link CausalAttention#available()}). Not thread-safe: call it from one thread at
 * a time. Inside a call, a layer's attention heads run on that thread and on daemon helper
 * threads of the model's own, one per further core, which end after a minute idle.
 */
public final class FusedTransformer {

  /**
   * The model's shape and training settings.
   *
   * @param vocabulary tokens (256 for bytes)
   * @param layers transformer blocks
   * @param hidden width of the residual stream, a multiple of {@code heads}
   * @param heads attention heads; hidden / heads is even (rotary embeddings rotate pairs)
   * @param feedForward width of the SwiGLU layer
   * @param sequence the longest input, in tokens
   * @param precision of the products
   * @param learningRate Adam's step size
   * @param seed of the initial weights
   */
  public record Config(int vocabulary, int layers, int hidden, int heads, int feedForward,
      int sequence, FusedDense.Precision precision, double learningRate, long seed) {
    /** Checks every component, naming the one out of range. */
    public Config {
      positive("vocabulary", vocabulary);
      positive("layers", layers);
      positive("hidden", hidden);
      positive("heads", heads);
      positive("feedForward", feedForward);
      positive("sequence", sequence);
      if (hidden % heads != 0 || (hidden / heads) % 2 != 0) {
        throw new IllegalArgumentException("heads: hidden " + hidden + " / heads " + heads
            + " must be a whole, even head size");
      }
      if (precision == null) {
        throw new IllegalArgumentException("precision: must be given");
      }
      if (!(learningRate > 0) || !Double.isFinite(learningRate)) {
        throw new IllegalArgumentException("learningRate: must be finite and > 0, got "
            + learningRate);
      }
    }

    private static void positive(String name, int value) {
      if (value < 1) {
        throw new IllegalArgumentException(name + ": must be >= 1, got " + value);
      }
    }

    /** Columns of one head. */
    public int headDim() {
      return hidden / heads;
    }
  }

  /** RMSNorm's ε (Llama's). */
  static final double EPSILON = 1e-5;
  /** Rotary embeddings' frequency base (RoFormer's and Llama 2's). */
  static final double ROTARY_BASE = 10_000;

  private final Config config;
  private final boolean bf16;
  final RmsNorm norm = new RmsNorm(EPSILON);
  final Rotary rotary;
  /**
   * Attention kernels, one per thread that runs heads: index 0 the caller's, the others
   * {@link #helpers}'. The heads of a layer are independent, and on 2 cores one head per core,
   * each with its oneDNN calls on its own thread ({@link Kernels#onThisThreadOnly}), beat every
   * head on both cores: a head's products are too small to split, and its Java passes run on one
   * core while the other waits (docs/performance.md).
   */
  private final List<CausalAttention> attentions = new ArrayList<>();
  /** Threads beside the caller's that run attention heads: daemons, ended after a minute idle. */
  private final ThreadPoolExecutor helpers;
  /** Every parameter by name, in a fixed order: FP32, dense. */
  private final Map<String, INDArray> parameters = new LinkedHashMap<>();
  private final Map<String, FusedAdam> updaters = new LinkedHashMap<>();

  /** A model of {@code config}'s shape with fresh weights. */
  public FusedTransformer(Config config) {
    if (config == null) {
      throw new IllegalArgumentException("config: must be given");
    }
    if (!CausalAttention.available()) {
      throw new IllegalStateException("FusedTransformer needs oneDNN for its attention");
    }
    this.config = config;
    this.bf16 = config.precision() == FusedDense.Precision.BF16;
    this.rotary = new Rotary(config.headDim(), config.sequence(), ROTARY_BASE);
    int threads = Math.max(1, Runtime.getRuntime().availableProcessors());
    for (int t = 0; t < threads; t++) {
      attentions.add(new CausalAttention());
    }
    this.helpers = new ThreadPoolExecutor(Math.max(1, threads - 1), Math.max(1, threads - 1), 60,
        TimeUnit.SECONDS, new LinkedBlockingQueue<>(), new ThreadFactoryBuilder().setDaemon(true)
            .setNameFormat("hyperframes-attention-%d").build());
    helpers.allowCoreThreadTimeOut(true);
    Nd4j.getRandom().setSeed(config.seed());
    int h = config.hidden();
    int f = config.feedForward();
    double residual = 0.02 / Math.sqrt(2.0 * config.layers());
    add("embedding", normal(config.vocabulary(), h, 0.02));
    for (int l = 0; l < config.layers(); l++) {
      add(name(l, "attentionNorm"), Nd4j.ones(DataType.FLOAT, h));
      add(name(l, "qkv"), normal(h, 3 * h, 0.02));
      add(name(l, "output"), normal(h, h, residual));
      add(name(l, "mlpNorm"), Nd4j.ones(DataType.FLOAT, h));
      add(name(l, "gateUp"), normal(h, 2 * f, 0.02));
      add(name(l, "down"), normal(f, h, residual));
    }
    add("finalNorm", Nd4j.ones(DataType.FLOAT, h));
    add("head", normal(h, config.vocabulary(), 0.02));
  }

  /** The shape and settings. */
  public Config config() {
    return config;
  }

  /** Parameters in all. */
  public long parameterCount() {
    return parameters.values().stream().mapToLong(INDArray::length).sum();
  }

  /** The parameters by name (FP32, read-only view of the map; the arrays are the model's). */
  public Map<String, INDArray> parameters() {
    return Collections.unmodifiableMap(parameters);
  }

  /**
   * One training step: forward, backward and Adam on every parameter; returns the mean
   * cross-entropy before the update. The optional {@code meter} step is marked when forward and
   * backward are done.
   *
   * @param tokens B sequences of T + 1 token ids each, 1 ≤ T ≤ {@code sequence}
   * @throws IllegalArgumentException naming the sequence and position of a bad token or length
   */
  public double fit(int[][] tokens, StepMeter.Step meter) {
    MemoryWorkspace ws = workspace("hyperframes-fused-transformer-fit");
    try {
      TransformerPass pass = new TransformerPass(this, tokens);
      Map<String, INDArray> grads = pass.backward();
      if (meter != null) {
        meter.computeDone();
      }
      grads.forEach((name, g) -> updaters.get(name).update(g));
      return pass.loss;
    } finally {
      ws.close();
    }
  }

  /** The mean cross-entropy of each next token, without training. */
  public double loss(int[][] tokens) {
    MemoryWorkspace ws = workspace("hyperframes-fused-transformer-loss");
    try {
      return new TransformerPass(this, tokens).loss;
    } finally {
      ws.close();
    }
  }

  /**
   * The step's arrays live in a workspace reused from step to step (ND4J learns its size in the
   * first): allocating and freeing them natively each step took as long as the products. A
   * training step and a loss evaluation have workspaces of their own: with one, a loss
   * evaluated first set the size, and every training step's backward spilled into fresh native
   * memory.
   */
  private static MemoryWorkspace workspace(String id) {
    return Nd4j.getWorkspaceManager().getAndActivateWorkspace(WORKSPACE, id);
  }

  private static final WorkspaceConfiguration WORKSPACE = WorkspaceConfiguration.builder()
      .policyAllocation(AllocationPolicy.STRICT).policyLearning(LearningPolicy.FIRST_LOOP)
      .build();

  /**
   * Writes a checkpoint of the model and its optimizer (every parameter's FP32 values and Adam
   * moments, Adam's step count, the shape) through {@code files}: the state is copied now, the
   * file written on the checkpoint thread and made visible atomically ({@link CheckpointFiles}).
   * {@link #restore} continues training exactly where this left it.
   *
   * @return the checkpoint's final path once written
   */
  public Future<Path> checkpoint(CheckpointFiles files, long step) {
    if (files == null) {
      throw new IllegalArgumentException("files: must be given");
    }
    Map<String, FusedAdam.State> states = new LinkedHashMap<>();
    updaters.forEach((name, adam) -> states.put(name, adam.state()));
    return files.submit(step, file -> {
      try (DataOutputStream out = new DataOutputStream(new BufferedOutputStream(
          Files.newOutputStream(file), 1 << 20))) {
        out.writeInt(MAGIC);
        out.writeInt(FORMAT);
        for (int v : shape(config)) {
          out.writeInt(v);
        }
        out.writeInt(states.size());
        for (Map.Entry<String, FusedAdam.State> e : states.entrySet()) {
          FusedAdam.State st = e.getValue();
          out.writeUTF(e.getKey());
          out.writeLong(st.steps());
          out.writeInt(st.values().length);
          for (float[] a : new float[][] {st.values(), st.first(), st.second()}) {
            ByteBuffer bytes = ByteBuffer.allocate(4 * a.length);
            bytes.asFloatBuffer().put(a);
            out.write(bytes.array());
          }
        }
      }
    });
  }

  /** Extension of the checkpoint files ({@code checkpoint-STEP.hftf}). */
  public static final String CHECKPOINT_EXTENSION = "hftf";

  private static final int MAGIC = 0x48465446;
  private static final int FORMAT = 1;
  private static final String[] SHAPE = {"vocabulary", "layers", "hidden", "heads",
      "feedForward", "sequence"};

  private static int[] shape(Config c) {
    return new int[] {c.vocabulary(), c.layers(), c.hidden(), c.heads(), c.feedForward(),
        c.sequence()};
  }

  /**
   * Takes the parameters and optimizer state of a checkpoint that {@link #checkpoint} wrote for
   * a model of this shape (the precision, learning rate and seed may differ).
   *
   * @throws IllegalArgumentException naming the file and what does not fit: not a checkpoint,
   *     another shape, a parameter missing or of another length, or the file cut short; the
   *     model is unchanged then
   */
  public void restore(Path checkpoint) {
    if (checkpoint == null) {
      throw new IllegalArgumentException("checkpoint: must be given");
    }
    Map<String, FusedAdam.State> states = new LinkedHashMap<>();
    try (DataInputStream in = new DataInputStream(new BufferedInputStream(
        Files.newInputStream(checkpoint), 1 << 20))) {
      if (in.readInt() != MAGIC || in.readInt() != FORMAT) {
        throw new IllegalArgumentException("checkpoint: " + checkpoint
            + " is not a FusedTransformer checkpoint (format " + FORMAT + ")");
      }
      int[] mine = shape(config);
      for (int i = 0; i < mine.length; i++) {
        int theirs = in.readInt();
        if (theirs != mine[i]) {
          throw new IllegalArgumentException("checkpoint: " + checkpoint + " has " + SHAPE[i]
              + " " + theirs + ", this model " + mine[i]);
        }
      }
      int count = in.readInt();
      if (count != parameters.size()) {
        throw new IllegalArgumentException("checkpoint: " + checkpoint + " has " + count
            + " parameters, this model " + parameters.size());
      }
      for (int i = 0; i < count; i++) {
        String name = in.readUTF();
        long steps = in.readLong();
        int length = in.readInt();
        INDArray p = parameters.get(name);
        if (p == null || p.length() != length || steps < 0) {
          throw new IllegalArgumentException("checkpoint: " + checkpoint + " has parameter "
              + name + " of " + length + " values, which this model "
              + (p == null ? "does not have" : "holds as " + p.length()));
        }
        float[][] arrays = new float[3][length];
        byte[] bytes = new byte[4 * length];
        for (float[] a : arrays) {
          in.readFully(bytes);
          ByteBuffer.wrap(bytes).asFloatBuffer().get(a);
        }
        states.put(name, new FusedAdam.State(arrays[0], arrays[1], arrays[2], steps));
      }
    } catch (EOFException e) {
      throw new IllegalArgumentException("checkpoint: " + checkpoint + " is cut short", e);
    } catch (IOException e) {
      throw new IllegalArgumentException("checkpoint: cannot read " + checkpoint + ": " + e, e);
    }
    states.forEach((name, st) -> updaters.get(name).restore(st));
  }

  /**
   * A decoder of one sequence at batch 1 with a KV cache of {@code capacity} positions
   * (≤ {@code sequence}), over the weights as they are now: every buffer, the cache and (in BF16)
   * the weights' BF16 copies are allocated here, and no array per token.
   */
  public Decoder decoder(int capacity) {
    if (capacity < 1 || capacity > config.sequence()) {
      throw new IllegalArgumentException("capacity: must be in [1, " + config.sequence()
          + "] (the sequence the rotary tables cover), got " + capacity);
    }
    return new Decoder(capacity);
  }

  /** One block's weights as the decoder multiplies them, and its norms' gains. */
  private record Block(INDArray attentionNorm, INDArray qkv, INDArray output, INDArray mlpNorm,
      INDArray gateUp, INDArray down) {}

  /**
   * Decoding of one sequence, one token at a time: each {@link #next} runs the token through
   * every block against the keys and values of the tokens before it ({@link KvCache}) and gives
   * the logits of the token after it. The logits equal those of the full forward pass over the
   * same prefix ({@code FusedTransformerTest}). Not thread-safe; weights changed after the
   * decoder was made are not seen in BF16 (its BF16 copies are made once).
   */
  public final class Decoder {
    private final KvCache[] caches;
    private final Block[] blocks;
    private final INDArray finalNorm;
    private final INDArray head;
    private final FloatBuffer embedding;
    private final INDArray x;
    private final FloatBuffer xs;
    private final FloatBuffer projectedFloats;
    private final FloatBuffer logitFloats;
    private final INDArray normed;
    private final INDArray inverseRms;
    private final INDArray qkv;
    private final INDArray queriesAndKeys;
    private final INDArray attended;
    private final INDArray projected;
    private final INDArray gateUp;
    private final INDArray activation;
    private final INDArray logits;
    private final double scale = 1 / Math.sqrt(config.headDim());

    private Decoder(int capacity) {
      int h = config.hidden();
      DataType type = computeType();
      caches = new KvCache[config.layers()];
      for (int l = 0; l < caches.length; l++) {
        caches[l] = new KvCache(config.heads(), config.headDim(), capacity);
      }
      Map<String, INDArray> weights = productWeights();
      blocks = new Block[config.layers()];
      for (int l = 0; l < blocks.length; l++) {
        blocks[l] = new Block(parameters.get(name(l, "attentionNorm")),
            weights.get(name(l, "qkv")), weights.get(name(l, "output")),
            parameters.get(name(l, "mlpNorm")), weights.get(name(l, "gateUp")),
            weights.get(name(l, "down")));
      }
      finalNorm = parameters.get("finalNorm");
      head = weights.get("head");
      embedding = FusedAdam.buffer(parameters.get("embedding"));
      x = Nd4j.create(DataType.FLOAT, 1, h);
      xs = FusedAdam.buffer(x);
      normed = Nd4j.create(type, 1, h);
      inverseRms = Nd4j.create(DataType.FLOAT, 1);
      qkv = Nd4j.create(DataType.FLOAT, 1, 3L * h);
      queriesAndKeys = qkv.get(NDArrayIndex.all(), NDArrayIndex.interval(0, 2L * h));
      attended = Nd4j.create(type, 1, h);
      projected = Nd4j.create(DataType.FLOAT, 1, h);
      gateUp = Nd4j.create(DataType.FLOAT, 1, 2L * config.feedForward());
      activation = Nd4j.create(type, 1, config.feedForward());
      logits = Nd4j.create(DataType.FLOAT, 1, config.vocabulary());
      projectedFloats = FusedAdam.buffer(projected);
      logitFloats = FusedAdam.buffer(logits);
    }

    /** Tokens fed since the last {@link #reset}. */
    public int length() {
      return caches[0].length();
    }

    /** Starts a new sequence. */
    public void reset() {
      for (KvCache c : caches) {
        c.clear();
      }
    }

    /**
     * Feeds {@code token} at the next position and returns the logits of the token after it,
     * FP32 [1, vocabulary]: a buffer the next call overwrites.
     *
     * @throws IllegalArgumentException when the token is outside the vocabulary
     * @throws IllegalStateException when the cache is full
     */
    public INDArray next(int token) {
      if (token < 0 || token >= config.vocabulary()) {
        throw new IllegalArgumentException("token: " + token + " is outside the vocabulary [0, "
            + config.vocabulary() + ")");
      }
      int position = length();
      if (position == caches[0].capacity()) {
        throw new IllegalStateException("decoder full: " + position + " tokens (its capacity)");
      }
      int h = config.hidden();
      for (int i = 0; i < h; i++) {
        xs.put(i, embedding.get(token * h + i));
      }
      for (int l = 0; l < caches.length; l++) {
        Block b = blocks[l];
        norm.forward(x, b.attentionNorm(), normed, inverseRms);
        Matmul.gemm(normed, false, b.qkv(), false, qkv, 1f, 0f);
        rotary.rotate(queriesAndKeys, position);
        caches[l].append(qkv, attended, scale);
        Matmul.gemm(attended, false, b.output(), false, projected, 1f, 0f);
        addProjected(h);
        norm.forward(x, b.mlpNorm(), normed, inverseRms);
        Matmul.gemm(normed, false, b.gateUp(), false, gateUp, 1f, 0f);
        SwiGlu.forward(gateUp, activation);
        Matmul.gemm(activation, false, b.down(), false, projected, 1f, 0f);
        addProjected(h);
      }
      norm.forward(x, finalNorm, normed, inverseRms);
      Matmul.gemm(normed, false, head, false, logits, 1f, 0f);
      return logits;
    }

    /**
     * Greedy decoding's step: feeds {@code token} as {@link #next} does and returns the most
     * likely token after it (the first of equal logits), read from the logits in place.
     *
     * @throws IllegalArgumentException when the token is outside the vocabulary
     * @throws IllegalStateException when the cache is full
     */
    public int nextGreedy(int token) {
      next(token);
      int best = 0;
      for (int i = 1; i < config.vocabulary(); i++) {
        if (logitFloats.get(i) > logitFloats.get(best)) {
          best = i;
        }
      }
      return best;
    }

    /** The residual: x += projected, on their native rows. */
    private void addProjected(int h) {
      for (int i = 0; i < h; i++) {
        xs.put(i, xs.get(i) + projectedFloats.get(i));
      }
    }
  }

  /**
   * The softmax of the logits of every position of one sequence, from the full forward pass,
   * row-major [T, vocabulary] (for tests).
   */
  float[] probabilities(int[] sequence) {
    int[] withNext = java.util.Arrays.copyOf(sequence, sequence.length + 1);
    return new TransformerPass(this, new int[][] {withNext}).probabilities;
  }

  /** The loss and the gradient of every parameter, by name (for tests). */
  Map<String, INDArray> gradients(int[][] tokens, double[] loss) {
    TransformerPass pass = new TransformerPass(this, tokens);
    loss[0] = pass.loss;
    return pass.backward();
  }

  // -------------------------------------------------------------------------------------------

  private void add(String name, INDArray value) {
    parameters.put(name, value);
    updaters.put(name, FusedAdam.of(value, config.learningRate()));
  }

  static String name(int layer, String part) {
    return "layer" + layer + "." + part;
  }

  private static INDArray normal(int rows, int cols, double std) {
    return Nd4j.randn(DataType.FLOAT, rows, cols).muli(std);
  }

  /**
   * Every parameter as the products read it: the weight matrices in the products' type (BF16
   * copies in BF16), the embedding (looked up, not multiplied) and the gains as they are.
   */
  Map<String, INDArray> productWeights() {
    Map<String, INDArray> out = new LinkedHashMap<>();
    parameters.forEach((name, w) -> out.put(name, w.rank() == 2 && !"embedding".equals(name)
        ? compute(w) : w));
    return out;
  }

  /**
   * The array (a matrix) in the products' type: itself in FP32, a BF16 copy in BF16, made by
   * oneDNN's reorder (both cores) where the CPU multiplies BF16, else by ND4J's cast (one core:
   * 3 % of the step on the 2-core machine).
   */
  INDArray compute(INDArray a) {
    if (!bf16 || a.dataType() == DataType.BFLOAT16) {
      return a;
    }
    INDArray converted = converter.toCompute(a, Nd4j.createUninitialized(DataType.BFLOAT16,
        a.rows(), a.columns()));
    return converted != a ? converted : a.castTo(DataType.BFLOAT16);
  }

  /** Converts FP32 arrays to BF16 on oneDNN ({@link #compute}). */
  private final FusedDense converter = FusedDense.of(Activation.IDENTITY,
      FusedDense.Precision.BF16);

  /**
   * A float array of at least {@code count} elements, kept from pass to pass: the logits' rows
   * (2 MB at 2 048 rows of 256) as a new array each pass were a humongous allocation for G1,
   * which started a concurrent marking cycle every step and took a core from the step.
   */
  float[] rowScratch(int count) {
    if (logitRows.length < count) {
      logitRows = new float[count];
    }
    return logitRows;
  }

  private float[] logitRows = new float[0];

  DataType computeType() {
    return bf16 ? DataType.BFLOAT16 : DataType.FLOAT;
  }

  /** {@code op(a) · op(b)}, a new FP32 matrix. */
  static INDArray product(INDArray a, boolean transA, INDArray b, boolean transB) {
    long rows = transA ? a.columns() : a.rows();
    long cols = transB ? b.rows() : b.columns();
    INDArray c = Nd4j.createUninitialized(DataType.FLOAT, rows, cols);
    Matmul.gemm(a, transA, b, transB, c, 1f, 0f);
    return c;
  }

  /**
   * Runs the attention heads' {@code tasks} on the caller's thread and the helpers', each
   * thread taking the next task until none is left, each with its own {@link CausalAttention}
   * and its oneDNN calls on itself alone. Each task writes only its own head's arrays. Returns
   * when every task is done; the first failure is thrown after every thread has stopped.
   */
  void runHeads(List<Consumer<CausalAttention>> tasks) {
    int threads = Math.min(attentions.size(), tasks.size());
    AtomicInteger next = new AtomicInteger();
    List<Future<?>> running = new ArrayList<>();
    for (int t = 1; t < threads; t++) {
      CausalAttention a = attentions.get(t);
      running.add(helpers.submit(() -> drain(a, tasks, next)));
    }
    Throwable failure = null;
    try {
      drain(attentions.get(0), tasks, next);
    } catch (RuntimeException | Error e) {
      failure = e;
    }
    for (Future<?> f : running) {
      try {
        f.get();
      } catch (ExecutionException e) {
        failure = failure != null ? failure : e.getCause();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        failure = failure != null ? failure
            : new IllegalStateException("interrupted while attention heads ran", e);
      }
    }
    if (failure instanceof RuntimeException r) {
      throw r;
    } else if (failure instanceof Error e) {
      throw e;
    } else if (failure != null) {
      throw new IllegalStateException(failure);
    }
  }

  private static void drain(CausalAttention a, List<Consumer<CausalAttention>> tasks,
      AtomicInteger next) {
    Kernels.cpu().onThisThreadOnly(() -> {
      try {
        for (int i = next.getAndIncrement(); i < tasks.size(); i = next.getAndIncrement()) {
          tasks.get(i).accept(a);
        }
      } catch (RuntimeException | Error e) {
        next.set(tasks.size());
        throw e;
      }
      return null;
    });
  }
}
