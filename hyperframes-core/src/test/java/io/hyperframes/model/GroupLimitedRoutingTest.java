package io.hyperframes.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.catalog.Catalog;
import io.hyperframes.catalog.ModelDocuments;
import org.junit.jupiter.api.Test;

/**
 * {@code model.moe.groups} and {@code groupTopK}: DeepSeek-V3's group-limited routing (n_group 8,
 * topk_group 4) in the catalog, read from its Hugging Face config, bound from a request with the
 * unlimited defaults, and every bad value named.
 */
class GroupLimitedRoutingTest {

  @Test
  void deepSeekV3RoutesFromFourOfEightGroups() {
    MoeSpec moe = Catalog.builtIn().model("model", "deepseek-v3").moe();
    assertEquals(8, moe.groups());
    assertEquals(4, moe.groupTopK());
    assertTrue(moe.groupLimited());
    MoeSpec qwen = Catalog.builtIn().model("model", "qwen3-235b-a22b").moe();
    assertEquals(1, qwen.groups());
    assertFalse(qwen.groupLimited());
  }

  @Test
  void aRequestBindsTheGroupsWithUnlimitedDefaults() {
    MoeSpec open = new ModelDocuments.Moe(64, 6, 1408, null, null, null, null, null, null, null)
        .resolve("model.moe");
    assertEquals(1, open.groups());
    assertEquals(1, open.groupTopK());
    MoeSpec all = new ModelDocuments.Moe(64, 6, 1408, null, null, null, null, null, 8, null)
        .resolve("model.moe");
    assertEquals(8, all.groupTopK());
    assertFalse(all.groupLimited());
    MoeSpec limited = new ModelDocuments.Moe(64, 6, 1408, null, null, null, null, null, 8, 3)
        .resolve("model.moe");
    assertTrue(limited.groupLimited());
    assertEquals(limited, ModelDocuments.Moe.of(limited).resolve("model.moe"));
  }

  @Test
  void badGroupsAreNamed() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> new MoeSpec(256, 8, 2048, 0, 0, 0, 1, 0, 3, 1));
    assertTrue(e.getMessage().startsWith("model.moe.groups: 3 does not divide"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class,
        () -> new MoeSpec(256, 8, 2048, 0, 0, 0, 1, 0, 8, 9));
    assertTrue(e.getMessage().startsWith("model.moe.groupTopK: must be in [1,"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class,
        () -> new MoeSpec(256, 2, 2048, 0, 0, 0, 1, 0, 8, 4));
    assertTrue(e.getMessage().startsWith("model.moe.groupTopK: 4 is more than model.moe.topK 2"),
        e.getMessage());
    e = assertThrows(IllegalArgumentException.class,
        () -> new MoeSpec(16, 8, 2048, 0, 0, 0, 1, 0, 8, 2));
    assertTrue(e.getMessage().startsWith("model.moe.groupTopK: 2 groups of 2 experts hold"),
        e.getMessage());
    e = assertThrows(IllegalArgumentException.class,
        () -> new MoeSpec(256, 8, 2048, 0, 0, 0, 1, 0, 0, 1));
    assertTrue(e.getMessage().startsWith("model.moe.groups"), e.getMessage());
  }
}
