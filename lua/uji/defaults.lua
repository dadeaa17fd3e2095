--- uji's default configuration. It runs when there is no init.lua; an
--- init.lua that wants these defaults too starts with
---
---   require("uji.defaults")
---
--- To change one part, copy what you want from here into init.lua instead.

-- Never delete trees without a word from you, whatever else the policy says.
uji.tool.policy({
  run_command = {
    deny = { "/^rm\\s+-rf/" },
  },
}, { name = "defaults" })

-- /plan and Ctrl+B switch read-only planning on and off.
require("uji.planmode").setup()

-- Alt+E asks for the reasoning effort (/effort).
uji.keymap.add("normal", "<A-e>", { command = "effort" })
