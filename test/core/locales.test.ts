import { describe, expect, it } from "vitest";
import {
  catalogText,
  PLACEHOLDER_CATALOG,
  PLACEHOLDER_REASONS,
  resolveCatalogLocale,
} from "../../src/core/locales.js";

const REQUIRED = ["en", "zh-CN", "zh-TW", "ja", "ko", "es", "fr", "de", "pt-BR", "ru"];

describe("the built-in catalog", () => {
  it("covers every required locale for both reasons", () => {
    for (const locale of REQUIRED) {
      for (const reason of PLACEHOLDER_REASONS) {
        const text = (PLACEHOLDER_CATALOG as Record<string, Record<string, string>>)[locale]?.[
          reason
        ];
        expect(text, `${locale} ${reason}`).toMatch(/^\[.+\]$/u);
      }
    }
  });

  it("says something different for each reason in every locale", () => {
    for (const texts of Object.values(PLACEHOLDER_CATALOG)) {
      expect(texts.interrupted).not.toBe(texts.invalid_arguments);
    }
  });

  it("has its own text in every locale, not the English one", () => {
    for (const [locale, texts] of Object.entries(PLACEHOLDER_CATALOG)) {
      if (locale === "en") continue;
      expect(texts.interrupted).not.toBe(PLACEHOLDER_CATALOG.en.interrupted);
      expect(texts.invalid_arguments).not.toBe(PLACEHOLDER_CATALOG.en.invalid_arguments);
    }
  });

  it("keeps the two Chinese variants in their own scripts", () => {
    expect(PLACEHOLDER_CATALOG["zh-CN"].interrupted).toContain("调用");
    expect(PLACEHOLDER_CATALOG["zh-TW"].interrupted).toContain("呼叫");
  });
});

describe("locale fallback", () => {
  it.each([
    ["en", "en"],
    ["ja", "ja"],
    ["ja-JP", "ja"],
    ["zh-Hant-TW", "zh-TW"],
    ["zh-TW", "zh-TW"],
    ["zh-HK", "zh-TW"],
    ["zh-Hant", "zh-TW"],
    ["zh", "zh-CN"],
    ["zh-CN", "zh-CN"],
    ["zh-Hans-SG", "zh-CN"],
    ["zh-SG", "zh-CN"],
    ["pt-BR", "pt-BR"],
    ["pt-PT", "pt-BR"],
    ["pt", "pt-BR"],
    ["es-419", "es"],
    ["fr-CA", "fr"],
    ["de-CH", "de"],
    ["ru-RU", "ru"],
    ["ko-KR", "ko"],
    ["EN-gb", "en"],
    ["sw", "en"],
  ])("serves %s from %s", (tag, expected) => {
    expect(resolveCatalogLocale(tag)).toBe(expected);
  });

  it.each([
    ["malformed", "not a locale!"],
    ["empty", ""],
    ["missing", undefined],
    ["not a string", 42 as unknown as string],
  ])("falls back to English for a %s tag and never throws", (_label, tag) => {
    expect(resolveCatalogLocale(tag)).toBe("en");
    expect(catalogText("interrupted", tag)).toBe(PLACEHOLDER_CATALOG.en.interrupted);
  });

  it("resolves a tag the same way however many other tags were resolved since", () => {
    expect(resolveCatalogLocale("de-AT")).toBe("de");
    for (let region = 0; region < 400; region++) resolveCatalogLocale(`fr-${region}`);
    expect(resolveCatalogLocale("de-AT")).toBe("de");
    expect(resolveCatalogLocale("fr-419")).toBe("fr");
  });
});
