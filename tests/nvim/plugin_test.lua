-- Headless Neovim test of the plugin in editors/nvim, loaded through the runtimepath as the
-- README tells users (tests/nvim/plugin_init.lua is the init file): open a fixture, wait for
-- diagnostics, hover, code actions, the user commands, :checkhealth, tier presentation, edits.
-- Writes one line per check and a summary to $NVIM_TEST_OUT.

local out_path = os.getenv("NVIM_TEST_OUT")
local project = os.getenv("NVIM_TEST_PROJECT")
local lines, passed, failed = {}, 0, 0

local function check(name, ok, detail)
  if ok then
    passed = passed + 1
    table.insert(lines, "ok   plugin: " .. name)
  else
    failed = failed + 1
    table.insert(lines, "FAIL plugin: " .. name .. (detail ~= nil and (": " .. vim.inspect(detail)) or ""))
  end
end

local function finish()
  table.insert(lines, string.format("nvim: %d passed, %d failed", passed, failed))
  local f = io.open(out_path, "w")
  f:write(table.concat(lines, "\n") .. "\n")
  f:close()
  os.exit(failed == 0 and 0 or 1)
end

local ok_req, cc = pcall(require, "crosscheck")
check("require('crosscheck') from the runtimepath", ok_req, cc)
if not ok_req then finish() end

-- vim.notify capture (the commands report through it).
local notes = {}
vim.notify = function(msg, level) table.insert(notes, { msg = msg, level = level }) end
local function note_matching(pattern)
  for _, n in ipairs(notes) do
    if n.msg:find(pattern, 1, true) then return n end
  end
  return nil
end

-- vim.ui.select answers like a user picking the syntax-error finding.
local prompts = {}
vim.ui.select = function(items, opts, on_choice)
  local labels = {}
  local pick
  for i, it in ipairs(items) do
    labels[i] = opts.format_item and opts.format_item(it) or tostring(it)
    if labels[i]:find("^syntax%-error") then pick = it end
  end
  table.insert(prompts, labels)
  on_choice(pick)
end

-- 1. Loading: plugin/ file, highlight groups, commands.
check("plugin/crosscheck.lua was sourced", vim.g.loaded_crosscheck == true)
local function link_of(group)
  return vim.fn.synIDattr(vim.fn.synIDtrans(vim.fn.hlID(group)), "name")
end
check("CrosscheckUnverified links to Comment", link_of("CrosscheckUnverified") == "Comment", link_of("CrosscheckUnverified"))
check("CrosscheckConfirmed links to DiagnosticInfo", link_of("CrosscheckConfirmed") == link_of("DiagnosticInfo"))
for _, name in ipairs(cc.command_names) do
  check("user command :" .. name, vim.fn.exists(":" .. name) == 2)
end
local expected_strategy = vim.fn.has("nvim-0.11") == 1 and "config"
  or (vim.fn.has("nvim-0.8") == 1 and "start" or "start_client")
check("client started with " .. expected_strategy, cc.strategy() == expected_strategy, cc.strategy())

