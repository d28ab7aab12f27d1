package io.hyperframes.model;

/**
 * What is trained or served: a dense decoder transformer with its full architecture, a stack of
 * dense layers (an MLP), or only a parameter count for model-state questions.
 */
public sealed interface ModelSpec permits TransformerSpec, ParametersOnlySpec, DenseStackSpec {

  /** Model name as given or as in the catalog. */
  String name();

  /** Total trainable parameters. */
  double parameters();
}
