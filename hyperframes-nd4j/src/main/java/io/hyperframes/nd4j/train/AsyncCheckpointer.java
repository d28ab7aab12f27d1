package io.hyperframes.nd4j.train;

import static com.google.common.base.Preconditions.checkArgument;

import io.hyperframes.runtime.CheckpointFiles;
import java.io.FileOutputStream;
import java.io.OutputStream;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Future;
import org.deeplearning4j.nn.api.Model;
import org.deeplearning4j.nn.graph.ComputationGraph;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.util.ModelSerializer;

/**
 * Writes checkpoints of a DL4J {@link MultiLayerNetwork} or {@link ComputationGraph} on a
 * background thread as standard DL4J model zips (parameters and updater state, loadable with
 * {@code ModelSerializer.restoreMultiLayerNetwork} or {@code restoreComputationGraph}).
 *
 * <p>{@link #save} blocks only for an in-memory copy of the network; the copy is then written
 * through {@link CheckpointFiles}: a temporary file, forced to disk, renamed atomically to
 * {@code checkpoint-<step>.zip}, the directory forced too. A process killed at any point leaves
 * every earlier checkpoint intact and never a partial {@code .zip}. The newest {@code keep}
 * checkpoints are kept. Extra state (a loss scaler's) is stored inside the zip under
 * {@value #EXTRA_KEY}.
 */
public final class AsyncCheckpointer implements AutoCloseable {

  /** Key of the extra state inside the zip (read it with {@link #extraState(Path)}). */
  public static final String EXTRA_KEY = "hyperframes-state";

  private static final String EXTENSION = "zip";

  private final CheckpointFiles files;

  /**
   * Checkpoints into {@code directory} (created if missing), keeping the newest {@code keep}.
   *
   * @throws IllegalArgumentException when keep is not positive or the directory is unusable
   */
  public AsyncCheckpointer(Path directory, int keep) {
    this.files = new CheckpointFiles(directory, keep, EXTENSION);
  }

  /**
   * Snapshots {@code net} now and writes it in the background.
   *
   * @param step training step, part of the file name
   * @param extra state to store with it (may be empty)
   * @return the path once written
   */
  public Future<Path> save(Model net, long step, Map<String, Double> extra) {
    checkArgument(net != null, "net: must be given");
    checkArgument(step >= 0, "step: must be >= 0, got %s", step);
    Model snapshot;
    if (net instanceof MultiLayerNetwork n) {
      snapshot = n.clone();
    } else if (net instanceof ComputationGraph g) {
      snapshot = g.clone();
    } else {
      throw new IllegalArgumentException("net: a MultiLayerNetwork or ComputationGraph, got "
          + net.getClass().getName());
    }
    HashMap<String, Double> state = new HashMap<>(extra == null ? Map.of() : extra);
    return files.submit(step, tmp -> {
      try (OutputStream out = new FileOutputStream(tmp.toFile())) {
        ModelSerializer.writeModel(snapshot, out, true);
      }
      if (!state.isEmpty()) {
        ModelSerializer.addObjectToFile(tmp.toFile(), EXTRA_KEY, state);
      }
    });
  }

  /** Complete checkpoints in {@code directory}, oldest first. */
  public static List<Path> checkpoints(Path directory) {
    return CheckpointFiles.checkpoints(directory, EXTENSION);
  }

  /** The newest complete checkpoint, if any. */
  public static Optional<Path> latest(Path directory) {
    return CheckpointFiles.latest(directory, EXTENSION);
  }

  /** The extra state stored with a checkpoint (empty if none). */
  @SuppressWarnings("unchecked")
  public static Map<String, Double> extraState(Path checkpoint) {
    Object o = ModelSerializer.getObjectFromFile(checkpoint.toFile(), EXTRA_KEY);
    return o == null ? Map.of() : (Map<String, Double>) o;
  }

  /** Waits for pending writes, then stops the writer thread. */
  @Override
  public void close() {
    files.close();
  }
}
