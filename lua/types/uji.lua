---@meta
-- Type annotations of uji's Lua API for lua-language-server. Not loaded by
-- uji; add this directory to `workspace.library` in `.luarc.json`:
--
--   { "workspace.library": ["<path to uji>/lua/types"], "runtime.version": "LuaJIT" }
--
-- See docs/lua.md for the full description of every function.

---@class uji
---@field tool uji.tool
---@field wire uji.wire
---@field provider uji.provider
---@field model uji.model
---@field command uji.command
---@field keymap uji.keymap
---@field json uji.json
---@field markdown uji.markdown
---@field checkpoint uji.checkpoint
---@field session uji.session
---@field ui uji.ui
---@field version string The Lua plugin's version.
uji = {}

-- ---------------------------------------------------------------------------
-- uji.tool

---@alias uji.Policy "allow"|"ask"|"deny"

---@class uji.Image
---@field media_type "image/png"|"image/jpeg"|"image/gif"|"image/webp"
---@field data string Base64 (or a data: URL).
---@field name? string

---@class uji.ToolResultTable
---@field text string What the model reads.
---@field images? uji.Image[] Sent to the model with the text; bad ones are left out with a note.

---@alias uji.ToolResult string|uji.ToolResultTable

---@class uji.ToolContext
---@field call_id string The model's id of this call.
---@field cwd string The session's working directory.
---@field tool string The tool's name.
local ToolContext = {}

--- Finishes the call; only the first call counts.
---@param result? uji.ToolResult
function ToolContext.done(result) end

--- Shows a line under the running tool.
---@param line string
function ToolContext.progress(line) end

--- True once the user interrupted the call (or it ended).
---@return boolean
function ToolContext.cancelled() end

---@class uji.ToolDisplay
---@field verb? string Transcript verb followed by the subject, e.g. "Read".
---@field question? string Title of the approval question.

---@class uji.ToolSpec
---@field description? string What the tool does; the model reads it.
---@field parameters? table JSON Schema of the arguments.
---@field run fun(args: table, ctx: uji.ToolContext): (uji.ToolResult|fun()|nil) Returns a result, nothing (then call ctx.done later), or a function uji calls to stop the work (then call ctx.done later).
---@field subject? string|fun(args: table): string What policy rules match; default the tool's name.
---@field policy? uji.Policy Used when no policy rule matches and the rules give this tool no default; without it the top-level default applies, else "ask".
---@field display? uji.ToolDisplay
---@field path? boolean uji extension: the subject is a file path (path rules and confinement apply); default subject = args.path.

---@class uji.ToolRules
---@field allow? (string|{[1]: string, [2]: string})[]
---@field ask? (string|{[1]: string, [2]: string})[]
---@field deny? (string|{[1]: string, [2]: string})[]
---@field default? uji.Policy

---@class uji.tool
uji.tool = {}

--- Registers a tool the model can call, or replaces the tool with the same name.
---@param name string
---@param spec uji.ToolSpec
function uji.tool.add(name, spec) end

--- Removes a tool; true if it existed.
---@param name string
---@return boolean
function uji.tool.remove(name) end

--- The names of every registered tool, sorted.
---@return string[]
function uji.tool.list() end

--- Turns tools off: the model still sees them and every call is denied.
---@param names string|string[]
function uji.tool.disable(names) end

--- Turns tools back on.
---@param names string|string[]
function uji.tool.enable(names) end

--- Sets policy rules; returns the problems found (also shown as notices).
---@param rules table<string, uji.ToolRules|uji.Policy> Tool name -> rules; `default` -> a policy for every tool.
---@param options? {name?: string} A named rule set, kept apart from the others.
---@return string[] problems
function uji.tool.policy(rules, options) end

--- Confines the file tools to the working directory and the roots (true), lifts it (false), or reads it (nil).
---@param enabled? boolean
---@return boolean confined
function uji.tool.confine(enabled) end

--- Replaces the extra directories file tools may reach (nil: only reads them).
---@param paths? string[]
---@return string[] roots
function uji.tool.roots(paths) end

--- Replaces the directories only read_file may reach besides the working directory and the roots (nil: only reads them).
---@param paths? string[]
---@return string[] read_roots
function uji.tool.read_roots(paths) end

-- ---------------------------------------------------------------------------
-- events

---@class uji.HookOptions
---@field priority? integer Lower runs first (default 50).
---@field name? string Same name on the same event replaces.

