--- Agents for the `subagent` tool (docs/agents.md): Markdown files whose
--- front matter has `name` and `description` (and may have `tools`,
--- `model`, `effort`, `max-turns`, `max-tokens`, `max-cost`), whose body is
--- the subagent's instructions (added to its system prompt).
---
--- They are found in `~/.claude/agents`, `<config>/agents`, and the
--- project's `.uji/agents` and `.claude/agents` (the nearest of each from
--- the working directory up to the repository root); a later folder's agent
--- replaces an earlier one's of the same name. Claude Code's tool names in
--- `tools` are read as uji's (Read, Grep, Glob and LS as read_file, Edit
--- and MultiEdit as edit_file, Write as write_file, Bash as run_command);
--- names of Claude Code tools uji has no counterpart of (TodoWrite,
--- WebSearch…) are left out with a notice.
---
--- local agents = require("uji.agents")
--- agents.setup()        -- what uji's defaults do
--- agents.add({ name = "tester", description = "Runs the tests", tools = { "run_command" } })
--- agents.list()         -- { { name, description, tools?, model?, effort?, prompt, path?, project } }

local found = require("uji.found")
local frontmatter = require("uji.frontmatter")

local M = {}

--- Claude Code's tool names, as uji's.
local CLAUDE_TOOLS = {
  Read = "read_file",
  Grep = "read_file",
  Glob = "read_file",
  LS = "read_file",
  NotebookRead = "read_file",
  Edit = "edit_file",
  MultiEdit = "edit_file",
  NotebookEdit = "edit_file",
  Write = "write_file",
  Bash = "run_command",
}
local CLAUDE_ONLY = {
  TodoWrite = true, TodoRead = true, Task = true, WebSearch = true, WebFetch = true,
  ExitPlanMode = true, BashOutput = true, KillBash = true, KillShell = true,
}

--- Where agent files are, in the order they are read.
function M.folders()
  local folders = {}
  local home = uji.os.home()
  if home then
    folders[#folders + 1] = { path = uji.fs.join(home, ".claude/agents"), project = false }
  end
  if uji.config.dir then
    folders[#folders + 1] = { path = uji.fs.join(uji.config.dir, "agents"), project = false }
  end
  return found.add_project_folders(folders, { ".uji/agents", ".claude/agents" })
end

--- An agent file's `tools` as uji's tool names, each once.
local function tool_names(value, path)
  local list = frontmatter.list(value)
  if #list == 0 then
    return nil
  end
  local names, seen = {}, {}
  for _, name in ipairs(list) do
    -- `Bash(git diff:*)` limits Bash in Claude Code; uji's policy does that.
    local bare = name:match("^([%w_%-%.]+)") or name
    local mapped = CLAUDE_TOOLS[bare] or bare
    if CLAUDE_ONLY[bare] then
      uji.notify(path .. ": tool " .. bare .. " is Claude Code's and has no counterpart in uji; left out")
    elseif not seen[mapped] then
      seen[mapped] = true
      names[#names + 1] = mapped
    end
  end
  return names
end

local function number(value, field, path)
  local text = frontmatter.text(value)
  if text == nil then
    return nil
  end
  local n = tonumber(text)
  if not n or n <= 0 then
    error(field .. " must be a number above 0, got " .. text)
  end
  return n
end

--- One agent file as an agent; nil (and a notice) when it cannot be.
local function read_agent(doc, folder)
  local path, fields = doc.path, doc.fields
  local description = frontmatter.text(fields.description)
  if not description or description == "" then
    uji.notify(path .. ": an agent needs a description in its front matter; it was left out")
    return nil
  end
  local name = frontmatter.text(fields.name) or path:match("([^/]+)%.md$")
  if not name:match("^[%w_%-%.]+$") then
    error("the agent name " .. name .. " may hold only letters, digits, -, _ and .")
  end
  local model = frontmatter.text(fields.model)
  -- Claude Code's `inherit` and its model aliases mean the parent's model.
  if model == "inherit" or model == "sonnet" or model == "opus" or model == "haiku" then
    model = nil
  end
  local turns = number(fields["max-turns"], "max-turns", path)
  local tokens = number(fields["max-tokens"], "max-tokens", path)
  return {
    name = name,
    description = description,
    tools = tool_names(fields.tools, path),
    model = model,
    effort = frontmatter.text(fields.effort),
    prompt = doc.body or "",
    path = path,
    project = folder.project,
    max_turns = turns and math.floor(turns),
    max_tokens = tokens and math.floor(tokens),
    max_cost = number(fields["max-cost"], "max-cost", path),
  }
end

local defined = {}

--- Every agent from the files, then those added with `M.add`.
function M.list()
  local list = found.collect(M.folders(), "*.md", "agent", read_agent)
  for _, agent in ipairs(defined) do
    local replaced = false
    for i, other in ipairs(list) do
      if other.name == agent.name then
        list[i], replaced = agent, true
      end
    end
    if not replaced then
      list[#list + 1] = agent
    end
  end
  return list
end

local FIELDS = {
  name = "string", description = "string", tools = "table", model = "string", effort = "string",
  prompt = "string", max_turns = "number", max_tokens = "number", max_cost = "number",
}

local function publish()
  local list = M.list()
  local ok, err = pcall(uji.config.set, "agents", list)
  if not ok then
    uji.notify("the agents could not be set: " .. tostring(err))
  end
  return list
end

--- Adds (or replaces) an agent from init.lua.
function M.add(agent)
  if type(agent) ~= "table" then
    error("uji.agents.add takes a table, e.g. { name = \"tester\", description = \"Runs the tests\" }", 2)
  end
  for field, value in pairs(agent) do
    local want = FIELDS[field]
    if not want then
      error("uji.agents.add: unknown field " .. tostring(field)
        .. " (fields: name, description, tools, model, effort, prompt, max_turns, max_tokens, max_cost)", 2)
    end
    if type(value) ~= want then
      error("uji.agents.add: " .. field .. " must be a " .. want .. ", got " .. type(value), 2)
    end
  end
  if not agent.name or not agent.description then
    error("uji.agents.add: an agent needs a name and a description", 2)
  end
  local copy = { project = false, prompt = "" }
  for field, value in pairs(agent) do
    copy[field] = value
  end
  defined[#defined + 1] = copy
  publish()
end

--- Sets the agents for the subagent tool and adds /agents.
function M.setup()
  local list = publish()
  uji.command.add("agents", {
    desc = "List the agents the subagent tool can run",
    handler = function()
      local out = { "general: a general agent with your tools and a fresh context" }
      for _, agent in ipairs(list) do
        local tools = agent.tools and (" [" .. table.concat(agent.tools, ", ") .. "]") or ""
        out[#out + 1] = agent.name .. (agent.project and " (project)" or "") .. tools .. ": "
          .. agent.description .. (agent.path and ("\n  " .. agent.path) or "")
      end
      if #list == 0 then
        out[#out + 1] = "No agent files found: put Markdown files (front matter: name, description, "
          .. "tools) in " .. tostring(uji.config.dir) .. "/agents, or the project's .uji/agents "
          .. "or .claude/agents."
      end
      return table.concat(out, "\n")
    end,
  })
end

return M
