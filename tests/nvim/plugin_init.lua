-- A user's init.lua as editors/nvim/README.md shows it ("plain runtimepath entry"), with the
-- binary under test and two documented options the test checks (a tier label for
-- analyzer-only findings, one server setting).
vim.opt.runtimepath:append(vim.env.CROSSCHECK_NVIM_PLUGIN) -- README: "/path/to/crosscheck/editors/nvim"
require("crosscheck").setup({
  cmd = { vim.env.CROSSCHECK_BIN, "lsp" },
  settings = { tiers = { refuted = "hidden" } },
  labels = { ["analyzer-only"] = "analyzer-only" },
})
