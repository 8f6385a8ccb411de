// The extension's behaviour, independent of vscode-languageclient (injected as a ClientFactory)
// so that it can be tested against a stubbed `vscode` module.

import * as vscode from "vscode";
import { flatKeys, JsonObject, Launch, serverKeys, serverLaunch, serverSettings } from "./settings";
import { countTiers, present, Tier } from "./tiers";
import { Phase, ServerStatus, statusView, StatusView } from "./status";

/** What the controller needs from a language client. */
export interface ClientLike {
  start(): Promise<void>;
  stop(): Promise<void>;
  sendRequest<R>(method: string, params?: unknown): Promise<R>;
  sendNotification(method: string, params?: unknown): Promise<void>;
}

export interface ClientSpec {
  launch: Launch;
  initializationOptions: JsonObject;
  outputChannel: vscode.OutputChannel;
  /** Rewrites published diagnostics before VS Code shows them. */
  handleDiagnostics(
    uri: vscode.Uri,
    diagnostics: vscode.Diagnostic[],
    next: (uri: vscode.Uri, diagnostics: vscode.Diagnostic[]) => void,
  ): void;
  /** Answers to `workspace/configuration` items: ours for section `crosscheck`, else undefined. */
  configuration(sections: (string | undefined)[]): (JsonObject | undefined)[];
}

export type ClientFactory = (spec: ClientSpec) => ClientLike;

/** The server's answer to `workspace/executeCommand` for its commands. */
export interface CommandResult {
  status?: string;
  message?: string;
}

/** Server commands (`src/lsp/server.rs`, `commands`). */
export const SERVER_COMMANDS = {
  suppress: "crosscheck.suppress",
  markCorrect: "crosscheck.markCorrect",
  markIncorrect: "crosscheck.markIncorrect",
  explain: "crosscheck.explain",
  compareCfg: "crosscheck.compareCfg",
} as const;

/** This extension's commands (package.json `contributes.commands`). */
export const EXTENSION_COMMANDS = {
  explainAtCursor: "crosscheck.explainAtCursor",
  compareCfgAtCursor: "crosscheck.compareCfgAtCursor",
  markCorrectAtCursor: "crosscheck.markCorrectAtCursor",
  markIncorrectAtCursor: "crosscheck.markIncorrectAtCursor",
  suppressAtCursor: "crosscheck.suppressAtCursor",
  showStatus: "crosscheck.showStatus",
  restartServer: "crosscheck.restartServer",
  showOutput: "crosscheck.showOutput",
} as const;

export const STATUS_REQUEST = "crosscheck/status";

interface ContextLike {
  subscriptions: { dispose(): unknown }[];
  extension: { packageJSON: unknown };
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function ruleOf(d: vscode.Diagnostic): string | undefined {
  const data = (d as { data?: { rule?: unknown } }).data;
  if (data && typeof data.rule === "string") {
    return data.rule;
  }
  const code = d.code;
  if (typeof code === "string" || typeof code === "number") {
    return String(code);
  }
  if (code && typeof code === "object") {
    return String(code.value);
  }
  return undefined;
}

export class Controller {
  private client: ClientLike | undefined;
  private phase: Phase = "stopped";
  private error: string | undefined;
  private lastStatus: ServerStatus | undefined;
  private sentKeys: string[] = [];
  private pollTimer: ReturnType<typeof setInterval> | undefined;
  private refreshTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly statusItem: vscode.StatusBarItem;
  readonly output: vscode.OutputChannel;
  private readonly keys: string[];
  private lifecycle: Promise<void> = Promise.resolve();

  constructor(
    private readonly context: ContextLike,
    private readonly factory: ClientFactory,
  ) {
    this.keys = serverKeys(context.extension.packageJSON);
    this.output = vscode.window.createOutputChannel("crosscheck");
    this.statusItem = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Right, 50);
    this.statusItem.command = EXTENSION_COMMANDS.showStatus;
    context.subscriptions.push(this.output, this.statusItem, { dispose: () => this.clearTimers() });
  }

  async activate(): Promise<void> {
    const c = EXTENSION_COMMANDS;
    const register = (id: string, fn: () => unknown) =>
      this.context.subscriptions.push(vscode.commands.registerCommand(id, fn));
    register(c.explainAtCursor, () => this.functionCommand(SERVER_COMMANDS.explain));
    register(c.compareCfgAtCursor, () => this.functionCommand(SERVER_COMMANDS.compareCfg));
    register(c.markCorrectAtCursor, () => this.labelCommand(true));
    register(c.markIncorrectAtCursor, () => this.labelCommand(false));
    register(c.suppressAtCursor, () => this.suppressCommand());
    register(c.showStatus, () => this.showStatus());
    register(c.restartServer, () => this.restart());
    register(c.showOutput, () => this.output.show(true));
    this.context.subscriptions.push(
      vscode.workspace.onDidChangeConfiguration((e) => this.onDidChangeConfiguration(e)),
      vscode.workspace.onDidGrantWorkspaceTrust(() => {
        this.output.appendLine("workspace trusted: restarting with LLM cross-checks allowed");
        return this.restart();
      }),
    );
    await this.start();
  }

