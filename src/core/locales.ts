/**
 * The built-in catalog of placeholder texts, one pair (interrupted, invalid arguments) per locale,
 * and the BCP 47 fallback that picks an entry for any tag.
 */

/** Why a placeholder was inserted for a call. */
export type PlaceholderReason = "interrupted" | "invalid_arguments";

/**
 * Every placeholder reason, in a stable order.
 *
 * @example
 * ```ts
 * for (const reason of PLACEHOLDER_REASONS) console.log(catalogText(reason, "ko"));
 * ```
 */
export const PLACEHOLDER_REASONS: readonly PlaceholderReason[] = Object.freeze([
  "interrupted",
  "invalid_arguments",
]);

/** The placeholder texts of one locale. */
export type PlaceholderTexts = Readonly<Record<PlaceholderReason, string>>;

/**
 * The locale used when no other fits.
 *
 * @example
 * ```ts
 * resolveCatalogLocale("tlh") === DEFAULT_LOCALE; // true
 * ```
 */
export const DEFAULT_LOCALE = "en";

/**
 * The built-in placeholder texts, keyed by the locale they are written for. Each is a sentence a
 * native speaker would write to tell a model that a tool produced nothing, not a word-for-word
 * rendering of the English.
 */
export const PLACEHOLDER_CATALOG = Object.freeze({
  en: {
    interrupted: "[Tool call was interrupted and did not return a result.]",
    invalid_arguments: "[Tool call was not run: its arguments could not be parsed.]",
  },
  "zh-CN": {
    interrupted: "[工具调用已中断，未返回任何结果。]",
    invalid_arguments: "[工具调用未执行：参数无法解析。]",
  },
  "zh-TW": {
    interrupted: "[工具呼叫已中斷，沒有傳回任何結果。]",
    invalid_arguments: "[工具呼叫未執行：無法解析其參數。]",
  },
  ja: {
    interrupted: "[ツールの呼び出しが中断されたため、結果は返されませんでした。]",
    invalid_arguments: "[引数を解析できなかったため、ツールは実行されませんでした。]",
  },
  ko: {
    interrupted: "[도구 호출이 중단되어 결과를 받지 못했습니다.]",
    invalid_arguments: "[인수를 해석할 수 없어 도구를 실행하지 않았습니다.]",
  },
  es: {
    interrupted: "[La llamada a la herramienta se interrumpió y no devolvió ningún resultado.]",
    invalid_arguments:
      "[La herramienta no se ejecutó: no se pudieron interpretar los argumentos de la llamada.]",
  },
  fr: {
    interrupted: "[L’appel de l’outil a été interrompu et n’a renvoyé aucun résultat.]",
    invalid_arguments:
      "[L’outil n’a pas été exécuté\u00a0: les arguments de l’appel n’ont pas pu être analysés.]",
  },
  de: {
    interrupted: "[Der Tool-Aufruf wurde unterbrochen und hat kein Ergebnis geliefert.]",
    invalid_arguments:
      "[Das Tool wurde nicht ausgeführt, weil sich die Argumente des Aufrufs nicht auswerten ließen.]",
  },
  "pt-BR": {
    interrupted: "[A chamada da ferramenta foi interrompida e não retornou nenhum resultado.]",
    invalid_arguments:
      "[A ferramenta não foi executada: não foi possível interpretar os argumentos da chamada.]",
  },
  ru: {
    interrupted: "[Вызов инструмента был прерван и не вернул результат.]",
    invalid_arguments: "[Инструмент не запущен: не удалось разобрать аргументы вызова.]",
  },
} satisfies Record<string, PlaceholderTexts>);

/**
 * Which synthetic turn a text is for: `reply`, the assistant turn written between tool results and
 * a user message that follows them; `gap`, the user turn written where dropped orphan results left
 * an assistant message first, or right after another assistant message. Only wires with rules on
 * the order of turns need them.
 */
export type SyntheticTurn = "reply" | "gap";

/**
 * The built-in texts of the synthetic turns, in every locale of {@link PLACEHOLDER_CATALOG}: they
 * say what happened, and nothing the model could take for a result or a request.
 */
export const TURN_CATALOG = Object.freeze({
  en: {
    reply: "[No reply was written to the tool results above.]",
    gap: "[Some messages of this conversation are not included here.]",
  },
  "zh-CN": {
    reply: "[上述工具结果之后没有写出回复。]",
    gap: "[此处未包含本对话的部分消息。]",
  },
  "zh-TW": {
    reply: "[上述工具結果之後沒有寫出回覆。]",
    gap: "[此處未包含本對話的部分訊息。]",
  },
  ja: {
    reply: "[上記のツール結果に対する返答は書かれていません。]",
    gap: "[この会話の一部のメッセージはここに含まれていません。]",
  },
  ko: {
    reply: "[위 도구 결과에 대한 답변은 작성되지 않았습니다.]",
    gap: "[이 대화의 일부 메시지는 여기에 포함되어 있지 않습니다.]",
  },
  es: {
    reply: "[No se escribió ninguna respuesta a los resultados de las herramientas anteriores.]",
    gap: "[Algunos mensajes de esta conversación no se incluyen aquí.]",
  },
  fr: {
    reply: "[Aucune réponse n’a été rédigée aux résultats d’outils ci-dessus.]",
    gap: "[Certains messages de cette conversation ne sont pas inclus ici.]",
  },
  de: {
    reply: "[Auf die obigen Tool-Ergebnisse wurde keine Antwort geschrieben.]",
    gap: "[Einige Nachrichten dieses Gesprächs sind hier nicht enthalten.]",
  },
  "pt-BR": {
    reply: "[Nenhuma resposta foi escrita para os resultados das ferramentas acima.]",
    gap: "[Algumas mensagens desta conversa não estão incluídas aqui.]",
  },
  ru: {
    reply: "[Ответ на результаты инструментов выше не был написан.]",
    gap: "[Некоторые сообщения этого разговора здесь не приведены.]",
  },
} satisfies Record<keyof typeof PLACEHOLDER_CATALOG, Readonly<Record<SyntheticTurn, string>>>);

