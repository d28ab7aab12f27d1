package io.hyperframes.nd4j.data;

import static com.google.common.base.Preconditions.checkArgument;

import io.hyperframes.runtime.BatchSource;
import java.io.BufferedReader;
import java.io.BufferedOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.factory.Nd4j;

/**
 * A pre-encoded classification dataset: features and one-hot labels as little-endian FP32 rows
 * in one file, read through memory mapping. Parse the CSV once with {@link #encodeCsv}; every
 * epoch then reads rows by index (shuffled by a seeded permutation per epoch) without parsing.
 *
 * <p>File layout: magic {@code HFDS}, version 1, rows (int64), feature columns (int32), label
 * columns (int32), then the rows, each features followed by labels. Rows have a fixed width, so
 * the index of row r is the arithmetic offset 24 + r · width · 4.
 */
public final class EncodedDataset implements AutoCloseable {

  private static final int MAGIC = 0x48464453; // "HFDS"
  private static final int VERSION = 1;
  private static final int HEADER = 24;
  private static final long SEGMENT_BYTES = 1L << 30;

  private final long rows;
  private final int features;
  private final int labels;
  private final long rowsPerSegment;
  private final List<FloatBuffer> segments;
  private final FileChannel channel;

  private EncodedDataset(FileChannel channel, long rows, int features, int labels)
      throws IOException {
    this.channel = channel;
    this.rows = rows;
    this.features = features;
    this.labels = labels;
    long rowBytes = 4L * (features + labels);
    this.rowsPerSegment = Math.max(1, SEGMENT_BYTES / rowBytes);
    this.segments = new ArrayList<>();
    for (long first = 0; first < rows; first += rowsPerSegment) {
      long count = Math.min(rowsPerSegment, rows - first);
      MappedByteBuffer map = channel.map(FileChannel.MapMode.READ_ONLY,
          HEADER + first * rowBytes, count * rowBytes);
      segments.add(map.order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer());
    }
  }

  /**
   * Encodes a CSV of numeric features and an integer class label into {@code out} (written to a
   * temporary file and renamed, so a failed run leaves no partial dataset).
   *
   * @param labelColumn index of the label column (negative: from the end, -1 = last)
   * @param classes number of classes; labels must be in [0, classes)
   * @param skipHeader whether the first line is a header
   * @return rows written
   * @throws IllegalArgumentException naming the line and column of a bad value
   */
  public static long encodeCsv(Path csv, Path out, int labelColumn, int classes,
      boolean skipHeader) throws IOException {
    checkArgument(classes >= 1, "classes: must be >= 1, got %s", classes);
    Path tmp = out.resolveSibling(out.getFileName() + ".tmp");
    long rows = 0;
    int featureCount = -1;
    try (BufferedReader in = Files.newBufferedReader(csv, StandardCharsets.UTF_8);
        OutputStream raw = Files.newOutputStream(tmp);
        DataOutputStream header = new DataOutputStream(new BufferedOutputStream(raw, 1 << 16))) {
      ByteBuffer head = ByteBuffer.allocate(HEADER).order(ByteOrder.LITTLE_ENDIAN);
      header.write(head.array()); // zeros reserve the header; the counts are written at the end
      ByteBuffer row = null;
      String line;
      long lineNo = 0;
      while ((line = in.readLine()) != null) {
        lineNo++;
        if ((skipHeader && lineNo == 1) || line.isBlank()) {
          continue;
        }
        String[] cells = line.split(",", -1);
        int label = labelColumn < 0 ? cells.length + labelColumn : labelColumn;
        checkArgument(label >= 0 && label < cells.length, "csv line %s: label column %s is"
            + " outside its %s columns", lineNo, labelColumn, cells.length);
        if (featureCount < 0) {
          featureCount = cells.length - 1;
          checkArgument(featureCount >= 1, "csv line %s: needs at least one feature column",
              lineNo);
          row = ByteBuffer.allocate(4 * (featureCount + classes)).order(ByteOrder.LITTLE_ENDIAN);
        }
        checkArgument(cells.length - 1 == featureCount, "csv line %s: %s columns, expected %s",
            lineNo, cells.length, featureCount + 1);
        row.clear();
        for (int c = 0; c < cells.length; c++) {
          if (c == label) {
            continue;
          }
          row.putFloat(parse(cells[c], lineNo, c));
        }
        float classValue = parse(cells[label], lineNo, label);
        int k = (int) classValue;
        checkArgument(k == classValue && k >= 0 && k < classes, "csv line %s column %s: label"
            + " '%s' is not a class in [0, %s)", lineNo, label, cells[label].strip(), classes);
        for (int j = 0; j < classes; j++) {
          row.putFloat(j == k ? 1f : 0f);
        }
        header.write(row.array());
        rows++;
      }
      checkArgument(rows > 0, "csv: %s has no data rows", csv);
    }
    try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
      ByteBuffer head = ByteBuffer.allocate(HEADER).order(ByteOrder.LITTLE_ENDIAN);
      head.putInt(MAGIC).putInt(VERSION).putLong(rows).putInt(featureCount).putInt(classes);
      head.flip();
      ch.write(head, 0);
      ch.force(true);
    }
    Files.move(tmp, out, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    return rows;
  }

