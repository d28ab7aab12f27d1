package io.hyperframes.cli;

import io.hyperframes.nd4j.FusedDense;
import io.hyperframes.nd4j.Kernels;
import java.util.Locale;
import org.nd4j.linalg.api.buffer.DataType;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The {@code --precision} option of the bench commands that run the fused layers ({@code bench
 * train}, {@code bench transformer}, {@code bench infer}), as a picocli mixin
 * ({@code @Mixin PrecisionOption precision}). {@code auto}, the default, takes BF16 where this
 * CPU's oneDNN runs BF16 matmuls natively and FP32 elsewhere
 * ({@link FusedDense.Precision#fastestOn}); {@code bf16} and {@code fp32} ask for one. Any other
 * value is refused while the command line is read, with exit status 2 and a message that names
 * the option and the value.
 */
final class PrecisionOption {

  @Spec(Spec.Target.MIXEE) CommandSpec command;

  private String requested = "auto";

  @Option(names = "--precision", defaultValue = "auto", paramLabel = "PRECISION",
      description = "Products of the HyperFrames side's fused layers: auto (default: bf16 where"
          + " the CPU has a native BF16 matmul, avx512_bf16 or AMX, else fp32), bf16 or fp32.")
  void set(String value) {
    String v = value.toLowerCase(Locale.ROOT);
    if (!v.equals("auto") && !v.equals("bf16") && !v.equals("fp32")) {
      throw new ParameterException(command.commandLine(), "--precision: " + value
          + " is not auto, bf16 or fp32");
    }
    requested = v;
  }

  /** What the command line asked for: {@code auto}, {@code bf16} or {@code fp32}. */
  String requested() {
    return requested;
  }

  /** The precision the layers run in, {@code auto} resolved on this CPU. */
  FusedDense.Precision resolved() {
    return switch (requested) {
      case "bf16" -> FusedDense.Precision.BF16;
      case "fp32" -> FusedDense.Precision.FP32;
      default -> FusedDense.Precision.fastestOn(Kernels.cpu());
    };
  }

  /** The operand type of {@code precision}'s matmuls, the format of the benches' matmul limit. */
  static DataType matmulType(FusedDense.Precision precision) {
    return precision == FusedDense.Precision.BF16 ? DataType.BFLOAT16 : DataType.FLOAT;
  }

  /** {@link #resolved()} as the JSON and the record write it: {@code bf16} or {@code fp32}. */
  String name() {
    return resolved().name().toLowerCase(Locale.ROOT);
  }
}
