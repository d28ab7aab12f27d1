package io.hyperframes.cli;

import io.hyperframes.plan.PlanListener;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarStyle;

/** A terminal progress bar (me.tongfei:progressbar) fed by a {@link PlanListener}. */
final class ProgressBars {
  private ProgressBars() {}

  /** A bar that closes cleanly; progress is reported in per-mille of the search. */
  static final class Bar implements PlanListener, AutoCloseable {
    private final ProgressBar bar;

    Bar(ProgressBar bar) {
      this.bar = bar;
    }

    @Override
    public void progress(double fraction, long evaluated) {
      synchronized (bar) {
        bar.stepTo(Math.round(fraction * 1000));
        bar.setExtraMessage(evaluated + " candidates");
      }
    }

    @Override
    public void close() {
      bar.close();
    }
  }

  static Bar start(String task) {
    return new Bar(new ProgressBarBuilder().setTaskName(task).setInitialMax(1000)
        .setStyle(ProgressBarStyle.ASCII).setUpdateIntervalMillis(200).continuousUpdate()
        .build());
  }
}
