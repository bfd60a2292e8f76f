//! Every keyword of `AtariVectorEnv`, defined once: its name (ale_py 0.12.1's), aliases, range, doc,
//! and the field of [`VectorConfig`] it sets. Defaults are those of `VectorConfig::new` and
//! `AtariConfig::default()`; the ranges are the configs' own (`atari::config`), which
//! [`VectorConfig::validate`] checks. The Python layer parses keywords with this table and publishes it
//! (`torchwm._core.ATARI_SETTINGS`).
use std::ops::RangeInclusive;

use super::config::{AutoresetMode, ResetAheadMode, VectorConfig};
use crate::atari::config::{IMAGE_SIDE, INT_MAX, NON_NEGATIVE, POSITIVE, PROBABILITY};
use crate::atari::{AtariConfig, ObsFormat};
use crate::error::{Error, Result};

/// A keyword's value, as a caller passes it.
#[derive(Debug, Clone, PartialEq)]
pub enum SettingValue {
    Int(i64),
    /// `None` for a keyword whose value is optional (the default is then the ROM's).
    Unset,
    Bool(bool),
    Float(f64),
    Mode(AutoresetMode),
    /// One of a [`Kind::Choice`]'s names.
    Choice(&'static str),
    /// One value per env, for a keyword that is [`Setting::per_env`].
    PerEnv(Vec<SettingValue>),
}

/// What a keyword accepts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    /// An integer in `[min, max]`.
    Int {
        min: i64,
        max: i64,
    },
    Bool,
    /// A number in `[min, max]` (NaN never is).
    Float {
        min: f64,
        max: f64,
    },
    AutoresetMode,
    /// `None`, or an integer in `[min, max]`.
    OptionalInt {
        min: i64,
        max: i64,
    },
    /// One of these names.
    Choice(&'static [&'static str]),
    /// A bool, or the name "auto".
    BoolOrAuto,
}

pub struct Setting {
    pub name: &'static str,
    /// Other spellings accepted for it (the ALE vector guide's).
    pub aliases: &'static [&'static str],
    pub kind: Kind,
    /// Whether it also takes one value per env (a sequence of `num_envs` values of its kind).
    pub per_env: bool,
    pub doc: &'static str,
    pub get: fn(&VectorConfig) -> SettingValue,
    /// Stores a value that [`Setting::check`] accepted.
    pub set: fn(&mut VectorConfig, SettingValue),
}

impl Setting {
    /// Whether `value` is of this keyword's kind and in its range; the error names the keyword.
    pub fn check(&self, value: &SettingValue) -> Result<()> {
        if let SettingValue::PerEnv(values) = value {
            if !self.per_env {
                return Err(self.rejects(&format!("{value}")));
            }
            return values.iter().try_for_each(|v| self.check_one(v).map_err(|_| self.rejects(&format!("{value}"))));
        }
        self.check_one(value)
    }

    /// [`check`](Self::check) of one value (not a per-env sequence).
    fn check_one(&self, value: &SettingValue) -> Result<()> {
        let ok = match (self.kind, value) {
            (Kind::Int { min, max } | Kind::OptionalInt { min, max }, SettingValue::Int(v)) => (min..=max).contains(v),
            (Kind::OptionalInt { .. }, SettingValue::Unset) => true,
            (Kind::Float { min, max }, SettingValue::Float(v)) => (min..=max).contains(v),
            (Kind::Bool, SettingValue::Bool(_)) | (Kind::AutoresetMode, SettingValue::Mode(_)) => true,
            (Kind::Choice(names), SettingValue::Choice(name)) => names.contains(name),
            (Kind::BoolOrAuto, SettingValue::Bool(_)) => true,
            (Kind::BoolOrAuto, SettingValue::Choice(name)) => *name == AUTO,
            _ => false,
        };
        if ok {
            Ok(())
        } else {
            Err(self.rejects(&format!("{value}")))
        }
    }

