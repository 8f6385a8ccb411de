-- Headless test of the plugin's start-up paths with Neovim's LSP entry points replaced by
-- recorders: vim.lsp.config + vim.lsp.enable (0.11+), vim.lsp.start on FileType (0.8-0.10),
-- vim.lsp.start_client + buf_attach_client on FileType (0.7); code lens refresh; settings
-- sanitising; the health check's settings validation. Debian's 0.7.2 runs every path this way.

local out_path = os.getenv("NVIM_TEST_OUT")
local project = os.getenv("NVIM_TEST_PROJECT")
local bin = os.getenv("CROSSCHECK_BIN")
local lines, passed, failed = {}, 0, 0

local function check(name, ok, detail)
  if ok then
    passed = passed + 1
    table.insert(lines, "ok   dispatch: " .. name)
  else
    failed = failed + 1
    table.insert(lines, "FAIL dispatch: " .. name .. (detail ~= nil and (": " .. vim.inspect(detail)) or ""))
  end
end

local function finish()
  table.insert(lines, string.format("nvim: %d passed, %d failed", passed, failed))
  local f = io.open(out_path, "w")
  f:write(table.concat(lines, "\n") .. "\n")
  f:close()
  os.exit(failed == 0 and 0 or 1)
end

vim.opt.runtimepath:append(os.getenv("CROSSCHECK_NVIM_PLUGIN"))
vim.cmd("filetype on")

local saved = {}
for _, k in ipairs({ "config", "enable", "start", "start_client", "buf_attach_client", "get_client_by_id" }) do
  saved[k] = vim.lsp[k]
end
local saved_refresh = vim.lsp.codelens.refresh

local function fresh()
  for k, v in pairs(saved) do vim.lsp[k] = v end
  vim.lsp.codelens.refresh = saved_refresh
  vim.cmd("silent! %bwipeout!")
  package.loaded["crosscheck"] = nil
  return require("crosscheck")
end

local function mkfile(path, text)
  vim.fn.mkdir(vim.fn.fnamemodify(path, ":h"), "p")
  local f = io.open(path, "w")
  f:write(text or "x = 1\n")
  f:close()
  return path
end

local other = vim.fn.fnamemodify(project, ":h") .. "/other"
mkfile(project .. "/sub/a.py")
mkfile(project .. "/b.py")
mkfile(project .. "/c.java", "class C {}\n")
mkfile(project .. "/notes.lua", "return 1\n")
mkfile(other .. "/.git/HEAD", "ref: refs/heads/main\n")
mkfile(other .. "/d.py")

local function run(name, fn)
  local ok, err = pcall(fn)
  if not ok then check(name .. " (raised)", false, err) end
end

