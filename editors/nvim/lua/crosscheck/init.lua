-- crosscheck for Neovim: starts `crosscheck lsp` for the languages it analyses and adds
-- tier-aware presentation, user commands for the server's code actions, and code lens refresh.
--
--   require("crosscheck").setup({
--     cmd = { "crosscheck", "lsp" },              -- the server command
--     filetypes = { "python", "java", ... },      -- where to start it
--     settings = { tiers = { ["llm-only"] = "hidden" } }, -- server settings, as in crosscheck.toml
--   })
--
-- Works from Neovim 0.7.2 to current: `vim.lsp.config` + `vim.lsp.enable` on 0.11+,
-- `vim.lsp.start` from a FileType autocmd on 0.8-0.10, `vim.lsp.start_client` +
-- `vim.lsp.buf_attach_client` on 0.7. See editors/nvim/README.md.

local M = {}

M.name = "crosscheck"

M.default_filetypes = {
  "python",
  "java",
  "c",
  "cpp",
  "solidity",
  "javascript",
  "javascriptreact",
  "typescript",
  "typescriptreact",
}

--- Highlight groups (linked defaults; a colorscheme or the user may override them).
M.highlights = {
  CrosscheckConfirmed = "DiagnosticInfo",
  CrosscheckAnalyzerOnly = "DiagnosticHint",
  CrosscheckUnverified = "Comment",
  CrosscheckRefuted = "NonText",
}

--- Tier -> highlight group of its label.
M.tier_groups = {
  ["confirmed"] = "CrosscheckConfirmed",
  ["analyzer-only"] = "CrosscheckAnalyzerOnly",
  ["llm-only"] = "CrosscheckUnverified",
  ["refuted"] = "CrosscheckRefuted",
}

local defaults = {
  cmd = { "crosscheck", "lsp" },
  filetypes = M.default_filetypes,
  -- Server settings, nested as in crosscheck.toml (files, rules, tiers, llm). Sent as
  -- initializationOptions and answered to workspace/configuration. Only what you set is sent,
  -- so ~/.config/crosscheck/config.toml keeps its values otherwise.
  settings = {},
  root_markers = { "crosscheck.toml", ".git" },
  -- Tier labels, right-aligned, one per line (false: none). A tier mapped to false gets none.
  labels = {
    ["confirmed"] = "confirmed",
    ["analyzer-only"] = false,
    ["llm-only"] = "unverified",
    ["refuted"] = "refuted",
  },
  -- Mark llm-only / refuted findings "[unverified]" / "[refuted]", cap them at INFO and tag
  -- them unnecessary (drawn faded on Neovim 0.10+).
  mark_unverified = true,
  codelens = true,
  commands = true,
  on_attach = nil,
  capabilities = nil,
}

M.config = nil

local LSP_INFO = 3
local TAG_UNNECESSARY = 1
local PREFIX = { ["llm-only"] = "[unverified] ", ["refuted"] = "[refuted] " }
-- How the server labels an LLM-only claim in the message itself.
local SERVER_LABEL = "LLM claim (unverified): "

local function has(feature)
  return vim.fn.has(feature) == 1
end

local function notify(msg, level)
  vim.notify("crosscheck: " .. msg, level or vim.log.levels.INFO)
end

--- Which API starts the client: "config" (0.11+), "start" (0.8-0.10), "start_client" (0.7).
function M.strategy()
  if vim.lsp.config ~= nil and type(vim.lsp.enable) == "function" then
    return "config"
  elseif type(vim.lsp.start) == "function" then
    return "start"
  end
  return "start_client"
end

-- Client method calls: `client:request()` on 0.11+, `client.request()` before.
local function request(client, method, params, handler, bufnr)
  if has("nvim-0.11") then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

local function request_sync(client, method, params, timeout, bufnr)
  if has("nvim-0.11") then
    return client:request_sync(method, params, timeout, bufnr)
  end
  return client.request_sync(method, params, timeout, bufnr)
end
M._request_sync = request_sync

--- crosscheck clients (attached to `bufnr` when given).
function M.clients(bufnr)
  local out = {}
  if vim.lsp.get_clients then
    return vim.lsp.get_clients({ name = M.name, bufnr = bufnr })
  end
  local list = bufnr and vim.lsp.buf_get_clients(bufnr) or vim.lsp.get_active_clients()
  for _, c in pairs(list) do
    if c.name == M.name then
      table.insert(out, c)
    end
  end
  return out
end

