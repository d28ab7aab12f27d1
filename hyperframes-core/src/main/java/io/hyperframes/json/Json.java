package io.hyperframes.json;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.exc.InputCoercionException;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.type.LogicalType;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.io.IOException;
import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;

/**
 * The JSON mapper of requests, catalogs and results, and data binding whose every failure is an
 * {@link IllegalArgumentException} naming the field path and the offending value, in the words
 * the rest of the library uses ("layout.tp: must be an integer, got true").
 *
 * <p>Binding is strict: unknown fields, a string where a number is expected ({@code "64"}), a
 * fraction where an integer is expected ({@code 6.5}, also {@code 8.0}), a number where a string
 * or a boolean is expected, duplicate keys, {@code NaN} and trailing tokens are all rejected.
 */
public final class Json {
  private Json() {}

  private static final ObjectMapper MAPPER = JsonMapper.builder()
      .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
      .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
      .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
      .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
      .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
      .disable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS)
      .disable(SerializationFeature.FAIL_ON_EMPTY_BEANS)
      .withCoercionConfig(LogicalType.Textual, c -> c
          .setCoercion(CoercionInputShape.Integer, CoercionAction.Fail)
          .setCoercion(CoercionInputShape.Float, CoercionAction.Fail)
          .setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail))
      .defaultPropertyInclusion(JsonInclude.Value.construct(JsonInclude.Include.NON_NULL,
          JsonInclude.Include.NON_NULL))
      .build();

  /** Puts {@code v} at {@code field}, or JSON null where it is NaN or infinite. */
  public static void putFinite(com.fasterxml.jackson.databind.node.ObjectNode o, String field,
      double v) {
    if (Double.isFinite(v)) {
      o.put(field, v);
    } else {
      o.putNull(field);
    }
  }

  /** A string field: null when absent; blank is rejected. */
  public static String text(String path, String value) {
    if (value != null && value.isBlank()) {
      throw new IllegalArgumentException(path + ": must not be empty");
    }
    return value;
  }

  /** {@code value}, or a "missing required field" error naming {@code path}. */
  public static <T> T required(String path, T value) {
    if (value == null) {
      throw new IllegalArgumentException(path + ": missing required field");
    }
    return value;
  }

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
          + node.getNodeType().name().toLowerCase(Locale.ROOT));
    }
    return node;
  }

  /**
   * Binds a parsed document to {@code type}.
   *
   * @param prefix path of {@code node} in the document ("" for the root, "cases[3].request")
   * @throws IllegalArgumentException naming the field path and the value
   */
  public static <T> T bind(JsonNode node, Class<T> type, String prefix) {
    // The parser stays open until the message is written: it holds the offending token.
    JsonParser p = MAPPER.treeAsTokens(node);
    try {
      return MAPPER.readValue(p, type);
    } catch (JsonMappingException e) {
      throw new IllegalArgumentException(message(e, prefix), e);
    } catch (IOException e) {
      throw new IllegalArgumentException(prefix + ": " + firstLine(e.getMessage()), e);
    } finally {
      try {
        p.close();
      } catch (IOException ignored) {
        // a tree parser holds no resource
      }
    }
  }

  /** Parses {@code text} (an object) and binds it to {@code type}. */
  public static <T> T read(String what, String text, Class<T> type) {
    return bind(parseObject(what, text), type, "");
  }

  /** A result record (or any bean) as a JSON tree, in the order of its components. */
  public static com.fasterxml.jackson.databind.node.ObjectNode tree(Object value) {
    return MAPPER.valueToTree(value);
  }

  static String message(JsonMappingException e, String prefix) {
    String path = path(e, prefix);
    if (e instanceof UnrecognizedPropertyException u) {
      List<String> known = new ArrayList<>();
      Class<?> owner = u.getReferringClass();
      if (owner != null && owner.isRecord()) {
        for (RecordComponent c : owner.getRecordComponents()) {
          known.add(c.getName());
        }
      } else if (u.getKnownPropertyIds() != null) {
        u.getKnownPropertyIds().forEach(id -> known.add(String.valueOf(id)));
      }
      return path + ": unknown field (expected one of " + String.join(", ", known) + ")";
    }
    if (e.getCause() instanceof IllegalArgumentException a) {
      return a.getMessage();
    }
    if (e.getCause() instanceof InputCoercionException c) {
      return path + ": must be " + kind(c.getTargetType()) + ", got " + shown(c.getProcessor());
    }
    if (e instanceof MismatchedInputException m && m.getTargetType() != null) {
      return path + ": must be " + kind(m.getTargetType()) + ", got "
          + shown(m.getProcessor());
    }
    return path + ": " + firstLine(e.getOriginalMessage());
  }

  private static String path(JsonMappingException e, String prefix) {
    StringBuilder b = new StringBuilder(prefix);
    for (JsonMappingException.Reference r : e.getPath()) {
      if (r.getFieldName() != null) {
        b.append(b.length() == 0 ? "" : ".").append(r.getFieldName());
      } else if (r.getIndex() >= 0) {
        b.append('[').append(r.getIndex()).append(']');
      }
    }
    return b.length() == 0 ? "request" : b.toString();
  }

  private static String kind(Class<?> t) {
    if (t == Integer.class || t == int.class || t == Long.class || t == long.class) {
      return "an integer";
    }
    if (t == Double.class || t == double.class || t == Float.class || t == float.class) {
      return "a number";
    }
    if (t == String.class) {
      return "a string";
    }
    if (t == Boolean.class || t == boolean.class) {
      return "true or false";
    }
    if (Collection.class.isAssignableFrom(t) || t.isArray()) {
      return "an array";
    }
    return "an object";
  }

  private static String shown(Object processor) {
    if (!(processor instanceof JsonParser p)) {
      return "another type";
    }
    try {
      JsonToken t = p.currentToken();
      if (t == null) {
        return "nothing";
      }
      String text = switch (t) {
        case VALUE_STRING -> "\"" + p.getText() + "\"";
        case VALUE_NUMBER_FLOAT -> String.valueOf(p.getDoubleValue());
        case START_OBJECT -> "an object";
        case START_ARRAY -> "an array";
        default -> p.getText();
      };
      return text.length() > 40 ? text.substring(0, 40) + "..." : text;
    } catch (IOException e) {
      return "another type";
    }
  }

  private static String firstLine(String s) {
    return s == null ? "" : s.split("\n")[0];
  }
}
