--- Plan mode: read, explore and propose, without editing.
---
--- Plan mode is one of uji's approval modes (ask, accept edits, plan), which
--- core owns: Shift+Tab cycles them in the screen, and this module switches
--- to and from plan with /plan and Ctrl+B. In plan mode uji denies every
--- call to a tool that changes files (edit_file, write_file); this module
--- adds the paragraph that tells the model it is planning.
---
--- local planmode = require("uji.planmode")
--- planmode.setup({ key = "<C-b>", command = "plan" })
--- planmode.toggle()   -- also: planmode.enable(), planmode.disable(), planmode.active()

local M = {}

M.prompt = table.concat({
  "You are in plan mode. Do not change any file: uji denies edit_file and write_file until the user leaves plan mode.",
  "Read the code, run read-only commands to explore, and think the task through.",
  "Then propose a plan: the files to change, what to change in each and why, and how to check the result.",
  "Wait for the user to leave plan mode before making any edit.",
}, " ")

--- True while plan mode is on (false while init.lua loads: no session yet).
function M.active()
  local ok, mode = pcall(uji.session.mode)
  return ok and mode == "plan"
end

--- Switches plan mode on.
function M.enable()
  if M.active() then
    return
  end
  uji.session.set_mode("plan")
  uji.notify("plan mode is on: nothing changes files until you leave it (Shift+Tab or /plan)")
  uji.emit("planmode_changed", { active = true })
end

--- Switches plan mode off (back to asking).
function M.disable()
  if not M.active() then
    return
  end
  uji.session.set_mode("ask")
  uji.notify("plan mode is off: edits and writes ask again")
  uji.emit("planmode_changed", { active = false })
end

--- Switches plan mode on or off; returns the new state.
function M.toggle()
  if M.active() then
    M.disable()
  else
    M.enable()
  end
  return M.active()
end

local OPTIONS = { command = true, key = true, mode = true, prompt = true, priority = true }

--- Registers /plan, the key and the system prompt paragraph.
--- opts: command (default "plan"), key (default "<C-b>", false for none),
--- mode (default "normal"), prompt (replaces M.prompt), priority (of the
--- before_turn handler, default 10).
function M.setup(opts)
  opts = opts or {}
  for key in pairs(opts) do
    if key == "tools" then
      error("uji.planmode.setup: tools is no longer an option: plan mode denies every tool that "
        .. "changes files (edit_file, write_file); switch others off with uji.tool.disable", 2)
    elseif not OPTIONS[key] then
      error("uji.planmode.setup: unknown option " .. tostring(key)
        .. " (options: command, key, mode, prompt, priority)", 2)
    end
  end
  if opts.prompt then
    M.prompt = opts.prompt
  end
  local command = opts.command or "plan"
  uji.command.add(command, {
    desc = "Switch plan mode on or off (read and propose, no edits)",
    handler = function()
      -- The notice enable() or disable() gives is the one word on it.
      M.toggle()
    end,
  })
  if opts.key ~= false then
    uji.keymap.add(opts.mode or "normal", opts.key or "<C-b>", { command = command })
  end
  uji.on("before_turn", function(event)
    if M.active() then
      return (event.system or "") .. "\n\n" .. M.prompt
    end
  end, { name = "planmode", priority = opts.priority or 10 })
  return M
end

return M
