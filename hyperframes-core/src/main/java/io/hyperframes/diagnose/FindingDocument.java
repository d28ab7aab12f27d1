package io.hyperframes.diagnose;

import java.util.List;
import java.util.Locale;

/** One finding: {id, severity, title, evidence, remedy}. */
public record FindingDocument(String id, String severity, String title, String evidence,
    String remedy) {

  /** The documents of {@code findings}, in order. */
  public static List<FindingDocument> of(List<Finding> findings) {
    return findings.stream().map(f -> new FindingDocument(f.id(),
        f.severity().name().toLowerCase(Locale.ROOT), f.title(), f.evidence(), f.remedy()))
        .toList();
  }
}
