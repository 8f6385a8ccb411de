-- Headless Neovim (0.7.2) end-to-end test of `crosscheck lsp`, driven by tests/nvim/run.sh:
-- open a fixture, wait for diagnostics, hover, list code actions, edit, and check that the
-- diagnostics follow the edit. Writes one line per check and a summary to $NVIM_TEST_OUT.

local bin = os.getenv("CROSSCHECK_BIN")
local out_path = os.getenv("NVIM_TEST_OUT")
local fixture = vim.fn.fnamemodify("tests/nvim/fixture.py", ":p")
local lines, passed, failed = {}, 0, 0

local function check(name, ok, detail)
  if ok then
    passed = passed + 1
    table.insert(lines, "ok   " .. name)
  else
    failed = failed + 1
    table.insert(lines, "FAIL " .. name .. (detail and (": " .. tostring(detail)) or ""))
  end
end

local function finish()
  table.insert(lines, string.format("nvim: %d passed, %d failed", passed, failed))
  local f = io.open(out_path, "w")
  f:write(table.concat(lines, "\n") .. "\n")
  f:close()
  os.exit(failed == 0 and 0 or 1)
end

vim.cmd("edit " .. fixture)
local bufnr = vim.api.nvim_get_current_buf()
local client_id = vim.lsp.start_client({
  name = "crosscheck",
  cmd = { bin, "lsp" },
  root_dir = vim.fn.fnamemodify(fixture, ":h"),
})
check("client started", client_id ~= nil)
if not client_id then finish() end
vim.lsp.buf_attach_client(bufnr, client_id)

local function code_of(d)
  if d.code then return d.code end
  if d.user_data and d.user_data.lsp then return d.user_data.lsp.code end
  return nil
end

local function find(code)
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    if code_of(d) == code then return d end
  end
  return nil
end

-- 1. Diagnostics after open.
local ok = vim.wait(30000, function() return find("syntax-error") ~= nil end, 50)
check("syntax-error diagnostic published after open", ok)
local diag = find("syntax-error")
check("diagnostic on the broken line", diag ~= nil and diag.lnum == 8, diag and diag.lnum)

-- 2. Hover on a function.
vim.api.nvim_win_set_cursor(0, { 3, 6 })
local params = vim.lsp.util.make_position_params()
local res = vim.lsp.buf_request_sync(bufnr, "textDocument/hover", params, 10000)
local text = ""
for _, r in pairs(res or {}) do
  if r.result and r.result.contents then text = r.result.contents.value or "" end
end
check("hover shows the CFG summary", text:find("cyclomatic 3", 1, true) ~= nil, text)
check("hover names the function", text:find("total(xs)", 1, true) ~= nil, text)

-- 3. Code actions on the diagnostic's line.
local line = diag and diag.lnum or 8
local ca_params = {
  textDocument = { uri = vim.uri_from_bufnr(bufnr) },
  range = { start = { line = line, character = 0 }, ["end"] = { line = line, character = 0 } },
  context = { diagnostics = {} },
}
local ca = vim.lsp.buf_request_sync(bufnr, "textDocument/codeAction", ca_params, 10000)
local titles = {}
for _, r in pairs(ca or {}) do
  for _, a in ipairs(r.result or {}) do table.insert(titles, a.title) end
end
local joined = table.concat(titles, " | ")
check("code action: suppress", joined:find("suppress `syntax-error`", 1, true) ~= nil, joined)
check("code action: mark correct", joined:find("as correct", 1, true) ~= nil, joined)

-- 4. Edit the buffer (incremental didChange): the syntax error goes away.
vim.api.nvim_buf_set_lines(bufnr, line, line + 1, false, { "def broken(x):" })
ok = vim.wait(30000, function() return find("syntax-error") == nil end, 50)
check("diagnostics follow the edit", ok)

-- 5. Break it again on another line: a new diagnostic appears there.
vim.api.nvim_buf_set_lines(bufnr, 5, 5, false, { "def again(:" })
ok = vim.wait(30000, function()
  local d = find("syntax-error")
  return d ~= nil and d.lnum == 5
end, 50)
check("a new error is reported at its new line", ok)

vim.lsp.stop_client(client_id)
vim.wait(5000, function() return vim.lsp.get_client_by_id(client_id) == nil end, 50)
finish()
