/**
 * The package's version, reported as the version of the meter and the tracer. A test keeps it
 * equal to `package.json`.
 */
export const PACKAGE_VERSION = "0.1.0";
