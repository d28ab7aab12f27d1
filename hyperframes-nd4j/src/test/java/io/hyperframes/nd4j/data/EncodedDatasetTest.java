package io.hyperframes.nd4j.data;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.runtime.BatchSource;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.BitSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.nd4j.linalg.dataset.DataSet;

/** Encode once, map, shuffle by index: every row once per epoch with its exact values. */
class EncodedDatasetTest {

  @TempDir Path dir;

  Path csv(int rows) throws IOException {
    StringBuilder b = new StringBuilder("f0,f1,f2,label\n");
    for (int r = 0; r < rows; r++) {
      b.append(r).append(',').append(r * 0.5).append(',').append(-r).append(',')
          .append(r % 3).append('\n');
    }
    return Files.writeString(dir.resolve("in.csv"), b.toString());
  }

  @Test
  void roundTripsAndShufflesEveryRowOncePerEpoch() throws Exception {
    Path out = dir.resolve("data.hfds");
    assertEquals(1000, EncodedDataset.encodeCsv(csv(1000), out, -1, 3, true));
    try (EncodedDataset d = EncodedDataset.open(out)) {
      assertEquals(1000, d.rows());
      assertEquals(3, d.featureColumns());
      assertEquals(3, d.labelColumns());
      BatchSource<DataSet> source = d.batches(10, 7);
      assertEquals(100, source.batches());
      for (int epoch = 0; epoch < 2; epoch++) {
        BitSet seen = new BitSet();
        for (int i = 0; i < source.batches(); i++) {
          DataSet ds = source.batch(epoch, i);
          for (int r = 0; r < 10; r++) {
            int id = ds.getFeatures().getInt(r, 0);
            assertTrue(!seen.get(id), "row " + id + " twice in epoch " + epoch);
            seen.set(id);
            assertEquals(id * 0.5, ds.getFeatures().getDouble(r, 1), 0.0);
            assertEquals(-id, ds.getFeatures().getDouble(r, 2), 0.0);
            assertEquals(1.0, ds.getLabels().getDouble(r, id % 3), 0.0);
            assertEquals(1.0, ds.getLabels().getRow(r).sumNumber().doubleValue(), 0.0);
          }
        }
        assertEquals(1000, seen.cardinality());
      }
      int first0 = source.batch(0, 0).getFeatures().getInt(0, 0);
      int first1 = source.batch(1, 0).getFeatures().getInt(0, 0);
      assertTrue(first0 != first1 || source.batch(0, 1).getFeatures().getInt(0, 0)
          != source.batch(1, 1).getFeatures().getInt(0, 0), "epochs are shuffled differently");
    }
  }

  @Test
  void badCsvNamesTheLineAndColumn() throws IOException {
    Path bad = Files.writeString(dir.resolve("bad.csv"), "1,2,0\n3,x,1\n");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> EncodedDataset.encodeCsv(bad, dir.resolve("o"), -1, 2, false));
    assertTrue(e.getMessage().contains("line 2") && e.getMessage().contains("'x'"),
        e.getMessage());
    Path label = Files.writeString(dir.resolve("label.csv"), "1,2,5\n");
    e = assertThrows(IllegalArgumentException.class,
        () -> EncodedDataset.encodeCsv(label, dir.resolve("o"), -1, 2, false));
    assertTrue(e.getMessage().contains("label"), e.getMessage());
    assertTrue(!Files.exists(dir.resolve("o")), "no partial output");
  }

  @Test
  void aFileThatIsNotADatasetIsRejected() throws IOException {
    Path junk = Files.writeString(dir.resolve("junk"), "not a dataset at all, really not");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> EncodedDataset.open(junk));
    assertTrue(e.getMessage().startsWith("dataset"), e.getMessage());
  }
}
