-- Builds the `uji` table from the plugin's raw functions. Each raw function
-- returns true and its results, or false and a message; the wrappers raise
-- that message as an error at the caller's line, so errors read
-- "init.lua:12: uji.tool.add("x"): run is missing".
local raw, config_lua = ...

-- Every raw function has at most one result, and its wrapper returns
-- exactly one: `select("#", uji.json.encode(t))` is 1.
local function wrap(f)
  return function(...)
    local ok, a = f(...)
    if not ok then
      error(a, 2)
    end
    return a
  end
end

local uji = {}

uji.tool = {
  add = wrap(raw.tool_add),
  remove = wrap(raw.tool_remove),
  list = wrap(raw.tool_list),
  disable = wrap(raw.tool_disable),
  enable = wrap(raw.tool_enable),
  policy = wrap(raw.tool_policy),
  confine = wrap(raw.tool_confine),
  roots = wrap(raw.tool_roots),
  read_roots = wrap(raw.tool_read_roots),
  sandbox = wrap(raw.tool_sandbox),
}

uji.wire = {
  add = wrap(raw.wire_add),
  remove = wrap(raw.wire_remove),
  list = wrap(raw.wire_list),
}

uji.provider = {
  add = wrap(raw.provider_add),
  list = wrap(raw.provider_list),
}

uji.model = {
  use = wrap(raw.model_use),
  current = wrap(raw.model_current),
}

uji.on = wrap(raw.on)
uji.off = wrap(raw.off)
uji.emit = wrap(raw.emit)

uji.notify = wrap(raw.notify)
uji.log = wrap(raw.log)

uji.command = {
  add = wrap(raw.command_add),
  remove = wrap(raw.command_remove),
  list = wrap(raw.command_list),
  builtins = wrap(raw.command_builtins),
}

uji.keymap = {
  add = wrap(raw.keymap_add),
  remove = wrap(raw.keymap_remove),
  list = wrap(raw.keymap_list),
  actions = wrap(raw.keymap_actions),
}

uji.schedule = wrap(raw.schedule)
uji.defer = wrap(raw.defer)

uji.json = {
  encode = wrap(raw.json_encode),
  decode = wrap(raw.json_decode),
  array = wrap(raw.json_array),
  null = raw.json_null,
}

uji.markdown = {
  front_matter = wrap(raw.markdown_front_matter),
  files = wrap(raw.markdown_files),
}

uji.session = {
  submit = wrap(raw.session_submit),
  info = wrap(raw.session_info),
  set_title = wrap(raw.session_set_title),
  mode = wrap(raw.session_mode),
  set_mode = wrap(raw.session_set_mode),
  compact = wrap(raw.session_compact),
  interrupt = wrap(raw.session_interrupt),
}

