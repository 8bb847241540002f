/**
 * Connection strings fit to print: the password goes, from a URL's user info (encoded or not),
 * from its `password` parameter and from libpq's `key=value` form; everything else stays.
 */
import { describe, expect, it } from "vitest";
import { redactConnectionString } from "../../src/cli/connection-string.js";

describe("redactConnectionString", () => {
  it("redacts the password of a URL and keeps its user, host, port, database and parameters", () => {
    expect(
      redactConnectionString("postgres://app:s3cret@db.internal:5433/agents?sslmode=require"),
    ).toBe("postgres://app:***@db.internal:5433/agents?sslmode=require");
    expect(redactConnectionString("postgresql://app:s3cret@127.0.0.1/agents")).toBe(
      "postgresql://app:***@127.0.0.1/agents",
    );
    expect(redactConnectionString("postgres://:s3cret@db/agents")).toBe(
      "postgres://:***@db/agents",
    );
  });

  it("redacts a password with special characters, percent-encoded or not", () => {
    expect(redactConnectionString("postgres://app:p%40ss%2Fw%3Ard%23%20x@db:5432/agents")).toBe(
      "postgres://app:***@db:5432/agents",
    );
    // Unencoded: the URL parser takes the last `@` or rejects the URL; either way it goes.
    expect(redactConnectionString("postgres://app:p@ss@db/agents")).toBe(
      "postgres://app:***@db/agents",
    );
    expect(redactConnectionString("postgres://app:pa#ss/w?rd@db/agents")).toBe(
      "postgres://app:***@db/agents",
    );
  });

  it("leaves a URL without a password as it is", () => {
    for (const url of [
      "postgres://app@db:5432/agents",
      "postgres://db/agents?sslmode=require&application_name=a%20b",
      "postgresql:///agents?host=/var/run/postgresql",
      "postgres://app:@db/agents",
    ]) {
      expect(redactConnectionString(url)).toBe(url);
    }
  });

  it("redacts a password parameter", () => {
    expect(
      redactConnectionString("postgres://db/agents?user=app&password=s3cret&sslmode=require"),
    ).toBe("postgres://db/agents?user=app&password=***&sslmode=require");
    expect(redactConnectionString("postgres://app:one@db/agents?password=two")).toBe(
      "postgres://app:***@db/agents?password=***",
    );
  });

  it("redacts the password of libpq's key-value form, quoted or not", () => {
    expect(redactConnectionString("host=db port=5432 user=app password=s3cret dbname=agents")).toBe(
      "host=db port=5432 user=app password=*** dbname=agents",
    );
    expect(redactConnectionString("host=db password = 's3 \\' cret' dbname=agents")).toBe(
      "host=db password = *** dbname=agents",
    );
  });

  it("returns other strings unchanged", () => {
    for (const text of [
      "",
      "not a connection string",
      "postgres://",
      "host=db user=app",
      "::::@@",
    ]) {
      expect(redactConnectionString(text)).toBe(text);
    }
  });

  it("never returns the password", () => {
    const password = "Tr0ub4dor&3";
    for (const text of [
      `postgres://app:${encodeURIComponent(password)}@db/agents`,
      `postgres://app:${password}@db/agents`,
      `postgres://app@db/agents?password=${encodeURIComponent(password)}`,
      `host=db password='${password}'`,
      `postgres://app:${password}@[broken/agents`,
    ]) {
      const redacted = redactConnectionString(text);
      expect(redacted).not.toContain(password);
      expect(redacted).not.toContain(encodeURIComponent(password));
    }
  });
});
