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

local function unquote(value)
  local quote = value:sub(1, 1)
  if (quote == '"' or quote == "'") and #value >= 2 and value:sub(-1) == quote then
    local inner = value:sub(2, -2)
    if quote == '"' then
      inner = inner:gsub('\\"', '"'):gsub("\\n", "\n"):gsub("\\\\", "\\")
    end
    return inner
  end
  return value
end

--- `text` split at commas outside quotes and parentheses, each piece
--- trimmed (and empty trailing pieces left out).
local function split_commas(text)
  if not text:find("[\"'()]") then
    -- Nothing to keep together: the common case, without the walk.
    local items = {}
    for piece in (text .. ","):gmatch("([^,]*),") do
      items[#items + 1] = piece:match("^%s*(.-)%s*$")
    end
    if items[#items] == "" then
      items[#items] = nil
    end
    return items
  end
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

--- `[a, "b, c"]` as a list.
local function inline_list(value)
  local items = split_commas(value:sub(2, -2))
  for i, item in ipairs(items) do
    items[i] = unquote(item)
  end
  return items
end

--- (fields, body, problems). A file without front matter is all body.
--- Only the front matter is split into lines: a long body is not walked.
function M.parse(text)
  local first = text:match("^%-%-%-[ \t]*\r?\n()")
  if not first then
    return {}, text, {}
  end
  -- The closing line: `---` alone, then a line end or the end of the file.
  local close_start, body_start = text:match("()\n%-%-%-[ \t]*\r?\n()", first - 1)
  if not close_start then
    close_start = text:match("()\n%-%-%-[ \t]*$", first - 1)
    body_start = #text + 1
  end
  if not close_start then
    return {}, text, { { line = 1, text = "the front matter opened with --- is never closed" } }
  end
  local header = text:sub(first, close_start):gsub("\r\n", "\n")
  local fields, problems = {}, {}
  local key, block, style
  local function finish_block()
    if key and block then
      if style == "list" then
        fields[key] = block
      else
        fields[key] = table.concat(block, style == "|" and "\n" or " ")
      end
    end
    key, block, style = nil, nil, nil
  end
  local number = 1
  for line in header:gmatch("([^\n]*)\n") do
    number = number + 1
    local indented = line:match("^%s+%S")
    if block and indented then
      local item = line:match("^%s*%-%s+(.*)$")
      if style == "list" or (style == nil and item) then
        style = "list"
        if item then
          block[#block + 1] = unquote(item:match("^(.-)%s*$"))
        else
          problems[#problems + 1] = { line = number, text = line }
        end
      else
        block[#block + 1] = line:match("^%s*(.-)%s*$")
      end
    elseif line:match("^%s*$") or line:match("^%s*#") then
      -- Blank lines and comments.
    else
      finish_block()
      local k, value = line:match("^([%w_%-]+)%s*:%s*(.-)%s*$")
      if not k then
        problems[#problems + 1] = { line = number, text = line }
      elseif value == "" or value == ">" or value == "|" or value == ">-" or value == "|-" then
        key, block = k, {}
        style = (value ~= "") and value:sub(1, 1) or nil
      elseif value:sub(1, 1) == "[" and value:sub(-1) == "]" then
        fields[k] = inline_list(value)
      else
        fields[k] = unquote(value)
      end
    end
  end
  finish_block()
  return fields, text:sub(body_start), problems
end

--- Reads the Markdown file `path` and parses it: (fields, body), each line
--- of front matter it could not read a notice naming the file and line;
--- nil (and a notice saying what `what` could not be read) when the file
--- cannot be.
function M.read(path, what)
  local text, err = uji.fs.read(path)
  if not text then
    uji.notify(what .. " " .. path .. " was not read: " .. tostring(err))
    return nil
  end
  local fields, body, problems = M.parse(text)
  for _, problem in ipairs(problems) do
    uji.notify(path .. ":" .. problem.line .. ": front matter line not understood: " .. problem.text)
  end
  return fields, body
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
