-- Loaded automatically from the runtimepath. Defines only the highlight groups (as default
-- links, so colorschemes may override them); nothing starts before
-- require("crosscheck").setup({...}).
if vim.g.loaded_crosscheck then
  return
end
vim.g.loaded_crosscheck = true
require("crosscheck").define_highlights()