-- Settings tables that are empty would be encoded as JSON arrays: drop them.
local function sanitize(settings)
  if type(settings) ~= "table" then
    return nil
  end
  local out = {}
  for k, v in pairs(settings) do
    if type(v) ~= "table" or next(v) ~= nil or k == "exclude" or k == "disable" then
      out[k] = v
    end
  end
  if next(out) == nil then
    return nil
  end
  return out
end
M._sanitize = sanitize

-- Upward search for a root marker from the buffer's directory; else that directory.
local function find_root(bufnr, markers)
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == "" then
    return nil
  end
  local dir = vim.fn.fnamemodify(name, ":p:h")
  local cur = dir
  for _ = 1, 256 do
    for _, m in ipairs(markers) do
      if (vim.uv or vim.loop).fs_stat(cur .. "/" .. m) then
        return cur
      end
    end
    local parent = vim.fn.fnamemodify(cur, ":h")
    if parent == cur then
      break
    end
    cur = parent
  end
  return dir
end
M._find_root = find_root

---------------------------------------------------------------------------------------------
-- Tier-aware presentation
---------------------------------------------------------------------------------------------

local function lsp_data(d)
  local lsp = d.user_data and d.user_data.lsp
  return lsp and lsp.data
end

local function tier_of(d)
  local data = lsp_data(d)
  if type(data) == "table" and type(data.tier) == "string" and M.tier_groups[data.tier] then
    return data.tier
  end
  return nil
end
M.tier_of = tier_of