-- 2. Open the fixture: the plugin starts the server and attaches.
vim.cmd("edit " .. project .. "/fixture.py")
local bufnr = vim.api.nvim_get_current_buf()
local attached = vim.wait(15000, function() return #cc.clients(bufnr) == 1 end, 50)
check("one crosscheck client attached on FileType python", attached, #cc.clients(bufnr))
if not attached then finish() end
local client = cc.clients(bufnr)[1]
check("root_dir is the folder with crosscheck.toml", client.config.root_dir == project, client.config.root_dir)
check("code lens refresh autocmds (the server offers code lens for flaky-test hints)", vim.fn.exists("#crosscheck_codelens_" .. bufnr) == 1)

local function find(code, buf)
  for _, d in ipairs(vim.diagnostic.get(buf or bufnr)) do
    if d.code == code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code == code) then return d end
  end
  return nil
end

-- 3. Diagnostics with tier presentation.
local ok = vim.wait(30000, function() return find("syntax-error") ~= nil end, 50)
check("syntax-error diagnostic published after open", ok)
local diag = find("syntax-error")
check("diagnostic on the broken line", diag ~= nil and diag.lnum == 8, diag and diag.lnum)
check("source names the tier", diag ~= nil and diag.source == "crosscheck (analyzer-only)", diag and diag.source)
check("tier label on the broken line", vim.wait(5000, function()
  for _, l in ipairs(cc.labels(bufnr)) do
    if l[1] == 8 and l[2] == " [analyzer-only]" and l[3] == "CrosscheckAnalyzerOnly" then return true end
  end
  return false
end, 50), cc.labels(bufnr))

-- 4. Hover on a function.
vim.api.nvim_win_set_cursor(0, { 3, 6 })
local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
local res = vim.lsp.buf_request_sync(bufnr, "textDocument/hover", params, 10000)
local text = ""
for _, r in pairs(res or {}) do
  if r.result and r.result.contents then text = r.result.contents.value or "" end
end
check("hover shows the CFG summary", text:find("cyclomatic 3", 1, true) ~= nil, text)
check("hover names the function", text:find("total(xs)", 1, true) ~= nil, text)

-- 5. Code actions on the diagnostic's line.
local ca_params = {
  textDocument = { uri = vim.uri_from_bufnr(bufnr) },
  range = { start = { line = 8, character = 0 }, ["end"] = { line = 8, character = 0 } },
  context = { diagnostics = vim.lsp.diagnostic.get_line_diagnostics and vim.lsp.diagnostic.get_line_diagnostics(bufnr, 8) or {} },
}
local ca = vim.lsp.buf_request_sync(bufnr, "textDocument/codeAction", ca_params, 10000)
local titles = {}
for _, r in pairs(ca or {}) do
  for _, a in ipairs(r.result or {}) do table.insert(titles, a.title) end
end
local joined = table.concat(titles, " | ")
check("code action: suppress", joined:find("suppress `syntax-error`", 1, true) ~= nil, joined)
check("code action: mark correct", joined:find("as correct", 1, true) ~= nil, joined)
check("code action: mark incorrect", joined:find("as incorrect", 1, true) ~= nil, joined)

-- 6. User commands for the code actions.
vim.api.nvim_win_set_cursor(0, { 2, 4 })
vim.cmd("CrosscheckExplain")
check(":CrosscheckExplain reports that no LLM is configured", vim.wait(10000, function()
  return note_matching("LLM not configured") ~= nil
end, 50), notes)
vim.api.nvim_win_set_cursor(0, { 9, 0 })
local before = #notes
vim.cmd("CrosscheckMarkCorrect")
check(":CrosscheckMarkCorrect is answered by the server", vim.wait(10000, function()
  for i = before + 1, #notes do
    local m = notes[i].msg
    if m:find("marked as correct", 1, true) or m:find("telemetry store", 1, true) then return true end
  end
  return false
end, 50), notes)
-- The syntax error and the "partial" note of the function starting there share one range; the
-- server shows one diagnostic per range, so the command acts on it without asking.
check("one finding on the line: the command does not ask which one", #prompts == 0, prompts)
vim.cmd("CrosscheckStatus")
check(":CrosscheckStatus shows the backend state", note_matching("no LLM: deterministic analyses only") ~= nil, notes)

-- 7. :checkhealth crosscheck
vim.cmd("checkhealth crosscheck")
local health = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
vim.cmd("tabclose")
check(":checkhealth finds the binary", health:find("crosscheck 0.", 1, true) ~= nil, health)
check(":checkhealth validates the settings against the schema", health:find("settings: 1 key(s), all known to the server", 1, true) ~= nil, health)
check(":checkhealth sees the running server", health:find("server running", 1, true) ~= nil, health)
check(":checkhealth reports no error", health:find("ERROR", 1, true) == nil, health)
vim.api.nvim_set_current_buf(bufnr)

-- 8. Tier presentation of LLM-tier findings (a publication the fake-free server cannot make
-- without an LLM is fed through the plugin's handler, as the client would).
-- Not a Python file: the plugin must not attach (the server would publish for it).
local synthetic = project .. "/synthetic.txt"
local f = io.open(synthetic, "w")
f:write("a = 1\nb = 2\nc = 3\nd = 4\n")
f:close()
local sbuf = vim.fn.bufadd(synthetic)
vim.fn.bufload(sbuf)
local suri = vim.uri_from_bufnr(sbuf)
local function lspdiag(line, tier, severity)
  return {
    range = { start = { line = line, character = 0 }, ["end"] = { line = line, character = 5 } },
    message = tier .. " finding", severity = severity, source = "crosscheck", code = "taint",
    data = { tier = tier, rule = "taint", fingerprint = "fp" .. line },
  }
end
cc._publish_diagnostics(nil, {
  uri = suri,
  diagnostics = { lspdiag(0, "confirmed", 1), lspdiag(1, "llm-only", 1), lspdiag(2, "refuted", 2) },
}, { client_id = client.id, method = "textDocument/publishDiagnostics" }, {})
local by_line = {}
for _, d in ipairs(vim.diagnostic.get(sbuf)) do by_line[d.lnum] = d end
check("confirmed keeps its severity", by_line[0] and by_line[0].severity == vim.diagnostic.severity.ERROR, by_line[0])
check("llm-only is marked [unverified]", by_line[1] and by_line[1].message == "[unverified] llm-only finding", by_line[1])
check("llm-only is capped at INFO", by_line[1] and by_line[1].severity == vim.diagnostic.severity.INFO, by_line[1])
check("refuted is marked [refuted]", by_line[2] and by_line[2].message == "[refuted] refuted finding", by_line[2])
local want = { [0] = { " [confirmed]", "CrosscheckConfirmed" }, [1] = { " [unverified]", "CrosscheckUnverified" }, [2] = { " [refuted]", "CrosscheckRefuted" } }
local labels = cc.labels(sbuf)
local matched = 0
for _, l in ipairs(labels) do
  local w = want[l[1]]
  if w and w[1] == l[2] and w[2] == l[3] then matched = matched + 1 end
end
check("tier labels use the tier highlight groups", matched == 3, labels)
local fixed = true
for _, l in ipairs(labels) do
  if l[4] ~= "right_align" then fixed = false end
end
check("tier labels sit at the right edge, whatever the message length", fixed, labels)
-- Two findings on one line: one label, each tier once, the more severe finding's first.
cc._publish_diagnostics(nil, {
  uri = suri,
  diagnostics = { lspdiag(0, "llm-only", 1), lspdiag(0, "confirmed", 1), lspdiag(0, "confirmed", 2) },
}, { client_id = client.id, method = "textDocument/publishDiagnostics" }, {})
labels = cc.labels(sbuf)
check("one label per line naming each tier once",
  #labels == 1 and labels[1][1] == 0 and labels[1][2] == " [confirmed]" and labels[1][5] == 2, labels)

-- 9. Edit the buffer (incremental didChange): the syntax error goes away, labels too.
vim.api.nvim_set_current_buf(bufnr)
vim.api.nvim_buf_set_lines(bufnr, 8, 9, false, { "def broken(x):" })
ok = vim.wait(30000, function() return find("syntax-error") == nil end, 50)
check("diagnostics follow the edit", ok)
check("the label went with the diagnostic", vim.wait(5000, function() return #cc.labels(bufnr) == 0 end, 50), cc.labels(bufnr))

-- 10. Break it again on another line: a new diagnostic appears there.
vim.api.nvim_buf_set_lines(bufnr, 5, 5, false, { "def again(:" })
ok = vim.wait(30000, function()
  local d = find("syntax-error")
  return d ~= nil and d.lnum == 5
end, 50)
check("a new error is reported at its new line", ok)

-- 11. :CrosscheckSuppress inserts the ignore comment (workspace/applyEdit) and the finding goes.
vim.api.nvim_win_set_cursor(0, { 6, 0 })
vim.cmd("CrosscheckSuppress")
ok = vim.wait(15000, function()
  local l = vim.api.nvim_buf_get_lines(bufnr, 5, 6, false)[1] or ""
  return l:find("crosscheck: ignore[syntax-error]", 1, true) ~= nil
end, 50)
check(":CrosscheckSuppress inserts the ignore comment above the finding", ok, vim.api.nvim_buf_get_lines(bufnr, 0, -1, false))
ok = vim.wait(30000, function() return find("syntax-error") == nil end, 50)
check("the suppressed finding is no longer shown", ok, vim.diagnostic.get(bufnr))

vim.lsp.stop_client(client.id)
vim.wait(5000, function() return vim.lsp.get_client_by_id(client.id) == nil end, 50)
finish()
