--- The public uji's name for uji's defaults: every init.lua written for it
--- starts with require("uji.builtin.defaults"). See uji/defaults.lua.
return require("uji.defaults")
