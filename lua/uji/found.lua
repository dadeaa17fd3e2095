--- Files that configure uji found in folders (commands, skills, agents):
--- where a project keeps them, and one list by name from several folders.

local frontmatter = require("uji.frontmatter")

local M = {}

local function parent(dir)
  local up = dir:match("^(.*)/[^/]*$")
  if up == "" then
    return "/"
  end
  return up
end

--- The directories a project's folders are looked for in, nearest first:
--- from the working directory up to the repository root (the nearest
--- directory holding `.git`, as for AGENTS.md); outside a repository, the
--- working directory alone (so a home directory's `.claude` is not taken
--- for a project's).
function M.project_dirs()
  local cwd = uji.os.cwd()
  if not cwd then
    return {}
  end
  local dirs, dir = {}, cwd
  while true do
    dirs[#dirs + 1] = dir
    if uji.fs.exists(uji.fs.join(dir, ".git")) then
      return dirs
    end
    if dir == "/" then
      return { cwd }
    end
    dir = parent(dir)
  end
end

--- The folder `name` (e.g. ".claude/commands") nearest to the working
--- directory among `dirs` (default `project_dirs()`); an absolute path, or
--- nil.
function M.project_folder(name, dirs)
  for _, dir in ipairs(dirs or M.project_dirs()) do
    local candidate = uji.fs.join(dir, name)
    if uji.fs.exists(candidate) then
      return candidate
    end
  end
  return nil
end

--- Appends to `folders` each of the project folders `names` that exists
--- (the nearest, as `project_folder` finds it), marked as the project's.
function M.add_project_folders(folders, names)
  local dirs = M.project_dirs()
  for _, name in ipairs(names) do
    local folder = M.project_folder(name, dirs)
    if folder then
      folders[#folders + 1] = { path = folder, project = true }
    end
  end
  return folders
end

--- Reads every Markdown file matching `pattern` (a glob under each
--- folder's `path`) and makes each an item with `make(doc, folder)` (`doc`
--- is `{ path, fields, body }`), which returns an item with a `name` or nil.
--- A later folder's item replaces an earlier one's of the same name,
--- keeping its place; a `make` that fails is a notice naming the file
--- (`what` says what it is), and the others are still read.
function M.collect(folders, pattern, what, make)
  local by_name, order = {}, {}
  for _, folder in ipairs(folders) do
    for _, doc in ipairs(frontmatter.files(uji.fs.join(folder.path, pattern), what)) do
      local ok, item = pcall(make, doc, folder)
      if not ok then
        uji.notify(what .. " " .. doc.path .. " was left out: " .. tostring(item))
      elseif item then
        if not by_name[item.name] then
          order[#order + 1] = item.name
        end
        by_name[item.name] = item
      end
    end
  end
  local list = {}
  for _, name in ipairs(order) do
    list[#list + 1] = by_name[name]
  end
  return list
end

return M
