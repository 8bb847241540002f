/**
 * The demo's command line: defaults, each option's value, the messages that name a bad option,
 * and `--help`, which documents every option the parser accepts with the default it uses.
 */
import { describe, expect, it } from "vitest";
import { CONVERSATION_TURNS } from "../../demo/fleet.js";
import {
  DEMO_OPTIONS,
  type DemoOptions,
  DemoOptionsError,
  HELP,
  parseDemoOptions,
} from "../../demo/options.js";

/** The options, or fails the test when the parser asked for help. */
function parsed(args: readonly string[]): DemoOptions {
  const options = parseDemoOptions(args);
  if (options === "help") throw new Error(`${args.join(" ")} asked for help`);
  return options;
}

/** The error the parser raises for these arguments; fails the test when it raises none. */
function rejection(args: readonly string[]): DemoOptionsError {
  try {
    parseDemoOptions(args);
  } catch (error) {
    expect(error).toBeInstanceOf(DemoOptionsError);
    return error as DemoOptionsError;
  }
  throw new Error(`${args.join(" ")} was accepted`);
}

/** `interrupt-rate` as a field of {@link DemoOptions}: `interruptRate`; `--no-kill` is `killAt`. */
function fieldOf(option: string): keyof DemoOptions {
  if (option === "no-persist") return "persist";
  if (option === "no-kill") return "killAt";
  return option.replace(/-([a-z])/g, (_, letter: string) =>
    letter.toUpperCase(),
  ) as keyof DemoOptions;
}

/**
 * The options listed under "Options:" in the help text, each with the rest of its entry (its
 * continuation lines joined).
 */
function documentedOptions(): Map<string, string> {
  const from = HELP.indexOf("\nOptions:\n");
  const section = HELP.slice(from, HELP.indexOf("\n\n", from + 1));
  const documented = new Map<string, string>();
  let current: string | undefined;
  for (const line of section.split("\n").slice(2)) {
    const entry = /^ {2}--([a-z-]+)(.*)$/.exec(line);
    if (entry !== null) {
      current = entry[1] as string;
      documented.set(current, entry[2] as string);
    } else if (current !== undefined) {
      documented.set(current, `${documented.get(current)} ${line.trim()}`);
    }
  }
  return documented;
}

const DEFAULTS: DemoOptions = {
  duration: 60,
  threads: 40,
  concurrency: 8,
  turns: undefined,
  interruptRate: 0.04,
  spikeAt: undefined,
  spikeRate: 0.6,
  spikeLength: 600,
  locale: "en",
  seed: 1,
  port: 9464,
  traces: false,
  otlp: undefined,
  prometheus: false,
  prometheusPort: 9090,
  hold: false,
  report: undefined,
  workers: undefined,
  postgres: undefined,
  persist: true,
  killAt: undefined,
};