  trusted(): boolean {
    return vscode.workspace.isTrusted;
  }

  private config(): vscode.WorkspaceConfiguration {
    return vscode.workspace.getConfiguration("crosscheck");
  }

  /** The settings object for the server right now. */
  settings(): JsonObject {
    return serverSettings(this.config(), this.keys, this.trusted());
  }

  view(): StatusView {
    return statusView({
      phase: this.phase,
      trusted: this.trusted(),
      status: this.lastStatus,
      tiers: this.tierCounts(),
      error: this.error,
    });
  }

  private tierCounts(): Record<Tier, number> {
    const all: vscode.Diagnostic[] = [];
    for (const [, ds] of vscode.languages.getDiagnostics()) {
      all.push(...ds.filter((d) => (d.source ?? "").startsWith("crosscheck")));
    }
    return countTiers(all);
  }

  private render(): void {
    const v = this.view();
    this.statusItem.text = v.text;
    this.statusItem.tooltip = v.tooltip;
    this.statusItem.show();
  }

  private serialize(op: () => Promise<void>): Promise<void> {
    this.lifecycle = this.lifecycle.then(op, op);
    return this.lifecycle;
  }

  start(): Promise<void> {
    return this.serialize(() => this.doStart());
  }

  stop(): Promise<void> {
    return this.serialize(() => this.doStop());
  }

  restart(): Promise<void> {
    return this.serialize(async () => {
      await this.doStop();
      await this.doStart();
    });
  }

  private async doStart(): Promise<void> {
    const trusted = this.trusted();
    const launch = serverLaunch(this.config(), trusted);
    const initializationOptions = this.settings();
    this.phase = "starting";
    this.error = undefined;
    this.lastStatus = undefined;
    this.render();
    this.output.appendLine(
      `starting ${launch.command} ${launch.args.join(" ")}` +
        (trusted ? "" : " (restricted workspace: deterministic analyses only)"),
    );
    const client = this.factory({
      launch,
      initializationOptions,
      outputChannel: this.output,
      handleDiagnostics: (uri, diagnostics, next) => {
        const fade = this.config().get<boolean>("client.fadeUnverified") ?? true;
        next(uri, present(diagnostics, { fadeUnverified: fade }));
        this.scheduleStatusRefresh();
      },
      configuration: (sections) => sections.map((s) => (s === "crosscheck" ? this.settings() : undefined)),
    });
    this.client = client;
    try {
      await client.start();
    } catch (e) {
      this.client = undefined;
      this.phase = "failed";
      this.error = errorText(e);
      this.output.appendLine(`the server could not start: ${this.error}`);
      this.render();
      void vscode.window.showErrorMessage(
        `crosscheck: could not start \`${launch.command} lsp\` (${this.error}). Set "crosscheck.server.path" to the crosscheck binary.`,
      );
      return;
    }
    this.phase = "running";
    this.sentKeys = flatKeys(initializationOptions);
    this.startPolling();
    await this.refreshStatus();
  }

  private async doStop(): Promise<void> {
    this.clearTimers();
    const client = this.client;
    this.client = undefined;
    if (client) {
      try {
        await client.stop();
      } catch (e) {
        this.output.appendLine(`stopping the server failed: ${errorText(e)}`);
      }
    }
    this.phase = "stopped";
    this.render();
  }

  private clearTimers(): void {
    if (this.pollTimer) {
      clearInterval(this.pollTimer);
      this.pollTimer = undefined;
    }
    if (this.refreshTimer) {
      clearTimeout(this.refreshTimer);
      this.refreshTimer = undefined;
    }
  }

  private startPolling(): void {
    this.clearTimers();
    const seconds = this.config().get<number>("client.statusPollSeconds") ?? 5;
    if (seconds > 0) {
      this.pollTimer = setInterval(() => void this.refreshStatus(), seconds * 1000);
      this.pollTimer.unref?.();
    }
  }

  private scheduleStatusRefresh(): void {
    if (this.refreshTimer) {
      return;
    }
    this.refreshTimer = setTimeout(() => {
      this.refreshTimer = undefined;
      void this.refreshStatus();
    }, 300);
    this.refreshTimer.unref?.();
  }

  /** Asks the server for its state and updates the status bar. */
  async refreshStatus(): Promise<void> {
    const client = this.client;
    if (client && this.phase === "running") {
      try {
        this.lastStatus = await client.sendRequest<ServerStatus>(STATUS_REQUEST);
      } catch (e) {
        this.output.appendLine(`${STATUS_REQUEST} failed: ${errorText(e)}`);
      }
    }
    this.render();
  }

