// Settings: which `crosscheck.*` keys belong to the server and which to this extension, and the
// settings object sent to the server (initializationOptions, didChangeConfiguration,
// workspace/configuration).
//
// The server's keys are those `package.json` contributes outside the extension's own namespaces;
// a Rust test keeps them identical to `crosscheck schema lsp-settings`.

/** Setting-name prefixes owned by this extension (never sent to the server). */
export const CLIENT_NAMESPACES = ["crosscheck.server.", "crosscheck.client.", "crosscheck.trace."];

/** The subset of `vscode.WorkspaceConfiguration` used here (section `crosscheck`). */
export interface ConfigLike {
  get<T>(key: string): T | undefined;
  inspect<T>(key: string):
    | {
        defaultValue?: T;
        globalValue?: T;
        workspaceValue?: T;
        workspaceFolderValue?: T;
        globalLanguageValue?: T;
        workspaceLanguageValue?: T;
        workspaceFolderLanguageValue?: T;
      }
    | undefined;
}

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** Contributed setting names (`crosscheck.a.b`) from a parsed package.json. */
export function contributedKeys(packageJson: unknown): string[] {
  const props = (packageJson as { contributes?: { configuration?: { properties?: object } } })
    ?.contributes?.configuration?.properties;
  return props ? Object.keys(props).sort() : [];
}

/** The server's setting names among the contributed ones. */
export function serverKeys(packageJson: unknown): string[] {
  return contributedKeys(packageJson).filter(
    (k) => k.startsWith("crosscheck.") && !CLIENT_NAMESPACES.some((ns) => k.startsWith(ns)),
  );
}

function relative(key: string): string {
  return key.slice("crosscheck.".length);
}

/** Whether the user (or workspace) set the key explicitly, in any scope. */
export function isExplicit(config: ConfigLike, rel: string): boolean {
  const i = config.inspect<unknown>(rel);
  if (!i) {
    return false;
  }
  return [
    i.globalValue,
    i.workspaceValue,
    i.workspaceFolderValue,
    i.globalLanguageValue,
    i.workspaceLanguageValue,
    i.workspaceFolderLanguageValue,
  ].some((v) => v !== undefined);
}

function setPath(root: JsonObject, path: string[], value: Json): void {
  let cur = root;
  for (const p of path.slice(0, -1)) {
    const next = cur[p];
    if (next === null || typeof next !== "object" || Array.isArray(next)) {
      cur[p] = {};
    }
    cur = cur[p] as JsonObject;
  }
  cur[path[path.length - 1]] = value;
}

/**
 * The settings object the server reads (nested tables, keys spelled as in crosscheck.toml).
 *
 * Only keys set explicitly are sent: the server layers editor settings OVER the user's own
 * config file, so sending defaults would silently override it. In an untrusted workspace
 * `llm.enabled` is forced to `false`: no code leaves the machine.
 */
export function serverSettings(config: ConfigLike, keys: string[], trusted: boolean): JsonObject {
  const out: JsonObject = {};
  for (const key of keys) {
    const rel = relative(key);
    if (!isExplicit(config, rel)) {
      continue;
    }
    const v = config.get<Json>(rel);
    if (v !== undefined) {
      setPath(out, rel.split("."), v);
    }
  }
  if (!trusted) {
    setPath(out, ["llm", "enabled"], false);
  }
  return out;
}

/** Dotted keys present in a nested settings object (to notice keys that became unset). */
export function flatKeys(obj: JsonObject, prefix = ""): string[] {
  const keys: string[] = [];
  for (const [k, v] of Object.entries(obj)) {
    const name = prefix ? `${prefix}.${k}` : k;
    if (v !== null && typeof v === "object" && !Array.isArray(v)) {
      keys.push(...flatKeys(v, name));
    } else {
      keys.push(name);
    }
  }
  return keys.sort();
}

/** How to launch the server. */
export interface Launch {
  command: string;
  args: string[];
  /** Extra environment for the server process (added to the extension host's). */
  env?: Record<string, string>;
}

/**
 * The binary and its arguments. In an untrusted workspace only the user's own (global) values
 * count, whatever VS Code would resolve: a repository must not choose what we execute; and the
 * server is told (`CROSSCHECK_UNTRUSTED_WORKSPACE=1`) so it never runs the workspace's code
 * (equivalence checks then use the normalisation proof only).
 */
export function serverLaunch(config: ConfigLike, trusted: boolean): Launch {
  const pick = <T>(rel: string, fallback: T): T => {
    if (trusted) {
      return config.get<T>(rel) ?? fallback;
    }
    const i = config.inspect<T>(rel);
    return i?.globalValue ?? i?.defaultValue ?? fallback;
  };
  const path = pick<string>("server.path", "crosscheck").trim() || "crosscheck";
  const extra = pick<unknown>("server.args", []);
  const args = Array.isArray(extra) ? extra.filter((a): a is string => typeof a === "string") : [];
  const launch: Launch = { command: path, args: [...args, "lsp"] };
  if (!trusted) {
    launch.env = { CROSSCHECK_UNTRUSTED_WORKSPACE: "1" };
  }
  return launch;
}
