package io.hyperframes.cli;

import picocli.CommandLine.Command;

/** {@code hyperframes bench}: measurements on this machine. */
@Command(name = "bench", mixinStandardHelpOptions = true,
    description = "Measure workloads on this machine.",
    subcommands = {BenchKernelsCommand.class, BenchTrainCommand.class,
        BenchTransformerCommand.class, BenchInferCommand.class, BenchAdaptersCommand.class,
        BenchCompressionCommand.class, BenchPlanCommand.class})
final class BenchCommand {}
