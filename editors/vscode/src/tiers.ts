// Tier-aware presentation of the server's diagnostics (applied in the client middleware).
//
// The server publishes every finding with `data.tier` (confirmed | analyzer-only | llm-only |
// refuted) and already maps tiers to severities/visibility through its configuration
// (`crosscheck.tiers.*`). On top of that the editor makes the tier visible:
//
// * `source` becomes `crosscheck (<tier>)`, shown in hovers and the Problems panel;
// * `llm-only` findings (only the LLM claims them) and `refuted` ones get an `[unverified]` /
//   `[refuted]` message prefix, are drawn faded (`DiagnosticTag.Unnecessary`, setting
//   `crosscheck.client.fadeUnverified`), and are never shown above Information: an LLM alone
//   never makes an error or a warning.

import * as vscode from "vscode";

export const TIERS = ["confirmed", "analyzer-only", "llm-only", "refuted"] as const;
export type Tier = (typeof TIERS)[number];

export interface PresentationOptions {
  fadeUnverified: boolean;
}

/** The tier carried in a diagnostic's `data`, if it is one of ours. */
export function tierOf(d: vscode.Diagnostic): Tier | undefined {
  const data = (d as { data?: unknown }).data;
  const t = (data as { tier?: unknown } | null | undefined)?.tier;
  return typeof t === "string" && (TIERS as readonly string[]).includes(t) ? (t as Tier) : undefined;
}

export function isUnverified(t: Tier | undefined): boolean {
  return t === "llm-only" || t === "refuted";
}

/** How the server labels an LLM-only claim in the message itself. */
const SERVER_LABEL = "LLM claim (unverified): ";

const PREFIX: Partial<Record<Tier, string>> = {
  "llm-only": "[unverified] ",
  refuted: "[refuted] ",
};

/** Rewrites crosscheck diagnostics in place (keeping `data` for code actions); returns them. */
export function present(diagnostics: vscode.Diagnostic[], opts: PresentationOptions): vscode.Diagnostic[] {
  for (const d of diagnostics) {
    const tier = tierOf(d);
    if (!tier || !(d.source ?? "").startsWith("crosscheck")) {
      continue;
    }
    d.source = `crosscheck (${tier})`;
    const prefix = PREFIX[tier];
    if (prefix && !d.message.startsWith(prefix)) {
      // The server's own label says "unverified" once already; the prefix takes its place.
      if (d.message.startsWith(SERVER_LABEL)) {
        d.message = "LLM claim: " + d.message.slice(SERVER_LABEL.length);
      }
      d.message = prefix + d.message;
    }
    if (isUnverified(tier)) {
      // Error = 0 ... Hint = 3: larger is fainter.
      if (d.severity < vscode.DiagnosticSeverity.Information) {
        d.severity = vscode.DiagnosticSeverity.Information;
      }
      if (opts.fadeUnverified) {
        const tags = d.tags ?? [];
        if (!tags.includes(vscode.DiagnosticTag.Unnecessary)) {
          d.tags = [...tags, vscode.DiagnosticTag.Unnecessary];
        }
      }
    }
  }
  return diagnostics;
}

/** Counts of crosscheck diagnostics per tier. */
export function countTiers(diagnostics: readonly vscode.Diagnostic[]): Record<Tier, number> {
  const counts: Record<Tier, number> = { confirmed: 0, "analyzer-only": 0, "llm-only": 0, refuted: 0 };
  for (const d of diagnostics) {
    const t = tierOf(d);
    if (t) {
      counts[t] += 1;
    }
  }
  return counts;
}
