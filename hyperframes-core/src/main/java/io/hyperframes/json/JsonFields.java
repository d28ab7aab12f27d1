package io.hyperframes.json;

import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.util.Iterator;
import java.util.Set;

/**
 * Typed reads of JSON fields that fail with {@link IllegalArgumentException} naming the field path
 * and the offending value: the one place where request and catalog files are checked.
 */
public final class JsonFields {
  private JsonFields() {}

  private static final ObjectMapper MAPPER = JsonMapper.builder()
      .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
      .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
      .disable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS)
      .build();

  /** The shared mapper (thread-safe once configured). */
  public static ObjectMapper mapper() {
    return MAPPER;
  }

  /**
   * Parses a JSON document whose top level must be an object.
   *
   * @param what name of the document for messages ("request")
   */
  public static JsonNode parseObject(String what, String text) {
    if (text == null || text.isBlank()) {
      throw new IllegalArgumentException(what + ": empty document");
    }
    JsonNode node;
    try {
      node = MAPPER.readTree(text);
    } catch (JsonProcessingException e) {
      String msg = e.getOriginalMessage() == null ? "" : e.getOriginalMessage().split("\n")[0];
      throw new IllegalArgumentException(what + ": malformed JSON at line "
          + (e.getLocation() == null ? "?" : e.getLocation().getLineNr()) + ": " + msg, e);
    }
    if (node == null || node.isMissingNode()) {
      throw new IllegalArgumentException(what + ": empty document");
    }
    if (!node.isObject()) {
      throw new IllegalArgumentException(what + ": must be a JSON object, got "
          + node.getNodeType().name().toLowerCase(java.util.Locale.ROOT));
    }
    return node;
  }

  /** The object at {@code path}; required. */
  public static JsonNode object(JsonNode parent, String name, String path) {
    JsonNode n = parent.get(name);
    if (n == null || n.isNull()) {
      throw new IllegalArgumentException(path + ": missing required field");
    }
    if (!n.isObject()) {
      throw new IllegalArgumentException(path + ": must be an object, got " + show(n));
    }
    return n;
  }

  /** The object at {@code path}, or null when absent. */
  public static JsonNode optionalObject(JsonNode parent, String name, String path) {
    JsonNode n = parent.get(name);
    if (n == null || n.isNull()) {
      return null;
    }
    return object(parent, name, path);
  }

  public static String string(JsonNode parent, String name, String path) {
    String s = optionalString(parent, name, path);
    if (s == null) {
      throw new IllegalArgumentException(path + ": missing required field");
    }
    return s;
  }

  public static String optionalString(JsonNode parent, String name, String path) {
    JsonNode n = parent.get(name);
    if (n == null || n.isNull()) {
      return null;
    }
    if (!n.isTextual()) {
      throw new IllegalArgumentException(path + ": must be a string, got " + show(n));
    }
    if (n.asText().isBlank()) {
      throw new IllegalArgumentException(path + ": must not be empty");
    }
    return n.asText();
  }

  public static double number(JsonNode parent, String name, String path) {
    Double d = optionalNumber(parent, name, path);
    if (d == null) {
      throw new IllegalArgumentException(path + ": missing required field");
    }
    return d;
  }

  /** A finite number with magnitude at most 1e300; null when absent. */
  public static Double optionalNumber(JsonNode parent, String name, String path) {
    JsonNode n = parent.get(name);
    if (n == null || n.isNull()) {
      return null;
    }
    if (!n.isNumber()) {
      throw new IllegalArgumentException(path + ": must be a number, got " + show(n));
    }
    double d = n.asDouble();
    if (!Double.isFinite(d) || Math.abs(d) > 1e300) {
      throw new IllegalArgumentException(path + ": must be a finite number, got " + n.asText());
    }
    return d;
  }

  public static int integer(JsonNode parent, String name, String path) {
    Integer i = optionalInteger(parent, name, path);
    if (i == null) {
      throw new IllegalArgumentException(path + ": missing required field");
    }
    return i;
  }

  /** An integral number that fits in an int (8 and 8.0 are accepted, 8.5 is not). */
  public static Integer optionalInteger(JsonNode parent, String name, String path) {
    Double d = optionalNumber(parent, name, path);
    if (d == null) {
      return null;
    }
    if (d != Math.rint(d) || d > Integer.MAX_VALUE || d < Integer.MIN_VALUE) {
      throw new IllegalArgumentException(path + ": must be an integer, got "
          + parent.get(name).asText());
    }
    return d.intValue();
  }

  public static Boolean optionalBoolean(JsonNode parent, String name, String path) {
    JsonNode n = parent.get(name);
    if (n == null || n.isNull()) {
      return null;
    }
    if (!n.isBoolean()) {
      throw new IllegalArgumentException(path + ": must be true or false, got " + show(n));
    }
    return n.asBoolean();
  }

  /** Rejects fields outside {@code allowed}, naming the first unknown one. */
  public static void onlyFields(JsonNode node, String path, Set<String> allowed) {
    for (Iterator<String> it = node.fieldNames(); it.hasNext();) {
      String f = it.next();
      if (!allowed.contains(f)) {
        throw new IllegalArgumentException((path.isEmpty() ? "" : path + ".") + f
            + ": unknown field (expected one of " + String.join(", ", allowed) + ")");
      }
    }
  }

  private static String show(JsonNode n) {
    String text = n.toString();
    return text.length() > 40 ? text.substring(0, 40) + "..." : text;
  }
}
