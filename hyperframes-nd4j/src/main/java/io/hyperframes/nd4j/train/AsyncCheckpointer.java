package io.hyperframes.nd4j.train;

import static com.google.common.base.Preconditions.checkArgument;
import static com.google.common.base.Preconditions.checkState;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.util.ModelSerializer;

/**
 * Writes checkpoints of a DL4J {@link MultiLayerNetwork} on a background thread as standard DL4J
 * model zips (parameters and updater state, loadable with {@code ModelSerializer}).
 *
 * <p>{@link #save} blocks only for an in-memory copy of the network; the copy is then written to
 * a temporary file, forced to disk, and renamed atomically to {@code checkpoint-<step>.zip}, and
 * the directory is forced too. A process killed at any point leaves every earlier checkpoint
 * intact and never a partial {@code .zip} (temporary files end in {@code .tmp} and are ignored).
 * The newest {@code keep} checkpoints are kept. Extra state (a loss scaler's) is stored inside
 * the zip under {@value #EXTRA_KEY}.
 */
public final class AsyncCheckpointer implements AutoCloseable {

  /** Key of the extra state inside the zip (read it with {@link #extraState(Path)}). */
  public static final String EXTRA_KEY = "hyperframes-state";

  private final Path directory;
  private final int keep;
  private final ExecutorService writer;

  /**
   * Checkpoints into {@code directory} (created if missing), keeping the newest {@code keep}.
   *
   * @throws IllegalArgumentException when keep is not positive or the directory is unusable
   */
  public AsyncCheckpointer(Path directory, int keep) {
    checkArgument(directory != null, "directory: must be given");
    checkArgument(keep >= 1, "keep: must be >= 1, got %s", keep);
    try {
      Files.createDirectories(directory);
    } catch (IOException e) {
      throw new IllegalArgumentException("directory: cannot create " + directory + ": " + e, e);
    }
    this.directory = directory;
    this.keep = keep;
    this.writer = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "hyperframes-checkpoint");
      t.setDaemon(false);
      return t;
    });
  }

  /**
   * Snapshots {@code net} now and writes it in the background.
   *
   * @param step training step, part of the file name
   * @param extra state to store with it (may be empty)
   * @return the path once written
   */
  public Future<Path> save(MultiLayerNetwork net, long step, Map<String, Double> extra) {
    checkArgument(net != null, "net: must be given");
    checkArgument(step >= 0, "step: must be >= 0, got %s", step);
    checkState(!writer.isShutdown(), "checkpointer: closed");
    MultiLayerNetwork snapshot = net.clone();
    HashMap<String, Double> state = new HashMap<>(extra == null ? Map.of() : extra);
    return writer.submit(() -> write(snapshot, step, state));
  }

  private Path write(MultiLayerNetwork snapshot, long step, HashMap<String, Double> state)
      throws IOException {
    String name = String.format(Locale.ROOT, "checkpoint-%012d.zip", step);
    Path target = directory.resolve(name);
    Path tmp = directory.resolve(name + ".tmp");
    try (OutputStream out = new FileOutputStream(tmp.toFile())) {
      ModelSerializer.writeModel(snapshot, out, true);
    }
    if (!state.isEmpty()) {
      ModelSerializer.addObjectToFile(tmp.toFile(), EXTRA_KEY, state);
    }
    try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
      ch.force(true);
    }
    Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    try (FileChannel dir = FileChannel.open(directory, StandardOpenOption.READ)) {
      dir.force(true);
    } catch (IOException ignored) {
      // Some file systems cannot open a directory for sync; the rename is still atomic.
    }
    prune();
    return target;
  }

  private void prune() throws IOException {
    List<Path> all = checkpoints(directory);
    for (int i = 0; i < all.size() - keep; i++) {
      Files.deleteIfExists(all.get(i));
    }
  }

  /** Complete checkpoints in {@code directory}, oldest first. */
  public static List<Path> checkpoints(Path directory) {
    if (!Files.isDirectory(directory)) {
      return List.of();
    }
    try (Stream<Path> s = Files.list(directory)) {
      List<Path> out = new ArrayList<>(s.filter(p -> {
        String n = p.getFileName().toString();
        return n.startsWith("checkpoint-") && n.endsWith(".zip");
      }).sorted().toList());
      return out;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The newest complete checkpoint, if any. */
  public static Optional<Path> latest(Path directory) {
    List<Path> all = checkpoints(directory);
    return all.isEmpty() ? Optional.empty() : Optional.of(all.get(all.size() - 1));
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
    writer.shutdown();
    try {
      if (!writer.awaitTermination(10, TimeUnit.MINUTES)) {
        writer.shutdownNow();
      }
    } catch (InterruptedException e) {
      writer.shutdownNow();
      Thread.currentThread().interrupt();
    }
  }
}
