package io.hyperframes.spi;

import java.util.Map;

/**
 * A runtime backend: what it runs on and what it can do. Created by a {@link BackendProvider}.
 */
public interface Backend {

  /** Short name ("cpu-onednn"). */
  String name();

  /** Whether the backend's fast path (native library, instructions) is in use. */
  boolean accelerated();

  /** Why the fast path is not in use; empty when it is. */
  String fallbackReason();

  /**
   * Facts for reports and provenance: library versions, instruction set, the implementation
   * chosen per primitive ("matmul.bf16" → "brg:avx512_core_bf16").
   */
  Map<String, String> capabilities();
}
