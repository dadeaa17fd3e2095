--- uji's default configuration. It runs when there is no init.lua; an
--- init.lua that wants these defaults too starts with
---
---   require("uji.defaults")
---
--- To change one part, copy what you want from here into init.lua instead.

-- Never delete trees without a word from you, whatever else the policy says.
-- Decided on the parsed words: `rm` with -r/-R/--recursive and -f/--force
-- in any spelling or order, `find … -delete` and `find … -exec rm` all read
-- as `rm -rf PATHS` to deny rules (docs/policy.md).
-- Plain commands that only read files read_file may read unasked (cat, ls,
-- head, tail, wc, grep, rg, find without actions, git status, diff, log,
-- show and branch listing) run without asking, inside the sandbox
-- (docs/policy.md, "Read-only commands").
uji.tool.policy({
  run_command = {
    read_only = "allow",
    deny = {
      { "rm -rf *", "recursive forced deletion (rm -rf, find -delete, find -exec rm) is "
        .. "refused by uji's defaults; ask the user to run it, or delete single files" },
    },
  },
}, { name = "defaults" })

-- /plan and Ctrl+B switch read-only planning on and off.
require("uji.planmode").setup()

-- Skills (SKILL.md folders) listed to the model, /skills and /skill:NAME
-- (docs/context.md).
require("uji.skills").setup()

-- Alt+E asks for the reasoning effort (/effort).
uji.keymap.add("normal", "<A-e>", { command = "effort" })

-- Agents for the subagent tool from Markdown files: ~/.claude/agents,
-- <config>/agents, the project's .uji/agents and .claude/agents; /agents
-- lists them (docs/agents.md).
require("uji.agents").setup()

-- Slash commands from Markdown files: <config>/commands, the project's
-- .claude/commands and .uji/commands (docs/context.md). Set up last: a file
-- may not take the name of a command uji already has (/undo, /plan,
-- /skills, ...).
require("uji.commands").setup()
