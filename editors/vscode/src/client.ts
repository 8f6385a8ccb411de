// The real language client (vscode-languageclient over stdio). Kept apart from the controller so
// that tests can inject a fake client.

import {
  LanguageClient,
  LanguageClientOptions,
  RevealOutputChannelOn,
  ServerOptions,
  TransportKind,
} from "vscode-languageclient/node";
import { ClientLike, ClientSpec } from "./controller";
import { DOCUMENT_SELECTOR } from "./languages";

export function createLanguageClient(spec: ClientSpec): ClientLike {
  const serverOptions: ServerOptions = {
    command: spec.launch.command,
    args: spec.launch.args,
    transport: TransportKind.stdio,
    options: spec.launch.env ? { env: { ...process.env, ...spec.launch.env } } : undefined,
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: DOCUMENT_SELECTOR,
    initializationOptions: spec.initializationOptions,
    outputChannel: spec.outputChannel,
    revealOutputChannelOn: RevealOutputChannelOn.Never,
    diagnosticCollectionName: "crosscheck",
    middleware: {
      handleDiagnostics: (uri, diagnostics, next) => spec.handleDiagnostics(uri, diagnostics, next),
      workspace: {
        configuration: async (params, token, next) => {
          const ours = spec.configuration(params.items.map((i) => i.section));
          if (ours.every((x) => x === undefined)) {
            return next(params, token);
          }
          const theirs = await next(params, token);
          const base: unknown[] = Array.isArray(theirs) ? theirs : [];
          return params.items.map((_, i) => ours[i] ?? base[i] ?? null);
        },
      },
    },
  };
  const client = new LanguageClient("crosscheck", "crosscheck", serverOptions, clientOptions);
  return {
    start: () => client.start(),
    stop: () => client.stop(),
    sendRequest: <R>(method: string, params?: unknown) => client.sendRequest<R>(method, params),
    sendNotification: (method: string, params?: unknown) => client.sendNotification(method, params),
  };
}