  private static float parse(String cell, long line, int column) {
    try {
      float v = Float.parseFloat(cell.strip());
      checkArgument(Float.isFinite(v), "csv line %s column %s: '%s' is not finite", line,
          column, cell.strip());
      return v;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("csv line " + line + " column " + column + ": '"
          + cell.strip() + "' is not a number", e);
    }
  }

  /**
   * Opens an encoded file.
   *
   * @throws IllegalArgumentException when the file is not an encoded dataset
   */
  public static EncodedDataset open(Path file) throws IOException {
    FileChannel ch = FileChannel.open(file, StandardOpenOption.READ);
    try {
      ByteBuffer head = ByteBuffer.allocate(HEADER).order(ByteOrder.LITTLE_ENDIAN);
      checkArgument(ch.read(head, 0) == HEADER, "dataset: %s is shorter than its header", file);
      head.flip();
      checkArgument(head.getInt() == MAGIC, "dataset: %s is not a HyperFrames encoded dataset",
          file);
      int version = head.getInt();
      checkArgument(version == VERSION, "dataset: %s has version %s, expected %s", file, version,
          VERSION);
      long rows = head.getLong();
      int features = head.getInt();
      int labels = head.getInt();
      long expected = HEADER + rows * 4L * (features + labels);
      checkArgument(rows > 0 && features > 0 && labels > 0 && ch.size() == expected,
          "dataset: %s is truncated or corrupt (%s bytes, header says %s)", file, ch.size(),
          expected);
      return new EncodedDataset(ch, rows, features, labels);
    } catch (RuntimeException | IOException e) {
      ch.close();
      throw e;
    }
  }

  public long rows() {
    return rows;
  }

  public int featureColumns() {
    return features;
  }

  public int labelColumns() {
    return labels;
  }

  /** Copies row {@code r} into {@code featuresOut} and {@code labelsOut} at {@code offset}s. */
  void read(long r, float[] featuresOut, int featureOffset, float[] labelsOut, int labelOffset) {
    FloatBuffer seg = segments.get((int) (r / rowsPerSegment)).duplicate();
    seg.position((int) ((r % rowsPerSegment) * (features + labels)));
    seg.get(featuresOut, featureOffset, features);
    seg.get(labelsOut, labelOffset, labels);
  }

  /**
   * Batches of {@code batchSize} rows (the last epoch's partial batch dropped), in a fresh seeded
   * permutation of the rows each epoch, for {@link PrefetchingDataSetIterator}.
   */
  public BatchSource<DataSet> batches(int batchSize, long seed) {
    checkArgument(batchSize >= 1, "batchSize: must be >= 1, got %s", batchSize);
    checkArgument(rows / batchSize <= Integer.MAX_VALUE, "batchSize: too many batches");
    checkArgument(rows <= Integer.MAX_VALUE, "dataset: more than 2^31 rows cannot be shuffled");
    int count = (int) (rows / batchSize);
    return new BatchSource<>() {
      private int cachedEpoch = -1;
      private int[] order;

      @Override
      public int batches() {
        return count;
      }

      @Override
      public DataSet batch(int epoch, int index) {
        int[] perm = permutation(epoch);
        float[] x = new float[batchSize * features];
        float[] y = new float[batchSize * labels];
        for (int i = 0; i < batchSize; i++) {
          read(perm[index * batchSize + i], x, i * features, y, i * labels);
        }
        return new DataSet(Nd4j.create(x, new long[] {batchSize, features}, 'c'),
            Nd4j.create(y, new long[] {batchSize, labels}, 'c'));
      }

      private synchronized int[] permutation(int epoch) {
        if (epoch != cachedEpoch) {
          order = shuffled((int) rows, seed * 1_000_003L + epoch);
          cachedEpoch = epoch;
        }
        return order;
      }
    };
  }

  /** A Fisher-Yates permutation of 0..n-1. */
  static int[] shuffled(int n, long seed) {
    int[] p = new int[n];
    for (int i = 0; i < n; i++) {
      p[i] = i;
    }
    SplittableRandom r = new SplittableRandom(seed);
    for (int i = n - 1; i > 0; i--) {
      int j = r.nextInt(i + 1);
      int t = p[i];
      p[i] = p[j];
      p[j] = t;
    }
    return p;
  }

  @Override
  public void close() {
    try {
      channel.close();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
