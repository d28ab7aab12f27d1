package io.hyperframes.spark;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import org.deeplearning4j.optimize.solvers.accumulation.encoding.threshold.AdaptiveThresholdAlgorithm;
import org.deeplearning4j.spark.api.RDDTrainingApproach;
import org.deeplearning4j.spark.impl.repartitioner.NoOpRepartitioner;
import org.deeplearning4j.spark.parameterserver.training.SharedTrainingMaster;
import org.nd4j.parameterserver.distributed.conf.VoidConfiguration;
import org.nd4j.parameterserver.distributed.v2.enums.MeshBuildMode;
import org.nd4j.parameterserver.distributed.v2.transport.PortSupplier;

/**
 * DL4J's gradient sharing ({@code SharedTrainingMaster}: each worker trains its replica and
 * sends threshold-encoded updates, with their residual kept, to the others over DL4J's own Aeron
 * UDP transport) set up so that it runs with this module's Spark and DL4J versions:
 *
 * <pre>{@code
 * SharedTrainingMaster tm = GradientSharing.on("10.0.0.5").batchSizePerWorker(32).build();
 * MultiLayerConfiguration fusedConf = Dl4jAdapter.accelerate(conf, Precision.BF16).configuration();
 * SparkDl4jMultiLayer net = new SparkDl4jMultiLayer(sc, fusedConf, tm);
 * net.fit(batches);                      // JavaRDD<DataSet>, one partition per worker
 * }</pre>
 *
 * <p>What it settles, each a failure seen with DL4J 1.0.0-M2 on Spark 3.5 and Java 17:
 * <ul>
 *   <li><b>Aeron's timeouts.</b> DL4J's transport sets Aeron's client liveness timeout to 30 s;
 *   Aeron 1.32's media driver then refuses to start unless the publication unblock timeout
 *   ({@value #UNBLOCK_PROPERTY}, 15 s by default) is longer. {@link #build()} sets it to
 *   {@value #UNBLOCK_NANOS} ns on the driver and the port supplier sets it on each executor
 *   before the transport starts, in both places only where it is not set already.</li>
 *   <li><b>Ports.</b> Every executor's transport binds one UDP port. DL4J's default gives all of
 *   them the same port, so two executors on one host (Spark's {@code local-cluster}, several
 *   executors per node on YARN or Kubernetes) collide; here each executor asks the system for a
 *   free port, unless {@link Builder#executorPort} fixes one (a firewall that opens one port).</li>
 *   <li><b>Partitions.</b> DL4J's trainer runs one replica per executor JVM and lets every
 *   further task of that JVM feed it; a task that arrives as the previous one finishes waits
 *   forever (its iterator joins a list the finishing trainer no longer reads). With DL4J's
 *   default repartitioning each mini-batch becomes a task and the job hangs within an epoch.
 *   Here the data are trained as given ({@code Direct}, no repartitioning): give the RDD one
 *   partition per executor core, as {@code sc.parallelize(batches, workers)} does.</li>
 * </ul>
 *
 * <p>In Spark's {@code local} mode every task runs in the driver's JVM, so there is one replica
 * and no message crosses a process; the sharing is real with executors in processes of their
 * own ({@code local-cluster}, a cluster). DL4J keeps one parameter server per JVM: run one
 * gradient-sharing session per Spark context. The fused layers and fused Adam train unchanged:
 * the updater makes the update, the accumulator encodes it, the replicas apply the decoded ones.
 * The sharing is asynchronous and lossy; docs/distributed.md has the accuracy it reached.
 */
public final class GradientSharing {
  /** The Aeron system property this class sets where it is not set. */
  public static final String UNBLOCK_PROPERTY = "aeron.publication.unblock.timeout";
  /** The value it sets: 60 s, twice the client liveness timeout DL4J's transport sets. */
  public static final String UNBLOCK_NANOS = "60000000000";

  private GradientSharing() {
  }

  /**
   * Starts a configuration whose controller (the driver's end of the transport) listens on
   * {@code driverAddress}, an address of the driver every executor can reach.
   *
   * @throws IllegalArgumentException if {@code driverAddress} is blank or does not resolve
   */
  public static Builder on(String driverAddress) {
    if (driverAddress == null || driverAddress.isBlank()) {
      throw new IllegalArgumentException("driverAddress: an address the executors reach, got "
          + (driverAddress == null ? "null" : "'" + driverAddress + "'"));
    }
    try {
      InetAddress.getByName(driverAddress);
    } catch (UnknownHostException e) {
      throw new IllegalArgumentException("driverAddress: '" + driverAddress
          + "' does not resolve", e);
    }
    return new Builder(driverAddress);
  }

