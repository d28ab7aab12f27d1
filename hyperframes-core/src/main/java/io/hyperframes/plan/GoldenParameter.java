package io.hyperframes.plan;

/**
 * One entry of the golden parameter table: a setting, its value and why.
 *
 * @param name setting name ("dataLoaderWorkers")
 * @param value the value (number or text)
 * @param unit unit of a numeric value ("bytes", "steps", ""), or empty
 * @param reason how it was derived, with the numbers
 */
public record GoldenParameter(String name, Object value, String unit, String reason) {}
