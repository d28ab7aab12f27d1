package io.hyperframes;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.hyperframes.catalog.ModelDocuments;
import io.hyperframes.request.Documents;
import io.hyperframes.json.Json;
import io.hyperframes.model.TransformerSpec;

/**
 * An immutable request document in the JSON vocabulary, built one field at a time: what the
 * builders hold, so that a request built in Java and the same request written as JSON are one
 * document, parsed and checked by one code path with one set of messages.
 */
final class Tree {

  private final ObjectNode root;

  private Tree(ObjectNode root) {
    this.root = root;
  }

  static Tree empty() {
    return new Tree(Json.mapper().createObjectNode());
  }

  /**
   * This document with {@code path} ("cluster.accelerator") set to {@code value}.
   *
   * @throws IllegalStateException when the field is already set, showing the old value
   */
  Tree with(String path, JsonNode value) {
    if (value == null || value.isNull()) {
      throw new IllegalArgumentException(path + ": must be given");
    }
    ObjectNode copy = root.deepCopy();
    String[] parts = path.split("\\.");
    ObjectNode node = copy;
    for (int i = 0; i < parts.length - 1; i++) {
      JsonNode child = node.get(parts[i]);
      node = child instanceof ObjectNode o ? o : node.putObject(parts[i]);
    }
    String leaf = parts[parts.length - 1];
    if (node.has(leaf)) {
      throw new IllegalStateException(path + ": already set to " + node.get(leaf));
    }
    node.set(leaf, value);
    return new Tree(copy);
  }

  Tree with(String path, String value) {
    if (value == null) {
      throw new IllegalArgumentException(path + ": must be given");
    }
    return with(path, Json.mapper().getNodeFactory().textNode(value));
  }

  Tree with(String path, double value) {
    return with(path, Json.mapper().getNodeFactory().numberNode(value));
  }

  Tree with(String path, int value) {
    return with(path, Json.mapper().getNodeFactory().numberNode(value));
  }

  Tree with(String path, boolean value) {
    return with(path, Json.mapper().getNodeFactory().booleanNode(value));
  }

  /** Every field of {@code sub} under {@code prefix} (a sub-builder's document). */
  Tree withAll(String prefix, Tree sub) {
    Tree t = this;
    for (var it = sub.root.properties().iterator(); it.hasNext();) {
      var e = it.next();
      t = t.with(prefix + "." + e.getKey(), e.getValue());
    }
    return t;
  }

  boolean has(String field) {
    return root.has(field);
  }

  /** A copy of the document. */
  ObjectNode json() {
    return root.deepCopy();
  }

  /** The document as indented JSON. */
  String text() {
    try {
      return Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(root);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  /** A transformer architecture in the request's {@code model} vocabulary. */
  static ObjectNode model(TransformerSpec m) {
    if (m == null) {
      throw new IllegalArgumentException("model: must be given");
    }
    return Json.tree(ModelDocuments.Model.of(m));
  }
}
