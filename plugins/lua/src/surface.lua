-- The runtime surface built on tasks: uji.fs, uji.data, uji.config.files,
-- uji.context, uji.os, uji.api, uji.tool.display, and the public uji's
-- names beside uji's own (docs/lua.md). Loaded after prelude.lua and
-- tasks.lua, with the raw natives, the uji table and the scheduler.
local raw, uji, tasks = ...

local unpack = unpack or table.unpack

-- A native answering `true, value` / `true, nil, message` / `false, error`:
-- value, or nil and the message; a wrong argument raises at the caller.
local function wrap2(native)
  return function(...)
    local ok, a, b = native(...)
    if not ok then
      error(a, 2)
    end
    return a, b
  end
end

-- Functions that take time follow the callback-or-wait convention: with
-- a function last, its result goes there and a canceller comes back.
local either = tasks.either

uji.fs = {
  read = either(wrap2(raw.fs_read)),
  lines = either(wrap2(raw.fs_lines)),
  write = either(wrap2(raw.fs_write)),
  list = either(wrap2(raw.fs_list)),
  glob = either(wrap2(raw.fs_glob)),
  stat = either(wrap2(raw.fs_stat)),
  exists = function(path)
    local ok, stat = raw.fs_stat(path)
    if not ok then
      error(stat, 2)
    end
    return stat ~= nil
  end,
  join = function(base, ...)
    if type(base) ~= "string" then
      error("uji.fs.join: expects strings, got " .. type(base), 2)
    end
    local path = base
    for i = 1, select("#", ...) do
      local part = select(i, ...)
      if type(part) ~= "string" then
        error("uji.fs.join: argument " .. (i + 1) .. " must be a string, got " .. type(part), 2)
      end
      if part:sub(1, 1) == "/" then
        path = part
      elseif path == "" or path:sub(-1) == "/" then
        path = path .. part
      else
        path = path .. "/" .. part
      end
    end
    return path
  end,
}

uji.data = {
  read = either(wrap2(raw.data_read)),
  write = either(wrap2(raw.data_write)),
}

