package io.hyperframes.bench;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The run settings of the scheduling benchmarks, which subclasses inherit (JMH's annotations are
 * {@code @Inherited}): operations per second (with {@code @OperationsPerInvocation}, events per
 * second), two warm-up and three measured iterations of two seconds, one fork, state shared by
 * the benchmark's threads. The command line still overrides them.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
@Fork(1)
public abstract class OperationsPerSecond {}
