package io.hyperframes.diagnose;

/**
 * Advice drawn from an estimate: what was found, the numbers that show it, and what to do.
 *
 * @param id stable identifier ("comm-bound")
 * @param severity how urgent
 * @param title one-line statement with the key number
 * @param evidence the figures that triggered it
 * @param remedy what to change
 */
public record Finding(String id, Severity severity, String title, String evidence,
    String remedy) {}
