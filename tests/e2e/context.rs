//! Context a user points at (issue 30, docs/context.md): `@path` mentions
//! and instruction files, through the real binary against the fake model,
//! asserting on the request uji sent.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Stdio;

use serde_json::Value;
use uji_fake_model::{FakeModel, RecordedRequest};
use uji_tests::chat::{answer, uji_with_model};
use uji_tests::{Sandbox, text};

const MODEL: &str = "openrouter/qwen/qwen3-coder";

/// `uji run PROMPT` in the sandbox's work directory; its stderr.
fn run(sandbox: &Sandbox, model: &FakeModel, prompt: &str) -> String {
    model.push(answer("done"));
    let output = uji_with_model(sandbox, model, "sk-context-test")
        .args(["run", "--model", MODEL, prompt])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let (_, stderr) = text(&output);
    assert!(output.status.success(), "uji run failed: {stderr}");
    stderr
}

fn contents(request: &RecordedRequest) -> Vec<String> {
    request.json["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| match &m["content"] {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        })
        .collect()
}

#[test]
fn mentioned_files_ranges_and_directories_arrive_after_the_users_message() {
    let sandbox = Sandbox::new();
    let work = sandbox.work();
    std::fs::write(work.join("notes.txt"), "first note\nsecond note\n").unwrap();
    std::fs::create_dir_all(work.join("src/bin")).unwrap();
    let lines: String = (1..=100).map(|i| format!("line number {i}\n")).collect();
    std::fs::write(work.join("src/lib.rs"), lines).unwrap();
    std::fs::write(work.join("src/bin/main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(work.join("src/generated.rs"), "// generated\n").unwrap();
    std::fs::write(work.join("src/.gitignore"), "generated.rs\n").unwrap();
    std::fs::create_dir_all(work.join(".git")).unwrap();
    let model = FakeModel::start();
    let prompt = "compare @notes.txt with @src/lib.rs:10-12, then look at @src.";
    run(&sandbox, &model, prompt);
    let sent = contents(&model.requests()[0]);
    assert_eq!(
        sent.len(),
        3,
        "system, the user's message, the mentions: {sent:?}"
    );
    assert_eq!(sent[1], prompt, "the user's message is sent as typed");
    let context = &sent[2];
    assert!(
        context
            .contains("<file path=\"notes.txt\">\n    1| first note\n    2| second note\n</file>"),
        "{context}"
    );
    assert!(
        context.contains("<file path=\"src/lib.rs:10-12\">"),
        "{context}"
    );
    assert!(context.contains("line number 10\n") && context.contains("line number 12"));
    assert!(!context.contains("line number 9\n") && !context.contains("line number 13"));
    assert!(
        context.contains("<directory path=\"src\">\nbin/\nlib.rs\n</directory>"),
        "directories first, ignored files left out: {context}"
    );
}

#[test]
fn a_mention_a_deny_rule_covers_is_not_attached_and_the_user_is_told() {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.work().join(".env"), "API_TOKEN=do-not-send\n").unwrap();
    sandbox.write_init(r#"uji.tool.policy({ read_file = { deny = { "*.env" } } })"#);
    let model = FakeModel::start();
    let stderr = run(&sandbox, &model, "what is in @.env?");
    let request = &model.requests()[0];
    let body = String::from_utf8_lossy(&request.body);
    assert!(!body.contains("do-not-send"), "the file went to the model");
    let sent = contents(request);
    assert!(
        sent[2].contains("<file path=\".env\">not attached: "),
        "{:?}",
        sent[2]
    );
    assert!(stderr.contains("@.env was not attached"), "{stderr}");
}

#[test]
fn words_that_name_nothing_on_disk_are_plain_text() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    run(&sandbox, &model, "ask @someone or mail me@example.com");
    let sent = contents(&model.requests()[0]);
    assert_eq!(sent.len(), 2, "no context message: {sent:?}");
}

#[test]
fn claude_md_is_read_where_there_is_no_agents_md_and_the_users_agents_md_applies_everywhere() {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.work().join(".git")).unwrap();
    std::fs::write(
        sandbox.work().join("CLAUDE.md"),
        "Use tabs in this project.",
    )
    .unwrap();
    std::fs::create_dir_all(sandbox.config()).unwrap();
    std::fs::write(sandbox.config().join("AGENTS.md"), "Answer in English.").unwrap();
    let model = FakeModel::start();
    run(&sandbox, &model, "hello");
    let system = &contents(&model.requests()[0])[0];
    let mine = system
        .find("Answer in English.")
        .expect("the user's AGENTS.md");
    let project = system.find("Use tabs in this project.").expect("CLAUDE.md");
    assert!(mine < project, "the user's own instructions come first");
}

#[test]
fn a_mentioned_image_goes_with_the_message_and_a_binary_file_is_not_attached() {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.work().join("shot.png"), uji_tests::ONE_PIXEL_PNG).unwrap();
    std::fs::write(sandbox.work().join("blob.bin"), [0u8, 1, 2, 0, 255, 0]).unwrap();
    let model = FakeModel::start();
    run(&sandbox, &model, "what is @shot.png and @blob.bin?");
    let messages = model.requests()[0].json["messages"].clone();
    let parts = messages[1]["content"]
        .as_array()
        .expect("text and image parts");
    assert_eq!(parts[0]["text"], "what is @shot.png and @blob.bin?");
    let url = parts[1]["image_url"]["url"].as_str().unwrap();
    assert!(url.starts_with("data:image/png;base64,"), "{url}");
    let context = messages[2]["content"].as_str().unwrap();
    assert!(context.contains("<file path=\"shot.png\">attached as an image</file>"));
    assert!(
        context.contains("<file path=\"blob.bin\">not attached: "),
        "{context}"
    );
}