-- 0.11+: vim.lsp.config + vim.lsp.enable -----------------------------------------------------------
run("0.11", function()
  local cc = fresh()
  local recorded, enabled = {}, {}
  vim.lsp.config = setmetatable({}, { __call = function(_, name, cfg) recorded[name] = cfg end })
  vim.lsp.enable = function(name) table.insert(enabled, name) end
  vim.lsp.start = function() error("vim.lsp.start must not be used on 0.11+") end
  local strategy = cc.setup({ cmd = { "/opt/cc", "lsp" }, settings = { tiers = { ["llm-only"] = "hidden" } } })
  local c = recorded.crosscheck
  check("0.11+: strategy is vim.lsp.config", strategy == "config", strategy)
  check("0.11+: vim.lsp.enable('crosscheck')", #enabled == 1 and enabled[1] == "crosscheck", enabled)
  check("0.11+: cmd", c and c.cmd[1] == "/opt/cc" and c.cmd[2] == "lsp", c and c.cmd)
  check("0.11+: filetypes", c and vim.tbl_contains(c.filetypes, "python") and vim.tbl_contains(c.filetypes, "solidity"), c and c.filetypes)
  check("0.11+: root_markers", c and c.root_markers[1] == "crosscheck.toml", c and c.root_markers)
  check("0.11+: settings as initializationOptions", c and c.init_options.tiers["llm-only"] == "hidden", c and c.init_options)
  check("0.11+: settings for workspace/configuration", c and c.settings.crosscheck.tiers["llm-only"] == "hidden", c and c.settings)
  check("0.11+: tier-aware publishDiagnostics handler", c and type(c.handlers["textDocument/publishDiagnostics"]) == "function")
  check("0.11+: no FileType autocmd of our own", #vim.api.nvim_get_autocmds({ group = "crosscheck", event = "FileType" }) == 0)
end)

-- 0.8-0.10: vim.lsp.start on FileType ---------------------------------------------------------------
run("0.8", function()
  local cc = fresh()
  local calls = {}
  vim.lsp.config, vim.lsp.enable = nil, nil
  vim.lsp.start = function(config, opts) table.insert(calls, { config = config, opts = opts }); return 7 end
  vim.cmd("edit " .. project .. "/b.py") -- open before setup (lazy loading)
  local early = vim.api.nvim_get_current_buf()
  local strategy = cc.setup({ cmd = { "/opt/cc", "lsp" } })
  check("0.8-0.10: strategy is vim.lsp.start", strategy == "start", strategy)
  check("0.8-0.10: a buffer open before setup is attached", #calls == 1 and calls[1].opts.bufnr == early, calls)
  vim.cmd("edit " .. project .. "/sub/a.py")
  local buf = vim.api.nvim_get_current_buf()
  local last = calls[#calls]
  check("0.8-0.10: FileType python starts/attaches", #calls == 2 and last.opts.bufnr == buf, #calls)
  check("0.8-0.10: name and cmd", last.config.name == "crosscheck" and last.config.cmd[1] == "/opt/cc")
  check("0.8-0.10: root_dir from crosscheck.toml upwards", last.config.root_dir == project, last.config.root_dir)
  check("0.8-0.10: workspace folder is the root", last.config.workspace_folders[1].uri == vim.uri_from_fname(project), last.config.workspace_folders)
  check("0.8-0.10: no settings -> no initializationOptions", last.config.init_options == nil and last.config.settings == nil)
  vim.cmd("edit " .. project .. "/notes.lua")
  check("0.8-0.10: other filetypes are left alone", #calls == 2, #calls)
  vim.cmd("edit " .. other .. "/d.py")
  check("0.8-0.10: .git marks a root too", calls[#calls].config.root_dir == other, calls[#calls].config.root_dir)
end)

-- 0.7: vim.lsp.start_client + buf_attach_client -------------------------------------------------------
local legacy_configs, attaches, alive = {}, {}, {}
local function legacy_fakes()
  legacy_configs, attaches, alive = {}, {}, {}
  vim.lsp.config, vim.lsp.enable, vim.lsp.start = nil, nil, nil
  vim.lsp.start_client = function(config)
    table.insert(legacy_configs, config)
    local id = 100 + #legacy_configs
    alive[id] = true
    return id
  end
  vim.lsp.buf_attach_client = function(bufnr, id) table.insert(attaches, { bufnr, id }); return true end
  vim.lsp.get_client_by_id = function(id) return alive[id] and { id = id } or nil end
end

run("0.7", function()
  local cc = fresh()
  legacy_fakes()
  local user_attached = {}
  local strategy = cc.setup({ cmd = { "/opt/cc", "lsp" }, on_attach = function(_, b) table.insert(user_attached, b) end })
  check("0.7: strategy is start_client", strategy == "start_client", strategy)
  vim.cmd("edit " .. project .. "/sub/a.py")
  local a = vim.api.nvim_get_current_buf()
  vim.cmd("edit " .. project .. "/c.java")
  local j = vim.api.nvim_get_current_buf()
  check("0.7: one client per root", #legacy_configs == 1, #legacy_configs)
  check("0.7: both buffers attached to it", #attaches == 2 and attaches[1][1] == a and attaches[2][1] == j
    and attaches[1][2] == 101 and attaches[2][2] == 101, attaches)
  check("0.7: root_dir", legacy_configs[1].root_dir == project, legacy_configs[1].root_dir)
  vim.cmd("edit " .. other .. "/d.py")
  check("0.7: another root gets its own client", #legacy_configs == 2 and attaches[3][2] == 102, attaches)
  -- The first client exits: the next buffer in its root starts a new one.
  alive[101] = nil
  legacy_configs[1].on_exit(0, 0)
  vim.cmd("edit " .. project .. "/b.py")
  check("0.7: a new client after the old one exited", #legacy_configs == 3 and attaches[#attaches][2] == 103, attaches)
  -- on_attach: the user's callback runs; no code lens without the capability.
  legacy_configs[1].on_attach({ resolved_capabilities = { code_lens = false } }, a)
  check("0.7: the user's on_attach runs", user_attached[1] == a, user_attached)
  check("0.7: no code lens autocmds without the capability", vim.fn.exists("#crosscheck_codelens_" .. a) == 0)
end)

-- Code lens refresh (flaky-test hints) ------------------------------------------------------------------
run("codelens", function()
  local cc = fresh()
  legacy_fakes()
  local refreshed = 0
  vim.lsp.codelens.refresh = function() refreshed = refreshed + 1 end
  cc.setup({ cmd = { "/opt/cc", "lsp" } })
  vim.cmd("edit " .. project .. "/sub/a.py")
  local buf = vim.api.nvim_get_current_buf()
  legacy_configs[1].on_attach({ server_capabilities = { codeLensProvider = { resolveProvider = false } } }, buf)
  check("code lens: refreshed on attach", refreshed == 1, refreshed)
  check("code lens: buffer autocmds", vim.fn.exists("#crosscheck_codelens_" .. buf .. "#InsertLeave") == 1)
  vim.cmd("doautocmd InsertLeave")
  check("code lens: refreshed after leaving insert mode", refreshed == 2, refreshed)
  legacy_configs[1].handlers["workspace/codeLens/refresh"](nil, nil, {}, {})
  check("code lens: refreshed on workspace/codeLens/refresh", refreshed == 3, refreshed)
  cc.setup({ cmd = { "/opt/cc", "lsp" }, codelens = false })
  vim.cmd("edit " .. project .. "/b.py")
  local b = vim.api.nvim_get_current_buf()
  legacy_configs[#legacy_configs].on_attach({ server_capabilities = { codeLensProvider = {} } }, b)
  check("code lens: off when codelens = false", vim.fn.exists("#crosscheck_codelens_" .. b) == 0)
end)

-- Settings and presentation helpers ---------------------------------------------------------------------
run("helpers", function()
  local cc = fresh()
  check("sanitize drops empty tables (they would be JSON arrays)",
    vim.deep_equal(cc._sanitize({ files = {}, tiers = { refuted = "hint" } }), { tiers = { refuted = "hint" } }))
  check("sanitize: nothing set -> nil", cc._sanitize({}) == nil and cc._sanitize({ rules = {} }) == nil)
  cc.setup({ cmd = "/opt/cc" })
  check("cmd as a string gets `lsp`", cc.config.cmd[1] == "/opt/cc" and cc.config.cmd[2] == "lsp", cc.config.cmd)
  local r = { diagnostics = {
    { message = "m", severity = 1, source = "crosscheck", data = { tier = "llm-only" } },
    { message = "n", severity = 2, source = "other", data = { tier = "llm-only" } },
  } }
  cc.present(r)
  cc.present(r)
  check("present is idempotent", r.diagnostics[1].message == "[unverified] m" and #r.diagnostics[1].tags == 1, r.diagnostics[1])
  check("present leaves other sources alone", r.diagnostics[2].message == "n" and r.diagnostics[2].severity == 2)
  local r2 = { diagnostics = { { message = "m", severity = 1, source = "crosscheck", data = { tier = "llm-only" } } } }
  cc.present(r2, { mark_unverified = false })
  check("mark_unverified = false keeps message and severity", r2.diagnostics[1].message == "m" and r2.diagnostics[1].severity == 1)
  local r3 = { diagnostics = { { message = "LLM claim (unverified): x may be null", severity = 3, source = "crosscheck", data = { tier = "llm-only" } } } }
  cc.present(r3)
  cc.present(r3)
  check("the server's label and the prefix say unverified once", r3.diagnostics[1].message == "[unverified] LLM claim: x may be null", r3.diagnostics[1])
end)

run("health", function()
  local health = require("crosscheck.health")
  local schema = vim.fn.json_decode(vim.fn.system({ bin, "schema", "lsp-settings" }))
  local unknown = health.unknown_settings({ tiers = { ["llm-only"] = "hidden" }, files = { exclude = { "gen/" } },
    llm = { base_url = "http://evil" } }, schema)
  check("health: settings checked against `crosscheck schema lsp-settings`", vim.deep_equal(unknown, { "llm.base_url" }), unknown)
end)

fresh()
finish()
