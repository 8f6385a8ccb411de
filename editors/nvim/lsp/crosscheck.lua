-- Neovim 0.11+: `vim.lsp.enable("crosscheck")` works with this file alone (no tier labels or
-- user commands; require("crosscheck").setup() adds those and overrides these fields).
return {
  cmd = { "crosscheck", "lsp" },
  filetypes = {
    "python",
    "java",
    "c",
    "cpp",
    "solidity",
    "javascript",
    "javascriptreact",
    "typescript",
    "typescriptreact",
  },
  root_markers = { "crosscheck.toml", ".git" },
}
