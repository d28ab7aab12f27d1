package io.hyperframes.cli;

/** Output formats of the commands. */
enum Format {
  table,
  json,
  markdown,
  html
}
