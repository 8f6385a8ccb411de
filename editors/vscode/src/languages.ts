// The languages the server analyses (VS Code language ids). `activationEvents` in package.json
// lists the same ones (a test checks).

export const LANGUAGE_IDS = [
  "python",
  "java",
  "c",
  "cpp",
  "solidity",
  "javascript",
  "javascriptreact",
  "typescript",
  "typescriptreact",
] as const;

/** Document selector: files on disk only (the server needs paths for the workspace analysis). */
export const DOCUMENT_SELECTOR = LANGUAGE_IDS.map((language) => ({ scheme: "file", language }));
