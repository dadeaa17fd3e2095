--- Plan mode: read, explore and propose, without editing.
---
--- On: edit_file and write_file are switched off (uji denies every call to
--- them) and the system prompt gains a paragraph telling the model it is
--- planning. Off: they are switched back on.
---
--- local planmode = require("uji.planmode")
--- planmode.setup({ key = "<C-b>", command = "plan" })
--- planmode.toggle()   -- also: planmode.enable(), planmode.disable(), planmode.active()

local M = {}

local state = {
  active = false,
  tools = { "edit_file", "write_file" },
}

M.prompt = table.concat({
  "You are in plan mode. Do not change any file: edit_file and write_file are switched off.",
  "Read the code, run read-only commands to explore, and think the task through.",
  "Then propose a plan: the files to change, what to change in each and why, and how to check the result.",
  "Wait for the user to leave plan mode before making any edit.",
}, " ")

--- True while plan mode is on.
function M.active()
  return state.active
end

--- Switches plan mode on.
function M.enable()
  if state.active then
    return
  end
  state.active = true
  uji.tool.disable(state.tools)
  uji.status.add("plan", "PLAN")
  uji.notify("plan mode is on: " .. table.concat(state.tools, " and ") .. " are off until you leave it")
  uji.emit("planmode_changed", { active = true })
end

--- Switches plan mode off.
function M.disable()
  if not state.active then
    return
  end
  state.active = false
  uji.tool.enable(state.tools)
  uji.status.remove("plan")
  uji.notify("plan mode is off: " .. table.concat(state.tools, " and ") .. " are back on")
  uji.emit("planmode_changed", { active = false })
end

--- Switches plan mode on or off; returns the new state.
function M.toggle()
  if state.active then
    M.disable()
  else
    M.enable()
  end
  return state.active
end

--- Registers /plan, the key and the system prompt paragraph.
--- opts: command (default "plan"), key (default "<C-b>", false for none),
--- mode (default "normal"), tools (default { "edit_file", "write_file" }),
--- prompt (replaces M.prompt), priority (of the before_turn handler, default 10).
function M.setup(opts)
  opts = opts or {}
  if opts.tools then
    state.tools = opts.tools
  end
  if opts.prompt then
    M.prompt = opts.prompt
  end
  local command = opts.command or "plan"
  uji.command.add(command, {
    desc = "Switch plan mode on or off (read and propose, no edits)",
    handler = function()
      local on = M.toggle()
      return on and "plan mode on" or "plan mode off"
    end,
  })
  if opts.key ~= false then
    uji.keymap.add(opts.mode or "normal", opts.key or "<C-b>", { command = command })
  end
  uji.on("before_turn", function(event)
    if state.active then
      return (event.system or "") .. "\n\n" .. M.prompt
    end
  end, { name = "planmode", priority = opts.priority or 10 })
  return M
end

return M
