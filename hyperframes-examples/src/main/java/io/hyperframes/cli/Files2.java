package io.hyperframes.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** File reading with errors as one-line {@link IllegalArgumentException}s. */
final class Files2 {
  private Files2() {}

  static String read(String option, Path file) {
    try {
      return Files.readString(file, StandardCharsets.UTF_8);
    } catch (java.nio.file.NoSuchFileException e) {
      throw new IllegalArgumentException(option + ": no such file " + file, e);
    } catch (IOException | java.io.UncheckedIOException e) {
      throw new IllegalArgumentException(option + ": cannot read " + file + ": " + e.getMessage(),
          e);
    }
  }
}
