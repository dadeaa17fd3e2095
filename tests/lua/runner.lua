-- The spec runner: describe/it in the style of the public uji's Lua
-- specs. tests/e2e/lua_specs.rs loads it from a fresh init.lua for every
-- test and runs the tool `spec`: { file = ..., test = ... } runs one test
-- inside a task (so it may wait) and answers "PASS" or "FAIL: why";
-- { file = ... } alone lists the file's tests, one per line.
local specs = {}
local prefix = {}
local before = {}

function describe(name, body)
  table.insert(prefix, name)
  body()
  table.remove(prefix)
end

function it(name, body)
  local full = table.concat(prefix, " ") .. " " .. name
  specs[#specs + 1] = { name = full, body = body, before = { unpack(before) } }
end

function before_each(fn)
  before[#before + 1] = fn
end

-- Assertions that say what they saw.
local function show(v)
  if type(v) == "string" then
    return string.format("%q", v)
  end
  return tostring(v)
end

expect = {}

function expect.eq(actual, wanted, what)
  if actual ~= wanted then
    error((what or "value") .. ": expected " .. show(wanted) .. ", got " .. show(actual), 2)
  end
end

function expect.truthy(value, what)
  if not value then
    error((what or "value") .. ": expected a true value, got " .. show(value), 2)
  end
end

function expect.contains(text, part, what)
  if type(text) ~= "string" or not text:find(part, 1, true) then
    error((what or "text") .. ": expected it to contain " .. show(part) .. ", got " .. show(text), 2)
  end
end

-- Calls fn and expects an error whose message contains `part`.
function expect.fails(fn, part)
  local ok, err = pcall(fn)
  if ok then
    error("expected an error containing " .. show(part) .. ", but the call succeeded", 2)
  end
  if not tostring(err):find(part, 1, true) then
    error("expected an error containing " .. show(part) .. ", got " .. show(tostring(err)), 2)
  end
  return tostring(err)
end

uji.tool.add("spec", {
  description = "Runs a Lua spec (tests only).",
  parameters = {
    type = "object",
    properties = { file = { type = "string" }, test = { type = "string" } },
    required = { "file" },
  },
  run = function(args)
    local chunk, err = loadfile(args.file)
    if not chunk then
      return "FAIL: " .. tostring(err)
    end
    chunk()
    if not args.test then
      local names = {}
      for _, spec in ipairs(specs) do
        names[#names + 1] = spec.name
      end
      return table.concat(names, "\n")
    end
    for _, spec in ipairs(specs) do
      if spec.name == args.test then
        for _, fn in ipairs(spec.before) do
          fn()
        end
        local ok, failure = pcall(spec.body)
        if ok then
          return "PASS"
        end
        return "FAIL: " .. tostring(failure)
      end
    end
    return "FAIL: no test named " .. args.test
  end,
})
