local work = os.getenv("UJI_CONFIG_DIR") .. "/../work"

local function sh(line)
  local p = uji.promise()
  local said = {}
  uji.job.start({ cmd = { "sh", "-c", line }, cwd = work,
    on_stdout = function(l) said[#said + 1] = l end,
    on_stderr = function(l) said[#said + 1] = l end,
    on_exit = function(code) p:resolve(code) end })
  local code = p:await()
  if code ~= 0 then
    error("`" .. line .. "` failed (" .. code .. "): " .. table.concat(said, "\n"), 2)
  end
end

local function make_pack(dir, module, body)
  uji.fs.write(dir .. "/lua/" .. module .. ".lua", body)
end

describe("uji.pack.add with a folder", function()
  it("puts its lua/ on the module path and runs its plugin files at once", function()
    local dir = work .. "/p1"
    make_pack(dir, "p1mod", "return { word = 'from p1' }")
    uji.fs.write(dir .. "/plugin/b.lua", "P1_ORDER = (P1_ORDER or '') .. 'b'")
    uji.fs.write(dir .. "/plugin/a.lua", "P1_ORDER = (P1_ORDER or '') .. 'a'")
    uji.pack.add({ { dir = dir } })
    expect.eq(require("p1mod").word, "from p1")
    expect.eq(P1_ORDER, "ab", "plugin files in name order")
    local roots = uji.pack.list()
    expect.contains(roots[#roots], "/p1")
  end)
  it("refuses what is not a list of packs, with the caller's line", function()
    local err = expect.fails(function() uji.pack.add("owner/repo") end, "takes a list of packs")
    expect.contains(err, "packs_spec.lua:")
    expect.fails(function() uji.pack.add({ { dir = work, colour = 1 } }) end, "unknown field colour")
    expect.fails(function() uji.pack.add({ "not a pack spec" }) end, "neither owner/repo")
    expect.fails(function() uji.pack.add({ 42 }) end, "must be a string or a table")
  end)
end)

describe("uji.pack.add with a repository", function()
  it("clones it into the data directory, pins it, and update brings the new commit", function()
    local repo = work .. "/repo"
    make_pack(repo, "gitmod", "return 'v1'")
    sh("cd repo && git init -q && git add -A && git -c user.email=t@t -c user.name=t commit -qm one")
    uji.pack.add({ repo })
    expect.eq(require("gitmod"), "v1")
    local site = os.getenv("UJI_DATA_DIR") .. "/site/repo"
    expect.eq(uji.fs.stat(site).type, "dir")
    local lock = uji.json.decode(uji.fs.read(os.getenv("UJI_CONFIG_DIR") .. "/uji-lock.json"))
    expect.eq(lock.repo.url, repo)
    expect.eq(#lock.repo.rev, 40)
    local first = lock.repo.rev
    make_pack(repo, "gitmod", "return 'v2'")
    sh("cd repo && git -c user.email=t@t -c user.name=t commit -qam two")
    local said = uji.pack.update()
    expect.eq(said[1], "pack: updated repo")
    local after = uji.json.decode(uji.fs.read(os.getenv("UJI_CONFIG_DIR") .. "/uji-lock.json"))
    expect.truthy(after.repo.rev ~= first, "the pin moved")
    expect.eq(uji.fs.read(site .. "/lua/gitmod.lua"), "return 'v2'")
    expect.eq(uji.pack.update()[1], "pack: repo already current")
  end)
end)
