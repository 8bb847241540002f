/**
 * A module hook, loaded with `node --import`, that makes every LangChain package (`langchain`,
 * `@langchain/*`) not found, as in an app that never installed one (an OpenAI SDK or AI SDK user):
 * what the command line does there, run from this repository, whose node_modules has them all.
 *
 * @example
 * node --import ./test/helpers/without-langchain.mjs --import tsx src/cli/main.ts audit file.jsonl
 */
import { register } from "node:module";

const hooks = `
const LANGCHAIN = /^(?:@langchain\\/|langchain(?:\\/|$))/;
export async function resolve(specifier, context, next) {
  if (LANGCHAIN.test(specifier)) {
    const name = specifier.split("/").slice(0, specifier.startsWith("@") ? 2 : 1).join("/");
    const error = new Error("Cannot find package '" + name + "' imported from " + context.parentURL);
    error.code = "ERR_MODULE_NOT_FOUND";
    throw error;
  }
  return next(specifier, context);
}
`;

register(`data:text/javascript,${encodeURIComponent(hooks)}`);
