//! Agent definitions: what a subagent is told and may use. The Lua
//! defaults read them from Markdown files (`lua/uji/agents.lua`) and init.lua
//! may add more; they reach core as the config value [`CONFIG_KEY`]. Pure.

use serde::Deserialize;
use serde_json::Value;

/// The config key holding the list of definitions.
pub const CONFIG_KEY: &str = "agents";

/// The agent a task without one runs: the parent's tools, model and
/// prompt, a context of its own.
pub const GENERAL: &str = "general";

/// One agent, as an agent file or `uji.agents.add` describes it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentDefinition {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// The tools it may use; `None` is the parent's.
    #[serde(default)]
    pub tools: Option<Vec<String>>,
    /// `provider/model`; `None` is the parent's.
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub effort: Option<String>,
    /// Added to the child's system prompt (the file's body).
    #[serde(default)]
    pub prompt: String,
    /// The file it came from.
    #[serde(default)]
    pub path: Option<String>,
    /// From the project's folders: prompt text only, never more tools
    /// than the parent has.
    #[serde(default)]
    pub project: bool,
    /// The child's own budget (`max-turns` … in the file's front matter).
    #[serde(default)]
    pub max_turns: Option<u64>,
    #[serde(default)]
    pub max_tokens: Option<u64>,
    /// Dollars.
    #[serde(default)]
    pub max_cost: Option<f64>,
}

impl AgentDefinition {
    fn general() -> AgentDefinition {
        AgentDefinition {
            name: GENERAL.to_string(),
            description: "A general agent with your tools and a fresh context".to_string(),
            ..AgentDefinition::default()
        }
    }
}

/// The definitions in the config value, the general agent first unless
/// one replaces it; entries that cannot be read are skipped and reported.
pub fn definitions(config: Option<Value>) -> (Vec<AgentDefinition>, Vec<String>) {
    let mut list = vec![AgentDefinition::general()];
    let mut problems = Vec::new();
    let entries = match config {
        Some(Value::Array(entries)) => entries,
        None | Some(Value::Null) => Vec::new(),
        // Lua's empty table crosses as an empty object.
        Some(Value::Object(map)) if map.is_empty() => Vec::new(),
        Some(other) => {
            problems.push(format!("the agents config is {other}, not a list"));
            Vec::new()
        }
    };
    for entry in entries {
        match serde_json::from_value::<AgentDefinition>(entry) {
            Ok(agent) if agent.name.trim().is_empty() => {
                problems.push("an agent without a name was left out".to_string());
            }
            Ok(agent) => match list.iter_mut().find(|a| a.name == agent.name) {
                Some(slot) => *slot = agent,
                None => list.push(agent),
            },
            Err(e) => problems.push(format!("an agent definition was left out: {e}")),
        }
    }
    (list, problems)
}

/// The tools a child of `agent` gets: the agent's list, or the parent's
/// tools (`parent`) when it names none; never `subagent` itself (children
/// start no children). An agent naming a tool the parent does not have is
/// refused: a child never has more than its parent.
pub fn child_tools(
    agent: &AgentDefinition,
    parent: &[String],
    subagent_tool: &str,
) -> Result<Vec<String>, String> {
    let Some(wanted) = &agent.tools else {
        return Ok(parent
            .iter()
            .filter(|t| t.as_str() != subagent_tool)
            .cloned()
            .collect());
    };
    let beyond: Vec<&str> = wanted
        .iter()
        .filter(|t| !parent.contains(t) || t.as_str() == subagent_tool)
        .map(String::as_str)
        .collect();
    if !beyond.is_empty() {
        let whose = if agent.project {
            "the project's agent"
        } else {
            "agent"
        };
        let from = agent
            .path
            .as_deref()
            .map(|p| format!(" ({p})"))
            .unwrap_or_default();
        return Err(format!(
            "{whose} {}{from} names tools this session does not have: {}; a subagent gets at most the tools of the session that starts it (subagents start none). Remove them from its tools: line, or give the session those tools",
            agent.name,
            beyond.join(", ")
        ));
    }
    Ok(wanted.clone())
}

/// The agents as the tool's description lists them.
pub fn described(list: &[AgentDefinition]) -> String {
    let mut text = String::from("Agents:");
    for agent in list {
        let description = agent.description.lines().next().unwrap_or_default();
        text.push_str(&format!("\n- {}: {description}", agent.name));
    }
    text
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn names(list: &[AgentDefinition]) -> Vec<&str> {
        list.iter().map(|a| a.name.as_str()).collect()
    }

    #[test]
    fn the_general_agent_comes_first_and_may_be_replaced() {
        let (list, problems) = definitions(None);
        assert_eq!(names(&list), ["general"]);
        assert!(problems.is_empty());
        let (list, problems) = definitions(Some(json!({})));
        assert_eq!((names(&list), problems.len()), (vec!["general"], 0));
        let config = json!([
            {"name": "reviewer", "description": "Reviews", "tools": ["read_file"]},
            {"name": "general", "description": "Mine", "model": "fake/m"},
        ]);
        let (list, _) = definitions(Some(config));
        assert_eq!(names(&list), ["general", "reviewer"]);
        assert_eq!(list[0].model.as_deref(), Some("fake/m"));
    }

    #[test]
    fn an_unreadable_definition_is_reported_and_the_rest_kept() {
        let config = json!([{"name": "a", "colour": "red"}, {"name": ""}, {"name": "b"}]);
        let (list, problems) = definitions(Some(config));
        assert_eq!(names(&list), ["general", "b"]);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].contains("colour"), "{problems:?}");
    }

    #[test]
    fn a_child_never_gets_more_tools_than_its_parent() {
        let parent: Vec<String> = ["read_file", "run_command", "subagent"]
            .map(String::from)
            .to_vec();
        let general = AgentDefinition::general();
        assert_eq!(
            child_tools(&general, &parent, "subagent").unwrap(),
            ["read_file", "run_command"]
        );
        let reader = AgentDefinition {
            name: "reader".into(),
            tools: Some(vec!["read_file".into()]),
            ..AgentDefinition::default()
        };
        assert_eq!(
            child_tools(&reader, &parent, "subagent").unwrap(),
            ["read_file"]
        );
        let greedy = AgentDefinition {
            name: "reviewer".into(),
            tools: Some(vec![
                "read_file".into(),
                "write_file".into(),
                "subagent".into(),
            ]),
            project: true,
            path: Some(".claude/agents/reviewer.md".into()),
            ..AgentDefinition::default()
        };
        let error = child_tools(&greedy, &parent, "subagent").unwrap_err();
        assert!(error.starts_with("the project's agent reviewer (.claude/agents/reviewer.md) names tools this session does not have: write_file, subagent"), "{error}");
    }
}
