import * as assert from "assert";
import { Diagnostic, DiagnosticSeverity, DiagnosticTag, Range } from "./stub/vscode";
import { countTiers, present, tierOf } from "../src/tiers";

function diag(tier: string | undefined, severity: DiagnosticSeverity, source = "crosscheck"): Diagnostic {
  const d = new Diagnostic(new Range(3, 0, 3, 10), "tainted value reaches a sink", severity);
  d.source = source;
  (d as unknown as { data: unknown }).data = tier === undefined ? undefined : { tier, rule: "taint", fingerprint: "f1" };
  return d;
}

// The stub's Diagnostic stands in for vscode.Diagnostic.
const run = (ds: Diagnostic[], fade = true) => present(ds as never, { fadeUnverified: fade }) as unknown as Diagnostic[];

describe("tier presentation", () => {
  it("names the tier in the source of every crosscheck diagnostic", () => {
    const out = run([diag("confirmed", DiagnosticSeverity.Error), diag("analyzer-only", DiagnosticSeverity.Warning)]);
    assert.deepStrictEqual(out.map((d) => d.source), ["crosscheck (confirmed)", "crosscheck (analyzer-only)"]);
  });

  it("leaves confirmed and analyzer-only findings as the server sent them", () => {
    const [d] = run([diag("confirmed", DiagnosticSeverity.Error)]);
    assert.strictEqual(d.severity, DiagnosticSeverity.Error);
    assert.strictEqual(d.message, "tainted value reaches a sink");
    assert.strictEqual(d.tags, undefined);
  });

  it("marks llm-only findings as unverified and fades them", () => {
    const [d] = run([diag("llm-only", DiagnosticSeverity.Hint)]);
    assert.strictEqual(d.message, "[unverified] tainted value reaches a sink");
    assert.deepStrictEqual(d.tags, [DiagnosticTag.Unnecessary]);
    assert.strictEqual(d.severity, DiagnosticSeverity.Hint);
  });

  it("never shows an unverified finding above Information", () => {
    const [a, b] = run([diag("llm-only", DiagnosticSeverity.Error), diag("refuted", DiagnosticSeverity.Warning)]);
    assert.strictEqual(a.severity, DiagnosticSeverity.Information);
    assert.strictEqual(b.severity, DiagnosticSeverity.Information);
    assert.ok(b.message.startsWith("[refuted] "));
  });

  it("does not fade when fadeUnverified is off, but still labels", () => {
    const [d] = run([diag("llm-only", DiagnosticSeverity.Hint)], false);
    assert.strictEqual(d.tags, undefined);
    assert.ok(d.message.startsWith("[unverified] "));
  });

  it("says unverified once when the server's message already labels the claim", () => {
    const d = diag("llm-only", DiagnosticSeverity.Information);
    d.message = "LLM claim (unverified): x may be null";
    run([d]);
    run([d]);
    assert.strictEqual(d.message, "[unverified] LLM claim: x may be null");
  });

  it("is idempotent (a diagnostic passed twice is labelled once)", () => {
    const ds = [diag("llm-only", DiagnosticSeverity.Hint)];
    run(ds);
    const [d] = run(ds);
    assert.strictEqual(d.message, "[unverified] tainted value reaches a sink");
    assert.deepStrictEqual(d.tags, [DiagnosticTag.Unnecessary]);
  });

  it("keeps data (code actions send it back) and ignores other sources and unknown tiers", () => {
    const other = diag("llm-only", DiagnosticSeverity.Error, "pylint");
    const unknown = diag("maybe", DiagnosticSeverity.Error);
    const mine = diag("refuted", DiagnosticSeverity.Hint);
    run([other, unknown, mine]);
    assert.strictEqual(other.message, "tainted value reaches a sink");
    assert.strictEqual(other.source, "pylint");
    assert.strictEqual(unknown.source, "crosscheck");
    assert.deepStrictEqual((mine as unknown as { data: unknown }).data, { tier: "refuted", rule: "taint", fingerprint: "f1" });
    assert.strictEqual(tierOf(unknown as never), undefined);
  });

  it("counts diagnostics per tier", () => {
    const c = countTiers([diag("llm-only", 3), diag("llm-only", 3), diag("confirmed", 0), diag(undefined, 0)] as never);
    assert.deepStrictEqual(c, { confirmed: 1, "analyzer-only": 0, "llm-only": 2, refuted: 0 });
  });
});
