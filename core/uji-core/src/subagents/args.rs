//! What the model asked the `subagent` tool for: one task, several in
//! parallel, or a chain where each step sees the answer before it. Pure.

use serde_json::Value;

/// In a chain step's task, replaced by the previous step's answer.
pub const PREVIOUS: &str = "{previous}";

/// The most tasks one call may hold.
pub const MAX_TASKS: usize = 16;

/// One child session to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Task {
    /// The agent definition's name; `None` is the general agent.
    pub agent: Option<String>,
    pub task: String,
}

impl Task {
    /// The agent's name as shown and matched by policy rules.
    pub fn agent_name(&self) -> &str {
        self.agent.as_deref().unwrap_or(super::definitions::GENERAL)
    }
}

/// How the tasks of one call run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    One(Task),
    /// At once, at most the configured number at a time.
    Parallel(Vec<Task>),
    /// One after another; each may name [`PREVIOUS`].
    Chain(Vec<Task>),
}

impl Plan {
    pub fn tasks(&self) -> &[Task] {
        match self {
            Plan::One(task) => std::slice::from_ref(task),
            Plan::Parallel(tasks) | Plan::Chain(tasks) => tasks,
        }
    }

    /// What policy rules match: the agents' names in order, spaces between
    /// (`reviewer`, `reviewer tester`).
    pub fn subject(&self) -> String {
        let names: Vec<&str> = self.tasks().iter().map(Task::agent_name).collect();
        names.join(" ")
    }
}

const HOW: &str = "pass {\"agent\": NAME, \"task\": TEXT} for one subagent, {\"tasks\": [{\"agent\", \"task\"}, …]} for several at once, or {\"chain\": [{\"agent\", \"task\"}, …]} for steps that each see the previous answer as {previous}";

fn task_of(value: &Value, at: &str) -> Result<Task, String> {
    let Some(object) = value.as_object() else {
        return Err(format!("{at} is not an object; {HOW}"));
    };
    for key in object.keys() {
        if !matches!(key.as_str(), "agent" | "task" | "prompt") {
            return Err(format!("{at} has an unknown field {key:?}; {HOW}"));
        }
    }
    // `prompt` is accepted for `task`, as other agents name it.
    let task = object
        .get("task")
        .or_else(|| object.get("prompt"))
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| format!("{at} has no task (the text the subagent works on); {HOW}"))?;
    let agent = match object.get("agent") {
        None | Some(Value::Null) => None,
        Some(Value::String(name)) if name.trim().is_empty() => None,
        Some(Value::String(name)) => Some(name.trim().to_string()),
        Some(_) => return Err(format!("{at}'s agent is not a name; {HOW}")),
    };
    Ok(Task {
        agent,
        task: task.to_string(),
    })
}

fn tasks_of(value: &Value, field: &str) -> Result<Vec<Task>, String> {
    let Some(list) = value.as_array() else {
        return Err(format!("{field} is not a list; {HOW}"));
    };
    if list.is_empty() {
        return Err(format!("{field} is empty; {HOW}"));
    }
    if list.len() > MAX_TASKS {
        return Err(format!(
            "{field} has {} tasks, more than the {MAX_TASKS} one call may run; split the work",
            list.len()
        ));
    }
    list.iter()
        .enumerate()
        .map(|(i, task)| task_of(task, &format!("{field}[{i}]")))
        .collect()
}

/// Reads the call's arguments.
pub fn parse(args: &Value) -> Result<Plan, String> {
    let Some(object) = args.as_object() else {
        return Err(format!("the arguments are not an object; {HOW}"));
    };
    let tasks = object.get("tasks");
    let chain = object.get("chain");
    let single = object.contains_key("task") || object.contains_key("prompt");
    match (single, tasks, chain) {
        (true, None, None) => task_of(args, "the call").map(Plan::One),
        (false, Some(tasks), None) => {
            only_keys(object, "tasks")?;
            tasks_of(tasks, "tasks").map(Plan::Parallel)
        }
        (false, None, Some(chain)) => {
            only_keys(object, "chain")?;
            tasks_of(chain, "chain").map(Plan::Chain)
        }
        (false, None, None) => Err(format!("nothing to do; {HOW}")),
        _ => Err(format!("give one of task, tasks or chain; {HOW}")),
    }
}

