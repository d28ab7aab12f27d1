/**
 * HyperFrames core: the planner, its models, catalogs, serving, calibration and validation (pure
 * Java, no native code). Exports the API packages only; {@code io.hyperframes.json} (the Jackson
 * set-up every document is read and written with, and the lookup of enum ids) and
 * {@code io.hyperframes.trace} (the CSV trace reader) and {@code io.hyperframes.stat} (empirical
 * quantiles) are internal. On the class path the jar works unchanged. The packages, their
 * layers and the order of the layers: docs/ARCHITECTURE.md.
 */
module io.hyperframes.core {
  requires com.google.common;
  requires transitive com.fasterxml.jackson.databind;
  requires com.fasterxml.jackson.dataformat.yaml;
  requires commons.math3;
  requires HdrHistogram;
  requires java.management;

  exports io.hyperframes;
  exports io.hyperframes.calibrate;
  exports io.hyperframes.catalog;
  exports io.hyperframes.diagnose;
  exports io.hyperframes.hardware;
  exports io.hyperframes.inference;
  exports io.hyperframes.interconnect;
  exports io.hyperframes.launch;
  exports io.hyperframes.memory;
  exports io.hyperframes.model;
  exports io.hyperframes.parallel;
  exports io.hyperframes.plan;
  exports io.hyperframes.precision;
  exports io.hyperframes.precision.model;
  exports io.hyperframes.report;
  exports io.hyperframes.request;
  exports io.hyperframes.runtime;
  exports io.hyperframes.schedule;
  exports io.hyperframes.spi;
  exports io.hyperframes.validate;
  exports io.hyperframes.workload;

  // The request, catalog and result documents are records bound or written by Jackson.
  opens io.hyperframes.catalog to com.fasterxml.jackson.databind;
  opens io.hyperframes.request to com.fasterxml.jackson.databind;
  opens io.hyperframes.diagnose to com.fasterxml.jackson.databind;
  opens io.hyperframes.plan to com.fasterxml.jackson.databind;
  opens io.hyperframes.inference to com.fasterxml.jackson.databind;
  opens io.hyperframes.validate to com.fasterxml.jackson.databind;

  uses io.hyperframes.spi.BackendProvider;
}
