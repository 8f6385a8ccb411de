// Entry point: wires the controller to the real language client.

import * as vscode from "vscode";
import { createLanguageClient } from "./client";
import { Controller } from "./controller";

let controller: Controller | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  controller = new Controller(context, createLanguageClient);
  await controller.activate();
}

export async function deactivate(): Promise<void> {
  const c = controller;
  controller = undefined;
  await c?.dispose();
}