uji.config.files = either(wrap2(raw.config_files))
-- The config directory (init.lua's), or nil when there is none.
uji.config.dir = raw.config_dir

-- uji.session.info(): the public uji's `directory` and `short_directory`
-- beside uji's `cwd`.
uji.session.info = function()
  local ok, info = raw.session_info()
  if not ok then
    error(info, 2)
  end
  if type(info) == "table" then
    info.directory = info.directory or info.cwd or ""
    local home = os.getenv("HOME")
    local dir = info.directory
    if home and home ~= "" and dir:sub(1, #home) == home and (#dir == #home or dir:sub(#home + 1, #home + 1) == "/") then
      info.short_directory = "~" .. dir:sub(#home + 1)
    else
      info.short_directory = dir
    end
  end
  return info
end

-- uji.http.request(opts [, on_done]): { status, headers, body, url } (a
-- 404 is an answer, not an error) or nil and why. It runs in core. With
-- on_line(line) (or stream(chunk)) the body is handed over as it comes;
-- on_line returning false is a line that is no progress; an error in it
-- ends the request with nil and the error.
local function http_request(opts)
  if type(opts) ~= "table" or type(opts.url) ~= "string" then
    error("uji.http.request needs a url: uji.http.request({ url = \"https://...\" })", 3)
  end
  if opts.on_line ~= nil and type(opts.on_line) ~= "function" then
    error("uji.http.request: on_line must be a function(line), got " .. type(opts.on_line), 3)
  end
  if opts.stream ~= nil and type(opts.stream) ~= "function" then
    error("uji.http.request: stream must be a function(chunk), got " .. type(opts.stream), 3)
  end
  local on_line, on_chunk = opts.on_line, opts.stream
  local lines, partial, failed = {}, "", nil
  local id, finish
  -- A callback's error ends the request: the reader stops and the waiting
  -- task gets nil and the error at once.
  local function fail(err)
    failed = tostring(err)
    raw.http_cancel(id)
    if finish then
      finish(nil, failed)
    end
  end
  local function line_out(line)
    lines[#lines + 1] = line
    local ok, err = pcall(on_line, line)
    if not ok then
      fail(err)
    end
  end
  local chunk
  if on_line or on_chunk then
    chunk = function(data)
      if failed then
        return
      end
      if on_chunk then
        local ok, err = pcall(on_chunk, data)
        if not ok then
          fail(err)
          return
        end
      end
      if on_line then
        partial = partial .. data
        while true do
          local at = partial:find("\n", 1, true)
          if not at then
            break
          end
          local line = partial:sub(1, at - 1):gsub("\r$", "")
          partial = partial:sub(at + 1)
          line_out(line)
          if failed then
            return
          end
        end
      end
    end
  end
  return tasks.wait("uji.http.request", function(resume)
    finish = resume
    local function done(response, err)
      if failed then
        return resume(nil, failed)
      end
      if response and on_line then
        if partial ~= "" then
          line_out((partial:gsub("\r$", "")))
          if failed then
            return resume(nil, failed)
          end
        end
        response.body = table.concat(lines, "\n")
      end
      resume(response, err)
    end
    local fields = {}
    for k, v in pairs(opts) do
      if k ~= "on_line" and k ~= "stream" then
        fields[k] = v
      end
    end
    local ok, started = raw.http_start(fields, done, chunk)
    if not ok then
      error(started, 0)
    end
    id = started
    return function()
      raw.http_cancel(id)
    end
  end)
end

uji.http = { request = either(http_request) }

-- Dialogs through whichever frontend runs the session (the screen draws
-- them; uji run answers a confirm no and refuses the rest; an editor maps
-- them where ACP can). Each follows the callback-or-wait convention and
-- answers nil and why when the frontend cannot ask.
local function ask(kind, request)
  request.kind = kind
  return tasks.wait("uji.ui." .. kind, function(resume)
    local ok, err = raw.ui_dialog(request, resume)
    if not ok then
      error(err, 0)
    end
  end)
end

local function check_opts(api, opts, fields)
  if type(opts) ~= "table" then
    error(api .. " needs a table, e.g. " .. api .. "({ title = \"...\" })", 3)
  end
  for key, value in pairs(opts) do
    local want = fields[key]
    if want == nil then
      local names = {}
      for name in pairs(fields) do names[#names + 1] = name end
      table.sort(names)
      error(api .. ": unknown field " .. tostring(key) .. " (fields: " .. table.concat(names, ", ") .. ")", 3)
    end
    if want ~= "any" and type(value) ~= want then
      error(api .. ": " .. key .. " must be a " .. want .. ", got " .. type(value), 3)
    end
  end
end

-- uji.ui.select({ title, items, current, label }) or (items, opts): the item
-- chosen (the value itself, shown through label when given), or nil on Esc.
local function select(first, second)
  local opts
  if type(first) == "table" and first.items ~= nil then
    opts = first
  else
    opts = {}
    for k, v in pairs(second or {}) do opts[k] = v end
    opts.items = first
  end
  check_opts("uji.ui.select", opts,
    { title = "string", items = "table", current = "any", label = "function", prompt = "string" })
  local shown = {}
  local current
  for i, item in ipairs(opts.items) do
    local text = item
    if opts.label then
      text = opts.label(item)
    end
    if type(text) ~= "string" then
      error("uji.ui.select: items must be a list of strings (or give label = function(item) ... end)", 2)
    end
    shown[i] = text
    if opts.current ~= nil and item == opts.current then
      current = i
    end
  end
  if #shown == 0 then
    error("uji.ui.select: items is empty", 2)
  end
  local kind, value = ask("select", { title = opts.title or opts.prompt or "", items = shown, current = current })
  if kind == "selected" then
    return opts.items[value]
  end
  if kind == nil then
    return nil, value
  end
  return nil
end

-- uji.ui.prompt({ title, value, hidden }): the text (maybe ""), or nil.
local function prompt(opts)
  check_opts("uji.ui.prompt", opts, { title = "string", value = "string", hidden = "boolean", default = "string" })
  local kind, value = ask("prompt", { title = opts.title or "", value = opts.value or opts.default, hidden = opts.hidden })
  if kind == "text" then
    return value
  end
  if kind == nil then
    return nil, value
  end
  return nil
end

-- uji.ui.confirm({ title, body, timeout }): true or false (Esc is false),
-- nil when it timed out.
local function confirm(opts)
  check_opts("uji.ui.confirm", opts, { title = "string", body = "string", timeout = "number", preview = "any" })
  local kind, value = ask("confirm", { title = opts.title or "", body = opts.body, timeout = opts.timeout })
  if kind == "confirmed" then
    return value
  end
  if kind == "cancelled" then
    return false
  end
  if kind == nil then
    return nil, value
  end
  return nil
end

uji.ui.select = either(select)
uji.ui.prompt = either(prompt)
uji.ui.confirm = either(confirm)

-- uji.session's facts: one question to core each (session.facts,
-- session.messages), shaped as the public uji returns them.
local function facts(api)
  local ok, answer = raw.session_facts()
  if not ok then
    error((answer:gsub("^uji%.session", api)), 3)
  end
  return answer
end

local function with_total(usage)
  usage = usage or {}
  local out = {
    input = usage.input or 0,
    output = usage.output or 0,
    cache_read = usage.cache_read or 0,
    cache_write = usage.cache_write or 0,
  }
  out.total = out.input + out.output + out.cache_read + out.cache_write
  return out
end

uji.session.messages = function()
  local ok, list = raw.session_messages()
  if not ok then
    error(list, 2)
  end
  return list or uji.json.array({})
end
uji.session.usage = function()
  local usage = facts("uji.session.usage").usage or {}
  local out = with_total(usage)
  out.last = with_total(usage.last)
  out.requests = usage.requests or 0
  out.cost = usage.cost
  return out
end
uji.session.context = function()
  local context = facts("uji.session.context").context or {}
  return { used = context.used or 0, window = context.window }
end
uji.session.queue = function()
  return facts("uji.session.queue").queue or uji.json.array({})
end
uji.session.state = function()
  return facts("uji.session.state").state
end
uji.session.elapsed = function()
  return facts("uji.session.elapsed").elapsed_secs
end

-- uji.context: providers called at the start of each turn, in priority
-- order (lower first, 50 by default). A string goes into that turn's
-- system prompt; { text = ..., at = "turn" } is added after the user's
-- message (kept in history, hidden in the transcript). Core calls them
-- through its `turn_context` hook.
local providers = {}
local order = 0

local function sorted_providers()
  local list = {}
  for _, p in pairs(providers) do
    list[#list + 1] = p
  end
  table.sort(list, function(a, b)
    if a.priority ~= b.priority then
      return a.priority < b.priority
    end
    return a.order < b.order
  end)
  return list
end

local function run_providers()
  local system, turn = {}, {}
  for _, p in ipairs(sorted_providers()) do
    local ok, value = pcall(p.provide)
    if not ok then
      uji.notify("context " .. p.name .. ": " .. tostring(value))
    elseif type(value) == "string" then
      if value:find("%S") then
        system[#system + 1] = value
      end
    elseif type(value) == "table" and type(value.text) == "string" and value.text:find("%S") then
      if value.at == "turn" then
        turn[#turn + 1] = value.text
      else
        system[#system + 1] = value.text
      end
    end
  end
  if #system == 0 and #turn == 0 then
    return nil
  end
  return {
    system = #system > 0 and table.concat(system, "\n\n") or nil,
    turn = #turn > 0 and table.concat(turn, "\n\n") or nil,
  }
end

local context_hooked = false

uji.context = {
  add = function(name, provide, opts)
    if type(name) ~= "string" or name == "" or type(provide) ~= "function" then
      error("uji.context.add needs a name and a function, e.g. uji.context.add(\"notes\", function() return \"...\" end)", 2)
    end
    local priority = 50
    if opts ~= nil then
      if type(opts) ~= "table" then
        error("uji.context.add: options must be a table { priority = number }, got " .. type(opts), 2)
      end
      for key in pairs(opts) do
        if key ~= "priority" then
          error("uji.context.add: unknown option " .. tostring(key) .. " (options: priority)", 2)
        end
      end
      if opts.priority ~= nil then
        if type(opts.priority) ~= "number" then
          error("uji.context.add: priority must be a number, got " .. type(opts.priority), 2)
        end
        priority = opts.priority
      end
    end
    if not context_hooked then
      uji.on("turn_context", run_providers, { name = "uji.context" })
      context_hooked = true
    end
    order = order + 1
    providers[name] = { name = name, provide = provide, priority = priority, order = order }
    return {
      remove = function()
        return uji.context.remove(name)
      end,
    }
  end,
  remove = function(name)
    if providers[name] then
      providers[name] = nil
      return true
    end
    return false
  end,
  list = function()
    local names = {}
    for _, p in ipairs(sorted_providers()) do
      names[#names + 1] = p.name
    end
    return uji.json.array(names)
  end,
}

-- uji.os: facts about the process (fields) and a few helpers.
local started = raw.os_clock()
uji.os = {
  platform = raw.os_platform,
  executable = raw.os_executable,
  argv = raw.os_argv,
  clock = function()
    return raw.os_clock() - started
  end,
  now = function()
    return raw.os_now()
  end,
  env = function(name)
    if type(name) ~= "string" then
      error("uji.os.env: expects a variable name, got " .. type(name), 2)
    end
    local value = os.getenv(name)
    if value == "" then
      return nil
    end
    return value
  end,
  home = function()
    return os.getenv("HOME")
  end,
  cwd = function()
    return raw.os_cwd()
  end,
}

-- uji.api.*(): the wires by the public uji's names, for
-- uji.provider.add({ api = uji.api.openai(), ... }).
uji.api = {
  openai = function()
    return { wire = "openai-chat" }
  end,
  anthropic = function()
    return { wire = "anthropic" }
  end,
  gemini = function()
    return { wire = "gemini" }
  end,
  responses = function()
    return { wire = "openai-responses" }
  end,
}

-- uji.provider.add with an api object (a table with a stream method, as
-- the public uji's provider plugins make): its stream becomes a Lua wire.
-- A stream may answer through reply or return the answer (or nil and a
-- failure).
local provider_add = raw.provider_add
uji.provider.add = function(spec)
  if type(spec) == "table" and type(spec.api) == "table" and type(spec.api.stream) == "function" then
    local api = spec.api
    local wire = "provider:" .. tostring(spec.id)
    uji.wire.add(wire, {
      stream = function(request, reply)
        local answer, failure = api:stream(request, reply)
        if type(answer) == "table" then
          reply.done(answer)
        elseif failure ~= nil then
          reply.fail(failure)
        end
        return answer ~= nil and type(answer) == "function" and answer or nil
      end,
    })
    local copy = {}
    for k, v in pairs(spec) do
      copy[k] = v
    end
    copy.api = wire
    spec = copy
  end
  -- models = function() ... end: the list comes from the function, called
  -- once in a task after start-up (it may wait, e.g. on uji.http.request);
  -- its failure is a notice and the provider keeps the models it had.
  local models = type(spec) == "table" and spec.models or nil
  if type(models) == "function" then
    local copy = {}
    for k, v in pairs(spec) do
      copy[k] = v
    end
    copy.models = nil
    spec = copy
    local id = spec.id
    uji.schedule(function()
      local ok, list = pcall(models)
      if not ok then
        uji.notify("provider " .. tostring(id) .. ": its models function failed: " .. tostring(list))
      elseif type(list) ~= "table" then
        uji.notify("provider " .. tostring(id) .. ": its models function must return a list, got " .. type(list))
      else
        local added, err = provider_add({ id = id, models = list })
        if not added then
          uji.notify("provider " .. tostring(id) .. ": " .. tostring(err))
        end
      end
    end)
  end
  local ok, err = provider_add(spec)
  if not ok then
    error(err, 2)
  end
end

-- uji.tool.display(name, { label, subject, question, preview }): how a
-- tool uji does not run (one a provider runs itself) is shown. Kept for
-- uji.tool.displays(); this uji runs every tool it shows, so nothing else
-- reads it yet.
local displays = {}
local DISPLAY_FIELDS = { label = "string", verb = "string", question = "string", subject = true, preview = "function" }
uji.tool.display = function(name, opts)
  if type(name) ~= "string" or name == "" then
    error("uji.tool.display: the tool's name must be a non-empty string", 2)
  end
  if type(opts) ~= "table" then
    error("uji.tool.display needs a table { label = ..., subject = ..., question = ..., preview = ... }", 2)
  end
  for key, value in pairs(opts) do
    local want = DISPLAY_FIELDS[key]
    if want == nil then
      error("uji.tool.display: unknown field " .. tostring(key) .. " (fields: label, subject, question, preview)", 2)
    end
    if key == "subject" then
      if type(value) ~= "string" and type(value) ~= "function" then
        error("uji.tool.display: subject must be a string or a function(args), got " .. type(value), 2)
      end
    elseif type(value) ~= want then
      error("uji.tool.display: " .. key .. " must be a " .. want .. ", got " .. type(value), 2)
    end
  end
  displays[name] = { label = opts.label or opts.verb, subject = opts.subject, question = opts.question, preview = opts.preview }
  return {
    remove = function()
      local had = displays[name] ~= nil
      displays[name] = nil
      return had
    end,
  }
end
uji.tool.displays = function()
  local copy = {}
  for name, d in pairs(displays) do
    copy[name] = d
  end
  return copy
end

-- uji.job.start: a process with line callbacks, in the sandbox and the
-- key-free environment run_command uses. Both the public uji's form,
-- uji.job.start({ cmd = ..., cwd, timeout, on_stdout, on_stderr, on_exit }),
-- and uji.job.start(cmd, { args, cwd, env, timeout, ... }). on_exit(code,
-- reason): reason is "timeout" or "stopped" (code -1) when uji ended it.
local jobs = {}
local JOB_FIELDS = {
  cmd = true, args = true, cwd = true, env = true, timeout = true,
  on_stdout = "function", on_stderr = "function", on_exit = "function",
}

local function job_options(first, second)
  local opts
  if type(first) == "table" and second == nil and first.cmd ~= nil then
    opts = first
  elseif type(first) == "string" or type(first) == "table" then
    if second ~= nil and type(second) ~= "table" then
      error("uji.job.start: options must be a table, got " .. type(second), 3)
    end
    opts = {}
    for k, v in pairs(second or {}) do
      opts[k] = v
    end
    opts.cmd = first
  else
    error("uji.job.start needs a command: uji.job.start({ cmd = ... }) or uji.job.start(cmd, opts)", 3)
  end
  for key, want in pairs(opts) do
    local kind = JOB_FIELDS[key]
    if kind == nil then
      error("uji.job.start: unknown field " .. tostring(key)
        .. " (fields: cmd, args, cwd, env, timeout, on_stdout, on_stderr, on_exit)", 3)
    end
    if kind == "function" and type(want) ~= "function" then
      error("uji.job.start: " .. key .. " must be a function, got " .. type(want), 3)
    end
  end
  local cmd = opts.cmd
  if opts.args ~= nil then
    if type(opts.args) ~= "table" then
      error("uji.job.start: args must be a list of strings", 3)
    end
    local argv = { type(cmd) == "table" and cmd[1] or cmd }
    if type(cmd) == "table" then
      for i = 2, #cmd do argv[#argv + 1] = cmd[i] end
    end
    for _, a in ipairs(opts.args) do argv[#argv + 1] = tostring(a) end
    cmd = argv
  end
  if opts.timeout ~= nil and type(opts.timeout) ~= "number" then
    error("uji.job.start: timeout must be a number of seconds, got " .. type(opts.timeout), 3)
  end
  if opts.cwd ~= nil and type(opts.cwd) ~= "string" then
    error("uji.job.start: cwd must be a string, got " .. type(opts.cwd), 3)
  end
  return opts, cmd
end

uji.job = {
  start = function(first, second)
    local opts, cmd = job_options(first, second)
    local ok, id, why = raw.job_start(cmd, opts.cwd, opts.env, opts.timeout)
    if not ok then
      error(id, 2)
    end
    if id == nil then
      -- The public uji's way: a process that could not start reports on
      -- stderr and exits -1, from a task of its own.
      uji.task.spawn(function()
        if opts.on_stderr then opts.on_stderr("spawn: " .. tostring(why)) end
        if opts.on_exit then opts.on_exit(-1) end
      end)
      local none = function() end
      return { send = none, close = none, stop = none }
    end
    jobs[id] = opts
    local function call(native, ...)
      local done, err = native(id, ...)
      if not done then
        return nil, err
      end
      return true
    end
    return {
      id = id,
      send = function(text)
        text = tostring(text)
        if text:sub(-1) ~= "\n" then
          text = text .. "\n"
        end
        return call(raw.job_send, text)
      end,
      close = function()
        return call(raw.job_close)
      end,
      stop = function()
        return call(raw.job_stop)
      end,
    }
  end,
}

-- Called by the job's reader (job.rs) with each batch, in order.
-- A job's callback; its error is a notice and the job goes on.
local function job_callback(callback, ...)
  if callback then
    local ok, err = pcall(callback, ...)
    if not ok then
      uji.notify("job: " .. tostring(err))
    end
  end
end

local function job_dispatch(id, stdout, stderr, code, reason)
  local opts = jobs[id]
  if not opts then
    return
  end
  for _, line in ipairs(stdout) do
    job_callback(opts.on_stdout, line)
  end
  for _, line in ipairs(stderr) do
    job_callback(opts.on_stderr, line)
  end
  if code ~= nil then
    jobs[id] = nil
    job_callback(opts.on_exit, code, reason)
  end
end

-- uji.pack: packs of Lua plugins. A pack is a folder (or a git repository
-- cloned into the data directory and pinned in uji-lock.json beside
-- init.lua): its lua/ joins the module path, its plugin/*.lua run after
-- init.lua (at once when added later).
local pack_roots = {}
local pending_roots = {}
local config_loaded = false

local function expand(path)
  if path:sub(1, 1) == "~" then
    local home = os.getenv("HOME") or ""
    return home .. path:sub(2)
  end
  return path
end

local function run_pack_plugins(root)
  local files = uji.fs.glob(root .. "/plugin/*.lua") or {}
  table.sort(files)
  for _, file in ipairs(files) do
    raw.run_file(file)
  end
end

local function add_root(root)
  for _, known in ipairs(pack_roots) do
    if known == root then
      return
    end
  end
  pack_roots[#pack_roots + 1] = root
  package.path = package.path .. ";" .. root .. "/lua/?.lua;" .. root .. "/lua/?/init.lua"
  if config_loaded then
    run_pack_plugins(root)
  else
    pending_roots[#pending_roots + 1] = root
  end
end

-- What one spec names: { dir = ..., name? } or a repository.
local function pack_source(spec, i)
  if type(spec) == "string" then
    if spec:find("://", 1, true) or spec:sub(1, 4) == "git@" or spec:match("^[/.~]") then
      return { url = expand(spec) }
    end
    local owner, repo = spec:match("^([%w%._%-]+)/([%w%._%-]+)$")
    if not owner then
      error("uji.pack.add: pack " .. i .. " (" .. spec .. ") is neither owner/repo, a URL nor a path", 3)
    end
    return { url = "https://github.com/" .. owner .. "/" .. repo }
  end
  if type(spec) ~= "table" then
    error("uji.pack.add: pack " .. i .. " must be a string or a table, got " .. type(spec), 3)
  end
  for key in pairs(spec) do
    if key ~= 1 and key ~= "dir" and key ~= "url" and key ~= "name" and key ~= "commit" and key ~= "tag" and key ~= "branch" then
      error("uji.pack.add: pack " .. i .. ": unknown field " .. tostring(key) .. " (fields: dir, url, name, commit, tag, branch)", 3)
    end
  end
  if spec.dir ~= nil then
    if type(spec.dir) ~= "string" then
      error("uji.pack.add: pack " .. i .. ": dir must be a path", 3)
    end
    return { dir = expand(spec.dir), name = spec.name }
  end
  local url = spec.url or spec[1]
  if type(url) ~= "string" then
    error("uji.pack.add: pack " .. i .. " needs dir or url", 3)
  end
  return { url = expand(url), name = spec.name, reference = spec.commit or spec.tag or spec.branch }
end

local function pack_name(source)
  if source.name then
    return source.name
  end
  local last = (source.dir or source.url):gsub("/+$", ""):match("([^/:]+)$") or "pack"
  return (last:gsub("%.git$", ""))
end

uji.pack = {
  add = function(specs)
    if type(specs) ~= "table" then
      error("uji.pack.add takes a list of packs, e.g. uji.pack.add({ { dir = \"~/src/my-plugin\" }, \"owner/repo\" })", 2)
    end
    local sources = {}
    for i, spec in ipairs(specs) do
      sources[i] = pack_source(spec, i)
    end
    for _, source in ipairs(sources) do
      local name = pack_name(source)
      if not name:match("^[%w%._%-]+$") or name == "." or name == ".." then
        uji.notify("pack: " .. name .. ": a pack's name is one plain word (give name = ...)")
      elseif source.dir then
        local stat = uji.fs.stat(source.dir)
        if stat and stat.type == "dir" then
          add_root((source.dir:gsub("/+$", "")))
        else
          uji.notify("pack: " .. name .. ": " .. source.dir .. " is not a folder")
        end
      else
        local ok, root, err = raw.pack_clone(name, source.url, source.reference)
        if not ok then
          uji.notify("pack: " .. name .. ": " .. tostring(root))
        elseif root then
          add_root(root)
        else
          uji.notify("pack: " .. name .. ": " .. tostring(err))
        end
      end
    end
  end,
  list = function()
    local list = {}
    if raw.config_dir then
      list[#list + 1] = raw.config_dir
    end
    for _, root in ipairs(pack_roots) do
      list[#list + 1] = root
    end
    return uji.json.array(list)
  end,
  update = function()
    local ok, said = raw.pack_update()
    if not ok then
      error(said, 2)
    end
    for _, line in ipairs(said) do
      uji.notify(line)
    end
    return said
  end,
}

local function packs_after_config()
  config_loaded = true
  local roots = pending_roots
  pending_roots = {}
  for _, root in ipairs(roots) do
    run_pack_plugins(root)
  end
end

-- uji.reload(): starts uji again on this session (the screen keeps the
-- conversation and the draft), loading init.lua, plugins and packs afresh;
-- refused while a turn runs. /reload does it; /sync updates the packs first.
uji.reload = function()
  local ok, err = raw.session_reload()
  if not ok then
    error(err, 2)
  end
end
-- Added when the configuration starts loading (the state is ready then),
-- before init.lua, which may replace them.
local function add_commands()
  uji.command.add("reload", {
    desc = "Load init.lua, plugins and packs again (the conversation and the draft stay)",
    handler = function()
      uji.reload()
    end,
  })
  uji.command.add("sync", {
    desc = "Update the packs in uji-lock.json, then /reload",
    handler = function()
      uji.pack.update()
      uji.reload()
    end,
  })
end

-- Bytes: uji.base64.encode/decode(data [, { url, pad }]), uji.sha256(data)
-- (32 raw bytes), uji.random(n) (n random bytes); uji.ui.open(url or path).
local function raise_on(native)
  return function(...)
    local ok, value = native(...)
    if not ok then
      error(value, 2)
    end
    return value
  end
end
uji.base64 = { encode = raise_on(raw.base64_encode), decode = raise_on(raw.base64_decode) }
uji.sha256 = raise_on(raw.sha256)
uji.random = raise_on(raw.random)
uji.ui.open = raise_on(raw.ui_open)

-- uji.message(err): an error's text without the traceback uji adds.
uji.message = function(err)
  local text = tostring(err)
  return (text:gsub("\nstack traceback:.*$", ""))
end

-- uji.class([parent]): a class; calling it makes an instance and runs its
-- init(...) when it has one; a parent's methods are inherited.
uji.class = function(parent)
  if parent ~= nil and type(parent) ~= "table" then
    error("uji.class: the parent must be a class, got " .. type(parent), 2)
  end
  local class = {}
  class.__index = class
  return setmetatable(class, {
    __index = parent,
    __call = function(cls, ...)
      local object = setmetatable({}, cls)
      if type(cls.init) == "function" then
        object:init(...)
      end
      return object
    end,
  })
end

-- Features of the public uji's screen this uji does not have: a clear
-- error naming the function instead of "attempt to call a nil value".
local function missing(name)
  return function()
    error(name .. " is not available in this uji (the public uji's screen library, its toolbar, "
      .. "its draft and actions API are not part of it)", 2)
  end
end
-- uji.ui.pick: the public uji's richer picker; here a select (its preview
-- is not drawn), and live lists (on_query) are not available.
uji.ui.pick = function(opts, ...)
  if type(opts) == "table" and opts.on_query ~= nil then
    error("uji.ui.pick with on_query is not available in this uji (use uji.ui.select with the items)", 2)
  end
  local plain = {}
  if type(opts) == "table" then
    for k, v in pairs(opts) do
      if k ~= "preview" then
        plain[k] = v
      end
    end
  else
    plain = opts
  end
  return uji.ui.select(plain, ...)
end
uji.ui.exec = missing("uji.ui.exec")
uji.input = {
  get = missing("uji.input.get"),
  set = missing("uji.input.set"),
  append = missing("uji.input.append"),
  clear = missing("uji.input.clear"),
  attach = missing("uji.input.attach"),
}
uji.action = { add = missing("uji.action.add"), remove = missing("uji.action.remove"), list = missing("uji.action.list") }
uji.ui.toolbar = missing("uji.ui.toolbar")
uji.ui.overlay = missing("uji.ui.overlay")
uji.ui.Markdown = missing("uji.ui.Markdown")
package.preload["ito"] = function()
  error("require(\"ito\"): the public uji's view library is not available in this uji", 2)
end

return { job_dispatch = job_dispatch, packs_after_config = packs_after_config, add_commands = add_commands }