--- Adds an event handler; returns its name.
---@param event "before_tool"|"after_tool"|"before_turn"|"before_stop"|string
---@param handler fun(payload: table): any
---@param options? uji.HookOptions
---@return string name
function uji.on(event, handler, options) end

--- Removes a named handler; true if it existed.
---@param event string
---@param name string
---@return boolean
function uji.off(event, name) end

--- Runs every handler of `event`; returns their answers.
---@param event string
---@param payload? table
---@return any[] answers
function uji.emit(event, payload) end

-- ---------------------------------------------------------------------------
-- notices, log, timers

--- Shows a notice to the user.
---@param text any
function uji.notify(text) end

--- Writes to uji's log.
---@param level "debug"|"info"|"warn"|"error"
---@param message string
function uji.log(level, message) end

--- Runs `fn` after the code running now.
---@param fn fun()
function uji.schedule(fn) end

--- Runs `fn` after `seconds`; returns a function that cancels it (true if it had not run).
---@param seconds number
---@param fn fun()
---@return fun(): boolean cancel
function uji.defer(seconds, fn) end

-- ---------------------------------------------------------------------------
-- commands and keys

---@class uji.command
uji.command = {}

--- Adds the slash command /name; the handler gets the text after the name.
---@param name string
---@param handler fun(args: string): string?|{handler: fun(args: string): string?, desc?: string}
function uji.command.add(name, handler) end

---@alias uji.Mode "normal"|"suggest"|"select"|"confirm"|"insert"

---@class uji.KeyBinding
---@field mode "normal"|"suggest"|"select"|"confirm"
---@field key string The canonical key, e.g. "<C-x>", "Y", "<S-Tab>".
---@field binding string|{command: string}|fun() An action name, a command or a function.
---@field source "default"|"user" From the default keymap, or added.

---@class uji.KeyAction
---@field name string e.g. "submit"
---@field description string What it does.

---@class uji.keymap
uji.keymap = {}

--- Binds `key` in `mode` to an action name, {command = "name"} or a function
--- ("nothing" unbinds the key). "insert" is the same mode as "normal".
---@param mode uji.Mode
---@param key string One character ("y") or "<MODIFIERS-KEY>", e.g. "<C-b>", "<A-CR>", "<S-Tab>".
---@param binding string|{command: string}|fun()
function uji.keymap.add(mode, key, binding) end

--- Removes the binding added for `key` in `mode`; the default applies again.
---@param mode uji.Mode
---@param key string
function uji.keymap.remove(mode, key) end

--- The keymap in force (defaults and added bindings), sorted by mode, then key.
---@return uji.KeyBinding[]
function uji.keymap.list() end

--- Every action a key can be bound to.
---@return uji.KeyAction[]
function uji.keymap.actions() end

-- ---------------------------------------------------------------------------
-- Background jobs

---@class uji.Job
---@field id integer the number in "job N"
---@field command string
---@field state "running"|"exited"|"killed"|"timed_out"|"stopped"
---@field code? integer exit code, when `state` is "exited"
---@field signal? integer when `state` is "killed"
---@field by? "user"|"model"|"uji" who stopped it, when `state` is "stopped"
---@field after_secs? integer its lifetime, when `state` is "timed_out"
---@field started_ms integer
---@field elapsed_ms integer
---@field last_line string
---@field lines integer lines of output so far
---@field log? string the file with its full output, once it is long

---@class uji.JobSettings
---@field wake? boolean a finished job's report starts a turn when idle (default: on in the TUI, off in `uji run` and other frontends)
---@field max? integer jobs running at once (default 8, at most 64)
---@field limit? integer default lifetime in seconds (default 1800, at most 7200)

--- Background jobs (docs/jobs.md), served by the tools plugin.
---@class uji.jobs
uji.jobs = {}

--- Every job kept, running first.
---@return uji.Job[]
function uji.jobs.list() end

--- Stops a job and its whole process tree; no report reaches the model.
---@param id integer
---@return uji.Job
function uji.jobs.stop(id) end

--- Changes what is given; returns the settings in force.
---@param settings uji.JobSettings
---@return uji.JobSettings
function uji.jobs.configure(settings) end

-- ---------------------------------------------------------------------------
-- JSON

---@class uji.json
---@field null lightuserdata JSON null.
uji.json = {}

