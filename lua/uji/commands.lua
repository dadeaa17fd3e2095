--- Slash commands from Markdown files (docs/context.md).
---
--- Every `*.md` in `~/.claude/commands/` (Claude Code's own), then in
--- `<config>/commands/`, then in the project's
--- `.claude/commands/` and `.uji/commands/` (the nearest of each from the
--- working directory up to the repository root), is a command named after
--- the file; a file in a subfolder is `folder:name`. Its body is the
--- prompt: `$ARGUMENTS` becomes what follows the command, `$1`…`$9` its
--- words (quotes group them). Front matter may set `description`,
--- `argument-hint`, `model` (the model for that turn) and `allowed-tools`
--- (tools that run without asking for that turn; deny rules still deny).
--- A project command of the same name as one of yours replaces it, and says
--- `(project)` in its description. A file may not take the name of a
--- command uji already has (its own, such as `/undo`, or one added before,
--- such as `/plan`): it is skipped with a notice. Command files are prompt
--- text only: they run no code.
---
--- local commands = require("uji.commands")
--- commands.setup()            -- what uji's defaults do
--- commands.list()             -- { { name, path, project, description, ... } }

local found = require("uji.found")
local frontmatter = require("uji.frontmatter")

local M = {}

--- Front matter fields a command file may set. Those of Claude Code's
--- commands that uji does not use are read and left alone.
local KNOWN = {
  description = true,
  ["argument-hint"] = true,
  model = true,
  ["allowed-tools"] = true,
}
local IGNORED = { ["disable-model-invocation"] = true, name = true }

--- Claude Code's tool names and uji's: `Bash(git add:*)` is
--- run_command's `git add *`.
local TOOL_NAMES = {
  Bash = "run_command",
  Read = "read_file",
  Edit = "edit_file",
  MultiEdit = "edit_file",
  Write = "write_file",
}

--- Where command files are, in the order they are read (later ones
--- replace earlier ones of the same name).
function M.folders()
  local folders = {}
  -- Claude Code's personal commands carry over, below yours.
  local home = uji.os.home()
  if home then
    folders[#folders + 1] = { path = uji.fs.join(home, ".claude/commands"), project = false }
  end
  if uji.config.dir then
    folders[#folders + 1] = { path = uji.fs.join(uji.config.dir, "commands"), project = false }
  end
  return found.add_project_folders(folders, { ".claude/commands", ".uji/commands" })
end

--- `a "b c" d` as { "a", "b c", "d" }.
function M.words(text)
  local words = {}
  local i, n = 1, #text
  while i <= n do
    local c = text:sub(i, i)
    if c:match("%s") then
      i = i + 1
    elseif c == '"' or c == "'" then
      local close = text:find(c, i + 1, true) or (n + 1)
      words[#words + 1] = text:sub(i + 1, close - 1)
      i = close + 1
    else
      local stop = (text:find("%s", i) or (n + 1)) - 1
      words[#words + 1] = text:sub(i, stop)
      i = stop + 1
    end
  end
  return words
end

--- The prompt of a command's `body` for `args` (the text after its name).
function M.expand(body, args)
  args = args or ""
  local words = M.words(args)
  local used = false
  local out = body:gsub("%$ARGUMENTS", function()
    used = true
    return args
  end)
  out = out:gsub("%$(%d)", function(n)
    used = true
    return words[tonumber(n)] or ""
  end)
  if not used and args:match("%S") then
    -- A body that takes no arguments still gets what was typed.
    out = out:gsub("%s*$", "") .. "\n\n" .. args
  end
  return out
end

--- `allowed-tools` as policy rules: { tool = { allow = { ... } } }; what
--- cannot be read is returned as problems.
function M.allowed_rules(list)
  local rules, problems = {}, {}
  for _, entry in ipairs(frontmatter.list(list)) do
    local tool, pattern = entry:match("^([%w_%-]+)%((.*)%)$")
    tool = tool or entry:match("^([%w_%-]+)$")
    if not tool then
      problems[#problems + 1] = entry
    else
      tool = TOOL_NAMES[tool] or tool
      -- `git add:*` (Claude Code's prefix form) is `git add *`.
      pattern = pattern and pattern:gsub(":%*$", " *") or "*"
      rules[tool] = rules[tool] or { allow = {} }
      table.insert(rules[tool].allow, pattern)
    end
  end
  return rules, problems
end

--- One command file as a command; nil (and a notice) when it cannot be.
local function read_command(doc, name, project)
  local path, fields = doc.path, doc.fields
  for key in pairs(fields) do
    if not KNOWN[key] and not IGNORED[key] then
      uji.notify(path .. ": unknown front matter field " .. key
        .. " (a command reads description, argument-hint, model, allowed-tools)")
    end
  end
  return {
    name = name,
    path = path,
    project = project,
    description = frontmatter.text(fields.description),
    hint = frontmatter.text(fields["argument-hint"]),
    model = frontmatter.text(fields.model),
    allowed = fields["allowed-tools"],
    body = doc.body,
  }
end

--- The commands of every folder; a later folder's replaces an earlier
--- one's of the same name.
function M.list()
  return found.collect(M.folders(), "**/*.md", "command file", function(doc, folder)
    local name = doc.path:sub(#folder.path + 2):gsub("%.md$", ""):gsub("/", ":")
    return read_command(doc, name, folder.project)
  end)
end

--- What a command's description says in the `/` list.
local function described(command)
  local text = command.description or ("Prompt from " .. command.path)
  if command.hint then
    text = text .. " " .. command.hint
  end
  if command.project then
    text = text .. " (project)"
  end
  return text
end

--- Undoes what a command set for its turn once that turn ends.
local pending_restore = nil
local function restore(finished)
  -- A subagent's turn ends inside the command's own: not the one to wait for.
  if type(finished) == "table" and finished.parent then
    return
  end
  if pending_restore then
    local undo = pending_restore
    pending_restore = nil
    undo()
  end
end

--- Sends the command's prompt, with its model and its allowed tools for
--- that turn.
function M.run(command, args)
  restore()
  local undo = {}
  if command.model then
    local previous = uji.model.current()
    local ok, err = pcall(uji.model.use, command.model)
    if not ok then
      return "/" .. command.name .. ": its model " .. command.model .. " cannot be used: " .. tostring(err)
    end
    if previous then
      undo[#undo + 1] = function()
        pcall(uji.model.use, { provider = previous.provider, model = previous.model })
      end
    end
  end
  if command.allowed then
    local rules, problems = M.allowed_rules(command.allowed)
    for _, problem in ipairs(problems) do
      uji.notify("/" .. command.name .. ": allowed-tools entry not understood: " .. problem)
    end
    local set = "command:" .. command.name
    uji.tool.policy(rules, { name = set })
    undo[#undo + 1] = function()
      local cleared = {}
      for tool in pairs(rules) do
        cleared[tool] = {}
      end
      uji.tool.policy(cleared, { name = set })
    end
  end
  if #undo > 0 then
    pending_restore = function()
      for _, step in ipairs(undo) do
        step()
      end
    end
  end
  uji.session.submit(M.expand(command.body, args))
end

--- The names a command file may not take, each with why: uji's own
--- commands (`/undo`, `/model`, …) and those added before the files are
--- read (`/plan`, `/skills`, `/reload`, …), so a repository's file cannot
--- stand in for a command the user knows.
function M.taken()
  local taken = {}
  for _, name in ipairs(uji.command.list()) do
    taken[name] = "a command uji already has"
  end
  for _, name in ipairs(uji.command.builtins()) do
    taken[name] = "one of uji's own commands"
  end
  return taken
end

--- Adds every command file's command; one named as a command uji already
--- has is skipped with a notice naming the file.
function M.setup()
  uji.on("turn_finished", restore, { name = "uji.commands" })
  local taken = M.taken()
  for _, command in ipairs(M.list()) do
    if taken[command.name] then
      uji.notify("command file " .. command.path .. " was skipped: /" .. command.name .. " is "
        .. taken[command.name] .. "; rename the file to use it as a command")
    else
      local ok, err = pcall(uji.command.add, command.name, {
        desc = described(command),
        handler = function(args)
          return M.run(command, args)
        end,
      })
      if not ok then
        uji.notify("command file " .. command.path .. " gives no command: " .. tostring(err))
      end
    end
  end
end

return M
