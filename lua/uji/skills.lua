--- Skills in the Agent Skills format (docs/context.md): a folder holding a
--- `SKILL.md` whose front matter has `name` and `description`.
---
--- Skills are found in `~/.claude/skills` (Claude Code's), `~/.agents/skills`,
--- `<config>/skills`, and the
--- project's `.agents/skills`, `.uji/skills` and `.claude/skills` (the
--- nearest of each from the working directory up to the repository root);
--- a later folder's skill replaces an earlier one's of the same name. The
--- model sees each skill's name, description and where its `SKILL.md` is,
--- and reads the file (and those beside it) with `read_file` when a task
--- calls for it: through the gate, so the policy applies. The folders of
--- skills outside the working directory (yours, and a project's above it in
--- the repository) become read roots (`uji.tool.read_roots`):
--- `read_file` may read them, nothing may write them. `/skills` lists them;
--- `/skill:NAME [text]` puts the skill into the next turn.
---
--- local skills = require("uji.skills")
--- skills.setup()     -- what uji's defaults do
--- skills.list()      -- { { name, description, path, dir, project } }

local found = require("uji.found")
local frontmatter = require("uji.frontmatter")

local M = {}

--- Where skills are, in the order they are read.
function M.folders()
  local folders = {}
  local home = uji.os.home()
  if home then
    folders[#folders + 1] = { path = uji.fs.join(home, ".claude/skills"), project = false }
    folders[#folders + 1] = { path = uji.fs.join(home, ".agents/skills"), project = false }
  end
  if uji.config.dir then
    folders[#folders + 1] = { path = uji.fs.join(uji.config.dir, "skills"), project = false }
  end
  return found.add_project_folders(folders, { ".agents/skills", ".uji/skills", ".claude/skills" })
end

--- One skill's SKILL.md as a skill; nil (and a notice) when it cannot be.
local function read_skill(doc, folder)
  local path, fields = doc.path, doc.fields
  local dir = path:sub(1, -(#"/SKILL.md" + 1))
  local description = frontmatter.text(fields.description)
  if not description or description == "" then
    uji.notify(path .. ": a skill needs a description in its front matter; it was left out")
    return nil
  end
  return {
    name = frontmatter.text(fields.name) or dir:match("([^/]+)$"),
    description = description,
    path = path,
    dir = dir,
    body = doc.body,
    folder = folder.path,
    project = folder.project,
  }
end

--- Every skill; a later folder's replaces an earlier one's of the same
--- name.
function M.list()
  return found.collect(M.folders(), "*/SKILL.md", "skill", read_skill)
end

local function escape(text)
  return (text:gsub("&", "&amp;"):gsub("<", "&lt;"):gsub(">", "&gt;"))
end

--- The paragraph of the system prompt that lists the skills.
function M.prompt(list)
  local lines = {
    "Skills: instructions for particular kinds of task, each in a SKILL.md file. When a task "
      .. "matches a skill's description, read its SKILL.md with read_file before you start, "
      .. "and the files it points to beside it when it says so; then follow it.",
    "<available_skills>",
  }
  for _, skill in ipairs(list) do
    lines[#lines + 1] = "<skill><name>" .. escape(skill.name) .. "</name><description>"
      .. escape(skill.description) .. "</description><location>" .. escape(skill.path)
      .. "</location></skill>"
  end
  lines[#lines + 1] = "</available_skills>"
  return table.concat(lines, "\n")
end

--- Whether `path` is `dir` or inside it (both absolute; false without
--- `dir`).
function M.under(path, dir)
  if not dir then
    return false
  end
  local prefix = dir:sub(-1) == "/" and dir or dir .. "/"
  return path == dir or path:sub(1, #prefix) == prefix
end

--- The skill `/skill:NAME` chose, for the next turn.
local chosen = nil

--- Lists the skills, adds the system prompt paragraph, /skills and a
--- /skill:NAME command for each.
function M.setup()
  local list = M.list()
  if #list == 0 then
    uji.command.add("skills", {
      desc = "List the skills (none found)",
      handler = function()
        return "No skills found. A skill is a folder with a SKILL.md (front matter: name, "
          .. "description) in ~/.claude/skills, ~/.agents/skills, " .. tostring(uji.config.dir) .. "/skills, "
          .. "or the project's .agents/skills, .uji/skills or .claude/skills."
      end,
    })
    return
  end
  -- Skills outside the working directory (the confinement root): readable
  -- by read_file, never writable. A project's folder may be outside too,
  -- in the repository root above it.
  local cwd = uji.os.cwd()
  local roots, seen = uji.tool.read_roots(), {}
  for _, root in ipairs(roots) do
    seen[root] = true
  end
  for _, skill in ipairs(list) do
    if not M.under(skill.folder, cwd) and not seen[skill.folder] then
      seen[skill.folder] = true
      roots[#roots + 1] = skill.folder
    end
  end
  uji.tool.read_roots(roots)
  uji.context.add("skills", function()
    return M.prompt(list)
  end, { priority = 40 })
  uji.context.add("skill", function()
    if not chosen then
      return nil
    end
    local skill = chosen
    chosen = nil
    return {
      at = "turn",
      text = "The user chose the skill " .. skill.name .. " for this message. Its SKILL.md ("
        .. skill.path .. ") follows; files it names are beside it in " .. skill.dir .. ".\n\n"
        .. skill.body,
    }
  end, { priority = 41 })
  uji.command.add("skills", {
    desc = "List the skills the model can use",
    handler = function()
      local out = {}
      for _, skill in ipairs(list) do
        out[#out + 1] = skill.name .. (skill.project and " (project)" or "") .. ": "
          .. skill.description .. "\n  " .. skill.path
      end
      return table.concat(out, "\n")
    end,
  })
  for _, skill in ipairs(list) do
    if skill.name:find("%s") then
      uji.notify(skill.path .. ": the skill name " .. skill.name .. " has spaces; it has no /skill: command")
    else
      local ok, err = pcall(M.add_command, skill)
      if not ok then
        uji.notify(skill.path .. " gives no /skill: command: " .. tostring(err))
      end
    end
  end
end

--- `/skill:NAME [text]`: sends `text` (or "Use the NAME skill.") with the
--- skill's SKILL.md after it.
function M.add_command(skill)
  uji.command.add("skill:" .. skill.name, {
    desc = skill.description,
    handler = function(args)
      chosen = skill
      local text = (args or ""):match("^%s*(.-)%s*$")
      if text == "" then
        text = "Use the " .. skill.name .. " skill."
      end
      uji.session.submit(text)
    end,
  })
end

return M