/** A locale the built-in catalog has texts for. */
export type CatalogLocale = keyof typeof PLACEHOLDER_CATALOG;

const CATALOG: Readonly<Record<string, PlaceholderTexts>> = PLACEHOLDER_CATALOG;

/** Tags that are not catalog keys themselves but have an obvious entry. */
const ALIASES: Readonly<Record<string, CatalogLocale>> = {
  zh: "zh-CN",
  "zh-Hans": "zh-CN",
  "zh-Hant": "zh-TW",
  pt: "pt-BR",
};

function canonicalTag(tag: string): Intl.Locale | undefined {
  try {
    return new Intl.Locale(tag);
  } catch {
    return undefined;
  }
}

/**
 * Whether a string is a well-formed BCP 47 language tag.
 *
 * @example
 * ```ts
 * isWellFormedLocale("zh-Hant-TW"); // true
 * isWellFormedLocale("not a tag"); // false
 * ```
 */
export function isWellFormedLocale(tag: string): boolean {
  return canonicalTag(tag) !== undefined;
}

function catalogKey(tag: string): CatalogLocale | undefined {
  if (Object.hasOwn(CATALOG, tag)) return tag as CatalogLocale;
  return Object.hasOwn(ALIASES, tag) ? ALIASES[tag] : undefined;
}

/**
 * The catalog locale that serves a BCP 47 tag. The fallback runs from the full tag to language and
 * region (`zh-Hant-TW` → `zh-TW`), then language and script (`zh-HK` → `zh-Hant`), then the
 * language alone (`zh`), then English. An unknown, malformed or missing tag gives English; this
 * never throws.
 *
 * @example
 * ```ts
 * resolveCatalogLocale("zh-Hant-TW"); // "zh-TW"
 * resolveCatalogLocale("pt-PT"); // "pt-BR"
 * resolveCatalogLocale("xx-invalid-!"); // "en"
 * ```
 */
export function resolveCatalogLocale(tag: string | undefined): CatalogLocale {
  if (typeof tag !== "string" || tag === "") return DEFAULT_LOCALE;
  const known = resolvedTags.get(tag);
  if (known !== undefined) return known;
  const resolved = resolveTag(tag);
  // Tags come from requests, so the memory is bounded: the oldest tag is forgotten first.
  if (resolvedTags.size >= RESOLVED_TAG_LIMIT) {
    resolvedTags.delete(resolvedTags.keys().next().value as string);
  }
  resolvedTags.set(tag, resolved);
  return resolved;
}

/** How many tags {@link resolveCatalogLocale} remembers: resolving one through `Intl` takes microseconds. */
const RESOLVED_TAG_LIMIT = 256;
const resolvedTags = new Map<string, CatalogLocale>();

function resolveTag(tag: string): CatalogLocale {
  const locale = canonicalTag(tag);
  if (locale === undefined) return DEFAULT_LOCALE;
  const { language, region } = locale;
  const script = locale.script ?? locale.maximize().script;
  const candidates = [
    locale.baseName,
    region === undefined ? undefined : `${language}-${region}`,
    script === undefined ? undefined : `${language}-${script}`,
    language,
  ];
  for (const candidate of candidates) {
    const key = candidate === undefined ? undefined : catalogKey(candidate);
    if (key !== undefined) return key;
  }
  return DEFAULT_LOCALE;
}

/**
 * The built-in placeholder text for a reason in a locale, after {@link resolveCatalogLocale}.
 *
 * @example
 * ```ts
 * catalogText("interrupted", "de-AT");
 * // "[Der Tool-Aufruf wurde unterbrochen und hat kein Ergebnis geliefert.]"
 * ```
 */
export function catalogText(reason: PlaceholderReason, locale?: string): string {
  return PLACEHOLDER_CATALOG[resolveCatalogLocale(locale)][reason];
}

/**
 * The built-in text of a synthetic turn in a locale, after {@link resolveCatalogLocale}.
 *
 * @example
 * ```ts
 * turnText("reply", "fr-CA"); // "[Aucune réponse n’a été rédigée aux résultats d’outils ci-dessus.]"
 * ```
 */
export function turnText(turn: SyntheticTurn, locale?: string): string {
  return TURN_CATALOG[resolveCatalogLocale(locale)][turn];
}