--- Rewrites a publishDiagnostics result in place: source names the tier, unverified tiers are
--- marked, capped at INFO and tagged unnecessary.
function M.present(result, opts)
  opts = opts or M.config or defaults
  if type(result) ~= "table" or type(result.diagnostics) ~= "table" then
    return result
  end
  for _, d in ipairs(result.diagnostics) do
    local tier = type(d.data) == "table" and d.data.tier or nil
    if type(tier) == "string" and M.tier_groups[tier] and (d.source or ""):sub(1, 10) == "crosscheck" then
      d.source = "crosscheck (" .. tier .. ")"
      local prefix = PREFIX[tier]
      if prefix and opts.mark_unverified ~= false then
        if d.message:sub(1, #prefix) ~= prefix then
          -- The server's own label says "unverified" once already; the prefix takes its place.
          if d.message:sub(1, #SERVER_LABEL) == SERVER_LABEL then
            d.message = "LLM claim: " .. d.message:sub(#SERVER_LABEL + 1)
          end
          d.message = prefix .. d.message
        end
        if d.severity == nil or d.severity < LSP_INFO then
          d.severity = LSP_INFO
        end
        local tags = d.tags or {}
        if not vim.tbl_contains(tags, TAG_UNNECESSARY) then
          table.insert(tags, TAG_UNNECESSARY)
        end
        d.tags = tags
      end
    end
  end
  return result
end

local function publish_diagnostics(err, result, ctx, config)
  M.present(result)
  return vim.lsp.handlers["textDocument/publishDiagnostics"](err, result, ctx, config)
end
M._publish_diagnostics = publish_diagnostics

-- Tier labels: a vim.diagnostic handler with its own extmark namespace per diagnostic
-- namespace. Only diagnostics carrying crosscheck tier data are labelled. Each line gets one
-- label extmark, right-aligned in the window: a fixed place that long diagnostic messages
-- (virtual text at the end of the line) never push off-screen. A line with findings of
-- several tiers shows each tier once, most severe finding first.
local label_namespaces = {}

local function label_ns(namespace)
  if not label_namespaces[namespace] then
    label_namespaces[namespace] = vim.api.nvim_create_namespace("crosscheck_tiers_" .. namespace)
  end
  return label_namespaces[namespace]
end

--- The label chunks of each line: { [lnum] = { {text, group}, ... } }.
function M.label_chunks(diagnostics, labels)
  local sorted = {}
  for _, d in ipairs(diagnostics) do
    table.insert(sorted, d)
  end
  table.sort(sorted, function(a, b)
    if a.lnum ~= b.lnum then
      return a.lnum < b.lnum
    end
    return (a.severity or 4) < (b.severity or 4)
  end)
  local by_line, seen = {}, {}
  for _, d in ipairs(sorted) do
    local tier = tier_of(d)
    local text = tier and labels[tier]
    local key = d.lnum .. ":" .. (tier or "")
    if text and not seen[key] then
      seen[key] = true
      by_line[d.lnum] = by_line[d.lnum] or {}
      table.insert(by_line[d.lnum], { " [" .. text .. "]", M.tier_groups[tier] })
    end
  end
  return by_line
end

M.label_handler = {
  show = function(namespace, bufnr, diagnostics, _)
    local cfg = M.config
    if not cfg or not cfg.labels or not vim.api.nvim_buf_is_valid(bufnr) then
      return
    end
    local ns = label_ns(namespace)
    vim.api.nvim_buf_clear_namespace(bufnr, ns, 0, -1)
    local line_count = vim.api.nvim_buf_line_count(bufnr)
    for lnum, chunks in pairs(M.label_chunks(diagnostics, cfg.labels)) do
      if lnum < line_count then
        pcall(vim.api.nvim_buf_set_extmark, bufnr, ns, lnum, 0, {
          virt_text = chunks,
          virt_text_pos = "right_align",
          hl_mode = "combine",
        })
      end
    end
  end,
  hide = function(namespace, bufnr)
    local ns = label_namespaces[namespace]
    if ns and vim.api.nvim_buf_is_valid(bufnr) then
      vim.api.nvim_buf_clear_namespace(bufnr, ns, 0, -1)
    end
  end,
}

--- Extmarks of the tier labels in a buffer: { {line, text, group, position, chunks}, ... }
--- (tests, debugging); text and group are the first chunk's.
function M.labels(bufnr)
  local out = {}
  for _, ns in pairs(label_namespaces) do
    for _, m in ipairs(vim.api.nvim_buf_get_extmarks(bufnr, ns, 0, -1, { details = true })) do
      local chunks = m[4] and m[4].virt_text
      local chunk = chunks and chunks[1]
      if chunk then
        table.insert(out, { m[2], chunk[1], chunk[2], m[4].virt_text_pos, #chunks })
      end
    end
  end
  table.sort(out, function(a, b)
    return a[1] < b[1]
  end)
  return out
end

function M.define_highlights()
  for group, link in pairs(M.highlights) do
    vim.cmd(("highlight default link %s %s"):format(group, link))
  end
end

---------------------------------------------------------------------------------------------
-- Code lens (flaky-test hints and other lenses the server may offer)
---------------------------------------------------------------------------------------------

local function supports_codelens(client)
  local caps = client.server_capabilities
  if caps and caps.codeLensProvider then
    return true
  end
  local resolved = client.resolved_capabilities
  return resolved ~= nil and resolved.code_lens == true
end

function M.refresh_codelens(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  if vim.lsp.codelens and vim.lsp.codelens.enable and has("nvim-0.12") then
    pcall(vim.lsp.codelens.enable, true, { bufnr = bufnr })
  elseif vim.lsp.codelens and vim.lsp.codelens.refresh then
    if has("nvim-0.10") then
      pcall(vim.lsp.codelens.refresh, { bufnr = bufnr })
    else
      pcall(vim.lsp.codelens.refresh)
    end
  end
end

local function setup_codelens(client, bufnr)
  if not supports_codelens(client) then
    return false
  end
  local group = vim.api.nvim_create_augroup("crosscheck_codelens_" .. bufnr, { clear = true })
  vim.api.nvim_create_autocmd({ "BufEnter", "InsertLeave", "BufWritePost", "CursorHold" }, {
    group = group,
    buffer = bufnr,
    callback = function()
      M.refresh_codelens(bufnr)
    end,
  })
  M.refresh_codelens(bufnr)
  return true
end
M._setup_codelens = setup_codelens

---------------------------------------------------------------------------------------------
-- Commands
---------------------------------------------------------------------------------------------

local function client_for(bufnr)
  return M.clients(bufnr)[1]
end

--- Sends a server command with one argument; reports the result with vim.notify (except a
--- successful explain/compare, which the server already shows). `callback(result)` optional.
function M.execute(bufnr, command, args, callback)
  local client = client_for(bufnr)
  if not client then
    notify("no crosscheck server is attached to this buffer", vim.log.levels.WARN)
    return false
  end
  request(client, "workspace/executeCommand", { command = command, arguments = { args } }, function(err, result)
    if err then
      notify(command .. " failed: " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
    elseif type(result) == "table" then
      local shown = result.status == "done" and (command == "crosscheck.explain" or command == "crosscheck.compareCfg")
      if not shown and result.message then
        local level = result.status == "done" and vim.log.levels.INFO or vim.log.levels.WARN
        notify(tostring(result.message), level)
      end
    end
    if callback then
      callback(err, result)
    end
  end, bufnr)
  return true
end

function M.function_command(command, bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local client = client_for(bufnr)
  if not client then
    notify("no crosscheck server is attached to this buffer", vim.log.levels.WARN)
    return false
  end
  local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
  return M.execute(bufnr, command, {
    uri = params.textDocument.uri,
    line = params.position.line,
    character = params.position.character,
  })
end

--- crosscheck diagnostics on the cursor line.
function M.findings_at_cursor(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local line = vim.api.nvim_win_get_cursor(0)[1] - 1
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    local last = d.end_lnum or d.lnum
    if tier_of(d) and d.lnum <= line and line <= last then
      table.insert(out, d)
    end
  end
  return out
end

local function rule_of(d)
  local data = lsp_data(d)
  if type(data) == "table" and type(data.rule) == "string" then
    return data.rule
  end
  local code = d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code)
  return code ~= nil and tostring(code) or nil
end

local function with_finding(bufnr, fn)
  local found = M.findings_at_cursor(bufnr)
  if #found == 0 then
    notify("no crosscheck finding on this line")
    return false
  end
  if #found == 1 then
    fn(found[1])
    return true
  end
  vim.ui.select(found, {
    prompt = "Which finding?",
    format_item = function(d)
      return (rule_of(d) or "?") .. ": " .. d.message
    end,
  }, function(choice)
    if choice then
      fn(choice)
    end
  end)
  return true
end

function M.label(correct, bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  return with_finding(bufnr, function(d)
    local data = lsp_data(d) or {}
    M.execute(bufnr, correct and "crosscheck.markCorrect" or "crosscheck.markIncorrect", {
      uri = vim.uri_from_bufnr(bufnr),
      rule = rule_of(d) or "",
      line = d.lnum,
      fingerprint = data.fingerprint or "",
      tier = data.tier or "",
    })
  end)
end

function M.suppress(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  return with_finding(bufnr, function(d)
    M.execute(bufnr, "crosscheck.suppress", {
      uri = vim.uri_from_bufnr(bufnr),
      line = d.lnum,
      rule = rule_of(d) or "",
    })
  end)
end

--- The server's status (`crosscheck/status`) as a one-line summary, or nil and an error.
function M.status(bufnr)
  local client = client_for(bufnr or vim.api.nvim_get_current_buf()) or M.clients()[1]
  if not client then
    return nil, "no crosscheck server is running"
  end
  local res, err = request_sync(client, "crosscheck/status", nil, 2000, bufnr)
  if not res or res.err or type(res.result) ~= "table" then
    return nil, tostring(err or (res and res.err and res.err.message) or "no answer")
  end
  local s = res.result
  local line
  if s.llm_available then
    local sch = s.scheduler or {}
    -- Failures since the last successful check: the LLM is failing now, not "on".
    local state = (sch.consecutive_failures or 0) > 0 and "LLM failing" or "LLM on"
    line = (state .. ": %d checked, %d pending, %d failed"):format(
      (sch.completed or 0) + (sch.cache_hits or 0),
      sch.pending or 0,
      sch.failed or 0
    )
  else
    line = "no LLM: deterministic analyses only"
  end
  if type(s.agreement) == "number" then
    line = line .. (", agreement %d%%"):format(math.floor(s.agreement * 100 + 0.5))
  elseif type(s.agreement) == "table" and type(s.agreement.rate) == "number" then
    line = line .. (", agreement %d%%"):format(math.floor(s.agreement.rate * 100 + 0.5))
  end
  return line, s
end

M.command_names = {
  "CrosscheckExplain",
  "CrosscheckCompareCfg",
  "CrosscheckMarkCorrect",
  "CrosscheckMarkIncorrect",
  "CrosscheckSuppress",
  "CrosscheckCodeActions",
  "CrosscheckStatus",
  "CrosscheckCodeLensRefresh",
}

local function define_commands()
  local function cmd(name, fn, desc)
    vim.api.nvim_create_user_command(name, fn, { desc = desc, force = true })
  end
  cmd("CrosscheckExplain", function()
    M.function_command("crosscheck.explain")
  end, "crosscheck: explain the function at the cursor (LLM, checked against the analysis)")
  cmd("CrosscheckCompareCfg", function()
    M.function_command("crosscheck.compareCfg")
  end, "crosscheck: compare the LLM's CFG of the function at the cursor with the analysis")
  cmd("CrosscheckMarkCorrect", function()
    M.label(true)
  end, "crosscheck: mark the finding on this line as correct")
  cmd("CrosscheckMarkIncorrect", function()
    M.label(false)
  end, "crosscheck: mark the finding on this line as incorrect")
  cmd("CrosscheckSuppress", function()
    M.suppress()
  end, "crosscheck: suppress the finding on this line (ignore comment)")
  cmd("CrosscheckCodeActions", function()
    vim.lsp.buf.code_action()
  end, "crosscheck: code actions at the cursor")
  cmd("CrosscheckStatus", function()
    local line, err = M.status()
    if line then
      notify(line)
    else
      notify(err, vim.log.levels.WARN)
    end
  end, "crosscheck: the server's LLM backend state")
  cmd("CrosscheckCodeLensRefresh", function()
    M.refresh_codelens()
  end, "crosscheck: refresh code lenses (flaky-test hints)")
end

---------------------------------------------------------------------------------------------
-- Starting the client
---------------------------------------------------------------------------------------------

local function on_attach(client, bufnr)
  if M.config.codelens then
    setup_codelens(client, bufnr)
  end
  if type(M.config.on_attach) == "function" then
    M.config.on_attach(client, bufnr)
  end
end

--- The client configuration shared by every strategy (root_dir added per buffer before 0.11).
function M.client_config(root_dir)
  local cfg = M.config
  local settings = sanitize(cfg.settings)
  local c = {
    name = M.name,
    cmd = cfg.cmd,
    root_dir = root_dir,
    init_options = settings,
    settings = settings and { crosscheck = settings } or nil,
    handlers = {
      ["textDocument/publishDiagnostics"] = publish_diagnostics,
      ["workspace/codeLens/refresh"] = function()
        M.refresh_codelens()
        return vim.NIL
      end,
    },
    on_attach = on_attach,
    capabilities = cfg.capabilities,
  }
  if root_dir then
    c.workspace_folders = { { uri = vim.uri_from_fname(root_dir), name = root_dir } }
  end
  return c
end

local function wanted(bufnr)
  if not vim.api.nvim_buf_is_valid(bufnr) or vim.bo[bufnr].buftype ~= "" then
    return false
  end
  if vim.api.nvim_buf_get_name(bufnr) == "" then
    return false
  end
  return vim.tbl_contains(M.config.filetypes, vim.bo[bufnr].filetype)
end

-- 0.7: one client per root directory, started with start_client and attached per buffer.
local legacy_clients = {}

local function attach_legacy(bufnr)
  local root = find_root(bufnr, M.config.root_markers)
  local id = legacy_clients[root]
  if id and not vim.lsp.get_client_by_id(id) then
    id = nil
  end
  if not id then
    local c = M.client_config(root)
    c.on_exit = function()
      if legacy_clients[root] == id then
        legacy_clients[root] = nil
      end
    end
    id = vim.lsp.start_client(c)
    if not id then
      notify("could not start " .. table.concat(M.config.cmd, " "), vim.log.levels.ERROR)
      return nil
    end
    legacy_clients[root] = id
  end
  vim.lsp.buf_attach_client(bufnr, id)
  return id
end

local function attach_start(bufnr)
  local root = find_root(bufnr, M.config.root_markers)
  return vim.lsp.start(M.client_config(root), { bufnr = bufnr })
end

local function attach(bufnr)
  if not wanted(bufnr) then
    return nil
  end
  if M.strategy() == "start" then
    return attach_start(bufnr)
  end
  return attach_legacy(bufnr)
end
M._attach = attach

function M.setup(opts)
  opts = opts or {}
  local cfg = vim.tbl_deep_extend("force", {}, defaults, opts)
  -- Lists replace, they are not merged index by index.
  for _, k in ipairs({ "cmd", "filetypes", "root_markers" }) do
    if opts[k] ~= nil then
      cfg[k] = opts[k]
    end
  end
  if type(cfg.cmd) == "string" then
    cfg.cmd = { cfg.cmd, "lsp" }
  end
  if opts.labels == false then
    cfg.labels = false
  end
  M.config = cfg

  M.define_highlights()
  vim.diagnostic.handlers.crosscheck_tiers = M.label_handler
  if cfg.commands then
    define_commands()
  end

  local group = vim.api.nvim_create_augroup("crosscheck", { clear = true })
  vim.api.nvim_create_autocmd("ColorScheme", { group = group, callback = M.define_highlights })

  local strategy = M.strategy()
  if strategy == "config" then
    local c = M.client_config(nil)
    c.name = nil
    c.root_dir = nil
    c.filetypes = cfg.filetypes
    c.root_markers = cfg.root_markers
    vim.lsp.config(M.name, c)
    vim.lsp.enable(M.name)
    return strategy
  end
  vim.api.nvim_create_autocmd("FileType", {
    group = group,
    pattern = cfg.filetypes,
    callback = function(args)
      attach(args.buf)
    end,
  })
  -- Buffers already open (e.g. the plugin was loaded lazily on FileType).
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr) then
      attach(bufnr)
    end
  end
  return strategy
end

return M
