//! The [`uji_abi::Host`] a plugin receives: one per plugin, so everything it
//! registers is tagged with its name and shares its health.

use std::sync::Arc;

use uji_abi::__private::TD_Opaque;
use uji_abi::{
    CommandBox, FrontendBox, HookBox, HostBox, ROption, RResult, RStr, RString, ToolBox, WireBox,
};
use uji_protocol::LogLevel;
use uji_protocol::services::ServeOptions;

use crate::calls::{
    RegisteredCommand, RegisteredFrontend, RegisteredHook, RegisteredService, RegisteredTool,
    RegisteredWire,
};
use crate::loader::CONFIG_PLUGIN;
use crate::registry::{PluginState, Registry, parse_hook_options};

pub(crate) struct PluginHost {
    registry: Registry,
    plugin: Arc<PluginState>,
}

pub(crate) fn host_for(registry: &Registry, plugin: &Arc<PluginState>) -> HostBox {
    HostBox::from_value(
        PluginHost {
            registry: registry.clone(),
            plugin: Arc::clone(plugin),
        },
        TD_Opaque,
    )
}

fn check_name(kind: &str, name: &str) -> Result<(), RString> {
    if name.trim().is_empty() {
        Err(RString::from(format!("a {kind} needs a non-empty name")))
    } else {
        Ok(())
    }
}

impl uji_abi::Host for PluginHost {
    fn register_tool(&self, tool: ToolBox) -> RResult<(), RString> {
        // The user's config (the Lua plugin) may replace any tool; other
        // plugins only their own, unless the config allows it.
        let may_replace = self.plugin.name() == CONFIG_PLUGIN;
        let registered = RegisteredTool::new(tool, Arc::clone(&self.plugin))
            .map_err(|e| e.to_string())
            .and_then(|tool| {
                self.registry
                    .register_tool(tool, may_replace)
                    .map_err(|clash| clash.to_string())
            });
        match registered {
            Ok(()) => RResult::ROk(()),
            Err(e) => RResult::RErr(RString::from(e)),
        }
    }

    fn register_wire(&self, name: RString, wire: WireBox) -> RResult<(), RString> {
        if let Err(e) = check_name("wire", &name) {
            return RResult::RErr(e);
        }
        self.registry.add_wire(RegisteredWire::new(
            name.into(),
            wire,
            Arc::clone(&self.plugin),
        ));
        RResult::ROk(())
    }

    fn register_frontend(&self, name: RString, frontend: FrontendBox) -> RResult<(), RString> {
        if let Err(e) = check_name("frontend", &name) {
            return RResult::RErr(e);
        }
        self.registry.add_frontend(RegisteredFrontend::new(
            name.into(),
            frontend,
            Arc::clone(&self.plugin),
        ));
        RResult::ROk(())
    }

    fn register_hook(
        &self,
        event: RString,
        options_json: RString,
        hook: HookBox,
    ) -> RResult<(), RString> {
        if let Err(e) = check_name("hook event", &event) {
            return RResult::RErr(e);
        }
        let serves = serde_json::from_str::<ServeOptions>(&options_json).is_ok_and(|o| o.serve);
        match parse_hook_options(&options_json) {
            Ok(_) if serves => {
                let service = RegisteredService::new(event.into(), hook, Arc::clone(&self.plugin));
                self.registry
                    .register_service(service)
                    .map_err(RString::from)
                    .into()
            }
            Ok(options) => {
                self.registry.add_hook(RegisteredHook::new(
                    event.into(),
                    options,
                    hook,
                    Arc::clone(&self.plugin),
                ));
                RResult::ROk(())
            }
            Err(e) => RResult::RErr(RString::from(e)),
        }
    }

    fn register_command(
        &self,
        name: RString,
        description: RString,
        command: CommandBox,
    ) -> RResult<(), RString> {
        if let Err(e) = check_name("command", &name) {
            return RResult::RErr(e);
        }
        self.registry.add_command(RegisteredCommand::new(
            name.into(),
            description.into(),
            command,
            Arc::clone(&self.plugin),
        ));
        RResult::ROk(())
    }

    fn notify(&self, text: RStr<'_>) {
        self.registry.notify(self.plugin.name(), text.as_str());
    }

    fn log(&self, level: u8, message: RStr<'_>) {
        self.registry.log(
            LogLevel::from_u8(level),
            self.plugin.name(),
            message.as_str(),
        );
    }

    fn config(&self, key: RStr<'_>) -> ROption<RString> {
        match self.registry.config(key.as_str()) {
            Some(value) => ROption::RSome(RString::from(value.to_string())),
            None => ROption::RNone,
        }
    }

    fn call(&self, method: RStr<'_>, params_json: RStr<'_>) -> RResult<RString, RString> {
        let params = match serde_json::from_str(params_json.as_str()) {
            Ok(params) => params,
            Err(e) => {
                return RResult::RErr(RString::from(format!("{method}: invalid parameters: {e}")));
            }
        };
        match self
            .registry
            .call_service(self.plugin.name(), method.as_str(), params)
        {
            Ok(answer) => RResult::ROk(RString::from(answer.to_string())),
            Err(e) => RResult::RErr(RString::from(e)),
        }
    }
}