--- Encodes a value as JSON (an empty table is {}).
---@param value any
---@return string
function uji.json.encode(value) end

--- Decodes JSON text.
---@param text string
---@return any
function uji.json.decode(text) end

--- Marks `t` (or a new table) as a JSON array and returns it.
---@generic T: table
---@param t? T
---@return T
function uji.json.array(t) end

-- ---------------------------------------------------------------------------
-- Markdown

---@class uji.markdown
uji.markdown = {}

---@class uji.FrontMatterProblem
---@field line integer The file's line (the opening `---` is line 1).
---@field text string The line, or what is wrong.

---@class uji.FrontMatter
---@field fields table<string, string|string[]> Plain or quoted text, inline `[a, b]` and `- item` lists, `>`/`|` blocks.
---@field body string Everything after the closing `---` (the whole text when there is no front matter).
---@field problems uji.FrontMatterProblem[] Lines not understood (left out; the rest is read).

--- Splits a Markdown file's text into its front matter and body (the
--- small part of YAML command, skill and agent files use).
---@param text string
---@return uji.FrontMatter
function uji.markdown.front_matter(text) end

---@class uji.MarkdownFile: uji.FrontMatter
---@field path string The file's path.
---@field error? string Why it could not be read (a folder, over 16 MiB, no permission); then it has no fields, body or problems.

--- Every file the glob `pattern` finds (as `uji.fs.glob`; in path order),
--- read and split as `front_matter` splits one: a folder of command or
--- skill files in one call. A folder that does not exist gives `{}`.
---@param pattern string
---@return uji.MarkdownFile[]
function uji.markdown.files(pattern) end

-- ---------------------------------------------------------------------------
-- wires, providers, models

---@class uji.WireMessage
---@field role "user"|"assistant"|"tool"
---@field text? string
---@field content? string
---@field images? uji.Image[]
---@field tool_calls? {id: string, name: string, arguments: string}[]
---@field tool_call_id? string
---@field name? string

---@class uji.WireRequest
---@field model string
---@field system string
---@field messages uji.WireMessage[]
---@field tools {name: string, description: string, parameters: table}[]
---@field effort? string
---@field max_output? integer
---@field cache? "off"|"short"|"long"
---@field session? string
---@field provider {id: string, base_url: string}
---@field auth {key?: string}
---@field idle_timeout? integer

---@class uji.WireAnswer
---@field text? string
---@field reasoning? string
---@field tool_calls? {id: string, name: string, arguments: string|table}[]
---@field usage? {input?: integer, output?: integer, cache_read?: integer, cache_write?: integer}
---@field replay? any

---@class uji.WireFailure
---@field kind "http"|"auth"|"provider"
---@field status? integer
---@field message? string
---@field retry_after? number

---@class uji.WireReply
local WireReply = {}
---@param delta string
function WireReply.text(delta) end
---@param delta string
function WireReply.reasoning(delta) end
---@param answer? string|uji.WireAnswer
function WireReply.done(answer) end
---@param failure string|uji.WireFailure
function WireReply.fail(failure) end

---@class uji.wire
uji.wire = {}

--- Adds a model API written in Lua.
---@param name string
---@param spec {stream: fun(request: uji.WireRequest, reply: uji.WireReply): fun()?}
function uji.wire.add(name, spec) end

--- Removes a wire; true if it existed.
---@param name string
---@return boolean
function uji.wire.remove(name) end

--- The names of every wire.
---@return string[]
function uji.wire.list() end

---@class uji.ProviderSpec
---@field id string
---@field name? string
---@field wire? string required for a new provider; left out, a shipped one keeps its own
---@field base_url? string
---@field key_env? string
---@field key_env_alt? string[]
---@field base_url_env? string
---@field default_model? string
---@field idle_timeout? integer
---@field models? (string|{id: string, context_window?: integer, max_output?: integer, images?: boolean, reasoning?: boolean})[]

---@class uji.provider
uji.provider = {}

--- Adds a provider.
---@param spec uji.ProviderSpec
function uji.provider.add(spec) end

--- The providers.
---@return table[]
function uji.provider.list() end

---@class uji.model
uji.model = {}

--- Selects a model: "provider/model" or {provider, model}.
---@param spec string|{provider: string, model: string}
---@return {provider: string, model: string}
function uji.model.use(spec) end

--- The selected model, or nil.
---@return {provider: string, model: string}|nil
function uji.model.current() end

