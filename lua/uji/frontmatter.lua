--- Markdown files with front matter (commands, skills, agents): the small
--- part of YAML such files use, read without a YAML library.
---
--- local frontmatter = require("uji.frontmatter")
--- local fields, body, problems = frontmatter.parse(text)
---
--- The front matter is the block between a first line `---` and the next
--- `---`. Each field is `key: value` on one line, where the value is plain
--- or quoted text, an inline list `[a, "b c"]`, or a block after the key:
--- `- item` lines (a list) or, after `>` or `|`, indented lines (text,
--- folded into one line or kept as lines). `problems` lists the lines it
--- could not read, each `{ line = N, text = "..." }` (N counts from the
--- file's first line); those lines are left out, the rest is read.

local M = {}

--- `text` split at commas outside quotes and parentheses, each piece
--- trimmed (and empty trailing pieces left out).
local function split_commas(text)
  local items, current, quote, depth = {}, {}, nil, 0
  for char in text:gmatch(".") do
    if quote then
      if char == quote then
        quote = nil
      end
    elseif char == '"' or char == "'" then
      quote = char
    elseif char == "(" then
      depth = depth + 1
    elseif char == ")" then
      depth = math.max(depth - 1, 0)
    end
    if char == "," and not quote and depth == 0 then
      items[#items + 1] = table.concat(current):match("^%s*(.-)%s*$")
      current = {}
    else
      current[#current + 1] = char
    end
  end
  local last = table.concat(current):match("^%s*(.-)%s*$")
  if last ~= "" then
    items[#items + 1] = last
  end
  return items
end

--- (fields, body, problems): `uji.markdown.front_matter`, native (uji's
--- defaults read every command and skill file at start-up).
function M.parse(text)
  local parsed = uji.markdown.front_matter(text)
  return parsed.fields, parsed.body, parsed.problems
end

local function report(path, problems)
  for _, problem in ipairs(problems) do
    uji.notify(path .. ":" .. problem.line .. ": front matter line not understood: " .. problem.text)
  end
end

--- Every file the glob `pattern` finds, read and parsed: a list of
--- `{ path, fields, body }` in path order. Each line of front matter not
--- understood is a notice naming the file and line; a file that cannot be
--- read is a notice saying which `what` was not read, and is left out.
function M.files(pattern, what)
  local docs = {}
  for _, doc in ipairs(uji.markdown.files(pattern)) do
    if doc.error then
      uji.notify(what .. " " .. doc.path .. " was not read: " .. doc.error)
    else
      report(doc.path, doc.problems)
      docs[#docs + 1] = doc
    end
  end
  return docs
end

--- A field as text: a string as it is, an inline list as it was written
--- (`argument-hint: [file]` is text, not a list), anything else nil.
function M.text(value)
  if type(value) == "string" then
    return value
  end
  if type(value) == "table" then
    return "[" .. table.concat(value, ", ") .. "]"
  end
  return nil
end

--- A field as a list: a list as it is, a string split at commas (outside
--- parentheses: `Bash(git add:*), Read`), nothing as an empty list.
function M.list(value)
  if type(value) == "table" then
    return value
  end
  if type(value) ~= "string" then
    return {}
  end
  return split_commas(value)
end

return M
