package io.hyperframes;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** The Java lines a document shows, checked against the test source that runs them. */
final class DocSnippets {
  private DocSnippets() {}

  /**
   * The non-blank lines of the {@code ```java} blocks of {@code text} (imports left out) that the
   * test class {@code testClass} does not contain.
   */
  static List<String> notRunBy(String text, String testClass) throws IOException {
    String self = Files.readString(Path.of("src", "test", "java", "io", "hyperframes",
        testClass + ".java"), StandardCharsets.UTF_8);
    List<String> missing = new ArrayList<>();
    boolean inJava = false;
    for (String line : text.split("\n")) {
      if (line.startsWith("```")) {
        inJava = line.equals("```java");
        continue;
      }
      String code = line.strip();
      if (inJava && !code.isEmpty() && !code.startsWith("import ") && !self.contains(code)) {
        missing.add(code);
      }
    }
    return missing;
  }

  /** How many Java lines the blocks of {@code text} show (imports left out). */
  static int javaLines(String text) {
    int n = 0;
    boolean inJava = false;
    for (String line : text.split("\n")) {
      if (line.startsWith("```")) {
        inJava = line.equals("```java");
      } else if (inJava && !line.isBlank() && !line.strip().startsWith("import ")) {
        n++;
      }
    }
    return n;
  }
}
