//! An algorithm's `key=value` parameters, parsed by serde into its parameter struct.
//!
//! Every algorithm's parameters are one struct with `Default`, `Serialize` and
//! `Deserialize` (`#[serde(default, deny_unknown_fields)]`, an `alias` per short name):
//! the [`Params`] trait. A spec's keys are laid over a base configuration, the default or
//! the preset the spec names: the struct is deserialized from the given keys followed by
//! the base's own values for every field not given. To learn which field a key names
//! through its aliases, the key is offered to serde twice; serde's duplicate-field error
//! names the field. Values are text: integers, numbers, `0|1|true|false|on|off|yes|no`,
//! enum names, and `none` for an empty option.

use std::fmt;

use serde::de::{self, DeserializeOwned, DeserializeSeed, IntoDeserializer, Visitor};
use serde::Serialize;

use crate::error::Error;

/// One documented parameter: its key, its short aliases and one line of help.
#[derive(Clone, Copy, Debug)]
pub struct ParamDoc {
    /// The key, as `--dump-config` prints it.
    pub name: &'static str,
    /// Other spellings of the key (`-` for `_` is always accepted).
    pub aliases: &'static [&'static str],
    /// What it does, its unit and its range.
    pub doc: &'static str,
}

/// A named base configuration: a function that edits the default.
pub type Preset<P> = (&'static str, fn(&mut P));

/// An algorithm's parameter struct.
pub trait Params: Serialize + DeserializeOwned + Default + 'static {
    /// The key that picks the base configuration (`preset`, `variant`), if any.
    const PRESET_KEY: Option<&'static str> = None;
    /// The base configurations by name: functions that edit the default.
    const PRESETS: &'static [Preset<Self>] = &[];
    /// Every key, in the order of the documentation (the preset key first).
    const DOCS: &'static [ParamDoc];
    /// Sets what the given keys imply for fields not given (the fields by their names).
    fn imply(&mut self, _given: &[&'static str]) {}
    /// Checks the ranges once every key is applied.
    fn validate(&self) -> Result<(), String> {
        Ok(())
    }
}

/// The parameters of an algorithm that takes none (its key list is empty, so every key is
/// refused).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}

impl Params for NoParams {
    const DOCS: &'static [ParamDoc] = &[];
}

/// The base configuration of `P` named `name`.
pub fn preset<P: Params>(name: &str) -> Option<P> {
    P::PRESETS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, edit)| {
            let mut p = P::default();
            edit(&mut p);
            p
        })
}

/// The names of `P`'s presets.
pub fn preset_names<P: Params>() -> Vec<&'static str> {
    P::PRESETS.iter().map(|(n, _)| *n).collect()
}

/// The `key=value` entries among `parts`, key and value trimmed, empty parts skipped; the
/// first part without `=` (trimmed) as the error.
pub fn key_values<'a>(
    parts: impl IntoIterator<Item = &'a str>,
) -> Result<Vec<(&'a str, &'a str)>, &'a str> {
    parts
        .into_iter()
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| {
            p.split_once('=')
                .map(|(k, v)| (k.trim(), v.trim()))
                .ok_or(p)
        })
        .collect()
}