-- A `configure` function: checks each field of its table with `fields`
-- (name -> check returning ok, what it must be, and optionally the value
-- as kept), so a typo is an error at
-- the caller's line, then sets config `key` to every field named so far
-- (each call changes only the fields it names), or hands them to `apply`
-- (a raw function answering ok, error) when given.
local function configurer(api, key, fields, example, apply)
  local names = {}
  for name in pairs(fields) do
    names[#names + 1] = name
  end
  table.sort(names)
  local settings = {}
  return function(opts)
    if type(opts) ~= "table" then
      error(api .. " takes a table, e.g. " .. example, 2)
    end
    for field, value in pairs(opts) do
      local check = fields[field]
      if not check then
        error(api .. ": unknown field " .. tostring(field) .. " (fields: " .. table.concat(names, ", ") .. ")", 2)
      end
      local ok, says = check(value)
      if not ok then
        error(api .. ": " .. says .. ", got " .. tostring(value), 2)
      end
    end
    for field, value in pairs(opts) do
      -- A check may give the value as uji keeps it (`"30m"` as 1800).
      local _, _, kept = fields[field](value)
      if kept == nil then
        kept = value
      end
      settings[field] = kept
    end
    local ok, err
    if apply then
      ok, err = apply(settings)
    else
      ok, err = raw.config_set(key, settings)
    end
    if not ok then
      error(err, 2)
    end
  end
end

-- uji.checkpoint.configure({ enabled = BOOL, max_file_mb = N,
-- max_session_mb = N, max_files = N }): checkpoints of the sessions that
-- start after it (docs/checkpoints.md). Checked here, so a typo is an
-- error at its line; each call changes only the fields it names.
local function positive(name)
  return function(value)
    return type(value) == "number" and value > 0 and value == math.floor(value),
      name .. " must be a whole number above 0"
  end
end
local CHECKPOINT_FIELDS = {
  enabled = function(value)
    return type(value) == "boolean", "enabled must be true or false"
  end,
  max_file_mb = positive("max_file_mb"),
  max_session_mb = positive("max_session_mb"),
  max_files = positive("max_files"),
}
-- uji.budget({ tokens = N, cost = DOLLARS, turns = N, tool_calls = N, wall = "30m",
-- children = N }):
-- what the sessions may spend before uji stops the turn (docs/budgets.md).
local UNITS = { s = 1, m = 60, h = 3600 }
local function seconds_of(value)
  if type(value) == "number" then
    return value > 0 and value == math.floor(value) and value or nil
  end
  if type(value) ~= "string" then
    return nil
  end
  local total, rest = 0, value
  while rest ~= "" do
    local number, unit, after = rest:match("^(%d+)([smh])(.*)$")
    if not number then
      return nil
    end
    total, rest = total + tonumber(number) * UNITS[unit], after
  end
  return total > 0 and total or nil
end
uji.budget = configurer("uji.budget", "budget", {
  tokens = positive("tokens"),
  cost = function(value)
    return type(value) == "number" and value > 0 and value < math.huge, "cost must be dollars above 0, e.g. 0.50"
  end,
  turns = positive("turns"),
  tool_calls = positive("tool_calls"),
  children = positive("children"),
  wall = function(value)
    local seconds = seconds_of(value)
    return seconds ~= nil, "wall must be seconds or a time like \"90s\", \"30m\", \"1h30m\"", seconds
  end,
}, "{ turns = 20, wall = \"30m\" }")

uji.checkpoint = {
  list = wrap(raw.checkpoint_list),
  restore = wrap(raw.checkpoint_restore),
  configure = configurer("uji.checkpoint.configure", "checkpoints", CHECKPOINT_FIELDS, "{ max_file_mb = 20 }"),
}

uji.status = {
  add = wrap(raw.status_add),
  remove = wrap(raw.status_remove),
}

uji.quit = wrap(raw.quit)

uji.config = {
  set = wrap(raw.config_set),
}

-- uji.ui.configure({ notify = "bell" | "osc9" | "osc777" | "off",
-- mouse = BOOL, vim = BOOL }): how the screen behaves. Every field is
-- checked here, so a typo is an error at its line; each call changes only
-- the fields it names.
local NOTIFY = { bell = true, osc9 = true, osc777 = true, off = true }
local UI_FIELDS = {
  notify = function(value)
    return NOTIFY[value], "notify must be \"bell\", \"osc9\", \"osc777\" or \"off\""
  end,
  mouse = function(value)
    return type(value) == "boolean", "mouse must be true or false"
  end,
  vim = function(value)
    return type(value) == "boolean", "vim must be true or false"
  end,
}
uji.ui = {
  configure = configurer("uji.ui.configure", "ui", UI_FIELDS, "{ notify = \"osc9\", vim = true }"),
}

-- uji.web.search({ backend = "searxng" | "brave" | "tavily" | "exa",
-- url = "https://…" }): the backend web_search uses (docs/web.md); `url`
-- replaces the backend's own base URL. Core keeps it: the backend's key
-- goes only to that URL's origin.
local SEARCH_BACKENDS = { searxng = true, brave = true, tavily = true, exa = true }
uji.web = {
  search = configurer("uji.web.search", nil, {
    backend = function(value)
      return SEARCH_BACKENDS[value], "backend must be \"searxng\", \"brave\", \"tavily\" or \"exa\""
    end,
    url = function(value)
      return type(value) == "string" and value:match("^https?://[^/]") ~= nil,
        "url must be a whole http:// or https:// URL"
    end,
  }, "{ backend = \"brave\" }", raw.web_search),
  -- uji.web.fetch({ timeout = "60s" }): how long web_fetch waits for a
  -- whole page (default 30 seconds).
  fetch = configurer("uji.web.fetch", "web_fetch", {
    timeout = function(value)
      local seconds = seconds_of(value)
      return seconds ~= nil, "timeout must be whole seconds or a time like \"30s\", \"2m\"", seconds
    end,
  }, "{ timeout = \"60s\" }"),
}

uji.plugins = {
  allow_replace = wrap(raw.plugins_allow_replace),
}

uji.version = raw.version

-- uji.mcp is served by the MCP plugin (plugins/mcp), uji.jobs by the tools
-- plugin (plugins/tools), which owns the background jobs: host services
-- they serve (uji_protocol::mcp and ::jobs).
uji.mcp = {
  add = wrap(raw.mcp_add),
  remove = wrap(raw.mcp_remove),
  -- list({ wait = SECONDS }) first waits for servers still starting.
  list = function(options)
    local wait = type(options) == "table" and tonumber(options.wait) or 0
    local ok, answer = raw.mcp_list(math.max(0, math.floor(wait * 1000)))
    if not ok then
      error(answer, 2)
    end
    return answer
  end,
  trust_project = wrap(raw.mcp_trust_project),
}

uji.jobs = {
  -- Every job kept (running first): { id, command, state, code?, signal?,
  -- by?, after_secs?, started_ms, elapsed_ms, last_line, lines, log? }.
  list = wrap(raw.jobs_list),
  -- Stops job `id` and its whole process tree; no report reaches the model.
  stop = function(id)
    if type(id) ~= "number" or id < 1 or id % 1 ~= 0 then
      error("uji.jobs.stop: expects a job number, e.g. uji.jobs.stop(3)", 2)
    end
    local ok, answer = raw.jobs_stop(id)
    if not ok then
      error(answer, 2)
    end
    return answer
  end,
  -- { wake = boolean, max = jobs at once, limit = default lifetime in seconds }
  configure = function(settings)
    if type(settings) ~= "table" then
      error("uji.jobs.configure: expects a table { wake = boolean, max = number, limit = seconds }", 2)
    end
    local ok, answer = raw.jobs_configure(settings)
    if not ok then
      error(answer, 2)
    end
    return answer
  end,
}

-- print goes to uji's log: the terminal belongs to the interface.
print = function(...)
  local parts = {}
  for i = 1, select("#", ...) do
    parts[#parts + 1] = tostring((select(i, ...)))
  end
  raw.log("info", table.concat(parts, "\t"))
end

-- The debug library is not loaded (it can break the sandbox); traceback is
-- safe and useful with xpcall.
debug = { traceback = raw.traceback }

-- require: <config>/lua first, then the modules shipped with uji, then the
-- usual package.path.
if config_lua then
  package.path = config_lua .. ";" .. package.path
end

local function shipped_searcher(name)
  if config_lua then
    local file = package.searchpath(name, config_lua)
    if file then
      local chunk, err = loadfile(file)
      if not chunk then
        error(err, 0)
      end
      return chunk, file
    end
  end
  -- Compiled at build time; an error loading it is raised here.
  local chunk, chunkname = raw.shipped(name)
  if chunk then
    return chunk, chunkname
  end
  return "\n\tno module '" .. name .. "' shipped with uji"
end

local searchers = package.searchers or package.loaders
table.insert(searchers, 2, shipped_searcher)

package.loaded.uji = uji
_G.uji = uji
return uji
