local frontmatter = require("uji.frontmatter")
local commands = require("uji.commands")
local skills = require("uji.skills")

describe("uji.frontmatter", function()
  it("reads plain, quoted, list and block fields and gives the body", function()
    local fields, body, problems = frontmatter.parse(table.concat({
      "---",
      "description: Review the code",
      'model: "anthropic/claude-sonnet-4"',
      "argument-hint: [file] [focus]",
      "allowed-tools: [Read, \"Bash(git diff:*)\"]",
      "tags:",
      "  - one",
      "  - 'two'",
      "summary: >",
      "  folded",
      "  text",
      "# a comment",
      "---",
      "The body.",
      "Second line.",
    }, "\n"))
    expect.eq(fields.description, "Review the code")
    expect.eq(fields.model, "anthropic/claude-sonnet-4")
    expect.eq(frontmatter.text(fields["argument-hint"]), "[file] [focus]")
    expect.eq(fields["allowed-tools"][2], "Bash(git diff:*)")
    expect.eq(fields.tags[2], "two")
    expect.eq(fields.summary, "folded text")
    expect.eq(body, "The body.\nSecond line.")
    expect.eq(#problems, 0)
  end)
  it("treats a file without front matter as all body and reports lines it cannot read", function()
    local fields, body = frontmatter.parse("Just a prompt.")
    expect.eq(next(fields), nil)
    expect.eq(body, "Just a prompt.")
    local _, _, problems = frontmatter.parse("---\nthis is not a field\nok: yes\n---\nbody")
    expect.eq(problems[1].line, 2)
    local _, _, unclosed = frontmatter.parse("---\nok: yes\n")
    expect.contains(unclosed[1].text, "never closed")
  end)
  it("reads every file a glob finds in one call, with their problems and errors", function()
    local dir = os.getenv("UJI_CONFIG_DIR") .. "/../work/markdown"
    uji.fs.write(dir .. "/b.md", "---\ndescription: Second\nnot a field\n---\nB body")
    uji.fs.write(dir .. "/a.md", "---\ndescription: First\ntools: [Read, Edit]\n---\nA body")
    uji.fs.write(dir .. "/sub/c.md", "No front matter.")
    local docs = uji.markdown.files(dir .. "/**/*.md")
    expect.eq(#docs, 3)
    expect.contains(docs[1].path, "markdown/a.md")
    expect.eq(docs[1].fields.description, "First")
    expect.eq(docs[1].fields.tools[2], "Edit")
    expect.eq(docs[1].body, "A body")
    expect.eq(#docs[1].problems, 0)
    expect.eq(docs[2].problems[1].line, 3)
    expect.eq(docs[2].problems[1].text, "not a field")
    expect.eq(docs[3].body, "No front matter.")
    expect.eq(#uji.markdown.files(dir .. "/none/*.md"), 0)
    expect.fails(function() uji.markdown.files(42) end, "uji.markdown.files")
    expect.fails(function() uji.markdown.front_matter(nil) end, "needs the file's text")
  end)
  it("splits a comma list outside parentheses", function()
    local list = frontmatter.list("Bash(git add:*, git status:*), Read ,Write")
    expect.eq(#list, 3)
    expect.eq(list[1], "Bash(git add:*, git status:*)")
    expect.eq(list[3], "Write")
  end)
end)

describe("uji.commands", function()
  it("fills $ARGUMENTS and $1..$9, quotes grouping words", function()
    expect.eq(commands.expand("Fix $1 in $2: $ARGUMENTS", 'bug "src/a b.rs"'),
      'Fix bug in src/a b.rs: bug "src/a b.rs"')
    expect.eq(commands.expand("Use $3.", "a b"), "Use .")
  end)
  it("appends the arguments to a body that takes none", function()
    expect.eq(commands.expand("Summarise the diff.\n", "briefly"), "Summarise the diff.\n\nbriefly")
    expect.eq(commands.expand("Summarise the diff.", ""), "Summarise the diff.")
  end)
  it("maps allowed-tools to policy rules in uji's tool names", function()
    local rules, problems = commands.allowed_rules("Bash(git add:*), Read, run_command(make test), !!")
    expect.eq(rules.run_command.allow[1], "git add *")
    expect.eq(rules.run_command.allow[2], "make test")
    expect.eq(rules.read_file.allow[1], "*")
    expect.eq(problems[1], "!!")
  end)
end)

describe("uji.commands' names", function()
  it("keeps clear of uji's own commands and of those already added", function()
    local builtins = uji.command.builtins()
    local listed = {}
    for _, name in ipairs(builtins) do
      listed[name] = true
    end
    expect.truthy(listed.undo and listed.model and listed.models and listed.init)
    uji.command.add("spec-taken", function() end)
    local taken = commands.taken()
    expect.eq(taken.undo, "one of uji's own commands")
    expect.eq(taken.models, "one of uji's own commands")
    expect.eq(taken["spec-taken"], "a command uji already has")
    expect.eq(taken.review, nil)
  end)
end)

describe("uji.skills", function()
  it("lists each skill's name, description and place for the model", function()
    local text = skills.prompt({
      { name = "pdf", description = "Fill <forms> & read PDFs", path = "/s/pdf/SKILL.md" },
    })
    expect.contains(text, "<available_skills>")
    expect.contains(text,
      "<skill><name>pdf</name><description>Fill &lt;forms&gt; &amp; read PDFs</description>"
        .. "<location>/s/pdf/SKILL.md</location></skill>")
  end)
end)