/// Parses `params` (each `key=value`; empty ones are skipped) of algorithm `alg` into `P`,
/// over the default or over `preset` (the caller's, e.g. `--preset`; a preset also given
/// as a key is an error). `spec` is the whole text, for messages.
pub fn parse_params<P: Params>(
    alg: &str,
    spec: &str,
    params: &[&str],
    preset: Option<&str>,
) -> Result<P, Error> {
    let cfg = |msg: String| Error::Config(format!("{alg}: {msg}"));
    let mut pairs: Vec<(String, &str)> = key_values(params.iter().copied())
        .map_err(|p| cfg(format!("expected key=value, got \"{p}\"")))?
        .into_iter()
        .map(|(k, v)| (k.replace('-', "_"), v))
        .collect();
    let mut base_name = preset.map(str::to_string);
    if let Some(key) = P::PRESET_KEY {
        for (_, v) in pairs.iter().filter(|(k, _)| k == key) {
            if base_name.is_some() {
                return Err(cfg(format!("{key} is given twice in \"{spec}\"")));
            }
            base_name = Some(v.to_string());
        }
        pairs.retain(|(k, _)| k != key);
    }
    let base = match &base_name {
        None => P::default(),
        Some(name) => self::preset::<P>(name).ok_or_else(|| {
            cfg(format!(
                "unknown {} \"{name}\"; known: {}",
                P::PRESET_KEY.unwrap_or("preset"),
                preset_names::<P>().join(", ")
            ))
        })?,
    };
    let mut given: Vec<&'static str> = Vec::new();
    for (key, value) in &pairs {
        let field = field_of::<P>(key, value).map_err(|e| match e {
            ParamError::Unknown(_) => cfg(format!(
                "unknown parameter \"{key}\"; known: {}",
                known_keys::<P>()
            )),
            e => cfg(format!("parameter \"{key}\" {e}")),
        })?;
        if given.contains(&field) {
            return Err(cfg(format!(
                "parameter \"{field}\" is given twice in \"{spec}\""
            )));
        }
        given.push(field);
    }
    let mut entries: Vec<(String, Value<'_>)> = pairs
        .iter()
        .map(|(k, v)| (k.clone(), Value::Text(v)))
        .collect();
    if let Ok(serde_json::Value::Object(fields)) = serde_json::to_value(&base) {
        entries.extend(
            fields
                .into_iter()
                .filter(|(k, _)| !given.contains(&k.as_str()))
                .map(|(k, v)| (k, Value::Json(v))),
        );
    }
    let mut p = P::deserialize(Entries {
        items: entries.into_iter(),
        value: None,
    })
    .map_err(|e| cfg(e.to_string()))?;
    p.imply(&given);
    p.validate().map_err(cfg)?;
    Ok(p)
}

/// Every key of `P`, for messages.
fn known_keys<P: Params>() -> String {
    let names: Vec<&str> = P::DOCS.iter().map(|d| d.name).collect();
    if names.is_empty() {
        "none (it takes no parameter)".into()
    } else {
        names.join(", ")
    }
}

/// The field of `P` that `key` names: offered twice, the key makes serde name its field
/// in a duplicate-field error.
fn field_of<P: Params>(key: &str, value: &str) -> Result<&'static str, ParamError> {
    let twice = vec![
        (key.to_string(), Value::Text(value)),
        (key.to_string(), Value::Text(value)),
    ];
    match P::deserialize(Entries {
        items: twice.into_iter(),
        value: None,
    }) {
        Err(ParamError::Duplicate(field)) => Ok(field),
        Err(e) => Err(e),
        Ok(_) => Err(ParamError::Custom("is not a parameter".into())),
    }
}

/// Why a parameter list does not deserialize.
#[derive(Debug)]
enum ParamError {
    /// A key that names no field.
    Unknown(String),
    /// A field given twice (by its name or its aliases).
    Duplicate(&'static str),
    /// A value that does not parse.
    Custom(String),
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamError::Unknown(k) => write!(f, "unknown parameter \"{k}\""),
            ParamError::Duplicate(k) => write!(f, "parameter \"{k}\" is given twice"),
            ParamError::Custom(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for ParamError {}

impl de::Error for ParamError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        ParamError::Custom(msg.to_string())
    }
    fn unknown_field(field: &str, _expected: &'static [&'static str]) -> Self {
        ParamError::Unknown(field.to_string())
    }
    fn duplicate_field(field: &'static str) -> Self {
        ParamError::Duplicate(field)
    }
    fn unknown_variant(variant: &str, expected: &'static [&'static str]) -> Self {
        ParamError::Custom(format!(
            "expects {}, got \"{variant}\"",
            expected.join(" or ")
        ))
    }
}

/// A value: the user's text, or the base configuration's own.
enum Value<'a> {
    Text(&'a str),
    Json(serde_json::Value),
}

/// The keys and values, as a map for serde.
struct Entries<'a, I: Iterator<Item = (String, Value<'a>)>> {
    items: I,
    value: Option<Value<'a>>,
}

impl<'de, 'a, I: Iterator<Item = (String, Value<'a>)>> de::Deserializer<'de> for Entries<'a, I> {
    type Error = ParamError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamError> {
        visitor.visit_map(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
        byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map struct
        enum identifier ignored_any
    }
}

impl<'de, 'a, I: Iterator<Item = (String, Value<'a>)>> de::MapAccess<'de> for Entries<'a, I> {
    type Error = ParamError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, ParamError> {
        let Some((key, value)) = self.items.next() else {
            return Ok(None);
        };
        self.value = Some(value);
        seed.deserialize(IntoDeserializer::<ParamError>::into_deserializer(key))
            .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, ParamError> {
        match self.value.take() {
            Some(Value::Text(s)) => seed.deserialize(Text(s)),
            Some(Value::Json(j)) => seed.deserialize(j).map_err(de::Error::custom),
            None => Err(de::Error::custom("a value without a key")),
        }
    }
}

/// One value as the user wrote it.
struct Text<'a>(&'a str);

impl Text<'_> {
    fn parse<T: std::str::FromStr>(&self, what: &str) -> Result<T, ParamError> {
        self.0
            .parse()
            .map_err(|_| ParamError::Custom(format!("expects {what}, got \"{}\"", self.0)))
    }
}

