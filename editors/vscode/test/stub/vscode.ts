// A stub of the parts of the `vscode` API the extension uses, with knobs for tests (`stub`).
// Configuration defaults are read from the real package.json, so tests exercise what the
// extension contributes.

import * as fs from "fs";
import * as path from "path";

export enum DiagnosticSeverity {
  Error = 0,
  Warning = 1,
  Information = 2,
  Hint = 3,
}

export enum DiagnosticTag {
  Unnecessary = 1,
  Deprecated = 2,
}

export enum StatusBarAlignment {
  Left = 1,
  Right = 2,
}

export class Position {
  constructor(
    readonly line: number,
    readonly character: number,
  ) {}
}

export class Range {
  readonly start: Position;
  readonly end: Position;
  constructor(a: number | Position, b: number | Position, c?: number, d?: number) {
    if (typeof a === "number" && typeof b === "number") {
      this.start = new Position(a, b);
      this.end = new Position(c ?? a, d ?? b);
    } else {
      this.start = a as Position;
      this.end = b as Position;
    }
  }
}

export class Selection extends Range {
  get active(): Position {
    return this.end;
  }
}

export class Diagnostic {
  source?: string;
  code?: string | number | { value: string | number; target: Uri };
  tags?: DiagnosticTag[];
  constructor(
    public range: Range,
    public message: string,
    public severity: DiagnosticSeverity = DiagnosticSeverity.Error,
  ) {}
}

export class Uri {
  private constructor(
    readonly scheme: string,
    readonly fsPath: string,
  ) {}
  static file(p: string): Uri {
    return new Uri("file", p);
  }
  static parse(s: string): Uri {
    return new Uri(s.split(":")[0], s.replace(/^file:\/\//, ""));
  }
  toString(): string {
    return `${this.scheme}://${this.fsPath}`;
  }
}

type Listener<T> = (e: T) => unknown;

export class EventEmitter<T> {
  private listeners: Listener<T>[] = [];
  event = (l: Listener<T>) => {
    this.listeners.push(l);
    return { dispose: () => (this.listeners = this.listeners.filter((x) => x !== l)) };
  };
  /** Fires and waits for async listeners (tests await the effects). */
  async fire(e: T): Promise<void> {
    for (const l of [...this.listeners]) {
      await l(e);
    }
  }
}

// ---- test knobs ---------------------------------------------------------------------------------

type Scope = "globalValue" | "workspaceValue" | "workspaceFolderValue";

const packageJson = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "..", "..", "package.json"), "utf8"));
const contributed: Record<string, { default?: unknown }> = packageJson.contributes.configuration.properties;

interface StatusBarItemStub {
  text: string;
  tooltip: string | undefined;
  command: string | undefined;
  visible: boolean;
  alignment: StatusBarAlignment;
  show(): void;
  hide(): void;
  dispose(): void;
}

export const stub = {
  packageJson,
  trusted: true,
  values: new Map<string, Partial<Record<Scope, unknown>>>(),
  commands: new Map<string, (...args: unknown[]) => unknown>(),
  diagnostics: new Map<string, Diagnostic[]>(),
  messages: [] as { kind: "info" | "warning" | "error" | "statusBar"; text: string }[],
  quickPickAnswer: undefined as number | undefined,
  output: [] as string[],
  statusItems: [] as StatusBarItemStub[],
  activeTextEditor: undefined as undefined | { document: { uri: Uri; languageId: string }; selection: Selection },
  configChanged: new EventEmitter<{ affectsConfiguration(section: string): boolean }>(),
  trustGranted: new EventEmitter<void>(),

  reset(): void {
    this.trusted = true;
    this.values.clear();
    this.commands.clear();
    this.diagnostics.clear();
    this.messages = [];
    this.quickPickAnswer = undefined;
    this.output = [];
    this.statusItems = [];
    this.activeTextEditor = undefined;
    this.configChanged = new EventEmitter();
    this.trustGranted = new EventEmitter();
  },

  /** Sets `crosscheck.<rel>` in a scope (undefined removes it). */
  set(rel: string, value: unknown, scope: Scope = "globalValue"): void {
    const key = `crosscheck.${rel}`;
    const cur = this.values.get(key) ?? {};
    cur[scope] = value;
    this.values.set(key, cur);
  },

  /** Fires onDidChangeConfiguration for the given full keys. */
  changed(...keys: string[]): Promise<void> {
    return this.configChanged.fire({
      affectsConfiguration: (section: string) =>
        keys.some((k) => k === section || k.startsWith(`${section}.`)),
    });
  },

  async grantTrust(): Promise<void> {
    this.trusted = true;
    await this.trustGranted.fire();
  },

  openEditor(uri: string, line: number, character: number): void {
    const pos = new Position(line, character);
    this.activeTextEditor = {
      document: { uri: Uri.parse(uri), languageId: "python" },
      selection: new Selection(pos, pos),
    };
  },

  statusItem(): StatusBarItemStub {
    const item = this.statusItems[this.statusItems.length - 1];
    if (!item) {
      throw new Error("no status bar item was created");
    }
    return item;
  },
};

