package io.hyperframes.runtime;

import static com.google.common.base.Preconditions.checkArgument;
import static com.google.common.base.Preconditions.checkState;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Numbered checkpoint files in one directory, written on a background thread and made visible
 * atomically: {@code checkpoint-<step>.<extension>}.
 *
 * <p>{@link #submit} hands a {@link Writer} to the writer thread, which writes a temporary file
 * ({@code .tmp}), forces it to disk, renames it atomically to its final name and forces the
 * directory. A process killed at any point leaves every earlier checkpoint intact and never a
 * partial final file (temporary files are ignored by {@link #checkpoints} and {@link #latest}).
 * The newest {@code keep} checkpoints are kept. The writer must not touch live training state:
 * snapshot what it writes before submitting (the adapters copy parameters first).
 */
public final class CheckpointFiles implements AutoCloseable {

  /** Writes one checkpoint's content to {@code file} (a temporary path). */
  @FunctionalInterface
  public interface Writer {
    void writeTo(Path file) throws IOException;
  }

  private final Path directory;
  private final int keep;
  private final String extension;
  private final ExecutorService writer;

  /**
   * Checkpoints with {@code extension} into {@code directory} (created if missing), keeping the
   * newest {@code keep}.
   *
   * @throws IllegalArgumentException when an argument is invalid or the directory unusable
   */
  public CheckpointFiles(Path directory, int keep, String extension) {
    checkArgument(directory != null, "directory: must be given");
    checkArgument(keep >= 1, "keep: must be >= 1, got %s", keep);
    checkArgument(extension != null && extension.matches("[A-Za-z0-9]+"),
        "extension: must be letters and digits, got %s", extension);
    try {
      Files.createDirectories(directory);
    } catch (IOException e) {
      throw new IllegalArgumentException("directory: cannot create " + directory + ": " + e, e);
    }
    this.directory = directory;
    this.keep = keep;
    this.extension = extension;
    this.writer = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "hyperframes-checkpoint");
      t.setDaemon(false);
      return t;
    });
  }

  /**
   * Writes checkpoint {@code step} in the background.
   *
   * @return the final path once written (the future fails with the writer's exception)
   * @throws IllegalStateException after {@link #close()}
   */
  public Future<Path> submit(long step, Writer content) {
    checkArgument(step >= 0, "step: must be >= 0, got %s", step);
    checkArgument(content != null, "content: must be given");
    checkState(!writer.isShutdown(), "checkpointer: closed");
    return writer.submit(() -> write(step, content));
  }

  private Path write(long step, Writer content) throws IOException {
    String name = String.format(Locale.ROOT, "checkpoint-%012d.%s", step, extension);
    Path target = directory.resolve(name);
    Path tmp = directory.resolve(name + ".tmp");
    try {
      content.writeTo(tmp);
      try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
        ch.force(true);
      }
      Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE,
          StandardCopyOption.REPLACE_EXISTING);
    } finally {
      Files.deleteIfExists(tmp);
    }
    try (FileChannel dir = FileChannel.open(directory, StandardOpenOption.READ)) {
      dir.force(true);
    } catch (IOException ignored) {
      // Some file systems cannot open a directory for sync; the rename is still atomic.
    }
    List<Path> all = checkpoints(directory, extension);
    for (int i = 0; i < all.size() - keep; i++) {
      Files.deleteIfExists(all.get(i));
    }
    return target;
  }

  /** Complete checkpoints with {@code extension} in {@code directory}, oldest first. */
  public static List<Path> checkpoints(Path directory, String extension) {
    checkArgument(directory != null, "directory: must be given");
    checkArgument(extension != null, "extension: must be given");
    if (!Files.isDirectory(directory)) {
      return List.of();
    }
    String suffix = "." + extension;
    try (Stream<Path> s = Files.list(directory)) {
      return s.filter(p -> {
        String n = p.getFileName().toString();
        return n.startsWith("checkpoint-") && n.endsWith(suffix);
      }).sorted().toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The newest complete checkpoint with {@code extension}, if any. */
  public static Optional<Path> latest(Path directory, String extension) {
    List<Path> all = checkpoints(directory, extension);
    return all.isEmpty() ? Optional.empty() : Optional.of(all.get(all.size() - 1));
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
