/**
 * The package's version, reported as the version of the meter and the tracer. A test keeps it
 * equal to `package.json`.
 *
 * @example
 * ```ts
 * import { PACKAGE_VERSION } from "tool-call-resilience";
 * console.log(PACKAGE_VERSION); // "0.1.0"
 * ```
 */
export const PACKAGE_VERSION = "0.1.0";
