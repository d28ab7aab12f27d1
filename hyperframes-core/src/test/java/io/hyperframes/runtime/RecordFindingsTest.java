package io.hyperframes.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.hyperframes.diagnose.Finding;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.Arguments;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** Each troubleshooting rule fires on the record built for its symptom, and on no other's. */
class RecordFindingsTest {

  private static BenchmarkRecord.Metric m(double... samples) {
    return new BenchmarkRecord.Metric("1", true, samples);
  }

  private static BenchmarkRecord record(Map<String, String> conditions,
      Object... nameAndMetric) {
    Map<String, BenchmarkRecord.Metric> metrics = new LinkedHashMap<>();
    for (int i = 0; i < nameAndMetric.length; i += 2) {
      metrics.put((String) nameAndMetric[i], (BenchmarkRecord.Metric) nameAndMetric[i + 1]);
    }
    return new BenchmarkRecord(BenchmarkRecord.SCHEMA, conditions, metrics);
  }

  static Stream<Arguments> symptoms() {
    return Stream.of(
        Arguments.of("loader-bound", record(Map.of(), "dataWaitShare", m(0.3, 0.35, 0.32))),
        Arguments.of("host-bound", record(Map.of(), "hostCpuShare", m(0.97, 0.98, 0.99),
            "deviceUtilization", m(0.3, 0.3, 0.3, 0.3, 0.3))),
        Arguments.of("memory-bandwidth-bound", record(Map.of(), "memoryBandwidthShare",
            m(0.9, 0.92, 0.91), "deviceUtilization", m(0.3, 0.3, 0.3, 0.3, 0.3))),
        Arguments.of("communication-bound", record(Map.of(), "commShare", m(0.45, 0.4, 0.5))),
        Arguments.of("poor-scaling", record(Map.of(), "scalingEfficiency", m(0.5, 0.55, 0.6))),
        Arguments.of("non-finite", record(Map.of(), "nonFiniteSteps", m(0, 0, 3))),
        Arguments.of("noisy-environment", record(Map.of(), "train.stepSeconds",
            m(1.0, 1.4, 0.8, 1.3, 0.7, 1.2))),
        Arguments.of("oom-risk", record(Map.of("memoryLimitBytes", "80e9"), "memoryPeakBytes",
            m(7.8e10, 7.9e10, 7.7e10))),
        Arguments.of("fragmentation", record(Map.of(), "memoryReservedBytes", m(6e10, 6e10),
            "memoryAllocatedBytes", m(4e10, 4e10))),
        Arguments.of("utilisation-jitter", record(Map.of(), "deviceUtilization",
            m(0.9, 0.2, 0.9, 0.2, 0.9))),
        Arguments.of("inference-small-batch", record(Map.of("batch", "1", "quantized",
            "false"), "p99Seconds", m(0.02, 0.021, 0.022))));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("symptoms")
  void eachRuleFiresOnItsRecordAlone(String rule, BenchmarkRecord record) {
    List<String> fired = RecordFindings.of(record).stream().map(Finding::id).toList();
    assertEquals(List.of(rule), fired, rule);
  }

  @Test
  void aHealthyRecordRaisesNothing() {
    BenchmarkRecord healthy = record(Map.of("memoryLimitBytes", "80e9", "batch", "64",
        "quantized", "true"), "dataWaitShare", m(0.01, 0.02, 0.01), "hostCpuShare",
        m(0.4, 0.5, 0.45), "deviceUtilization", m(0.85, 0.87, 0.86, 0.88, 0.86),
        "memoryBandwidthShare", m(0.5, 0.5, 0.5), "commShare", m(0.1, 0.12, 0.11),
        "scalingEfficiency", m(0.92, 0.93, 0.9), "nonFiniteSteps", m(0, 0, 0),
        "train.stepSeconds", m(1.0, 1.01, 0.99, 1.02, 1.0), "memoryPeakBytes",
        m(5e10, 5.1e10), "memoryReservedBytes", m(5.2e10, 5.2e10), "memoryAllocatedBytes",
        m(5e10, 5e10), "p99Seconds", m(0.05, 0.05, 0.05));
    assertEquals(List.of(), RecordFindings.of(healthy));
  }
}
