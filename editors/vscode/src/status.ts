// The status-bar text: the LLM backend state and, when the server reports one, the session's
// agreement figure. The state comes from the server's `crosscheck/status` request.

import type { Tier } from "./tiers";

/** The fields of the server's `crosscheck/status` answer that the status bar uses. */
export interface ServerStatus {
  idle?: boolean;
  llm_available?: boolean;
  scheduler?: {
    requests?: number;
    cache_hits?: number;
    completed?: number;
    failed?: number;
    consecutive_failures?: number;
    pending?: number;
  };
  /**
   * Share of this session's LLM cross-checks that agreed with the analysis. Optional: read
   * when the server sends it, as a number in [0, 1] or `{rate, agree, total}`.
   */
  agreement?: number | { rate?: number; agree?: number; total?: number };
}

export type Phase = "starting" | "running" | "stopped" | "failed";

export interface StatusInput {
  phase: Phase;
  trusted: boolean;
  status?: ServerStatus;
  tiers?: Record<Tier, number>;
  error?: string;
}

export interface StatusView {
  text: string;
  tooltip: string;
  /** The state in one word, for tests and the status command. */
  state: "starting" | "stopped" | "failed" | "restricted" | "deterministic" | "llm";
}

function percent(x: number): string {
  return `${Math.round(x * 100)}%`;
}

/** The agreement figure, e.g. `agreement 83% (5/6)`, or undefined if the server sent none. */
export function agreementText(a: ServerStatus["agreement"]): string | undefined {
  if (typeof a === "number" && Number.isFinite(a)) {
    return `agreement ${percent(a)}`;
  }
  if (a && typeof a === "object") {
    let rate = a.rate;
    if (rate === undefined && typeof a.agree === "number" && typeof a.total === "number" && a.total > 0) {
      rate = a.agree / a.total;
    }
    if (typeof rate === "number" && Number.isFinite(rate)) {
      const n = typeof a.agree === "number" && typeof a.total === "number" ? ` (${a.agree}/${a.total})` : "";
      return `agreement ${percent(rate)}${n}`;
    }
  }
  return undefined;
}

function tierLine(tiers: Record<Tier, number> | undefined): string {
  if (!tiers) {
    return "";
  }
  const parts = (Object.keys(tiers) as Tier[]).map((t) => `${tiers[t]} ${t}`);
  return `\nfindings shown: ${parts.join(", ")}`;
}

export function statusView(input: StatusInput): StatusView {
  const tiers = tierLine(input.tiers);
  switch (input.phase) {
    case "starting":
      return { state: "starting", text: "$(sync~spin) crosscheck", tooltip: "crosscheck: starting the language server" };
    case "stopped":
      return { state: "stopped", text: "$(circle-slash) crosscheck: stopped", tooltip: "crosscheck: the language server is not running" };
    case "failed":
      return {
        state: "failed",
        text: "$(error) crosscheck",
        tooltip: `crosscheck: the language server could not start${input.error ? `: ${input.error}` : ""}\nClick for details.`,
      };
    case "running":
      break;
  }
  if (!input.trusted) {
    return {
      state: "restricted",
      text: "$(shield) crosscheck: deterministic",
      tooltip: `crosscheck: restricted workspace: deterministic analyses only, no code is sent to an LLM.${tiers}`,
    };
  }
  const s = input.status;
  if (!s || !s.llm_available) {
    return {
      state: "deterministic",
      text: "$(circle-slash) crosscheck: no LLM",
      tooltip:
        "crosscheck: deterministic analyses only: no LLM is configured or enabled " +
        `(set [llm] in ~/.config/crosscheck/config.toml).${tiers}`,
    };
  }
  const sch = s.scheduler ?? {};
  const pending = sch.pending ?? 0;
  const checked = (sch.completed ?? 0) + (sch.cache_hits ?? 0);
  const agreement = agreementText(s.agreement);
  const bits = [`${checked} checked`];
  if (pending > 0) {
    bits.push(`${pending} pending`);
  }
  if (agreement) {
    bits.push(agreement);
  }
  // Failures since the last successful check: the LLM is failing now.
  if ((sch.consecutive_failures ?? 0) > 0) {
    return {
      state: "llm",
      text: `$(warning) crosscheck: LLM failing · ${bits.join(" · ")}`,
      tooltip:
        `crosscheck: the last ${sch.consecutive_failures} LLM checks failed (retried with backoff); ` +
        `deterministic results are unaffected. ${sch.completed ?? 0} completed, ${sch.failed ?? 0} failed, ` +
        `${pending} pending${tiers}`,
    };
  }
  return {
    state: "llm",
    text: `${pending > 0 ? "$(sync~spin)" : "$(check)"} crosscheck: LLM ${bits.join(" · ")}`,
    tooltip:
      `crosscheck: LLM cross-checks on: ${sch.requests ?? 0} requests, ${sch.cache_hits ?? 0} from cache, ` +
      `${sch.completed ?? 0} completed, ${sch.failed ?? 0} failed, ${pending} pending` +
      (agreement ? `\n${agreement} of the cross-checked functions` : "\nagreement: not reported by this server") +
      tiers,
  };
}
