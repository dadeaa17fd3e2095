//! A complete wire plugin: the provider `echo` with two models that answer
//! without a network. `uji run --model echo/parrot "hello"` prints `hello`.

use uji_sdk::services::{ModelInfo, Provider};
use uji_sdk::{Answer, Canceller, Failure, Host, Message, Plugin, Reply, Usage, Wire, WireRequest};

/// The models this wire knows; `--model echo/<anything else>` fails.
const MODELS: [&str; 2] = ["parrot", "shout"];

struct Echo;

impl Wire for Echo {
    // Called for every model request. A real wire would start the HTTP
    // request on a runtime it owns and return at once with a Canceller;
    // this one answers on the spot.
    fn stream(&self, request: WireRequest, reply: Reply) -> Option<Canceller> {
        if !MODELS.contains(&request.model.as_str()) {
            // uji passes any model id a provider is asked for: the API
            // (here, the wire) says whether it exists.
            reply.fail(Failure::Provider {
                message: format!(
                    "echo has no model {:?}: use echo/parrot or echo/shout",
                    request.model
                ),
            });
            return None;
        }
        // The request carries the whole conversation, newest last.
        let said = request.messages.iter().rev().find_map(|m| match m {
            Message::User { text, .. } => Some(text.as_str()),
            _ => None,
        });
        let mut text = said.unwrap_or_default().to_string();
        if request.model == "shout" {
            text = text.to_uppercase();
        }
        // Deltas are shown as they arrive; the Answer is what is saved.
        for piece in text.split_inclusive(' ') {
            reply.text(piece);
        }
        let words = text.split_whitespace().count() as u64;
        reply.done(Answer {
            text,
            usage: Usage {
                input: words,
                output: words,
                ..Usage::default()
            },
            ..Answer::default()
        });
        None
    }
}

struct EchoPlugin;

impl Plugin for EchoPlugin {
    const NAME: &'static str = "echo-wire";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    const DESCRIPTION: &'static str = "Example wire: the echo provider answers offline";

    fn init(host: &Host) -> Result<(), String> {
        // The wire speaks the "API"; the provider makes it selectable with
        // --model echo/MODEL. No base_url or key_env: nothing to reach.
        host.register_wire("echo", Echo)?;
        let mut provider = Provider::new("echo", "echo").default_model("parrot");
        for id in MODELS {
            provider = provider.model(ModelInfo::new(id).context_window(8_000));
        }
        host.add_provider(provider)?;
        Ok(())
    }
}

uji_sdk::export_plugin!(EchoPlugin);