fn write_skill(
    root: &std::path::Path,
    name: &str,
    description: &str,
    body: &str,
) -> std::path::PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("SKILL.md");
    std::fs::write(
        &path,
        format!("---\nname: {name}\ndescription: {description}\n---\n{body}\n"),
    )
    .unwrap();
    path
}

#[test]
fn skills_are_listed_in_the_system_prompt_and_one_outside_the_workspace_can_be_read_not_written() {
    let sandbox = Sandbox::new();
    let home_skills = sandbox.root.path().join("home/.agents/skills");
    let skill = write_skill(
        &home_skills,
        "release",
        "Cut a release: tag, changelog, push",
        "Step one: run the tests.",
    );
    write_skill(
        &sandbox.work().join(".claude/skills"),
        "review",
        "Review a diff for bugs",
        "Look for off-by-one errors.",
    );
    let model = FakeModel::start();
    let path = skill.to_string_lossy().into_owned();
    model.push(uji_tests::chat::call(
        "c1",
        "read_file",
        serde_json::json!({ "path": path }),
    ));
    model.push(uji_tests::chat::call(
        "c2",
        "write_file",
        serde_json::json!({ "path": path, "content": "changed" }),
    ));
    model.push(answer("done"));
    let output = uji_with_model(&sandbox, &model, "sk-context-test")
        .args(["run", "--yes", "--model", MODEL, "cut the release"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let (_, stderr) = text(&output);
    let requests = model.requests();
    let system = &contents(&requests[0])[0];
    assert!(
        system.contains(
            "<name>release</name><description>Cut a release: tag, changelog, push</description>"
        ),
        "{system}"
    );
    assert!(system.contains("<name>review</name>"), "{system}");
    assert!(system.contains(&path), "the location is given: {system}");
    let read = contents(&requests[1]);
    assert!(
        read.iter().any(|m| m.contains("Step one: run the tests.")),
        "read_file reached the skill outside the workspace: {read:?} {stderr}"
    );
    let wrote = contents(&requests[2]);
    assert!(
        wrote
            .iter()
            .any(|m| m.contains("outside the allowed directories")),
        "write_file must not reach it: {wrote:?}"
    );
    assert!(
        std::fs::read_to_string(&skill)
            .unwrap()
            .contains("Step one")
    );
}

/// A PNG of `width`×`height`, in stripes (so it does not compress away).
fn striped_png(width: u32, height: u32) -> Vec<u8> {
    let picture = image::RgbImage::from_fn(width, height, |x, y| {
        image::Rgb([(x % 251) as u8, (y % 241) as u8, ((x + y) % 239) as u8])
    });
    let mut bytes = Vec::new();
    image::DynamicImage::ImageRgb8(picture)
        .write_to(
            &mut std::io::Cursor::new(&mut bytes),
            image::ImageFormat::Png,
        )
        .unwrap();
    bytes
}

/// The images of the request's first user message, decoded.
fn sent_images(request: &RecordedRequest) -> Vec<image::DynamicImage> {
    use base64::Engine as _;
    let parts = request.json["messages"][1]["content"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    parts
        .iter()
        .filter_map(|part| part["image_url"]["url"].as_str())
        .map(|url| {
            let data = url.split_once("base64,").unwrap().1;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(data)
                .unwrap();
            image::load_from_memory(&bytes).unwrap()
        })
        .collect()
}

#[test]
fn run_image_attaches_a_large_png_scaled_to_1568_pixels() {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.work().join("wide.png"), striped_png(2400, 1200)).unwrap();
    let model = FakeModel::start();
    model.push(answer("a striped picture"));
    let output = uji_with_model(&sandbox, &model, "sk-context-test")
        .args([
            "run",
            "--model",
            MODEL,
            "--image",
            "wide.png",
            "what is this?",
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let (_, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    let images = sent_images(&model.requests()[0]);
    assert_eq!(images.len(), 1);
    assert_eq!((images[0].width(), images[0].height()), (1568, 784));
}

#[test]
fn only_the_twenty_newest_images_go_with_a_request() {
    let sandbox = Sandbox::new();
    let mut args: Vec<String> = vec!["run".into(), "--model".into(), MODEL.into()];
    for i in 0..21 {
        let name = format!("shot{i}.png");
        std::fs::write(sandbox.work().join(&name), striped_png(8 + i, 8)).unwrap();
        args.extend(["--image".into(), name]);
    }
    args.push("compare them".into());
    let model = FakeModel::start();
    model.push(answer("compared"));
    let output = uji_with_model(&sandbox, &model, "sk-context-test")
        .args(&args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output).1);
    let request = &model.requests()[0];
    let images = sent_images(request);
    assert_eq!(images.len(), 20);
    assert_eq!(
        images[0].width(),
        9,
        "the oldest (shot0) is the one left out"
    );
    let body = String::from_utf8_lossy(&request.body);
    assert!(
        body.contains("only the 20 newest images go with a request"),
        "{body}"
    );
}

#[test]
fn run_image_refuses_a_file_that_is_not_an_image() {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.work().join("notes.txt"), "just text").unwrap();
    let model = FakeModel::start();
    let output = uji_with_model(&sandbox, &model, "sk-context-test")
        .args(["run", "--model", MODEL, "--image", "notes.txt", "look"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let (_, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--image notes.txt: not an image uji reads"),
        "{stderr}"
    );
    assert!(model.requests().is_empty(), "nothing was sent");
}

#[test]
fn a_model_that_declares_no_images_gets_a_note_instead() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    sandbox.write_init(&format!(
        "require(\"uji.defaults\")\n\
         uji.provider.add({{ id = \"textonly\", wire = \"openai-chat\", base_url = \"{}\", \
         models = {{ {{ id = \"t1\", images = false }} }} }})\n",
        model.base_url()
    ));
    std::fs::write(sandbox.work().join("shot.png"), uji_tests::ONE_PIXEL_PNG).unwrap();
    model.push(answer("I cannot see it."));
    let output = sandbox
        .uji()
        .args([
            "run",
            "--model",
            "textonly/t1",
            "--image",
            "shot.png",
            "what is this?",
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output).1);
    let request = &model.requests()[0];
    assert!(sent_images(request).is_empty());
    let body = String::from_utf8_lossy(&request.body);
    assert!(
        body.contains("an image is left out: textonly/t1 takes no images"),
        "{body}"
    );
}

#[test]
fn a_model_that_refuses_images_is_sent_notes_at_once_and_remembered() {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.work().join("shot.png"), uji_tests::ONE_PIXEL_PNG).unwrap();
    let model = FakeModel::start();
    model.push(uji_fake_model::Script::status(
        400,
        r#"{"error":{"message":"Image input is not supported by this model"}}"#,
        &[("content-type", "application/json")],
    ));
    model.push(answer("described in words"));
    let run_with_image = |model: &FakeModel| {
        uji_with_model(&sandbox, model, "sk-context-test")
            .args([
                "run",
                "--model",
                MODEL,
                "--image",
                "shot.png",
                "what is this?",
            ])
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let output = run_with_image(&model);
    let (_, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("refused the images"), "{stderr}");
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        sent_images(&requests[0]).len(),
        1,
        "the first try carried it"
    );
    let retry = String::from_utf8_lossy(&requests[1].body);
    assert!(
        retry.contains("takes no images") && !retry.contains("image_url"),
        "{retry}"
    );
    // The next run knows: no image is sent at all.
    model.push(answer("in words again"));
    let again = run_with_image(&model);
    assert!(again.status.success(), "{}", text(&again).1);
    let third = String::from_utf8_lossy(&model.requests()[2].body).into_owned();
    assert!(
        third.contains("takes no images") && !third.contains("image_url"),
        "{third}"
    );
}

/// The base64 of the one image in `value` wherever the API keeps it.
fn image_data_in(value: &serde_json::Value) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            serde_json::Value::Object(map) => {
                // Anthropic: source.data; Gemini: inline_data/inlineData.data.
                if let Some(data) = map.get("data").and_then(|d| d.as_str())
                    && data.len() > 100
                {
                    found.push(data.to_string());
                }
                // Responses and Chat Completions: a data URL.
                for key in ["image_url", "url"] {
                    if let Some(url) = map.get(key).and_then(|u| u.as_str())
                        && let Some((_, data)) = url.split_once("base64,")
                    {
                        found.push(data.to_string());
                    }
                }
                stack.extend(map.values());
            }
            serde_json::Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    found
}

#[test]
fn an_attached_png_arrives_scaled_in_each_wires_format() {
    use base64::Engine as _;
    use uji_fake_model::anthropic::AnthropicEvents;
    use uji_fake_model::gemini::GeminiEvents;
    use uji_fake_model::responses::ResponsesEvents;
    let wires: [(&str, &str, &str, uji_fake_model::Script); 3] = [
        (
            "anthropic/claude-sonnet-5-5",
            "ANTHROPIC",
            "\"type\":\"image\"",
            uji_fake_model::Script::sse(
                AnthropicEvents::new("claude-sonnet-5-5")
                    .text("seen", 1)
                    .build(),
            ),
        ),
        (
            "openai/gpt-6.2-sol",
            "OPENAI",
            "\"type\":\"input_image\"",
            uji_fake_model::Script::sse(
                ResponsesEvents::new("gpt-6.2-sol")
                    .text("seen", 1)
                    .completed(),
            ),
        ),
        (
            "gemini/gemini-3.8-flash",
            "GEMINI",
            "\"mimeType\":\"image/png\"",
            uji_fake_model::Script::sse(
                GeminiEvents::new("gemini-3.8-flash")
                    .text("seen", 1)
                    .finish("STOP"),
            ),
        ),
    ];
    for (model_name, env, marker, script) in wires {
        let sandbox = Sandbox::new();
        std::fs::write(sandbox.work().join("wide.png"), striped_png(2400, 1200)).unwrap();
        let model = FakeModel::start();
        model.push(script);
        let output = sandbox
            .uji()
            .args([
                "run",
                "--model",
                model_name,
                "--image",
                "wide.png",
                "what is this?",
            ])
            .env(format!("{env}_API_KEY"), "sk-test")
            .env(format!("{env}_BASE_URL"), model.base_url())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(output.status.success(), "{model_name}: {}", text(&output).1);
        let request = model.last_request();
        let body = String::from_utf8_lossy(&request.body).into_owned();
        assert!(
            body.replace(' ', "").contains(marker),
            "{model_name}: {marker} not in the request"
        );
        let images = image_data_in(&request.json);
        assert_eq!(images.len(), 1, "{model_name}");
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&images[0])
            .unwrap();
        let decoded = image::load_from_memory(&bytes).unwrap();
        assert_eq!(
            (decoded.width(), decoded.height()),
            (1568, 784),
            "{model_name}"
        );
    }
}

/// `uji run --yes PROMPT` in `cwd` in which the model reads `path` with
/// read_file, then answers; the requests the fake model received, and
/// uji's stderr.
fn read_skill_from(
    sandbox: &Sandbox,
    cwd: &std::path::Path,
    path: &std::path::Path,
) -> (Vec<RecordedRequest>, String) {
    let model = FakeModel::start();
    model.push(uji_tests::chat::call(
        "c1",
        "read_file",
        serde_json::json!({ "path": path.to_string_lossy() }),
    ));
    model.push(answer("done"));
    let output = uji_with_model(sandbox, &model, "sk-context-test")
        .current_dir(cwd)
        .args(["run", "--yes", "--model", MODEL, "use the skill"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let (_, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    (model.requests(), stderr)
}

#[test]
fn a_projects_skill_at_the_repository_root_is_readable_from_a_folder_below_it() {
    let sandbox = Sandbox::new();
    let repo = sandbox.work();
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::create_dir_all(repo.join("crates/parser")).unwrap();
    let skill = write_skill(
        &repo.join(".claude/skills"),
        "review",
        "Review a diff for bugs",
        "Look for off-by-one errors.",
    );
    let (requests, stderr) = read_skill_from(&sandbox, &repo.join("crates/parser"), &skill);
    let system = &contents(&requests[0])[0];
    assert!(system.contains("<name>review</name>"), "{system}");
    let read = contents(&requests[1]);
    assert!(
        read.iter()
            .any(|m| m.contains("Look for off-by-one errors.")),
        "read_file reached the repository root's skill from below it: {read:?} {stderr}"
    );
}

#[test]
fn outside_a_repository_the_home_directorys_folders_are_yours_and_their_skills_readable() {
    let sandbox = Sandbox::new();
    let home = sandbox.root.path().join("home");
    let project = home.join("notes");
    std::fs::create_dir_all(&project).unwrap();
    let skill = write_skill(
        &home.join(".agents/skills"),
        "release",
        "Cut a release",
        "Step one: run the tests.",
    );
    // Claude Code's own folders in the home directory are the user's
    // (personal commands and skills carry over), not a project's
    // `.claude/…` when uji runs in a folder under it.
    std::fs::create_dir_all(home.join(".claude/commands")).unwrap();
    std::fs::write(home.join(".claude/commands/hello.md"), "Say hello.\n").unwrap();
    write_skill(
        &home.join(".claude/skills"),
        "triage",
        "Sort the issues",
        "Label them.",
    );
    sandbox.write_init(
        "require(\"uji.defaults\")\n\
         for _, s in ipairs(require(\"uji.skills\").list()) do\n\
           uji.notify(\"skill \" .. s.name .. (s.project and \" (project)\" or \" (yours)\"))\n\
         end\n\
         for _, c in ipairs(require(\"uji.commands\").list()) do\n\
           uji.notify(\"command \" .. c.name .. (c.project and \" (project)\" or \" (yours)\"))\n\
         end\n",
    );
    let (requests, stderr) = read_skill_from(&sandbox, &project, &skill);
    assert!(stderr.contains("skill release (yours)"), "{stderr}");
    assert!(stderr.contains("skill triage (yours)"), "{stderr}");
    assert!(stderr.contains("command hello (yours)"), "{stderr}");
    let read = contents(&requests[1]);
    assert!(
        read.iter().any(|m| m.contains("Step one: run the tests.")),
        "read_file reached ~/.agents/skills: {read:?} {stderr}"
    );
}

#[test]
fn on_a_name_clash_the_projects_skill_wins_over_yours() {
    let sandbox = Sandbox::new();
    write_skill(
        &sandbox.root.path().join("home/.agents/skills"),
        "review",
        "Your own review",
        "Mine.",
    );
    write_skill(
        &sandbox.config().join("skills"),
        "review",
        "The config directory's review",
        "Config.",
    );
    write_skill(
        &sandbox.work().join(".claude/skills"),
        "review",
        "The project's review",
        "Project.",
    );
    let model = FakeModel::start();
    run(&sandbox, &model, "hello");
    let system = &contents(&model.requests()[0])[0];
    assert_eq!(system.matches("<name>review</name>").count(), 1, "{system}");
    assert!(system.contains("The project's review"), "{system}");
}

#[test]
fn mentions_from_home_absolute_and_from_a_line_on_arrive() {
    let sandbox = Sandbox::new();
    let project = sandbox.root.path().join("home/proj");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("home.txt"), "reached from home\n").unwrap();
    std::fs::write(project.join("absolute.txt"), "reached absolutely\n").unwrap();
    let lines: String = (1..=30).map(|i| format!("row {i}\n")).collect();
    std::fs::write(project.join("rows.txt"), lines).unwrap();
    let absolute = project.join("absolute.txt");
    let prompt = format!(
        "see @~/proj/home.txt and @{} and @rows.txt:25",
        absolute.display()
    );
    let model = FakeModel::start();
    model.push(answer("done"));
    let output = uji_with_model(&sandbox, &model, "sk-context-test")
        .current_dir(&project)
        .args(["run", "--model", MODEL, &prompt])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output).1);
    let context = &contents(&model.requests()[0])[2];
    assert!(
        context.contains("<file path=\"~/proj/home.txt\">\n    1| reached from home\n</file>"),
        "{context}"
    );
    assert!(context.contains("reached absolutely"), "{context}");
    assert!(
        context.contains("<file path=\"rows.txt:25\">\n   25| row 25\n"),
        "{context}"
    );
    assert!(
        context.contains("   30| row 30") && !context.contains("row 24\n"),
        "a page from line 25: {context}"
    );
}

#[test]
fn a_mention_outside_the_allowed_directories_is_not_attached_and_the_user_is_told() {
    let sandbox = Sandbox::new();
    let outside = sandbox.root.path().join("elsewhere.txt");
    std::fs::write(&outside, "not for the model\n").unwrap();
    let model = FakeModel::start();
    let stderr = run(&sandbox, &model, &format!("read @{}", outside.display()));
    let request = &model.requests()[0];
    assert!(
        !String::from_utf8_lossy(&request.body).contains("not for the model"),
        "the file went to the model"
    );
    let context = &contents(request)[2];
    assert!(
        context.contains("not attached: ") && context.contains("outside the allowed directories"),
        "{context}"
    );
    assert!(
        stderr.contains(&format!("@{} was not attached", outside.display())),
        "{stderr}"
    );
}

#[test]
fn a_directory_mention_lists_at_most_500_entries() {
    let sandbox = Sandbox::new();
    let many = sandbox.work().join("many");
    std::fs::create_dir_all(&many).unwrap();
    for i in 0..510 {
        std::fs::write(many.join(format!("f{i:03}.txt")), "").unwrap();
    }
    let model = FakeModel::start();
    run(&sandbox, &model, "look at @many");
    let context = &contents(&model.requests()[0])[2];
    let listed = context.lines().filter(|l| l.ends_with(".txt")).count();
    assert_eq!(listed, 500, "{context}");
    assert!(
        context.contains("f499.txt\n… 10 more entries not listed\n</directory>"),
        "{context}"
    );
}

#[test]
fn an_instruction_file_is_cut_at_64_kb() {
    let sandbox = Sandbox::new();
    let mut agents = "Keep this rule.\n".to_string();
    while agents.len() < 64 * 1024 {
        agents.push_str("filler line that pads the file out\n");
    }
    agents.push_str("A rule past the cut.\n");
    std::fs::write(sandbox.work().join("AGENTS.md"), agents).unwrap();
    let model = FakeModel::start();
    run(&sandbox, &model, "hello");
    let system = &contents(&model.requests()[0])[0];
    assert!(system.contains("Keep this rule."), "{system}");
    assert!(system.contains("[…cut at 64 KB]"));
    assert!(!system.contains("A rule past the cut."));
}

/// An RGB picture of `width`×`height` in random noise (which neither PNG
/// nor JPEG compresses well), encoded as `format`.
fn noisy(width: u32, height: u32, format: image::ImageFormat) -> Vec<u8> {
    let mut state: u32 = 0x9e37_79b9;
    let picture = image::RgbImage::from_fn(width, height, |_, _| {
        // xorshift32: enough noise for an encoder, no crate needed.
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            (state >> 24) as u8
        };
        image::Rgb([next(), next(), next()])
    });
    let mut bytes = Vec::new();
    image::DynamicImage::ImageRgb8(picture)
        .write_to(&mut std::io::Cursor::new(&mut bytes), format)
        .unwrap();
    bytes
}

