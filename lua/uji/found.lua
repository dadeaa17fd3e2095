--- Files that configure uji found in folders (commands, skills, agents):
--- where a project keeps them, and one list by name from several folders.

local M = {}

--- The folder `name` (e.g. ".claude/commands") nearest to the working
--- directory, looking up to the repository root (the first directory
--- holding `.git`) or the filesystem's root; an absolute path, or nil.
function M.project_folder(name)
  local dir = uji.os.cwd()
  while dir do
    local candidate = uji.fs.join(dir, name)
    if uji.fs.exists(candidate) then
      return candidate
    end
    if dir == "/" or uji.fs.exists(uji.fs.join(dir, ".git")) then
      return nil
    end
    dir = dir:match("^(.*)/[^/]*$")
    if dir == "" then
      dir = "/"
    end
  end
  return nil
end

--- Reads every file matching `pattern` (a glob under each folder's
--- `path`) with `read(path, folder)`, which returns an item with a `name`
--- or nil. A later folder's item replaces an earlier one's of the same
--- name, keeping its place; a `read` that fails is a notice naming the
--- file (`what` says what it is), and the others are still read.
function M.collect(folders, pattern, what, read)
  local by_name, order = {}, {}
  for _, folder in ipairs(folders) do
    for _, path in ipairs(uji.fs.glob(uji.fs.join(folder.path, pattern)) or {}) do
      local ok, item = pcall(read, path, folder)
      if not ok then
        uji.notify(what .. " " .. path .. " was left out: " .. tostring(item))
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
