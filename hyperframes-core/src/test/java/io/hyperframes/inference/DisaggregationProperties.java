package io.hyperframes.inference;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.catalog.Catalog;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.DoubleRange;
import net.jqwik.api.constraints.IntRange;

/**
 * Laws of disaggregated serving: a pool of size 0 is refused, naming its field; and the
 * balanced split sustains at least the rate of every split of the same devices into whole
 * expert-parallel groups, the layout's own among them.
 */
class DisaggregationProperties {

  @Property(tries = 1000)
  void aPoolOfSizeZeroIsRefused(@ForAll @IntRange(min = 0, max = 1) int whichPool,
      @ForAll @IntRange(min = 0, max = 1) int whichField,
      @ForAll @IntRange(min = 1, max = 8) int tp, @ForAll @IntRange(min = 1, max = 64) int other,
      @ForAll @IntRange(min = -3, max = 0) int zero) {
    String pool = whichPool == 0 ? "prefill" : "decode";
    String field = whichField == 0 ? "tp" : "replicas";
    String sized = "{\"tp\": " + tp + ", \"replicas\": " + other + "}";
    String empty = whichField == 0 ? "{\"tp\": " + zero + ", \"replicas\": " + other + "}"
        : "{\"tp\": " + tp + ", \"replicas\": " + zero + "}";
    String layout = "{\"disaggregated\": {\"prefill\": " + (whichPool == 0 ? empty : sized)
        + ", \"decode\": " + (whichPool == 1 ? empty : sized) + "}}";
    String json = "{\"model\": {\"catalog\": \"llama3-8b\"}, \"cluster\": {\"accelerator\":"
        + " \"h100-sxm-80gb\", \"devices\": 8}, \"workload\": {\"type\": \"inference\","
        + " \"precision\": \"fp16\", \"batchSize\": 4, \"promptTokens\": 512,"
        + " \"outputTokens\": 128}, \"layout\": " + layout + "}";
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Serving.parse(json, Catalog.builtIn()));
    assertTrue(e.getMessage().startsWith("layout.disaggregated." + pool + "." + field
        + ": must be > 0, got " + zero), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> new Disaggregation.Pool(
        whichField == 0 ? zero : tp, 1, whichField == 1 ? zero : other, 0));
  }

  @Property(tries = 1000)
  void theBalancedSplitIsNeverBeaten(@ForAll @IntRange(min = 1, max = 8) int prefillTp,
      @ForAll @IntRange(min = 1, max = 4) int prefillGroups,
      @ForAll @IntRange(min = 1, max = 4) int prefillSpan,
      @ForAll @IntRange(min = 1, max = 8) int decodeTp,
      @ForAll @IntRange(min = 1, max = 4) int decodeGroups,
      @ForAll @IntRange(min = 1, max = 4) int decodeSpan,
      @ForAll @DoubleRange(min = 0.01, max = 1000) double prefillRate,
      @ForAll @DoubleRange(min = 0.01, max = 1000) double decodeRate) {
    Disaggregation.Pool p = new Disaggregation.Pool(prefillTp, prefillTp * prefillSpan,
        prefillSpan * prefillGroups, 0);
    Disaggregation.Pool q = new Disaggregation.Pool(decodeTp, decodeTp * decodeSpan,
        decodeSpan * decodeGroups, 0);
    int devices = p.devices() + q.devices();
    DisaggregatedEstimate.Balanced b = Disaggregated.balance(p, q, prefillRate, decodeRate,
        devices);
    int pg = prefillTp * prefillSpan;
    int qg = decodeTp * decodeSpan;
    double perP = prefillRate / prefillGroups;
    double perQ = decodeRate / decodeGroups;
    assertTrue(b.requestsPerSecond() >= Math.min(prefillRate, decodeRate) * (1 - 1e-12));
    assertTrue(b.devices() <= devices);
    for (int a = 1; a * pg + qg <= devices; a++) {
      int c = (devices - a * pg) / qg;
      assertTrue(b.requestsPerSecond() >= Math.min(a * perP, c * perQ) * (1 - 1e-12),
          "split " + a + "/" + c);
    }
  }
}