#[test]
fn a_mentioned_image_over_5_mb_arrives_encoded_again_under_5_mb() {
    let sandbox = Sandbox::new();
    let png = noisy(1568, 1568, image::ImageFormat::Png);
    assert!(
        png.len() > 5 * 1024 * 1024,
        "the test's picture is too light"
    );
    std::fs::write(sandbox.work().join("noise.png"), png).unwrap();
    let model = FakeModel::start();
    run(&sandbox, &model, "what is @noise.png?");
    let request = &model.requests()[0];
    let parts = request.json["messages"][1]["content"].as_array().unwrap();
    let url = parts[1]["image_url"]["url"].as_str().unwrap();
    let data = url
        .strip_prefix("data:image/jpeg;base64,")
        .unwrap_or_else(|| panic!("not a JPEG: {}", &url[..40]));
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .unwrap();
    assert!(bytes.len() <= 5 * 1024 * 1024, "{} bytes", bytes.len());
    let decoded = image::load_from_memory(&bytes).unwrap();
    assert_eq!((decoded.width(), decoded.height()), (1568, 1568));
    let context = &contents(request)[2];
    assert!(
        context.contains("<file path=\"noise.png\">attached as an image</file>"),
        "{context}"
    );
}

#[test]
fn mentioned_gif_and_webp_images_attach() {
    let sandbox = Sandbox::new();
    let work = sandbox.work();
    std::fs::write(work.join("anim.gif"), noisy(16, 8, image::ImageFormat::Gif)).unwrap();
    std::fs::write(
        work.join("photo.webp"),
        noisy(8, 16, image::ImageFormat::WebP),
    )
    .unwrap();
    let model = FakeModel::start();
    run(&sandbox, &model, "compare @anim.gif with @photo.webp");
    let parts = model.requests()[0].json["messages"][1]["content"]
        .as_array()
        .unwrap()
        .clone();
    let urls: Vec<&str> = parts
        .iter()
        .filter_map(|p| p["image_url"]["url"].as_str())
        .collect();
    assert_eq!(urls.len(), 2, "{parts:?}");
    assert!(
        urls[0].starts_with("data:image/gif;base64,"),
        "{}",
        &urls[0][..30]
    );
    assert!(
        urls[1].starts_with("data:image/webp;base64,"),
        "{}",
        &urls[1][..30]
    );
}