-- ---------------------------------------------------------------------------
-- session

---@class uji.ui
uji.ui = {}

---@class uji.UiSettings
---@field notify? "bell"|"osc9"|"osc777"|"off" How to call the user back while the terminal is not focused.
---@field mouse? boolean Whether the screen reads the mouse wheel (default true); false leaves a plain drag to the terminal's selection.
---@field vim? boolean Vi keys in the input (default false).

--- How the screen behaves.
---@param settings uji.UiSettings
function uji.ui.configure(settings) end

---@class uji.web
uji.web = {}

---@class uji.WebSearchSettings
---@field backend "searxng"|"brave"|"tavily"|"exa" The search API web_search uses; its key comes from BRAVE_API_KEY, TAVILY_API_KEY, EXA_API_KEY or `uji login NAME`.
---@field url? string The API's base URL instead of the backend's own (required for searxng: your instance). The key goes only to this URL's origin.

--- The backend of the web_search tool, which is not offered until one is set (docs/web.md).
---@param settings uji.WebSearchSettings
function uji.web.search(settings) end

---@class uji.WebFetchSettings
---@field timeout? integer|string How long web_fetch waits for a whole page: seconds or "30s", "2m" (default 30 seconds).

--- How web_fetch behaves.
---@param settings uji.WebFetchSettings
function uji.web.fetch(settings) end

---@class uji.Checkpoint
---@field id integer
---@field turn integer
---@field at_ms integer Milliseconds since the Unix epoch.
---@field reason string Why it was taken (the call about to run, `turn end`...).
---@field changed integer Files changed since the checkpoint before.
---@field stored integer Bytes of new content kept.
---@field skipped integer Files over a limit, not kept.

---@class uji.RestoredFile
---@field path string
---@field action "restore"|"recreate"|"remove"|"cannot"
---@field why? string Why it cannot be restored.
---@field conflict? string Why it counts as changed since.
---@field done boolean Whether the restore changed it.
---@field failed? string Why changing it failed.

---@class uji.Restored
---@field title string
---@field files uji.RestoredFile[]
---@field applied boolean False for a dry run.

--- What sessions may spend before uji stops the turn (docs/budgets.md).
---@param limits { turns?: integer, tokens?: integer, cost?: number, tool_calls?: integer, wall?: integer|string }
function uji.budget(limits) end

---@class uji.checkpoint
uji.checkpoint = {}

--- Limits of the checkpoints of sessions that start after it.
---@param settings { enabled?: boolean, max_file_mb?: integer, max_session_mb?: integer, max_files?: integer }
function uji.checkpoint.configure(settings) end

--- The session's checkpoints, oldest first (docs/checkpoints.md).
---@return uji.Checkpoint[]
function uji.checkpoint.list() end

--- What /undo and /redo do: exactly one of undo, redo, turn, rewind.
---@param what { undo?: boolean, redo?: boolean, turn?: integer, rewind?: integer, dry_run?: boolean, overwrite?: boolean }
---@return uji.Restored
function uji.checkpoint.restore(what) end

---@class uji.session
uji.session = {}

--- Sends a message as if the user typed it (queued after the running turn).
---@param text string
function uji.session.submit(text) end

---@class uji.SessionInfo
---@field id string
---@field title string
---@field cwd string
---@field model string "provider/model"
---@field effort? string
---@field messages integer
---@field usage {input: integer, output: integer, cache_read: integer, cache_write: integer}

--- Facts about the current session.
---@return uji.SessionInfo
function uji.session.info() end

--- Renames the current session.
---@param title string
function uji.session.set_title(title) end

---@alias uji.ApprovalMode "ask"|"accept_edits"|"plan"

--- The approval mode in force (Shift+Tab cycles it in the screen).
---@return uji.ApprovalMode
function uji.session.mode() end

--- Switches the approval mode, as Shift+Tab does; returns the mode.
---@param mode uji.ApprovalMode
---@return uji.ApprovalMode
function uji.session.set_mode(mode) end

--- Summarises the current session's history to free context.
function uji.session.compact() end

--- Stops the running turn, as the user's interrupt does.
function uji.session.interrupt() end

uji.status = {}

--- Shows `text` in the screen's status line under `name` (replacing an
--- item of the same name), e.g. plan mode's "PLAN".
---@param name string
---@param text string
function uji.status.add(name, text) end

