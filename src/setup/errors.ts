/** The error the setup entry point throws when it cannot start, and its guard. */
import { isInstance, nameOf, SETUP_ERROR_NAME, ToolCallResilienceError } from "../core/errors.js";

/** Thrown by `startTelemetry` and `recommendedViews` when they cannot start; nothing is left running. */
export class ToolCallResilienceSetupError extends ToolCallResilienceError {
  override name = SETUP_ERROR_NAME;
}

/**
 * Tells whether a value is a {@link ToolCallResilienceSetupError}, from this copy of the package
 * or from another one loaded in the same process (then by its `name`).
 *
 * @example
 * ```ts
 * try {
 *   await startTelemetry({ serviceName: "support-agent" });
 * } catch (error) {
 *   if (isSetupError(error)) console.error("Telemetry not started:", error.message);
 * }
 * ```
 */
export function isSetupError(error: unknown): error is ToolCallResilienceSetupError {
  return isInstance(error, ToolCallResilienceSetupError) || nameOf(error) === SETUP_ERROR_NAME;
}
