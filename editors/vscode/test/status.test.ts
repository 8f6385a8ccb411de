import * as assert from "assert";
import { agreementText, statusView } from "../src/status";

const busy = {
  llm_available: true,
  scheduler: { requests: 4, cache_hits: 2, completed: 3, failed: 1, pending: 2 },
};

describe("status bar", () => {
  it("shows starting, stopped and failed server states", () => {
    assert.strictEqual(statusView({ phase: "starting", trusted: true }).state, "starting");
    assert.strictEqual(statusView({ phase: "stopped", trusted: true }).state, "stopped");
    const f = statusView({ phase: "failed", trusted: true, error: "spawn crosscheck ENOENT" });
    assert.strictEqual(f.state, "failed");
    assert.ok(f.tooltip.includes("ENOENT"), f.tooltip);
  });

  it("says deterministic-only when the server has no LLM", () => {
    const v = statusView({ phase: "running", trusted: true, status: { llm_available: false } });
    assert.strictEqual(v.state, "deterministic");
    assert.ok(v.text.includes("no LLM"), v.text);
  });

  it("shows restricted mode in an untrusted workspace even if the server has an LLM", () => {
    const v = statusView({ phase: "running", trusted: false, status: busy });
    assert.strictEqual(v.state, "restricted");
    assert.ok(v.tooltip.includes("no code is sent to an LLM"));
  });

  it("shows LLM progress: checked (completed + cache hits) and pending", () => {
    const v = statusView({ phase: "running", trusted: true, status: busy });
    assert.strictEqual(v.state, "llm");
    assert.ok(v.text.includes("5 checked"), v.text);
    assert.ok(v.text.includes("2 pending"), v.text);
    assert.ok(v.text.startsWith("$(sync~spin)"), v.text);
    assert.ok(v.tooltip.includes("agreement: not reported"), v.tooltip);
  });

  it("shows the session's agreement figure when the server reports one", () => {
    const v = statusView({
      phase: "running",
      trusted: true,
      status: { ...busy, scheduler: { ...busy.scheduler, pending: 0 }, agreement: { agree: 5, total: 6 } },
    });
    assert.ok(v.text.includes("agreement 83% (5/6)"), v.text);
    assert.ok(v.text.startsWith("$(check)"), v.text);
  });

  it("accepts the agreement as a bare rate and ignores nonsense", () => {
    assert.strictEqual(agreementText(0.5), "agreement 50%");
    assert.strictEqual(agreementText({ rate: 1 }), "agreement 100%");
    assert.strictEqual(agreementText({ agree: 1, total: 0 }), undefined);
    assert.strictEqual(agreementText(Number.NaN), undefined);
    assert.strictEqual(agreementText(undefined), undefined);
  });

  it("lists the tiers of the findings shown", () => {
    const v = statusView({
      phase: "running",
      trusted: true,
      status: { llm_available: false },
      tiers: { confirmed: 1, "analyzer-only": 2, "llm-only": 3, refuted: 0 },
    });
    assert.ok(v.tooltip.includes("1 confirmed, 2 analyzer-only, 3 llm-only, 0 refuted"), v.tooltip);
  });
});