--- Removes the status-line item `name`.
---@param name string
function uji.status.remove(name) end

--- Quits uji.
function uji.quit() end

-- ---------------------------------------------------------------------------
-- shipped modules

---@class uji.planmode
---@field prompt string The paragraph added to the system prompt.
local planmode = {}
---@param opts? {command?: string, key?: string|false, mode?: string, tools?: string[], prompt?: string, priority?: integer}
---@return uji.planmode
function planmode.setup(opts) end
function planmode.enable() end
function planmode.disable() end
---@return boolean
function planmode.toggle() end
---@return boolean
function planmode.active() end


---@class uji.task_handle
---@field cancel fun(self: uji.task_handle): boolean
---@field wait fun(self: uji.task_handle): ...

---@class uji.task
uji.task = {}
---Runs fn(...) in a new task, started when the current code waits or ends.
---@param fn fun(...): ...
---@return uji.task_handle
function uji.task.spawn(fn, ...) end
---The first function to end wins: its position and results.
---@return integer index, ...
function uji.task.race(...) end
---true and fn's results, or false when `seconds` passed first.
---@param seconds number|nil
---@param fn fun(): ...
---@return boolean ok, ...
function uji.task.timeout(seconds, fn) end
---@return uji.task_handle|nil
function uji.task.current() end
---@param handler fun(message: string)
function uji.task.on_error(handler) end
---Waits (inside a task); 0 yields, math.huge sleeps until cancelled.
---@param seconds number
function uji.sleep(seconds) end

---@class uji.promise
---@field settled boolean
---@field resolve fun(self: uji.promise, ...): boolean
---@field await fun(self: uji.promise): ...
---@return uji.promise
function uji.promise() end

---@class uji.job_handle
---@field id integer
---@field send fun(text: string): boolean|nil, string?
---@field close fun(): boolean|nil, string?
---@field stop fun(): boolean|nil, string?

---@class uji.job_options
---@field cmd? string|string[]
---@field args? string[]
---@field cwd? string
---@field env? table<string, string>
---@field timeout? number
---@field on_stdout? fun(line: string)
---@field on_stderr? fun(line: string)
---@field on_exit? fun(code: integer, reason: "timeout"|"stopped"|nil)

---@class uji.job
uji.job = {}
---Starts a process (sandboxed, without provider keys).
---@param cmd string|string[]|uji.job_options
---@param opts? uji.job_options
---@return uji.job_handle
function uji.job.start(cmd, opts) end

---@class uji.fs
uji.fs = {}
---@param path string
---@return string|nil text, string? err
function uji.fs.read(path, on_done) end
---@param path string
---@param opts? {offset?: integer, limit?: integer, max_line?: integer}
---@return {lines: string[], cut: table<integer, boolean>, total: integer}|nil, string?
function uji.fs.lines(path, opts, on_done) end
---@param path string
---@param text string
---@return {created: boolean}|nil, string?
function uji.fs.write(path, text, on_done) end
---@param path string
---@return {name: string, type: "file"|"dir"|"link"|"other"}[]|nil, string?
function uji.fs.list(path, on_done) end
---@param pattern string
---@return string[]|nil, string?
function uji.fs.glob(pattern, on_done) end
---@param path string
---@return {type: string, size: integer, modified: integer?}|nil, string?
function uji.fs.stat(path, on_done) end
---@param path string
---@return boolean
function uji.fs.exists(path) end
---@param base string
---@return string
function uji.fs.join(base, ...) end

---@class uji.data
uji.data = {}
---@param name string
---@return string|nil text, string? err
function uji.data.read(name, on_done) end
---@param name string
---@param text string
---@return boolean|nil, string?
function uji.data.write(name, text, on_done) end

---The files of a config folder, then (with project) the nearest .uji/<folder>.
---@param folder string
---@param opts? {project?: boolean}
---@return {name: string, path: string, text: string, project: boolean}[]|nil, string?
function uji.config.files(folder, opts, on_done) end

---@class uji.context
uji.context = {}
---@param name string
---@param provide fun(): string|{text: string, at?: "turn"}|nil
---@param opts? {priority?: number}
---@return {remove: fun(): boolean}
function uji.context.add(name, provide, opts) end
---@param name string
---@return boolean
function uji.context.remove(name) end
---@return string[]
function uji.context.list() end