    /// The error for a value this keyword does not accept (shown as `shown`).
    pub fn rejects(&self, shown: &str) -> Error {
        let per_env = if self.per_env { " (or a sequence of them, one per env)" } else { "" };
        Error::InvalidArgument(format!("{} must be {}{per_env}, got {shown}", self.name, self.kind))
    }

    /// The value a `VectorConfig::new` with default settings has.
    pub fn default_value(&self) -> SettingValue {
        (self.get)(&VectorConfig::new("", 1, AtariConfig::default()))
    }

    /// Checks `value` and stores it in `config`.
    pub fn apply(&self, config: &mut VectorConfig, value: SettingValue) -> Result<()> {
        self.check(&value)?;
        (self.set)(config, value);
        Ok(())
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Kind::Int { min, max } => write!(f, "an integer in [{min}, {max}]"),
            Kind::Bool => write!(f, "a bool"),
            Kind::Float { min, max } => write!(f, "a number in [{min}, {max}]"),
            Kind::AutoresetMode => write!(f, "one of AutoresetMode.{{NEXT_STEP, SAME_STEP, DISABLED}}"),
            Kind::OptionalInt { min, max } => write!(f, "None or an integer in [{min}, {max}]"),
            Kind::Choice(names) => write!(f, "one of {names:?}"),
            Kind::BoolOrAuto => write!(f, "a bool or {AUTO:?}"),
        }
    }
}

impl std::fmt::Display for SettingValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SettingValue::Int(v) => write!(f, "{v}"),
            SettingValue::Unset => write!(f, "None"),
            SettingValue::Bool(v) => write!(f, "{}", if *v { "True" } else { "False" }),
            SettingValue::Float(v) => write!(f, "{v}"),
            SettingValue::Mode(mode) => write!(f, "{}", mode.name()),
            SettingValue::Choice(name) => write!(f, "{name:?}"),
            SettingValue::PerEnv(values) => {
                let shown: Vec<String> = values.iter().map(ToString::to_string).collect();
                write!(f, "[{}]", shown.join(", "))
            }
        }
    }
}

// Setters run after `check`, so each value is of the keyword's kind and within its range (which
// fits the field's type); the fallbacks below are never taken.
fn int(value: SettingValue) -> i64 {
    debug_assert!(matches!(value, SettingValue::Int(_)), "{value:?}");
    if let SettingValue::Int(v) = value {
        v
    } else {
        0
    }
}
fn uint<T: TryFrom<i64> + Default>(value: SettingValue) -> T {
    T::try_from(int(value)).unwrap_or_default()
}
fn boolean(value: SettingValue) -> bool {
    debug_assert!(matches!(value, SettingValue::Bool(_)), "{value:?}");
    matches!(value, SettingValue::Bool(true))
}
fn float(value: SettingValue) -> f64 {
    debug_assert!(matches!(value, SettingValue::Float(_)), "{value:?}");
    if let SettingValue::Float(v) = value {
        v
    } else {
        0.0
    }
}
fn optional(value: Option<u32>) -> SettingValue {
    value.map_or(SettingValue::Unset, |v| SettingValue::Int(v.into()))
}
fn optional_uint(value: SettingValue) -> Option<u32> {
    match value {
        SettingValue::Unset => None,
        v => Some(uint(v)),
    }
}
fn count(value: usize) -> SettingValue {
    SettingValue::Int(i64::try_from(value).unwrap_or(i64::MAX))
}

const fn ints(range: RangeInclusive<i64>) -> Kind {
    Kind::Int { min: *range.start(), max: *range.end() }
}

/// A bool keyword stored as is in a `VectorConfig` field.
macro_rules! bool_setting {
    ($name:literal, $doc:expr, $($field:ident).+) => {
        Setting {
            name: $name,
            aliases: &[],
            kind: Kind::Bool,
            per_env: false,
            doc: $doc,
            get: |c| SettingValue::Bool(c.$($field).+),
            set: |c, v| c.$($field).+ = boolean(v),
        }
    };
}

