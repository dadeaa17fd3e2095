-- Tasks: uji.task, uji.sleep, uji.promise, and the callback-or-wait
-- convention of uji's functions that take time (docs/lua.md, "Tasks").
--
-- A task is a coroutine this file runs. Code waits by yielding its task;
-- whatever it waits for (a timer, a process, an HTTP answer, a promise)
-- resumes it through a callback, which this file queues and runs from the
-- Lua thread's own loop, never from inside another task. Everything runs on
-- the one Lua thread, so a task runs until it waits.
local raw, uji = ...

local unpack = unpack or table.unpack

local function pack(...)
  return { n = select("#", ...), ... }
end

local tasks = {}

-- coroutine -> task, for the tasks alive now.
local by_coroutine = setmetatable({}, { __mode = "k" })

-- Where errors of tasks nobody waits for go (uji.task.on_error).
local error_handler = function(message)
  uji.notify("a task failed: " .. tostring(message))
end

-- Resumptions waiting for the Lua thread's loop.
local ready = {}
local draining_scheduled = false

local function drain()
  draining_scheduled = false
  while #ready > 0 do
    local batch = ready
    ready = {}
    for _, resume in ipairs(batch) do
      resume()
    end
  end
end

local function later(fn)
  ready[#ready + 1] = fn
  if not draining_scheduled then
    draining_scheduled = true
    local ok, err = raw.schedule(drain)
    if not ok then
      draining_scheduled = false
      error(err, 0)
    end
  end
end

local Task = {}
Task.__index = Task

local function finished(task, ok, ...)
  task.done = true
  by_coroutine[task.co] = nil
  if ok then
    task.results = pack(...)
  else
    task.error = (...)
  end
  local watchers = task.watchers
  task.watchers = nil
  if not ok and not watchers and not task.quiet then
    local handled, err = pcall(error_handler, task.error)
    if not handled then
      uji.notify("a task failed: " .. tostring(task.error) .. " (and its error handler: " .. tostring(err) .. ")")
    end
  end
  for _, watcher in ipairs(watchers or {}) do
    watcher(task)
  end
end

-- Runs `task` until it waits or ends.
local function step(task, ...)
  if task.done or task.cancelled then
    return
  end
  local results = pack(coroutine.resume(task.co, ...))
  if coroutine.status(task.co) == "dead" then
    finished(task, unpack(results, 1, results.n))
  end
end

local function new_task(fn)
  if type(fn) ~= "function" then
    error("uji.task.spawn: expects a function, got " .. type(fn), 3)
  end
  local task = setmetatable({ co = coroutine.create(fn), done = false }, Task)
  by_coroutine[task.co] = task
  return task
end

--- The task running this code, or nil.
function tasks.current()
  local co = coroutine.running()
  return co and by_coroutine[co] or nil
end

--- Suspends the running task until `start`'s callback is called, and
--- returns what the callback was called with. `start(resume)` begins the
--- work and may return a function that stops it (used when the task is
--- cancelled). `api` names the caller for the error outside a task.
function tasks.wait(api, start)
  local task = tasks.current()
  if not task then
    error(api .. " waits, which only a task can do: call it from a tool's run, a command, a key "
      .. "binding, uji.schedule or uji.task.spawn, or give it a callback as its last argument", 3)
  end
  local token = {}
  local early
  task.waiting = token
  local stop = start(function(...)
    if task.waiting ~= token then
      return
    end
    task.waiting = nil
    task.stop_wait = nil
    if task.suspended then
      local values = pack(...)
      later(function()
        step(task, unpack(values, 1, values.n))
      end)
    else
      early = pack(...)
    end
  end)
  if early then
    return unpack(early, 1, early.n)
  end
  if type(stop) == "function" then
    task.stop_wait = stop
  end
  task.suspended = true
  local values = pack(coroutine.yield())
  task.suspended = false
  return unpack(values, 1, values.n)
end

--- Runs `fn(...)` as a new task at once, for uji's entry points (a tool's
--- run, a command, a key binding, a timer). Returns "done" and its
--- results when it ended without waiting, "error" and the error when it
--- failed so, and "waiting" and the task when it waits: then `on_end(ok, ...)`, when
--- given, is called when it ends (else its error goes to the handler).
function tasks.enter(fn, on_end, ...)
  local task = new_task(fn)
  local results = pack(coroutine.resume(task.co, ...))
  if coroutine.status(task.co) == "dead" then
    task.done = true
    by_coroutine[task.co] = nil
    if results[1] then
      return "done", unpack(results, 2, results.n)
    end
    return "error", results[2]
  end
  if on_end then
    task.watchers = {
      function(t)
        if t.results then
          on_end(true, unpack(t.results, 1, t.results.n))
        else
          on_end(false, t.error)
        end
      end,
    }
  end
  return "waiting", task
end

--- For Rust's entry points: runs `fn(...)` as a task (see tasks.enter);
--- returns true and its results when it ended without waiting, raises its
--- error when it failed so, and returns false and a function that cancels
--- it when it waits (`on_end` then hears how it ended).
function tasks.call(fn, on_end, ...)
  local results = pack(tasks.enter(fn, on_end, ...))
  if results[1] == "done" then
    return true, unpack(results, 2, results.n)
  end
  if results[1] == "error" then
    error(results[2], 0)
  end
  local task = results[2]
  return false, function()
    task:cancel()
  end
end