impl<'de> de::Deserializer<'de> for Text<'_> {
    type Error = ParamError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamError> {
        visitor.visit_str(self.0)
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamError> {
        match self.0 {
            "1" | "true" | "on" | "yes" => visitor.visit_bool(true),
            "0" | "false" | "off" | "no" => visitor.visit_bool(false),
            s => Err(ParamError::Custom(format!("expects 0 or 1, got \"{s}\""))),
        }
    }

    fn deserialize_u64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamError> {
        visitor.visit_u64(self.parse("a non-negative integer")?)
    }

    fn deserialize_u32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamError> {
        visitor.visit_u32(self.parse("a non-negative integer below 2^32")?)
    }

    fn deserialize_u8<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamError> {
        visitor.visit_u8(self.parse("a non-negative integer below 256")?)
    }

    fn deserialize_i64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamError> {
        visitor.visit_i64(self.parse("an integer")?)
    }

    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamError> {
        visitor.visit_f64(self.parse("a number")?)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamError> {
        if self.0 == "none" {
            visitor.visit_none()
        } else {
            visitor.visit_some(self)
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, ParamError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ParamError> {
        visitor.visit_enum(IntoDeserializer::<ParamError>::into_deserializer(self.0))
    }

    serde::forward_to_deserialize_any! {
        i8 i16 i32 i128 u16 u128 f32 char str string bytes byte_buf unit unit_struct seq
        tuple tuple_struct map struct identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
    #[serde(default, deny_unknown_fields)]
    struct Toy {
        #[serde(alias = "n")]
        count: usize,
        on: bool,
        name: Option<String>,
    }

    impl Params for Toy {
        const PRESET_KEY: Option<&'static str> = Some("preset");
        const PRESETS: &'static [Preset<Self>] = &[("big", |t| t.count = 99)];
        const DOCS: &'static [ParamDoc] = &[];
        fn validate(&self) -> Result<(), String> {
            (self.count <= 100)
                .then_some(())
                .ok_or_else(|| format!("count={} is more than 100", self.count))
        }
    }

    fn toy(params: &[&str]) -> Result<Toy, String> {
        parse_params::<Toy>("toy", "toy", params, None).map_err(|e| e.to_string())
    }

    /// Keys overlay the base; aliases name the same field; bad input names the key.
    #[test]
    fn keys_overlay_the_base_and_aliases_are_one_field() {
        assert_eq!(toy(&[]).unwrap(), Toy::default());
        let t = toy(&["preset=big", "on=1"]).unwrap();
        assert_eq!((t.count, t.on), (99, true));
        assert_eq!(toy(&["n=3", "preset=big"]).unwrap().count, 3);
        assert_eq!(toy(&["name=x"]).unwrap().name.as_deref(), Some("x"));
        let e = toy(&["n=3", "count=4"]).unwrap_err();
        assert!(e.contains("\"count\" is given twice"), "{e}");
        let e = toy(&["bogus=1"]).unwrap_err();
        assert!(e.contains("unknown parameter \"bogus\""), "{e}");
        let e = toy(&["count=x"]).unwrap_err();
        assert!(
            e.contains("\"count\" expects a non-negative integer"),
            "{e}"
        );
        let e = toy(&["on=maybe"]).unwrap_err();
        assert!(e.contains("expects 0 or 1"), "{e}");
        let e = toy(&["count=101"]).unwrap_err();
        assert!(e.contains("more than 100"), "{e}");
        let e = toy(&["preset=small"]).unwrap_err();
        assert!(e.contains("unknown preset \"small\"; known: big"), "{e}");
        let e = toy(&["count"]).unwrap_err();
        assert!(e.contains("expected key=value"), "{e}");
        let e = parse_params::<Toy>("toy", "toy", &["preset=big"], Some("big")).unwrap_err();
        assert!(e.to_string().contains("given twice"), "{e}");
    }
}
