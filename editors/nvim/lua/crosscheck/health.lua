-- :checkhealth crosscheck
-- The binary, its version, the settings passed to setup() checked against the server's schema
-- (`crosscheck schema lsp-settings`), the LLM configuration file, and the running clients.

local M = {}

-- vim.health on 0.10+ (start/ok/...), vim.health.report_* on 0.8-0.9, health#report_* on 0.7.
local function reporter()
  local h = vim.health
  local function pick(new, old)
    if h and h[new] then
      return h[new]
    end
    if h and h["report_" .. old] then
      return h["report_" .. old]
    end
    return function(...)
      return vim.fn["health#report_" .. old](...)
    end
  end
  return {
    start = pick("start", "start"),
    ok = pick("ok", "ok"),
    warn = pick("warn", "warn"),
    error = pick("error", "error"),
    info = pick("info", "info"),
  }
end

-- Dotted keys of a nested settings table: { tiers = { ["llm-only"] = "x" } } -> "tiers.llm-only".
local function flat_keys(tbl, prefix, out)
  out = out or {}
  for k, v in pairs(tbl) do
    local name = prefix and (prefix .. "." .. k) or tostring(k)
    if type(v) == "table" and not (vim.islist or vim.tbl_islist)(v) then
      flat_keys(v, name, out)
    else
      table.insert(out, name)
    end
  end
  table.sort(out)
  return out
end
M._flat_keys = flat_keys

--- Keys of `settings` the server's schema does not know (or all keys, with an error, if the
--- schema cannot be read).
function M.unknown_settings(settings, schema)
  local props = type(schema) == "table" and schema.properties or {}
  local unknown = {}
  for _, k in ipairs(flat_keys(settings or {})) do
    if props["crosscheck." .. k] == nil then
      table.insert(unknown, k)
    end
  end
  return unknown
end

local function run(cmd)
  local out = vim.fn.system(cmd)
  return vim.v.shell_error == 0, out
end

function M.check()
  local r = reporter()
  local ok_cc, cc = pcall(require, "crosscheck")
  r.start("crosscheck")
  if not ok_cc then
    r.error("the crosscheck Lua module cannot be loaded: " .. tostring(cc))
    return
  end
  local v = vim.version and vim.version() or nil
  local version = v and ("%d.%d.%d"):format(v.major, v.minor, v.patch) or "?"
  r.info(("Neovim %s: the client is started with %s"):format(version, ({
    config = "vim.lsp.config + vim.lsp.enable",
    start = "vim.lsp.start on FileType",
    start_client = "vim.lsp.start_client + buf_attach_client on FileType",
  })[cc.strategy()]))

  local cfg = cc.config
  if not cfg then
    r.warn('setup() has not been called', { 'add require("crosscheck").setup({}) to your init.lua' })
    return
  end
  r.ok("setup() called; filetypes: " .. table.concat(cfg.filetypes, ", "))

  local bin = cfg.cmd[1]
  if vim.fn.executable(bin) ~= 1 then
    r.error(("`%s` is not executable"):format(bin), {
      "build it with `cargo build --release` and put target/release on PATH",
      'or pass the full path: require("crosscheck").setup({ cmd = { "/path/to/crosscheck", "lsp" } })',
    })
    return
  end
  local ok_v, out = run({ bin, "--version" })
  if ok_v then
    r.ok(("%s (%s)"):format(vim.trim(out), vim.fn.exepath(bin)))
  else
    r.error(("`%s --version` failed: %s"):format(bin, vim.trim(out)))
  end

  local ok_s, schema_text = run({ bin, "schema", "lsp-settings" })
  local ok_j, schema = false, nil
  if ok_s then
    ok_j, schema = pcall(vim.fn.json_decode, schema_text)
  end
  if not (ok_s and ok_j) then
    r.warn("this crosscheck binary cannot print its settings schema (`crosscheck schema lsp-settings`); settings not checked")
  else
    local unknown = M.unknown_settings(cfg.settings, schema)
    if #unknown == 0 then
      r.ok(("settings: %d key(s), all known to the server"):format(#flat_keys(cfg.settings or {})))
    else
      r.warn("settings the server does not accept from an editor: " .. table.concat(unknown, ", "), {
        "names are as in crosscheck.toml, e.g. settings = { tiers = { [\"llm-only\"] = \"hidden\" } }",
        "the LLM endpoint, model and key can only be set in ~/.config/crosscheck/config.toml",
      })
    end
  end

  local config_file = vim.env.CROSSCHECK_CONFIG
  if not config_file or config_file == "" then
    local xdg = vim.env.XDG_CONFIG_HOME
    if not xdg or xdg == "" then
      xdg = vim.fn.expand("~/.config")
    end
    config_file = xdg .. "/crosscheck/config.toml"
  end
  if (vim.uv or vim.loop).fs_stat(config_file) then
    r.ok("user config file: " .. config_file)
  else
    r.info("no user config file at " .. config_file .. ": no LLM unless CROSSCHECK_LLM_* variables are set")
  end

  local clients = cc.clients()
  if #clients == 0 then
    r.info("no crosscheck server is running (open a " .. table.concat(cfg.filetypes, "/") .. " file)")
    return
  end
  for _, c in ipairs(clients) do
    r.ok(("server running (client %d, root %s)"):format(c.id, tostring(c.config and c.config.root_dir)))
  end
  local line, err = cc.status()
  if line then
    r.ok("status: " .. line)
  else
    r.warn("crosscheck/status: " .. tostring(err))
  end
end

return M
