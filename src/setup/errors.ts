/** The error the setup entry point throws when it cannot start. */
import { ToolCallResilienceError } from "../core/errors.js";

/** Thrown by `startTelemetry` and `recommendedViews` when they cannot start; nothing is left running. */
export class ToolCallResilienceSetupError extends ToolCallResilienceError {
  override name = "ToolCallResilienceSetupError";
}