  static void setUnblockTimeoutIfAbsent() {
    if (System.getProperty(UNBLOCK_PROPERTY) == null) {
      System.setProperty(UNBLOCK_PROPERTY, UNBLOCK_NANOS);
    }
  }

  /** The settings of one gradient-sharing run. */
  public static final class Builder {
    private final String driverAddress;
    private int driverPort = 40123;
    private int executorPort;
    private int batchSizePerWorker = 32;
    private int workersPerNode = 1;
    private double threshold = 1e-4;
    private long seed = 12345;

    private Builder(String driverAddress) {
      this.driverAddress = driverAddress;
    }

    /** The controller's UDP port on the driver (default 40123). */
    public Builder driverPort(int port) {
      this.driverPort = port(port, "driverPort");
      return this;
    }

    /**
     * One UDP port for every executor's transport (only one executor per host can then run);
     * 0, the default, lets each executor take a free port.
     */
    public Builder executorPort(int port) {
      this.executorPort = port == 0 ? 0 : port(port, "executorPort");
      return this;
    }

    /** Rows per mini-batch on a worker, and per DataSet of the input RDD (default 32). */
    public Builder batchSizePerWorker(int rows) {
      if (rows < 1) {
        throw new IllegalArgumentException("batchSizePerWorker: at least 1, got " + rows);
      }
      this.batchSizePerWorker = rows;
      return this;
    }

    /**
     * Replicas trained in each executor JVM (default 1; DL4J's ParallelWrapper runs more, one
     * per thread, sharing updates in process).
     */
    public Builder workersPerNode(int workers) {
      if (workers < 1) {
        throw new IllegalArgumentException("workersPerNode: at least 1, got " + workers);
      }
      this.workersPerNode = workers;
      return this;
    }

    /**
     * The starting threshold of DL4J's adaptive threshold encoding (default 1e-4): an update
     * entry is sent, as ± threshold, once its accumulated residual reaches it.
     */
    public Builder threshold(double value) {
      if (!(value > 0) || !Double.isFinite(value)) {
        throw new IllegalArgumentException("threshold: a positive finite number, got " + value);
      }
      this.threshold = value;
      return this;
    }

    /** The seed of DL4J's split of the data among workers (default 12345). */
    public Builder seed(long value) {
      this.seed = value;
      return this;
    }

    /** DL4J's training master with these settings; sets Aeron's timeout on this JVM. */
    public SharedTrainingMaster build() {
      setUnblockTimeoutIfAbsent();
      VoidConfiguration voidConf = VoidConfiguration.builder()
          .controllerAddress(driverAddress).unicastPort(driverPort)
          .portSupplier(new ExecutorPort(executorPort))
          .meshBuildMode(MeshBuildMode.PLAIN).build();
      return new SharedTrainingMaster.Builder(voidConf, batchSizePerWorker)
          .thresholdAlgorithm(new AdaptiveThresholdAlgorithm(threshold))
          .batchSizePerWorker(batchSizePerWorker).workersPerNode(workersPerNode)
          .rddTrainingApproach(RDDTrainingApproach.Direct)
          .repartitioner(new NoOpRepartitioner()).rngSeed(seed).collectTrainingStats(false)
          .build();
    }

    private static int port(int port, String field) {
      if (port < 1 || port > 65535) {
        throw new IllegalArgumentException(field + ": a UDP port in 1..65535, got " + port);
      }
      return port;
    }
  }

  /**
   * The executor's transport port: a fixed one, or a free one the system picks. Runs on the
   * executor right before DL4J starts the transport, so it also sets Aeron's timeout there.
   */
  static final class ExecutorPort implements PortSupplier {
    private static final long serialVersionUID = 1L;
    private final int fixed;
    /** The port picked in this JVM (DL4J asks more than once: a log line, then the transport). */
    private transient int picked;

    ExecutorPort(int fixed) {
      this.fixed = fixed;
    }

    @Override
    public synchronized int getPort() {
      setUnblockTimeoutIfAbsent();
      if (fixed > 0) {
        return fixed;
      }
      if (picked == 0) {
        try (DatagramSocket probe = new DatagramSocket(new InetSocketAddress(0))) {
          picked = probe.getLocalPort();
        } catch (IOException e) {
          throw new UncheckedIOException("no free UDP port for the gradient-sharing transport",
              e);
        }
      }
      return picked;
    }
  }
}
