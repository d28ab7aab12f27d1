package io.hyperframes.spark;

import io.hyperframes.nd4j.compress.Encoded;
import io.hyperframes.nd4j.compress.GradientCodec;
import java.util.List;
import org.deeplearning4j.nn.conf.MultiLayerConfiguration;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.nn.updater.BaseMultiLayerUpdater;
import org.deeplearning4j.nn.workspace.LayerWorkspaceMgr;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.indexing.BooleanIndexing;
import org.nd4j.linalg.indexing.conditions.Conditions;

/**
 * One replica of the network with its optimizer and codec, rebuilt from a {@link WorkerState}
 * (on an executor) or from the initial network (on the driver). Every replica applies the same
 * decoded messages in the same order, so all of them hold the same parameters.
 */
final class Replica {
  final MultiLayerNetwork net;
  final GradientCodec codec;
  private final int workers;

  private Replica(MultiLayerNetwork net, GradientCodec codec, int workers) {
    this.net = net;
    this.codec = codec;
    this.workers = workers;
  }

  /** The driver's replica: {@code net} itself (its parameters change as messages arrive). */
  static Replica driver(MultiLayerNetwork net, String codec, int workers) {
    return new Replica(net, GradientCodec.named(codec), workers);
  }

  /** A worker's replica, on copies of the state's arrays (the state is left as it is). */
  static Replica worker(String confJson, WorkerState s, String codec, int workers) {
    MultiLayerNetwork net = new MultiLayerNetwork(MultiLayerConfiguration.fromJson(confJson));
    net.init(Nd4j.createFromArray(s.params.clone()).reshape(1, s.params.length), false);
    if (s.updater.length > 0) {
      INDArray view = net.getUpdater().getStateViewArray();
      view.assign(Nd4j.createFromArray(s.updater).reshape(view.shape()));
    }
    GradientCodec c = GradientCodec.named(codec);
    c.restore(s.codec);
    return new Replica(net, c, workers);
  }

  /**
   * Applies one step's messages (one per worker, in worker order): the parameters move by the
   * mean of the decoded updates. Each message is checked whole before anything is added. A step
   * in which any worker sent the empty message (a non-finite gradient) is skipped by every
   * replica, as a loss scaler skips a step whose gradients overflowed.
   *
   * @return whether the step was applied
   */
  boolean apply(List<byte[]> messages) {
    if (messages.isEmpty() || messages.stream().anyMatch(m -> m.length == 0)) {
      return false;
    }
    INDArray params = net.params();
    INDArray sum = Nd4j.zeros(DataType.FLOAT, params.length());
    for (byte[] m : messages) {
      codec.decodeAdd(Encoded.fromBytes(m), sum);
    }
    params.subi(sum.divi(workers).reshape(params.shape()));
    return true;
  }

  /**
   * Computes this worker's update on {@code batch} (its gradient through its own optimizer) and
   * returns it encoded for the wire; the parameters do not change until the step's messages are
   * {@link #apply applied}. A gradient with a NaN or an infinity changes nothing (optimizer
   * state, residual) and gives the empty message: every replica then skips the step.
   */
  byte[] update(DataSet batch, long step, int epoch) {
    net.setInput(batch.getFeatures());
    net.setLabels(batch.getLabels());
    net.computeGradientAndScore();
    INDArray gradient = net.getFlattenedGradients();
    if (BooleanIndexing.or(gradient, Conditions.isNan())
        || BooleanIndexing.or(gradient, Conditions.isInfinite())) {
      return new byte[0];
    }
    BaseMultiLayerUpdater<?> updater = (BaseMultiLayerUpdater<?>) net.getUpdater();
    updater.update(net.gradient(), (int) step, epoch, batch.numExamples(),
        LayerWorkspaceMgr.noWorkspaces());
    return codec.encode(net.getFlattenedGradients()).toBytes();
  }

  /** The state to hand on after a step that sent {@code message}. */
  WorkerState state(int worker, long steps, byte[] message, int rows) {
    INDArray view = net.getUpdater() == null ? null : net.getUpdater().getStateViewArray();
    return new WorkerState(worker, steps, net.params().dup().data().asFloat(),
        view == null ? new float[0] : view.dup().data().asFloat(), codec.state(), message,
        net.score(), rows);
  }
}