/// A per-env keyword's value: the list of `list` when there is one, else `scalar`.
fn per_env_value<T: Copy>(scalar: T, list: &Option<Vec<T>>, to_value: fn(T) -> SettingValue) -> SettingValue {
    match list {
        Some(values) => SettingValue::PerEnv(values.iter().map(|&v| to_value(v)).collect()),
        None => to_value(scalar),
    }
}

/// Stores a per-env keyword's value: one per env in `list`, or one for all in `scalar` (dropping a list).
fn set_per_env<T>(value: SettingValue, scalar: &mut T, list: &mut Option<Vec<T>>, from_value: fn(SettingValue) -> T) {
    match value {
        SettingValue::PerEnv(values) => *list = Some(values.into_iter().map(from_value).collect()),
        value => {
            *scalar = from_value(value);
            *list = None;
        }
    }
}

/// `None` or a non-negative integer, for all envs or one per env: `env.$field` or `per_env.$field`.
macro_rules! optional_per_env_setting {
    ($name:literal, $doc:expr, $field:ident) => {
        Setting {
            name: $name,
            aliases: &[],
            kind: Kind::OptionalInt { min: 0, max: INT_MAX },
            per_env: true,
            doc: $doc,
            get: |c| per_env_value(c.env.$field, &c.per_env.$field, optional),
            set: |c, v| set_per_env(v, &mut c.env.$field, &mut c.per_env.$field, optional_uint),
        }
    };
}

/// An integer keyword stored in a `usize` field of `VectorConfig`.
macro_rules! count_setting {
    ($name:literal, $kind:expr, $doc:expr, $($field:ident).+) => {
        Setting {
            name: $name,
            aliases: &[],
            kind: $kind,
            per_env: false,
            doc: $doc,
            get: |c| count(c.$($field).+),
            set: |c, v| c.$($field).+ = uint(v),
        }
    };
}

/// An integer keyword stored in a `u32` field of `VectorConfig`, with its other spellings.
macro_rules! int_setting {
    ($name:literal, $aliases:expr, $kind:expr, $doc:expr, $($field:ident).+) => {
        Setting {
            name: $name,
            aliases: $aliases,
            kind: $kind,
            per_env: false,
            doc: $doc,
            get: |c| SettingValue::Int(c.$($field).+.into()),
            set: |c, v| c.$($field).+ = uint(v),
        }
    };
}

const OBS_TYPES: [&str; 3] = [ObsFormat::NAMES[0].0, ObsFormat::NAMES[1].0, ObsFormat::NAMES[2].0];

