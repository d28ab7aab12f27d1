package io.hyperframes.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.hyperframes.catalog.Catalog;
import io.hyperframes.hardware.Cluster;
import io.hyperframes.hardware.NodeTemplate;
import io.hyperframes.interconnect.Collective;
import io.hyperframes.interconnect.CollectiveGroup;
import io.hyperframes.interconnect.InterconnectModel;
import io.hyperframes.request.Documents;
import io.hyperframes.plan.Plan;
import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The GB200 NVL72 template: 72 GPUs in one NVLink domain, in 18 hosts of 4. Collectives inside
 * the domain run over NVLink; a launch has one pod per host, its loaders and /dev/shm sized for
 * the host's 4 GPUs and 144 cores.
 */
class Gb200Nvl72Test {

  private static final Catalog CATALOG = Catalog.builtIn();

  @Test
  void theTemplateIsOneNvlinkDomainOfEighteenHosts() {
    NodeTemplate node = CATALOG.nodes().get("gb200-nvl72");
    assertEquals(72, node.devicesPerNode());
    assertEquals(4, node.devicesPerHost());
    Cluster c = new Documents.Cluster(null, "gb200-nvl72", Documents.Devices.count(144), null,
        null).resolve(CATALOG);
    assertEquals(2, c.nodes());
    assertEquals(4, c.devicesPerHost());
    assertEquals(144, c.hostCoresPerHost());
    assertEquals("nvlink5-nvswitch", c.intraNode().id());
    // A node of the request's own size that the hosts do not divide is one host.
    Cluster own = new Documents.Cluster(null, "gb200-nvl72", Documents.Devices.count(6), 6,
        null).resolve(CATALOG);
    assertEquals(6, own.devicesPerHost());
    assertThrows(IllegalArgumentException.class, () -> new Cluster(c.accelerator(), 72, 72,
        c.intraNode(), c.interNode(), 0, 0.0, 5));
  }

  @Test
  void aCollectiveOverTheRackStaysOnNvlink() {
    Cluster nvl72 = new Documents.Cluster(null, "gb200-nvl72", Documents.Devices.count(72), null,
        null).resolve(CATALOG);
    Cluster b200 = new Documents.Cluster(null, "dgx-b200", Documents.Devices.count(72), null,
        null).resolve(CATALOG);
    InterconnectModel net = InterconnectModel.alphaBeta();
    double bytes = 1e9;
    double rack = net.time(nvl72, Collective.ALL_REDUCE, bytes, new CollectiveGroup(72, 72))
        .seconds();
    double nodes = net.time(b200, Collective.ALL_REDUCE, bytes, new CollectiveGroup(72, 8))
        .seconds();
    assertTrue(rack < nodes / 2, rack + " s in the NVLink domain against " + nodes
        + " s over nine DGX B200");
  }

  @Test
  void aLaunchHasOnePodPerHost() throws IOException {
    Plan plan = LaunchTest.plan("""
        {"model": {"catalog": "llama3-8b"},
         "cluster": {"template": "gb200-nvl72", "devices": 16},
         "workload": {"type": "training", "precision": "bf16-mixed", "globalBatchSize": 128,
                      "trainingTokens": 1e10, "optimizer": "adam"},
         "layout": {"tp": 1, "pp": 1, "dp": 16, "microBatch": 1}}
        """);
    List<JsonNode> docs = LaunchTest.validate(Launch.emit(plan, Target.KUBERNETES));
    JsonNode job = docs.get(docs.size() - 1);
    int pods = 0;
    for (JsonNode r : job.at("/spec/pytorchReplicaSpecs")) {
      pods += r.get("replicas").asInt();
      assertEquals("4", r.at("/template/spec/containers/0/resources/limits/nvidia.com~1gpu")
          .asText());
    }
    assertEquals(4, pods, "16 GPUs in hosts of 4");
    assertTrue(job.toString().contains("\"nprocPerNode\":\"4\""), job.toString());
    String workers = plan.goldenParameters().stream()
        .filter(g -> g.name().equals("dataLoaderWorkers")).findFirst().orElseThrow().reason();
    assertTrue(workers.startsWith("144 host cores / 4 devices"), workers);
  }
}