  async onDidChangeConfiguration(e: vscode.ConfigurationChangeEvent): Promise<void> {
    if (!e.affectsConfiguration("crosscheck")) {
      return;
    }
    if (e.affectsConfiguration("crosscheck.server")) {
      this.output.appendLine("server settings changed: restarting");
      return this.restart();
    }
    if (e.affectsConfiguration("crosscheck.client.statusPollSeconds") && this.phase === "running") {
      this.startPolling();
    }
    const client = this.client;
    if (!client || this.phase !== "running") {
      return;
    }
    const settings = this.settings();
    const keys = flatKeys(settings);
    const unset = this.sentKeys.filter((k) => !keys.includes(k));
    if (unset.length > 0) {
      // The server layers settings key by key; a key the user removed can only fall back to
      // the user's config file or the default with a fresh start.
      this.output.appendLine(`settings removed (${unset.join(", ")}): restarting`);
      return this.restart();
    }
    await client.sendNotification("workspace/didChangeConfiguration", { settings: { crosscheck: settings } });
    this.sentKeys = keys;
  }

  private cursor(): { editor: vscode.TextEditor; uri: string; line: number; character: number } | undefined {
    const editor = vscode.window.activeTextEditor;
    if (!editor) {
      void vscode.window.showInformationMessage("crosscheck: open a file and place the cursor first");
      return undefined;
    }
    const p = editor.selection.active;
    return { editor, uri: editor.document.uri.toString(), line: p.line, character: p.character };
  }

  /** Sends a server command; reports its result in the status bar and the log. */
  async executeServerCommand(command: string, args: object): Promise<CommandResult | undefined> {
    const client = this.client;
    if (!client || this.phase !== "running") {
      void vscode.window.showWarningMessage("crosscheck: the language server is not running");
      return undefined;
    }
    try {
      const result = await client.sendRequest<CommandResult | null>("workspace/executeCommand", {
        command,
        arguments: [args],
      });
      const r = result ?? {};
      this.output.appendLine(`${command}: ${r.status ?? "?"}: ${r.message ?? ""}`);
      if (r.message) {
        vscode.window.setStatusBarMessage(`crosscheck: ${r.message}`, 8000);
      }
      return r;
    } catch (e) {
      void vscode.window.showErrorMessage(`crosscheck: ${command} failed: ${errorText(e)}`);
      return undefined;
    }
  }

  async functionCommand(command: string): Promise<CommandResult | undefined> {
    const at = this.cursor();
    if (!at) {
      return undefined;
    }
    return this.executeServerCommand(command, { uri: at.uri, line: at.line, character: at.character });
  }

  /** The crosscheck finding at the cursor (asks when several are on the line). */
  async findingAtCursor(): Promise<{ uri: string; diagnostic: vscode.Diagnostic } | undefined> {
    const at = this.cursor();
    if (!at) {
      return undefined;
    }
    const here = vscode.languages
      .getDiagnostics(at.editor.document.uri)
      .filter(
        (d) =>
          (d.source ?? "").startsWith("crosscheck") &&
          d.range.start.line <= at.line &&
          at.line <= d.range.end.line,
      );
    if (here.length === 0) {
      void vscode.window.showInformationMessage("crosscheck: no crosscheck finding at the cursor");
      return undefined;
    }
    if (here.length === 1) {
      return { uri: at.uri, diagnostic: here[0] };
    }
    const picked = await vscode.window.showQuickPick(
      here.map((d, i) => ({ label: `${ruleOf(d) ?? "?"}: ${d.message}`, description: d.source, index: i })),
      { placeHolder: "Which finding?" },
    );
    return picked ? { uri: at.uri, diagnostic: here[picked.index] } : undefined;
  }

  async labelCommand(correct: boolean): Promise<CommandResult | undefined> {
    const f = await this.findingAtCursor();
    if (!f) {
      return undefined;
    }
    const data = ((f.diagnostic as { data?: Record<string, unknown> }).data ?? {}) as Record<string, unknown>;
    return this.executeServerCommand(correct ? SERVER_COMMANDS.markCorrect : SERVER_COMMANDS.markIncorrect, {
      uri: f.uri,
      rule: ruleOf(f.diagnostic) ?? "",
      line: f.diagnostic.range.start.line,
      fingerprint: data.fingerprint ?? "",
      tier: data.tier ?? "",
    });
  }

  async suppressCommand(): Promise<CommandResult | undefined> {
    const f = await this.findingAtCursor();
    if (!f) {
      return undefined;
    }
    const rule = ruleOf(f.diagnostic);
    if (!rule) {
      return undefined;
    }
    return this.executeServerCommand(SERVER_COMMANDS.suppress, {
      uri: f.uri,
      line: f.diagnostic.range.start.line,
      rule,
    });
  }

  async showStatus(): Promise<void> {
    await this.refreshStatus();
    const v = this.view();
    this.output.appendLine(v.tooltip);
    const choice = await vscode.window.showInformationMessage(
      v.tooltip.split("\n")[0],
      "Show log",
      "Restart server",
    );
    if (choice === "Show log") {
      this.output.show(true);
    } else if (choice === "Restart server") {
      await this.restart();
    }
  }

  async dispose(): Promise<void> {
    await this.stop();
  }
}
