package io.hyperframes.launch;

import com.fasterxml.jackson.databind.JsonNode;
import io.hyperframes.json.Json;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The Dockerfile grammar of the Dockerfile reference (docs.docker.com/reference/dockerfile):
 * parser directives, then instructions, one per logical line (a backslash at the end of a line
 * continues it), comments on lines of their own; the first instruction is {@code FROM} (after
 * {@code ARG}s); {@code FROM image [AS name]}; {@code ENV key=value ...}; {@code ARG name[=value]};
 * the exec form of {@code ENTRYPOINT} and {@code CMD} a JSON array of strings. A test helper:
 * an {@link AssertionError} names the line that breaks it.
 */
final class DockerfileGrammar {
  private DockerfileGrammar() {}

  record Instruction(int line, String keyword, String arguments) {}

  private static final Set<String> KEYWORDS = Set.of("FROM", "RUN", "CMD", "LABEL", "EXPOSE",
      "ENV", "ADD", "COPY", "ENTRYPOINT", "VOLUME", "USER", "WORKDIR", "ARG", "ONBUILD",
      "STOPSIGNAL", "HEALTHCHECK", "SHELL");

  static List<Instruction> parse(String text) {
    List<Instruction> out = new ArrayList<>();
    String[] lines = text.split("\n", -1);
    boolean directives = true;
    StringBuilder logical = null;
    int start = 0;
    for (int i = 0; i < lines.length; i++) {
      String line = lines[i];
      String trimmed = line.strip();
      if (logical == null) {
        if (trimmed.isEmpty()) {
          directives = false;
          continue;
        }
        if (trimmed.startsWith("#")) {
          if (directives && !trimmed.matches("#\\s*[a-z]+=\\S+")) {
            directives = false;
          }
          continue;
        }
        directives = false;
        logical = new StringBuilder();
        start = i + 1;
      } else if (trimmed.startsWith("#")) {
        continue; // comments inside a continued instruction are removed
      }
      if (trimmed.endsWith("\\")) {
        logical.append(trimmed, 0, trimmed.length() - 1).append(' ');
        continue;
      }
      logical.append(trimmed);
      out.add(instruction(start, logical.toString()));
      logical = null;
    }
    if (logical != null) {
      throw new AssertionError("line " + start + ": continuation runs past the end");
    }
    check(out);
    return out;
  }

  private static Instruction instruction(int line, String text) {
    int space = text.indexOf(' ');
    if (space < 0) {
      throw new AssertionError("line " + line + ": instruction without arguments: " + text);
    }
    String keyword = text.substring(0, space).toUpperCase(Locale.ROOT);
    if (!KEYWORDS.contains(keyword)) {
      throw new AssertionError("line " + line + ": unknown instruction " + keyword);
    }
    String args = text.substring(space + 1).strip();
    switch (keyword) {
      case "FROM" -> {
        if (!args.matches("\\S+(\\s+(?i:AS)\\s+[a-z0-9][a-z0-9_.-]*)?")) {
          throw new AssertionError("line " + line + ": FROM image [AS name], got " + args);
        }
      }
      case "ENV" -> {
        if (!args.matches("([A-Za-z_][A-Za-z0-9_]*=\\S*\\s*)+")) {
          throw new AssertionError("line " + line + ": ENV key=value ..., got " + args);
        }
      }
      case "ARG" -> {
        if (!args.matches("[A-Za-z_][A-Za-z0-9_]*(=\\S*)?")) {
          throw new AssertionError("line " + line + ": ARG name[=value], got " + args);
        }
      }
      case "ENTRYPOINT", "CMD" -> {
        if (args.startsWith("[")) {
          JsonNode array;
          try {
            array = Json.mapper().readTree(args);
          } catch (Exception e) {
            throw new AssertionError("line " + line + ": exec form is not JSON: " + args, e);
          }
          if (!array.isArray() || array.isEmpty()) {
            throw new AssertionError("line " + line + ": exec form must be a JSON array");
          }
          array.forEach(v -> {
            if (!v.isTextual()) {
              throw new AssertionError("line " + line + ": exec form of strings, got " + v);
            }
          });
        }
      }
      default -> { }
    }
    return new Instruction(line, keyword, args);
  }

  private static void check(List<Instruction> ins) {
    for (Instruction i : ins) {
      if (i.keyword().equals("FROM")) {
        return;
      }
      if (!i.keyword().equals("ARG")) {
        throw new AssertionError("line " + i.line() + ": " + i.keyword() + " before the first"
            + " FROM");
      }
    }
    throw new AssertionError("no FROM");
  }
}
