/**
 * The parts of the training runtime that need no array library and no native code, shared by
 * the ND4J/DL4J adapters ({@code hyperframes-nd4j}) and the DJL adapter ({@code hyperframes-djl}):
 * the step meter and its findings ({@link io.hyperframes.runtime.StepMeter}), the ordered
 * exactly-once prefetcher ({@link io.hyperframes.runtime.Prefetcher}), the dynamic loss-scale
 * state machine ({@link io.hyperframes.runtime.LossScale}) and atomic, asynchronous checkpoint
 * files ({@link io.hyperframes.runtime.CheckpointFiles}).
 */
package io.hyperframes.runtime;