--- uji.task.spawn(fn, ...): runs fn(...) in a new task, started when the
--- current code yields or ends.
function tasks.spawn(fn, ...)
  local task = new_task(fn)
  local args = pack(...)
  later(function()
    step(task, unpack(args, 1, args.n))
  end)
  return task
end

--- task:cancel(): stops the task at its current wait (and what it waited
--- for); it never runs again. A task cancelling itself stops at its next
--- wait.
function Task:cancel()
  if self.done or self.cancelled then
    return false
  end
  self.cancelled = true
  self.waiting = nil
  local stop = self.stop_wait
  self.stop_wait = nil
  if stop then
    pcall(stop)
  end
  -- A cancelled task's end is no error worth reporting.
  self.quiet = true
  if tasks.current() ~= self then
    finished(self, false, "cancelled")
  end
  return true
end

--- task:wait(): waits for the task and returns its results (raising its
--- error).
function Task:wait()
  if not self.done then
    tasks.wait("task:wait", function(resume)
      self.watchers = self.watchers or {}
      table.insert(self.watchers, function()
        resume()
      end)
    end)
  end
  if self.results then
    return unpack(self.results, 1, self.results.n)
  end
  error(self.error, 0)
end

--- uji.sleep(seconds): 0 yields to the other ready tasks; math.huge
--- sleeps until cancelled.
function tasks.sleep(seconds)
  if type(seconds) ~= "number" or seconds ~= seconds or seconds < 0 then
    error("uji.sleep: expects a number of seconds (0 or more), got " .. tostring(seconds), 2)
  end
  tasks.wait("uji.sleep", function(resume)
    if seconds == math.huge then
      return nil
    end
    if seconds == 0 then
      later(resume)
      return nil
    end
    local ok, cancel = raw.defer(seconds, resume)
    if not ok then
      error(cancel, 0)
    end
    return cancel
  end)
end

--- uji.task.race(fn, ...): runs each function in a task of its own; the
--- first to end wins: returns its position and its results (raising its
--- error); the others are cancelled.
function tasks.race(...)
  local fns = pack(...)
  if fns.n == 0 then
    error("uji.task.race: expects one or more functions", 2)
  end
  for i = 1, fns.n do
    if type(fns[i]) ~= "function" then
      error("uji.task.race: argument " .. i .. " must be a function, got " .. type(fns[i]), 2)
    end
  end
  local children = {}
  local winner, outcome = tasks.wait("uji.task.race", function(resume)
    for i = 1, fns.n do
      local child = new_task(fns[i])
      child.quiet = true
      child.watchers = {
        function(t)
          resume(i, t)
        end,
      }
      children[i] = child
      later(function()
        step(child)
      end)
    end
    return function()
      for _, child in ipairs(children) do
        child:cancel()
      end
    end
  end)
  for i, child in ipairs(children) do
    if i ~= winner then
      child:cancel()
    end
  end
  if outcome.results then
    return winner, unpack(outcome.results, 1, outcome.results.n)
  end
  error(outcome.error, 0)
end

--- uji.task.timeout(seconds, fn): true and fn's results, or false when
--- `seconds` passed first (fn is then cancelled). nil or math.huge: no limit.
function tasks.timeout(seconds, fn)
  if type(fn) ~= "function" then
    error("uji.task.timeout: the second argument must be a function, got " .. type(fn), 2)
  end
  if seconds == nil or seconds == math.huge then
    return true, fn()
  end
  if type(seconds) ~= "number" or seconds < 0 then
    error("uji.task.timeout: expects a number of seconds, got " .. tostring(seconds), 2)
  end
  local results = pack(tasks.race(fn, function()
    tasks.sleep(seconds)
  end))
  if results[1] == 2 then
    return false
  end
  return true, unpack(results, 2, results.n)
end

local Promise = {}
Promise.__index = Promise

--- uji.promise(): p:resolve(...) settles it (true the first time, false
--- after); p:await() waits for it and returns the values; p.settled.
function tasks.promise()
  return setmetatable({ settled = false, waiters = {} }, Promise)
end

function Promise:resolve(...)
  if self.settled then
    return false
  end
  self.settled = true
  self.values = pack(...)
  local waiters = self.waiters
  self.waiters = {}
  for _, resume in ipairs(waiters) do
    resume()
  end
  return true
end

function Promise:await()
  if not self.settled then
    tasks.wait("promise:await", function(resume)
      table.insert(self.waiters, resume)
    end)
  end
  return unpack(self.values, 1, self.values.n)
end

--- The callback-or-wait convention: `work(...)` may wait. Called with a
--- function last, the result goes to that function from a task of its
--- own and the call returns a function that cancels it; otherwise the
--- results are returned (waiting needs a task).
function tasks.either(work)
  return function(...)
    local n = select("#", ...)
    local last = n > 0 and select(n, ...) or nil
    if type(last) ~= "function" then
      return work(...)
    end
    local args = pack(...)
    args.n = n - 1
    local task = new_task(function()
      last(work(unpack(args, 1, args.n)))
    end)
    later(function()
      step(task)
    end)
    return function()
      task:cancel()
    end
  end
end

uji.task = {
  spawn = tasks.spawn,
  race = tasks.race,
  timeout = tasks.timeout,
  current = tasks.current,
  on_error = function(handler)
    if type(handler) ~= "function" then
      error("uji.task.on_error: expects a function(message), got " .. type(handler), 2)
    end
    error_handler = handler
  end,
}
uji.sleep = tasks.sleep
uji.promise = tasks.promise

return tasks
