package io.hyperframes.json;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

/**
 * The constants of the vocabulary's enums by the ids requests write them with: one lookup and one
 * wording of its error for every enum field of every request.
 */
public final class Ids {
  private Ids() {}

  /**
   * The constant of {@code type} whose {@code id} is {@code value}, or one of {@code aliases}'
   * keys, trimmed and lower-cased.
   *
   * @param what what the field names, for the error ("number format")
   * @throws IllegalArgumentException {@code "FIELD: unknown WHAT 'VALUE' (expected a, b or c)"},
   *     listing the ids in declaration order (aliases are not listed)
   */
  public static <E extends Enum<E>> E byId(Class<E> type, Function<E, String> id,
      Map<String, E> aliases, String field, String value, String what) {
    String v = value == null ? "" : value.trim().toLowerCase(Locale.ROOT);
    for (E e : type.getEnumConstants()) {
      if (id.apply(e).equals(v)) {
        return e;
      }
    }
    E alias = aliases.get(v);
    if (alias != null) {
      return alias;
    }
    throw new IllegalArgumentException(field + ": unknown " + what + " '" + value
        + "' (expected " + listing(type, id) + ")");
  }

  /** The same without aliases. */
  public static <E extends Enum<E>> E byId(Class<E> type, Function<E, String> id, String field,
      String value, String what) {
    return byId(type, id, Map.of(), field, value, what);
  }

  /**
   * The id of a constant named as its id reads: its name in lower case ({@code MLA_UP_PROJ}:
   * "mla_up_proj"). For an enum's {@code id} field, so that each constant names its id once.
   */
  public static String lowerCase(Enum<?> constant) {
    return constant.name().toLowerCase(Locale.ROOT);
  }

  /**
   * The id of a constant whose id joins its words with hyphens: its name in lower case with
   * {@code -} for {@code _} ({@code FP8_E4M3}: "fp8-e4m3", {@code PER_HEAD}: "per-head").
   */
  public static String hyphenated(Enum<?> constant) {
    return lowerCase(constant).replace('_', '-');
  }

  /** The ids of {@code type}'s constants as a sentence's list: "a, b or c". */
  public static <E extends Enum<E>> String listing(Class<E> type, Function<E, String> id) {
    List<String> ids = new ArrayList<>();
    for (E e : type.getEnumConstants()) {
      ids.add(id.apply(e));
    }
    int n = ids.size();
    return n == 1 ? ids.get(0)
        : String.join(", ", ids.subList(0, n - 1)) + " or " + ids.get(n - 1);
  }
}
