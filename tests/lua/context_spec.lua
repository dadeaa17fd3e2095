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