fn only_keys(object: &serde_json::Map<String, Value>, key: &str) -> Result<(), String> {
    match object.keys().find(|k| k.as_str() != key) {
        Some(other) => Err(format!("unknown field {other:?} beside {key}; {HOW}")),
        None => Ok(()),
    }
}

/// A chain step's task with the previous answer put in; a step that does
/// not name [`PREVIOUS`] gets the answer after its task.
pub fn with_previous(task: &str, previous: Option<&str>) -> String {
    match previous {
        None => task.to_string(),
        Some(answer) if task.contains(PREVIOUS) => task.replace(PREVIOUS, answer),
        Some(answer) => format!("{task}\n\nThe previous step answered:\n\n{answer}"),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn task(agent: Option<&str>, text: &str) -> Task {
        Task {
            agent: agent.map(str::to_string),
            task: text.to_string(),
        }
    }

    #[test]
    fn the_three_shapes_are_read() {
        let cases = [
            (
                json!({"agent": "reviewer", "task": "review"}),
                Plan::One(task(Some("reviewer"), "review")),
            ),
            (json!({"prompt": "look"}), Plan::One(task(None, "look"))),
            (
                json!({"tasks": [{"task": "a"}, {"agent": "t", "task": "b"}]}),
                Plan::Parallel(vec![task(None, "a"), task(Some("t"), "b")]),
            ),
            (
                json!({"chain": [{"task": "a"}, {"task": "b {previous}"}]}),
                Plan::Chain(vec![task(None, "a"), task(None, "b {previous}")]),
            ),
        ];
        for (args, plan) in cases {
            assert_eq!(parse(&args).unwrap(), plan, "{args}");
        }
    }

    #[test]
    fn bad_arguments_say_what_to_pass() {
        let cases = [
            (json!("review"), "not an object"),
            (json!({}), "nothing to do"),
            (json!({"task": " "}), "has no task"),
            (
                json!({"task": "a", "tasks": []}),
                "one of task, tasks or chain",
            ),
            (json!({"tasks": []}), "tasks is empty"),
            (json!({"tasks": "a"}), "tasks is not a list"),
            (
                json!({"chain": [{"task": "a", "model": "x"}]}),
                "unknown field \"model\"",
            ),
            (
                json!({"tasks": [{"task": "a"}], "agent": "x"}),
                "unknown field \"agent\" beside tasks",
            ),
            (json!({"agent": 3, "task": "a"}), "agent is not a name"),
        ];
        for (args, says) in cases {
            let error = parse(&args).unwrap_err();
            assert!(error.contains(says), "{args}: {error}");
            assert!(
                error.contains("\"task\"") || error.contains("split"),
                "{error}"
            );
        }
        let many: Vec<Value> = (0..=MAX_TASKS).map(|_| json!({"task": "a"})).collect();
        assert!(
            parse(&json!({ "tasks": many }))
                .unwrap_err()
                .contains("more than")
        );
    }

    #[test]
    fn the_subject_names_the_agents_in_order() {
        let plan =
            parse(&json!({"tasks": [{"agent": "reviewer", "task": "a"}, {"task": "b"}]})).unwrap();
        assert_eq!(plan.subject(), "reviewer general");
    }

    #[test]
    fn a_chain_step_sees_the_previous_answer() {
        assert_eq!(with_previous("fix {previous}", Some("X")), "fix X");
        assert_eq!(with_previous("first", None), "first");
        assert!(with_previous("check", Some("X")).ends_with("answered:\n\nX"));
    }
}
