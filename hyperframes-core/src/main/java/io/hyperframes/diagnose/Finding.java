package io.hyperframes.diagnose;

/**
 * Advice drawn from an estimate: what was found, the numbers that show it, and what to do.
 *
 * @param id stable identifier ("comm-bound")
 * @param severity how urgent
 * @param title one-line statement with the key number
 * @param evidence the figures that triggered it
 * @param remedy what to change
 */
public record Finding(String id, Severity severity, String title, String evidence,
    String remedy) {

  /** Findings as a JSON array of {id, severity, title, evidence, remedy} (a contract). */
  public static com.fasterxml.jackson.databind.node.ArrayNode toJson(java.util.List<Finding> all) {
    var array = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.arrayNode();
    for (Finding f : all) {
      var o = array.addObject();
      o.put("id", f.id());
      o.put("severity", f.severity().name().toLowerCase(java.util.Locale.ROOT));
      o.put("title", f.title());
      o.put("evidence", f.evidence());
      o.put("remedy", f.remedy());
    }
    return array;
  }
}
