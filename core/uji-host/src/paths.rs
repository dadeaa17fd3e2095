//! Where uji keeps its configuration and its data.

use std::path::PathBuf;

/// The configuration and data directories of one uji process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dirs {
    pub config: PathBuf,
    pub data: PathBuf,
}

/// An environment lookup, so tests can resolve directories without touching
/// the real process environment.
pub trait Env {
    fn var(&self, name: &str) -> Option<String>;
}

/// The process environment.
pub struct ProcessEnv;

impl Env for ProcessEnv {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok().filter(|v| !v.is_empty())
    }
}

/// Why the directories could not be worked out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoHome;

impl std::fmt::Display for NoHome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "cannot tell where uji's files go: HOME is not set; set HOME, or pass --config-dir and --data-dir"
        )
    }
}

impl std::error::Error for NoHome {}

impl Dirs {
    /// Config: `--config-dir`, else `$UJI_CONFIG_DIR`, else
    /// `$XDG_CONFIG_HOME/uji`, else `~/.config/uji`. Data likewise with
    /// `--data-dir`, `$UJI_DATA_DIR`, `$XDG_DATA_HOME/uji`, `~/.local/share/uji`.
    pub fn resolve(
        config_flag: Option<PathBuf>,
        data_flag: Option<PathBuf>,
        env: &dyn Env,
    ) -> Result<Dirs, NoHome> {
        let home = || env.var("HOME").map(PathBuf::from).ok_or(NoHome);
        let config = match config_flag {
            Some(dir) => dir,
            None => match (env.var("UJI_CONFIG_DIR"), env.var("XDG_CONFIG_HOME")) {
                (Some(dir), _) => PathBuf::from(dir),
                (None, Some(xdg)) => PathBuf::from(xdg).join("uji"),
                (None, None) => home()?.join(".config").join("uji"),
            },
        };
        let data = match data_flag {
            Some(dir) => dir,
            None => match (env.var("UJI_DATA_DIR"), env.var("XDG_DATA_HOME")) {
                (Some(dir), _) => PathBuf::from(dir),
                (None, Some(xdg)) => PathBuf::from(xdg).join("uji"),
                (None, None) => home()?.join(".local").join("share").join("uji"),
            },
        };
        Ok(Dirs { config, data })
    }

    /// `<config>/plugins`: plugins the user installed.
    pub fn plugins(&self) -> PathBuf {
        self.config.join("plugins")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    struct FakeEnv(HashMap<&'static str, &'static str>);

    impl Env for FakeEnv {
        fn var(&self, name: &str) -> Option<String> {
            self.0.get(name).map(|v| v.to_string())
        }
    }

    fn env(pairs: &[(&'static str, &'static str)]) -> FakeEnv {
        FakeEnv(pairs.iter().copied().collect())
    }

    #[test]
    fn precedence_is_flag_then_uji_var_then_xdg_then_home() {
        let all = env(&[
            ("HOME", "/h"),
            ("UJI_CONFIG_DIR", "/ujic"),
            ("UJI_DATA_DIR", "/ujid"),
            ("XDG_CONFIG_HOME", "/xc"),
            ("XDG_DATA_HOME", "/xd"),
        ]);
        let flags = Dirs::resolve(Some("/fc".into()), Some("/fd".into()), &all).unwrap();
        assert_eq!(
            flags,
            Dirs {
                config: "/fc".into(),
                data: "/fd".into()
            }
        );
        let vars = Dirs::resolve(None, None, &all).unwrap();
        assert_eq!(
            vars,
            Dirs {
                config: "/ujic".into(),
                data: "/ujid".into()
            }
        );
        let xdg = Dirs::resolve(
            None,
            None,
            &env(&[("XDG_CONFIG_HOME", "/xc"), ("XDG_DATA_HOME", "/xd")]),
        )
        .unwrap();
        assert_eq!(
            xdg,
            Dirs {
                config: "/xc/uji".into(),
                data: "/xd/uji".into()
            }
        );
        let home = Dirs::resolve(None, None, &env(&[("HOME", "/h")])).unwrap();
        assert_eq!(
            home,
            Dirs {
                config: "/h/.config/uji".into(),
                data: "/h/.local/share/uji".into()
            }
        );
        assert_eq!(home.plugins(), PathBuf::from("/h/.config/uji/plugins"));
    }

    #[test]
    fn no_home_says_what_to_set() {
        let err = Dirs::resolve(None, None, &env(&[])).unwrap_err();
        assert!(err.to_string().contains("--config-dir"));
    }
}
