package io.hyperframes.djl;

import static com.google.common.base.Preconditions.checkArgument;

import ai.djl.MalformedModelException;
import ai.djl.ndarray.NDManager;
import ai.djl.nn.Block;
import com.google.common.collect.ImmutableMap;
import io.hyperframes.runtime.CheckpointFiles;
import java.io.BufferedOutputStream;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.zip.CRC32;

/**
 * Checkpoints of a DJL model: its parameters as {@link Block#saveParameters} writes them, the
 * training step and epoch, and extra state (a loss scale's), in one file
 * {@code checkpoint-<step>.hfdjl} written atomically by {@link CheckpointFiles}.
 *
 * <p>File layout (big-endian, {@link DataOutputStream}): magic {@code "HFDJ"}, format version 1,
 * step (long), epoch (int), the number of extra entries then each as (UTF key, double), the
 * length of the parameter bytes then the bytes, and a CRC-32 of everything before it. A file
 * whose checksum does not match is rejected with the path named.
 */
public final class DjlCheckpoints {

  /** File extension of DJL checkpoints. */
  public static final String EXTENSION = "hfdjl";

  private static final int MAGIC = 0x4846444A; // "HFDJ"
  private static final int VERSION = 1;

  private DjlCheckpoints() {}

  /**
   * One checkpoint as read back.
   *
   * @param step training step it was taken after
   * @param epoch epoch it was taken in (0-based)
   * @param state extra state (loss scale: {@code scale}, {@code cleanSteps}, {@code skippedSteps})
   * @param parameters the block's parameters as {@link Block#saveParameters} wrote them
   */
  public record Checkpoint(long step, int epoch, Map<String, Double> state, byte[] parameters) {
    public Checkpoint {
      state = ImmutableMap.copyOf(state);
      parameters = parameters.clone();
    }

    @Override
    public byte[] parameters() {
      return parameters.clone();
    }

    /**
     * Loads the parameters into {@code block} (same architecture, initialised or not).
     *
     * @throws IllegalArgumentException when the parameters do not fit the block
     */
    public void restore(Block block, NDManager manager) {
      checkArgument(block != null && manager != null, "block and manager: must be given");
      try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(parameters))) {
        block.loadParameters(manager, in);
      } catch (IOException | MalformedModelException e) {
        throw new IllegalArgumentException("checkpoint: parameters do not load into "
            + block.getClass().getSimpleName() + ": " + e.getMessage(), e);
      }
    }
  }

  /** The block's parameters as bytes, copied now (the snapshot a checkpoint writes later). */
  static byte[] snapshot(Block block) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      block.saveParameters(out);
    }
    return bytes.toByteArray();
  }

  /** Writes one checkpoint file (called by the checkpoint thread on a temporary path). */
  static void write(Path file, long step, int epoch, Map<String, Double> state, byte[] params)
      throws IOException {
    ByteArrayOutputStream header = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(header)) {
      out.writeInt(MAGIC);
      out.writeInt(VERSION);
      out.writeLong(step);
      out.writeInt(epoch);
      out.writeInt(state.size());
      for (Map.Entry<String, Double> e : state.entrySet()) {
        out.writeUTF(e.getKey());
        out.writeDouble(e.getValue());
      }
      out.writeInt(params.length);
    }
    CRC32 crc = new CRC32();
    byte[] h = header.toByteArray();
    crc.update(h);
    crc.update(params);
    try (OutputStream os = new BufferedOutputStream(Files.newOutputStream(file));
        DataOutputStream out = new DataOutputStream(os)) {
      out.write(h);
      out.write(params);
      out.writeLong(crc.getValue());
    }
  }

  /**
   * Reads a checkpoint file.
   *
   * @throws IllegalArgumentException when the file is not a complete, intact checkpoint
   */
  public static Checkpoint read(Path file) {
    checkArgument(file != null, "file: must be given");
    byte[] all;
    try {
      all = Files.readAllBytes(file);
    } catch (IOException e) {
      throw new IllegalArgumentException("checkpoint: cannot read " + file + ": " + e, e);
    }
    checkArgument(all.length >= 8, "checkpoint %s: truncated (%s bytes)", file, all.length);
    CRC32 crc = new CRC32();
    crc.update(all, 0, all.length - 8);
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(all))) {
      checkArgument(in.readInt() == MAGIC, "checkpoint %s: not a HyperFrames DJL checkpoint",
          file);
      int version = in.readInt();
      checkArgument(version == VERSION, "checkpoint %s: format version %s, expected %s", file,
          version, VERSION);
      long step = in.readLong();
      int epoch = in.readInt();
      int n = in.readInt();
      checkArgument(n >= 0 && n < 1024, "checkpoint %s: %s state entries", file, n);
      Map<String, Double> state = new LinkedHashMap<>();
      for (int i = 0; i < n; i++) {
        state.put(in.readUTF(), in.readDouble());
      }
      int length = in.readInt();
      checkArgument(length >= 0 && length <= all.length, "checkpoint %s: truncated", file);
      byte[] params = new byte[length];
      in.readFully(params);
      long stored = in.readLong();
      checkArgument(stored == crc.getValue(), "checkpoint %s: checksum mismatch (damaged file)",
          file);
      return new Checkpoint(step, epoch, state, params);
    } catch (IOException e) {
      throw new IllegalArgumentException("checkpoint " + file + ": truncated: " + e, e);
    }
  }

  /** Complete DJL checkpoints in {@code directory}, oldest first. */
  public static List<Path> list(Path directory) {
    return CheckpointFiles.checkpoints(directory, EXTENSION);
  }

  /** The newest complete DJL checkpoint in {@code directory}, read back. */
  public static Optional<Checkpoint> latest(Path directory) {
    return CheckpointFiles.latest(directory, EXTENSION).map(DjlCheckpoints::read);
  }
}