---@class uji.os
---@field platform "linux"|"macos"|"windows"|"other"
---@field executable string|nil
---@field argv string[]
uji.os = {}
---@return number
function uji.os.clock() end
---@return integer
function uji.os.now() end
---@param name string
---@return string|nil
function uji.os.env(name) end
---@return string|nil
function uji.os.home() end

--- The working directory.
---@return string|nil
function uji.os.cwd() end

---@class uji.api
uji.api = {}
function uji.api.openai() end
function uji.api.anthropic() end
function uji.api.gemini() end
function uji.api.responses() end

---Describes a tool uji does not run.
---@param name string
---@param opts {label?: string, subject?: string|fun(args: table): string, question?: string, preview?: fun(args: table): table}
---@return {remove: fun(): boolean}
function uji.tool.display(name, opts) end

---@class uji.http_response
---@field status integer
---@field headers table<string, string>
---@field body string
---@field url string

---@class uji.http
uji.http = {}
---A request through uji's core; waits (in a task) or calls on_done.
---@param opts {url: string, method?: string, headers?: table<string, string>, body?: string, timeout?: number, idle?: number, on_line?: fun(line: string): boolean?, stream?: fun(chunk: string)}
---@param on_done? fun(response: uji.http_response|nil, err: string|nil)
---@return uji.http_response|nil response, string? err
function uji.http.request(opts, on_done) end

---@class uji.pack
uji.pack = {}
---@param specs (string|{dir?: string, url?: string, name?: string, commit?: string, tag?: string, branch?: string})[]
function uji.pack.add(specs) end
---@return string[]
function uji.pack.list() end
---@return string[]
function uji.pack.update() end

---@return {type: string, text: string, name?: string}[]
function uji.session.messages() end
---@return {input: integer, output: integer, cache_read: integer, cache_write: integer, total: integer, last: table, requests: integer}
function uji.session.usage() end
---@return {used: integer, window: integer?}
function uji.session.context() end
---@return string[]
function uji.session.queue() end
---@return "working"|"idle"
function uji.session.state() end
---@return number|nil
function uji.session.elapsed() end
---@param name string
---@return boolean
function uji.command.remove(name) end
---@return string[]
function uji.command.list() end
--- The names uji itself answers as commands (`undo`, `model`, `models`,
--- …), sorted: those command files may not take.
---@return string[]
function uji.command.builtins() end

---Loads init.lua, plugins and packs again (the screen keeps the
---conversation and the draft); refused while a turn runs.
function uji.reload() end

---@param items_or_opts any[]|{title?: string, items: any[], current?: any, label?: fun(item: any): string}
---@param opts? {title?: string, current?: any, label?: fun(item: any): string}
---@return any|nil choice, string? err
function uji.ui.select(items_or_opts, opts, on_done) end
---@param opts {title?: string, value?: string, hidden?: boolean}
---@return string|nil text, string? err
function uji.ui.prompt(opts, on_done) end
---@param opts {title?: string, body?: string, timeout?: number}
---@return boolean|nil yes, string? err
function uji.ui.confirm(opts, on_done) end

---@class uji.base64
uji.base64 = {}
---@param data string
---@param opts? {url?: boolean, pad?: boolean}
---@return string
function uji.base64.encode(data, opts) end
---@param text string
---@param opts? {url?: boolean, pad?: boolean}
---@return string
function uji.base64.decode(text, opts) end
---@param data string
---@return string digest 32 raw bytes
function uji.sha256(data) end
---@param n integer
---@return string bytes
function uji.random(n) end
---@param target string
function uji.ui.open(target) end
---@param parent? table
---@return table class
function uji.class(parent) end
---@param err any
---@return string
function uji.message(err) end


uji.config = {}

--- The config directory (where init.lua is), or nil when there is none.
---@type string|nil
uji.config.dir = nil

---Sets a configuration value core and plugins read (e.g. `frontend`, the
---interactive frontend `uji` and `uji resume` open).
---@param key string
---@param value any
function uji.config.set(key, value) end

---@class uji.plugins
uji.plugins = {}

---Lets native plugins replace these tools. Without it, a plugin that
---registers a tool another plugin provides is refused (`uji plugins` shows
---the refusal); with it, that registration replaces the tool. Returns the
---tools a plugin's refused registration replaced now.
---@param names string|string[]
---@return string[]
function uji.plugins.allow_replace(names) end

return uji