describe("demo options", () => {
  describe("defaults", () => {
    it("runs 40 threads for 60 s, 8 at a time, 4% of runs interrupted, metrics on 9464", () => {
      expect(parsed([])).toEqual(DEFAULTS);
    });
  });

  describe("numeric options", () => {
    it.each([
      ["duration", "2.5", 2.5],
      ["threads", "12", 12],
      ["concurrency", "3", 3],
      ["turns", "4", 4],
      ["interrupt-rate", "0.25", 0.25],
      ["spike-at", "0", 0],
      ["spike-rate", "1", 1],
      ["spike-length", "30", 30],
      ["seed", "4294967295", 4_294_967_295],
      ["port", "9471", 9471],
      ["prometheus-port", "9191", 9191],
    ])("--%s %s sets it to %d, leaving every other option at its default", (option, raw, value) => {
      expect(parsed([`--${option}`, raw])).toEqual({ ...parsed([]), [fieldOf(option)]: value });
    });

    it("accepts --option=value and surrounding spaces", () => {
      expect(parsed(["--threads=7", "--interrupt-rate", " .5 "])).toMatchObject({
        threads: 7,
        interruptRate: 0.5,
      });
    });
  });

  describe("other options", () => {
    it("passes --locale and --report through as given", () => {
      expect(parsed(["--locale", "pt-BR", "--report", "out/report.json"])).toMatchObject({
        locale: "pt-BR",
        report: "out/report.json",
      });
    });

    it("takes --otlp as an http(s) base URL, and refuses anything else naming the option", () => {
      expect(parsed(["--otlp", "http://localhost:4318"])).toMatchObject({
        otlp: "http://localhost:4318",
      });
      for (const bad of ["localhost:4318", "grpc://collector:4317", "http://"]) {
        expect(() => parseDemoOptions(["--otlp", bad])).toThrow(
          new DemoOptionsError(`--otlp must be an http:// or https:// URL, got "${bad}"`),
        );
      }
    });

    it("turns on --traces and --hold", () => {
      expect(parsed(["--traces", "--hold"])).toMatchObject({ traces: true, hold: true });
    });

    it("--workers runs a fleet of processes: persisted, one killed half-way unless told otherwise", () => {
      expect(parsed(["--workers", "3", "--duration", "30"])).toMatchObject({
        workers: 3,
        postgres: undefined,
        persist: true,
        killAt: 15,
      });
      expect(parsed(["--workers", "3", "--kill-at", "2.5"])).toMatchObject({ killAt: 2.5 });
      expect(parsed(["--workers", "3", "--no-kill"])).toMatchObject({ killAt: undefined });
      expect(parsed(["--workers", "1"])).toMatchObject({ workers: 1, killAt: undefined });
      expect(parsed(["--workers", "2", "--no-persist"])).toMatchObject({ persist: false });
      expect(
        parsed(["--workers", "2", "--postgres", "postgresql://app:secret@db.internal:5432/agents"]),
      ).toMatchObject({ postgres: "postgresql://app:secret@db.internal:5432/agents" });
    });

    it("refuses the fleet's options without --workers, and a --postgres value that is no URL without repeating it", () => {
      for (const args of [
        ["--no-persist"],
        ["--kill-at", "3"],
        ["--no-kill"],
        ["--postgres", "postgres://a@b/c"],
      ]) {
        expect(rejection(args).message).toContain("needs --workers");
      }
      expect(rejection(["--workers", "1", "--kill-at", "3"]).message).toContain("2 or more");
      expect(rejection(["--workers", "2", "--kill-at", "3", "--no-kill"]).message).toContain(
        "contradict",
      );
      for (const bad of ["mysql://root:hunter2@db/x", "host=db password=hunter2", "postgres://"]) {
        const message = rejection(["--workers", "2", "--postgres", bad]).message;
        expect(message).toContain("--postgres must be a postgres://");
        expect(message).not.toContain("hunter2");
      }
      expect(rejection(["--workers", "0"]).message).toContain("--workers must be an integer");
      expect(rejection(["--workers", "2", "--traces"]).message).toContain("--traces");
      expect(rejection(["--workers", "2", "--kill-at", "3000000"]).message).toContain(
        "--kill-at must be a number from 0 to 2147483",
      );
      // A connection string given without --postgres: the error names it, without its password.
      const stray = rejection(["--workers", "2", "postgres://app:s3cretpw@db/app"]).message;
      expect(stray).toContain("postgres://app:***@db/app");
      expect(stray).not.toContain("s3cretpw");
    });

    it("--prometheus implies --hold, so Prometheus can go on scraping after the fleet stops", () => {
      expect(parsed(["--prometheus"])).toMatchObject({ prometheus: true, hold: true });
    });
  });

  describe("bad values", () => {
    it.each([
      // Not a number.
      ["duration", "soon"],
      ["threads", "ten"],
      ["interrupt-rate", "10%"],
      ["seed", "0x10"],
      ["port", ""],
      ["spike-at", "1e3"],
      ["spike-length", "NaN"],
      ["concurrency", "Infinity"],
      // Out of range.
      ["duration", "0.5"],
      // Past what a Node timer can wait (2^31 - 1 ms): the fleet would stop at once.
      ["duration", "2147484"],
      ["threads", "0"],
      ["threads", "100001"],
      ["concurrency", "0"],
      ["concurrency", "1001"],
      ["turns", "0"],
      ["interrupt-rate", "-0.1"],
      ["interrupt-rate", "1.5"],
      ["spike-at", "-1"],
      ["spike-rate", "2"],
      ["spike-length", "0"],
      ["seed", "-1"],
      ["seed", "4294967296"],
      ["port", "0"],
      ["port", "65536"],
      ["prometheus-port", "0"],
      ["prometheus-port", "70000"],
      // Not an integer where one is required.
      ["threads", "2.5"],
      ["concurrency", "1.5"],
      ["turns", "3.5"],
      ["seed", "1.5"],
      ["port", "9464.5"],
      ["prometheus-port", "9090.1"],
    ])("rejects --%s=%s, naming the option and the value", (option, raw) => {
      // With "=", a negative number is the option's value rather than another option.
      const error = rejection([`--${option}=${raw}`]);
      expect(error.message).toContain(`--${option} must be`);
      expect(error.message).toContain(`got "${raw}"`);
    });

    it("says which range and kind of number an option takes", () => {
      expect(rejection(["--threads", "0"]).message).toBe(
        '--threads must be an integer from 1 to 100000, got "0"',
      );
      expect(rejection(["--interrupt-rate", "2"]).message).toBe(
        '--interrupt-rate must be a number from 0 to 1, got "2"',
      );
      expect(rejection(["--spike-at=-1"]).message).toBe(
        '--spike-at must be a number >= 0, got "-1"',
      );
    });

    it("rejects an option given without its value, naming it", () => {
      expect(rejection(["--threads"]).message).toContain("--threads");
    });

    it("rejects a negative number written after a space, pointing to --option=value", () => {
      const { message } = rejection(["--seed", "-1"]);
      expect(message).toContain("--seed");
      expect(message).toContain("--seed=-XYZ");
    });

    it("rejects an unknown option, naming it and pointing to --help", () => {
      const { message } = rejection(["--thread", "3"]);
      expect(message).toContain("--thread'");
      expect(message).toContain("see --help");
    });

    it("rejects a stray argument", () => {
      expect(rejection(["60"]).message).toContain("60");
    });

    it("rejects a value for a switch", () => {
      expect(rejection(["--hold=yes"]).message).toContain("--hold");
    });
  });

  describe("--help", () => {
    it("returns help for --help and -h, whatever else is given", () => {
      expect(parseDemoOptions(["--help"])).toBe("help");
      expect(parseDemoOptions(["-h"])).toBe("help");
      expect(parseDemoOptions(["--threads", "0", "--help"])).toBe("help");
    });

    it("documents every option the parser accepts, and no other", () => {
      expect([...documentedOptions().keys()].sort()).toEqual(Object.keys(DEMO_OPTIONS).sort());
    });

    it("shows a <value> for each option that takes one, and none for a switch", () => {
      for (const [name, rest] of documentedOptions()) {
        const spec = DEMO_OPTIONS[name as keyof typeof DEMO_OPTIONS];
        expect(/^ <[a-z]+>/.test(rest), `--${name}${rest}`).toBe(spec.type === "string");
      }
    });

    it("states the default the parser uses for each option that has one", () => {
      const defaults = parsed([]);
      for (const [name, rest] of documentedOptions()) {
        if (DEMO_OPTIONS[name as keyof typeof DEMO_OPTIONS].type !== "string") continue;
        const actual = defaults[fieldOf(name)];
        const stated = /\(default:? ([^)]+)\)/.exec(rest)?.[1];
        if (actual === undefined) {
          // No default: the entry says so, or says nothing.
          if (stated !== undefined) expect(stated, `--${name}`).toMatch(/^no /);
        } else {
          expect(stated, `--${name}${rest}`).toBe(String(actual));
        }
      }
    });

    it("states how many turns a conversation has when --turns is not given", () => {
      expect(documentedOptions().get("threads")).toContain(`each has ${CONVERSATION_TURNS} turns`);
    });

    it("every option the parser accepts is a field of the options, except --help", () => {
      const fields = Object.keys(DEFAULTS).sort();
      const options = [
        ...new Set(
          Object.keys(DEMO_OPTIONS)
            .filter((name) => name !== "help")
            .map(fieldOf),
        ),
      ].sort();
      expect(options).toEqual(fields);
    });
  });
});