// ---- the API ------------------------------------------------------------------------------------

function configuration(section: string) {
  const full = (key: string) => `${section}.${key}`;
  return {
    get<T>(key: string, fallback?: T): T | undefined {
      const i = this.inspect<T>(key);
      const v = i.workspaceFolderValue ?? i.workspaceValue ?? i.globalValue ?? i.defaultValue;
      return v === undefined ? fallback : v;
    },
    inspect<T>(key: string) {
      const vals = stub.values.get(full(key)) ?? {};
      return {
        key: full(key),
        defaultValue: contributed[full(key)]?.default as T | undefined,
        globalValue: vals.globalValue as T | undefined,
        workspaceValue: vals.workspaceValue as T | undefined,
        workspaceFolderValue: vals.workspaceFolderValue as T | undefined,
      };
    },
    has(key: string): boolean {
      return full(key) in contributed;
    },
  };
}

export const workspace = {
  get isTrusted(): boolean {
    return stub.trusted;
  },
  getConfiguration: configuration,
  onDidChangeConfiguration: (l: Listener<{ affectsConfiguration(section: string): boolean }>) =>
    stub.configChanged.event(l),
  onDidGrantWorkspaceTrust: (l: Listener<void>) => stub.trustGranted.event(l),
};

export const window = {
  get activeTextEditor() {
    return stub.activeTextEditor;
  },
  createOutputChannel(name: string) {
    return {
      name,
      appendLine: (s: string) => stub.output.push(s),
      append: (s: string) => stub.output.push(s),
      show: () => undefined,
      dispose: () => undefined,
    };
  },
  createStatusBarItem(alignment: StatusBarAlignment): StatusBarItemStub {
    const item: StatusBarItemStub = {
      text: "",
      tooltip: undefined,
      command: undefined,
      visible: false,
      alignment,
      show() {
        this.visible = true;
      },
      hide() {
        this.visible = false;
      },
      dispose() {
        this.visible = false;
      },
    };
    stub.statusItems.push(item);
    return item;
  },
  async showInformationMessage(text: string): Promise<string | undefined> {
    stub.messages.push({ kind: "info", text });
    return undefined;
  },
  async showWarningMessage(text: string): Promise<string | undefined> {
    stub.messages.push({ kind: "warning", text });
    return undefined;
  },
  async showErrorMessage(text: string): Promise<string | undefined> {
    stub.messages.push({ kind: "error", text });
    return undefined;
  },
  setStatusBarMessage(text: string) {
    stub.messages.push({ kind: "statusBar", text });
    return { dispose: () => undefined };
  },
  async showQuickPick<T>(items: T[]): Promise<T | undefined> {
    return stub.quickPickAnswer === undefined ? undefined : items[stub.quickPickAnswer];
  },
};

export const commands = {
  registerCommand(id: string, fn: (...args: unknown[]) => unknown) {
    if (stub.commands.has(id)) {
      throw new Error(`command '${id}' already exists`);
    }
    stub.commands.set(id, fn);
    return { dispose: () => stub.commands.delete(id) };
  },
  async executeCommand(id: string, ...args: unknown[]): Promise<unknown> {
    const fn = stub.commands.get(id);
    if (!fn) {
      throw new Error(`command '${id}' not found`);
    }
    return fn(...args);
  },
};

export const languages = {
  getDiagnostics(uri?: Uri): any {
    if (uri) {
      return stub.diagnostics.get(uri.toString()) ?? [];
    }
    return [...stub.diagnostics.entries()].map(([u, ds]) => [Uri.parse(u), ds]);
  },
};
