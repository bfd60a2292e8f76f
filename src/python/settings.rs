//! Python keywords -> `VectorConfig`, through the one table of settings (`vector::SETTINGS`).
//!
//! Each value is converted by its keyword's kind; a value of the wrong type or out of range (a huge
//! int included) gets the same `InvalidArgumentError` text naming the keyword.
use std::path::PathBuf;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyList, PyString, PyTuple};

use crate::atari::AtariConfig;
use crate::vector::{find_setting, AutoresetMode, Kind, Setting, SettingValue, VectorConfig, AUTO, SETTINGS};

/// The config `AtariVectorEnv(roms, num_envs, **keywords)` asks for, checked (env `i` plays
/// `roms[i % len(roms)]`).
pub(crate) fn config_from_keywords(
    roms: Vec<PathBuf>,
    num_envs: &Bound<'_, PyAny>,
    keywords: Option<&Bound<'_, PyDict>>,
) -> PyResult<VectorConfig> {
    let mut config = VectorConfig::new(PathBuf::new(), 1, AtariConfig::default());
    config.roms = roms;
    let mut given: Vec<(&str, String)> = Vec::new();
    let mut set = |spelling: String, value: &Bound<'_, PyAny>| -> PyResult<()> {
        let Some(setting) = find_setting(&spelling) else {
            return Err(PyTypeError::new_err(format!(
                "AtariVectorEnv() got an unexpected keyword argument '{spelling}'"
            )));
        };
        if let Some((_, first)) = given.iter().find(|(name, _)| *name == setting.name) {
            return Err(PyTypeError::new_err(format!(
                "AtariVectorEnv() got both '{first}' and '{spelling}', two spellings of {}",
                setting.name
            )));
        }
        given.push((setting.name, spelling));
        Ok(setting.apply(&mut config, parse(setting, value)?)?)
    };
    set("num_envs".into(), num_envs)?;
    for (key, value) in keywords.into_iter().flatten() {
        set(key.extract::<String>()?, &value)?;
    }
    // Two keywords that set one thing: ale_py's vector env has `grayscale`, its AtariEnv `obs_type`.
    if given.iter().any(|(name, _)| *name == "grayscale") && given.iter().any(|(name, _)| *name == "obs_type") {
        return Err(PyTypeError::new_err(
            "AtariVectorEnv() got both 'grayscale' and 'obs_type', which set the same thing: pass one",
        ));
    }
    config.validate()?;
    Ok(config)
}

/// `value` as `setting`'s kind, or for a per-env keyword a list, tuple or 1-d array of them; anything
/// else is rejected with the keyword's message.
fn parse(setting: &Setting, value: &Bound<'_, PyAny>) -> PyResult<SettingValue> {
    let is_sequence = value.is_instance_of::<PyList>()
        || value.is_instance_of::<PyTuple>()
        || value.get_type().name().is_ok_and(|name| name.to_str().is_ok_and(|n| n == "ndarray"));
    if setting.per_env && is_sequence {
        let values = value.try_iter()?.map(|item| parse_one(setting, &item?)).collect::<PyResult<Vec<_>>>();
        return values.map(SettingValue::PerEnv).map_err(|_| rejected(setting, value));
    }
    parse_one(setting, value)
}

fn rejected(setting: &Setting, value: &Bound<'_, PyAny>) -> PyErr {
    let shown = value.repr().map_or_else(|_| "?".into(), |r| r.to_string());
    let type_name = value.get_type().name().map_or_else(|_| "?".into(), |n| n.to_string());
    setting.rejects(&format!("{shown} ({type_name})")).into()
}

/// One value of `setting`'s kind.
fn parse_one(setting: &Setting, value: &Bound<'_, PyAny>) -> PyResult<SettingValue> {
    let parsed = match setting.kind {
        // bool is an int in Python, but True is no frame count.
        Kind::Int { .. } if is_bool(value) => None,
        Kind::Int { .. } => value.extract::<i64>().ok().map(SettingValue::Int),
        Kind::Bool => value.extract::<bool>().ok().map(SettingValue::Bool),
        Kind::Float { .. } if is_bool(value) => None,
        Kind::Float { .. } => value.extract::<f64>().ok().map(SettingValue::Float),
        Kind::AutoresetMode => autoreset_mode(value).map(SettingValue::Mode),
        Kind::OptionalInt { .. } if value.is_none() => Some(SettingValue::Unset),
        Kind::OptionalInt { .. } if is_bool(value) => None,
        Kind::OptionalInt { .. } => value.extract::<i64>().ok().map(SettingValue::Int),
        Kind::Choice(names) => value
            .extract::<String>()
            .ok()
            .and_then(|text| names.iter().find(|name| **name == text))
            .map(|name| SettingValue::Choice(name)),
        Kind::BoolOrAuto if is_bool(value) => value.extract::<bool>().ok().map(SettingValue::Bool),
        Kind::BoolOrAuto => {
            value.extract::<String>().ok().filter(|text| text == AUTO).map(|_| SettingValue::Choice(AUTO))
        }
    };
    parsed.ok_or_else(|| rejected(setting, value))
}

fn is_bool(value: &Bound<'_, PyAny>) -> bool {
    value.is_instance_of::<PyBool>()
        || value.get_type().name().is_ok_and(|name| name.to_str().is_ok_and(|n| n == "bool" || n == "bool_"))
}

/// gymnasium's `AutoresetMode` member, or its value ("NextStep", "SameStep", "Disabled").
fn autoreset_mode(value: &Bound<'_, PyAny>) -> Option<AutoresetMode> {
    let text = if value.is_instance_of::<PyString>() {
        value.extract::<String>().ok()?
    } else {
        let is_enum = value.get_type().name().ok()?.to_str().ok()? == "AutoresetMode";
        if !is_enum {
            return None;
        }
        value.getattr("value").ok()?.extract::<String>().ok()?
    };
    AutoresetMode::NAMES.iter().find(|(name, _)| *name == text).map(|(_, mode)| *mode)
}

/// A value as Python sees it (the settings' values and defaults, as the core reports them).
pub(crate) fn to_python<'py>(py: Python<'py>, value: SettingValue) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        SettingValue::Int(v) => v.into_pyobject(py)?.into_any(),
        SettingValue::Unset => py.None().into_bound(py),
        SettingValue::Bool(v) => PyBool::new(py, v).to_owned().into_any(),
        SettingValue::Float(v) => PyFloat::new(py, v).into_any(),
        SettingValue::Mode(mode) => PyString::new(py, mode.name()).into_any(),
        SettingValue::Choice(name) => PyString::new(py, name).into_any(),
        SettingValue::PerEnv(values) => {
            PyList::new(py, values.into_iter().map(|v| to_python(py, v)).collect::<PyResult<Vec<_>>>()?)?.into_any()
        }
    })
}

/// `torchwm._core.ATARI_SETTINGS`: (name, aliases, default, doc) for every keyword, in order.
pub(crate) fn settings_table(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let rows = SETTINGS
        .iter()
        .map(|s| {
            let aliases = PyTuple::new(py, s.aliases)?;
            PyTuple::new(
                py,
                [
                    s.name.into_pyobject(py)?.into_any(),
                    aliases.into_any(),
                    to_python(py, s.default_value())?,
                    s.doc.into_pyobject(py)?.into_any(),
                ],
            )
        })
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, rows)
}

/// Every setting's value in `config`, by keyword.
pub(crate) fn settings_dict<'py>(py: Python<'py>, config: &VectorConfig) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for setting in SETTINGS {
        dict.set_item(setting.name, to_python(py, (setting.get)(config))?)?;
    }
    Ok(dict)
}
