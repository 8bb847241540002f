/**
 * PostgreSQL connection strings made fit to print: their password replaced by `***`, whether it
 * is in a URL's user info, in its `password` parameter, or in libpq's `key=value` form.
 */

/** What a password is replaced with. */
const REDACTED = "***";

/** A `password` parameter of a URL's query, up to the next `&`. */
const QUERY_PASSWORD = /([?&]password=)[^&#]*/gi;

/**
 * A `password` keyword of libpq's `key=value` form, with its value: a single-quoted one (with its
 * backslash escapes) or a run of anything but white space.
 */
const KEYWORD_PASSWORD = /(password\s*=\s*)(?:'(?:[^'\\]|\\.)*'?|\S*)/gi;

/**
 * The user info of a `postgres://` URL that the URL parser rejects (a `#` or `/` in an unencoded
 * password, several hosts): everything from the `:` after the user name to the last `@`.
 */
const USER_INFO_PASSWORD = /^(postgres(?:ql)?:\/\/[^:@/?#]*:).*@/is;

/**
 * The connection string with its password replaced by `***`, to put it in a message or a log.
 *
 * A `postgres://` or `postgresql://` URL keeps its user, hosts, port, database and parameters,
 * and loses the password of its user info and of its `password` parameter; one the URL parser
 * rejects loses everything between the `:` after its user name and its last `@`. Any other string,
 * such as libpq's `host=db password=secret`, is returned as it is but for the value of each
 * `password=` in it. Nothing else is changed: a string without a password comes back as it was.
 *
 * @example
 * redactConnectionString("postgres://app:s3cret@db:5432/app?sslmode=require");
 * // "postgres://app:***@db:5432/app?sslmode=require"
 * redactConnectionString("host=db user=app password='s3 cret'");
 * // "host=db user=app password=***"
 */
export function redactConnectionString(url: string): string {
  if (!/^postgres(?:ql)?:\/\//i.test(url)) return url.replace(KEYWORD_PASSWORD, `$1${REDACTED}`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url
      .replace(USER_INFO_PASSWORD, `$1${REDACTED}@`)
      .replace(QUERY_PASSWORD, `$1${REDACTED}`);
  }
  const search = parsed.search.replace(QUERY_PASSWORD, `$1${REDACTED}`);
  if (parsed.password === "" && search === parsed.search) return url;
  if (parsed.password !== "") parsed.password = REDACTED;
  parsed.search = search;
  return parsed.href;
}

/**
 * The password of a connection string, as written and decoded; none shorter than 4 characters,
 * which would match inside ordinary words (no message of `pg` or PostgreSQL quotes a password).
 */
function passwordsOf(url: string): string[] {
  const passwords: string[] = [];
  try {
    const parsed = new URL(url);
    passwords.push(parsed.password, parsed.searchParams.get("password") ?? "");
  } catch {
    passwords.push(/^[^:]*:\/\/[^:@/]*:(.*)@[^@]*$/s.exec(url)?.[1] ?? "");
  }
  const decoded = passwords.map((password) => {
    try {
      return decodeURIComponent(password);
    } catch {
      return password;
    }
  });
  return [...new Set([...passwords, ...decoded])]
    .filter((secret) => secret.length >= 4)
    .sort((a, b) => b.length - a.length);
}

/**
 * A message fit to print: the connection string in it replaced by its redacted form
 * ({@link redactConnectionString}), then every other occurrence of its password (as written and
 * percent-decoded, from the user info or a `password` parameter) replaced by `***`.
 */
export function redactMessage(message: string, url: string): string {
  let redacted = message.split(url).join(redactConnectionString(url));
  for (const secret of passwordsOf(url)) redacted = redacted.split(secret).join("***");
  return redacted;
}