/// The keywords, in ale_py's order (`num_envs` first: it is also the second positional argument).
pub static SETTINGS: &[Setting] = &[
    count_setting!("num_envs", ints(POSITIVE), "Number of environments.", num_envs),
    count_setting!(
        "batch_size",
        ints(NON_NEGATIVE),
        "Envs per batch returned by recv(); 0 means num_envs (synchronous).",
        batch_size
    ),
    count_setting!(
        "num_threads",
        ints(NON_NEGATIVE),
        "Worker threads; 0 picks from the batch size and the available cores.",
        num_threads
    ),
    Setting {
        name: "thread_affinity_offset",
        aliases: &[],
        kind: ints(-1..=INT_MAX),
        per_env: false,
        doc: "Pin worker i to core (offset + i) % cores; -1 leaves scheduling to the OS.",
        get: |c| c.thread_affinity_offset.map_or(SettingValue::Int(-1), count),
        set: |c, v| c.thread_affinity_offset = usize::try_from(int(v)).ok(),
    },
    int_setting!(
        "max_num_frames_per_episode",
        &["max_episode_steps"],
        ints(POSITIVE),
        "Emulator frames per episode before truncation.",
        env.max_episode_frames
    ),
    Setting {
        name: "repeat_action_probability",
        aliases: &[],
        kind: Kind::Float { min: *PROBABILITY.start(), max: *PROBABILITY.end() },
        per_env: true,
        doc: "Sticky actions: probability that the emulator repeats the previous action (one for all envs, or \
              one per env).",
        get: |c| {
            let to_value = |p: f32| SettingValue::Float(p.into());
            per_env_value(c.env.repeat_action_probability, &c.per_env.repeat_action_probability, to_value)
        },
        set: |c, v| {
            let (scalar, list) = (&mut c.env.repeat_action_probability, &mut c.per_env.repeat_action_probability);
            set_per_env(v, scalar, list, |v| float(v) as f32)
        },
    },
    bool_setting!("full_action_space", "Use all 18 actions instead of the game's minimal set.", env.full_action_space),
    bool_setting!(
        "continuous",
        "Continuous actions (radius, theta, fire), mapped onto the full action set.",
        continuous
    ),
    Setting {
        name: "continuous_action_threshold",
        aliases: &[],
        kind: Kind::Float { min: f64::NEG_INFINITY, max: f64::INFINITY },
        per_env: false,
        doc: "Threshold of the continuous action mapping.",
        get: |c| SettingValue::Float(c.continuous_action_threshold.into()),
        set: |c, v| c.continuous_action_threshold = float(v) as f32,
    },
    Setting {
        name: "autoreset_mode",
        aliases: &[],
        kind: Kind::AutoresetMode,
        per_env: false,
        doc: "gymnasium's AutoresetMode (or its value): NEXT_STEP, SAME_STEP or DISABLED.",
        get: |c| SettingValue::Mode(c.autoreset_mode),
        set: |c, v| {
            if let SettingValue::Mode(mode) = v {
                c.autoreset_mode = mode;
            }
        },
    },
    count_setting!("img_height", ints(IMAGE_SIDE), "Observation height in pixels.", env.img_height),
    count_setting!("img_width", ints(IMAGE_SIDE), "Observation width in pixels.", env.img_width),
    Setting {
        name: "grayscale",
        aliases: &[],
        kind: Kind::Bool,
        per_env: false,
        doc: "Grayscale observations (else RGB, with a trailing axis of 3); see obs_type.",
        get: |c| SettingValue::Bool(c.env.obs_format == ObsFormat::Grayscale),
        set: |c, v| c.env.obs_format = if boolean(v) { ObsFormat::Grayscale } else { ObsFormat::Rgb },
    },
    // ale_py's single AtariEnv has this one; its vector env has `grayscale` alone.
    Setting {
        name: "obs_type",
        aliases: &[],
        kind: Kind::Choice(&OBS_TYPES),
        per_env: false,
        doc: "'grayscale' or 'rgb' (the preprocessed screen; grayscale=True/False says the same), or 'ram': \
              the 128 bytes of RAM after each step, uint8 (batch, stack_num, 128).",
        get: |c| SettingValue::Choice(c.env.obs_format.name()),
        set: |c, v| {
            if let Some((_, format)) = ObsFormat::NAMES.iter().find(|(name, _)| v == SettingValue::Choice(name)) {
                c.env.obs_format = *format;
            }
        },
    },
    count_setting!("stack_num", ints(POSITIVE), "Frames stacked per observation.", env.stack_num),
    int_setting!(
        "frameskip",
        &["frame_skip"],
        ints(POSITIVE),
        "Emulator frames per step (the action repeats); at most max_num_frames_per_episode.",
        env.frame_skip
    ),
    bool_setting!("maxpool", "Max-pool the last two frames of a step.", env.maxpool),
    int_setting!(
        "noop_max",
        &[],
        ints(NON_NEGATIVE),
        "Resets take a random number of no-op frames below it; at most max_num_frames_per_episode.",
        env.noop_max
    ),
    bool_setting!("episodic_life", "End the episode when a life is lost.", env.episodic_life),
    bool_setting!(
        "life_loss_info",
        "Report a lost life as a termination (without ending the episode).",
        env.life_loss_info
    ),
    bool_setting!("reward_clipping", "Clip rewards to [-1, 1].", env.reward_clipping),
    Setting {
        name: "use_fire_reset",
        aliases: &["fire_reset"],
        kind: Kind::Bool,
        per_env: false,
        doc: "Press FIRE after a reset in games that have it.",
        get: |c| SettingValue::Bool(c.env.use_fire_reset),
        set: |c, v| c.env.use_fire_reset = boolean(v),
    },
    // ale_py's single AtariEnv has these two (one value); its vector env does not.
    optional_per_env_setting!(
        "mode",
        "Game mode (None: the ROM's default), one of the ROM's available modes; one for all envs, or one per env.",
        mode
    ),
    optional_per_env_setting!(
        "difficulty",
        "Game difficulty (None: the ROM's default), one of the ROM's available difficulties; one for all envs, \
         or one per env.",
        difficulty
    ),
    // torchwm's own (ale_py has no such keyword); off, `info` has exactly ale_py's keys.
    bool_setting!(
        "episode_statistics",
        "Add info['raw_reward'] (unclipped) to every step, and info['episode'] = {'r', 'l', 'frames'} \
              (raw return, steps, emulator frames) with its mask info['_episode'] when an episode ends.",
        episode_statistics
    ),
    // torchwm's own (EnvPool has RAM in info); off, `info` has exactly ale_py's keys.
    bool_setting!(
        "ram_in_info",
        "Add info['ram'], uint8 (batch, 128): each env's RAM after its step or reset (ALE's getRAM()).",
        ram_in_info
    ),
    // torchwm's own. "auto" by default: ahead only where it pays (docs/how_it_got_fast.md, "Resets run ahead").
    Setting {
        name: "reset_ahead",
        aliases: &[],
        kind: Kind::BoolOrAuto,
        per_env: false,
        doc: "Sync mode, next-step autoreset: start an env's reset as soon as its episode ends, on a thread of its \
              own, so it runs through the rest of that batch and while the caller computes its policy, and the next \
              batch waits less for it (results unchanged). \"auto\": whenever the caller leaves a core idle between \
              batches (a GPU or sleeping policy); True: always, on lowest-priority threads; False: never.",
        get: |c| match c.reset_ahead {
            ResetAheadMode::Auto => SettingValue::Choice(AUTO),
            mode => SettingValue::Bool(mode == ResetAheadMode::Always),
        },
        set: |c, v| {
            c.reset_ahead = match v {
                SettingValue::Bool(true) => ResetAheadMode::Always,
                SettingValue::Bool(false) => ResetAheadMode::Never,
                _ => ResetAheadMode::Auto,
            }
        },
    },
];

/// The value of a [`Kind::BoolOrAuto`] keyword that leaves the choice to torchwm.
pub const AUTO: &str = "auto";

/// The setting spelled `name` (its name or an alias).
pub fn find_setting(name: &str) -> Option<&'static Setting> {
    SETTINGS.iter().find(|s| s.name == name || s.aliases.contains(&name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_names_unique() {
        let config = VectorConfig::new("", 1, AtariConfig::default());
        config.validate().unwrap();
        let mut names: Vec<_> =
            SETTINGS.iter().flat_map(|s| std::iter::once(s.name).chain(s.aliases.iter().copied())).collect();
        let all = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all);
    }

    #[test]
    fn every_setting_round_trips_through_its_setter() {
        for setting in SETTINGS {
            let mut config = VectorConfig::new("", 1, AtariConfig::default());
            let value = setting.default_value();
            setting.apply(&mut config, value.clone()).unwrap();
            assert_eq!((setting.get)(&config), value, "{}", setting.name);
        }
        let frameskip = find_setting("frame_skip").unwrap();
        assert!(frameskip.check(&SettingValue::Int(0)).is_err());
        assert!(frameskip.check(&SettingValue::Bool(true)).is_err());
    }
}
