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
 * The run settings of the kernel benchmarks, which subclasses inherit (JMH's annotations are
 * {@code @Inherited}; a subclass's own annotation wins): average milliseconds per operation,
 * three warm-up and five measured iterations of one second, one fork, state shared by the
 * benchmark's threads. The command line ({@code -wi}, {@code -i}, {@code -f}) still overrides
 * them.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public abstract class MillisPerOperation {}
