//! The model file: a versioned JSON document, written atomically (see `crate::atomic`).
//!
//! ```json
//! {"format": "svmmap-model", "version": 1, "n_features": 46, "coef": [...],
//!  "params": {...}, "feature_names": null, "binning": null, "training": {...}}
//! ```
//!
//! `params` (the estimator's parameters), `binning`, `scaler` and `training` (the summary of the
//! fit) are free-form objects owned by the Python layer; this module checks the parts every
//! reader relies on: the format name, the version, and that `coef` has `n_features` finite
//! numbers.
//!
//! Version 2 added `scaler` (an affine map of the input features before the model). A model
//! without one is still written as version 1, so that an older svmmap reads it; a version-1
//! reader would ignore a `scaler` and score unscaled features, hence the new version.

use serde::{Deserialize, Serialize};

use crate::atomic::write_atomic;
use crate::error::{Error, Result};

pub const FORMAT_NAME: &str = "svmmap-model";
/// The newest format version, which this svmmap reads and writes for models with a scaler.
pub const FORMAT_VERSION: u32 = 2;
/// The format version of a model without a scaler (the oldest version, read by every svmmap).
pub const PLAIN_FORMAT_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ModelFile {
    pub format: String,
    pub version: u32,
    pub n_features: usize,
    pub coef: Vec<f64>,
    #[serde(default)]
    pub params: serde_json::Value,
    #[serde(default)]
    pub feature_names: Option<Vec<String>>,
    #[serde(default)]
    pub binning: Option<serde_json::Value>,
    #[serde(default)]
    pub training: Option<serde_json::Value>,
    /// Only in version 2; left out of the text when absent, so that a version-1 file is
    /// written as before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scaler: Option<serde_json::Value>,
}

/// serde_json's words for a `\\uD800`-`\\uDFFF` escape without its other half ("lone
/// leading surrogate in hex escape", "unexpected end of hex escape") name neither the field nor
/// what is wrong with the text. Such an escape is half of a UTF-16 pair and no character, so no
/// string of a model (a feature name, a loss) can hold it; the error names the field whose
/// string does, read from the nearest key before the error's position.
fn lone_surrogate(text: &str, e: &serde_json::Error) -> Option<String> {
    let said = e.to_string();
    if !(said.contains("surrogate") || said.contains("hex escape")) {
        return None;
    }
    let field = key_before(text, e).map_or_else(String::new, |key| format!(" of field \"{key}\""));
    Some(format!(
        "a string{field} holds a \\u escape of half a UTF-16 surrogate pair (\\ud800 to \\udfff \
         without its other half, column {}), which is no character: write the character itself or \
         both halves of its pair",
        e.column()
    ))
}

/// The key of the field in which serde_json stopped with `e`: the nearest key before the
/// error's position (its line and column, 1-based, in `text`).
fn key_before(text: &str, e: &serde_json::Error) -> Option<String> {
    let offset: usize = text
        .split_inclusive('\n')
        .take(e.line().saturating_sub(1))
        .map(str::len)
        .sum::<usize>()
        + e.column();
    nearest_key(&text.as_bytes()[..offset.min(text.len())])
}

/// The last object key (`"key":`) that starts before the end of `before`.
fn nearest_key(before: &[u8]) -> Option<String> {
    let mut i = before.len();
    while i > 0 {
        i -= 1;
        if before[i] != b':' {
            continue;
        }
        let head = before[..i].trim_ascii_end();
        if let Some(inner) = head.strip_suffix(b"\"") {
            if let Some(start) = inner.iter().rposition(|&b| b == b'"') {
                return Some(String::from_utf8_lossy(&inner[start + 1..]).into_owned());
            }
        }
    }
    None
}

impl ModelFile {
    /// Parses and checks a model document; `source` names it in errors.
    pub fn from_json(text: &str, source: &str) -> Result<Self> {
        // Look at the header first, so that a newer version is reported as such even when the
        // rest of its layout has changed.
        let not_json = |e: serde_json::Error| {
            let what = if e.is_eof() {
                "the file ends early (truncated?)"
            } else {
                "not valid JSON"
            };
            if let Some(message) = lone_surrogate(text, &e) {
                return Error::Model(format!("{source}:{}: {message}", e.line()));
            }
            Error::Model(format!("{source}:{}: {what}: {e}", e.line()))
        };
        // JSON leaves repeated keys to the reader, and serde_json keeps the last one: a file
        // with two "coef" (a hand edit, two documents merged) would score with either
        // without a word, so a repeated key anywhere is refused first.
        serde_json::from_str::<UniqueKeys>(text).map_err(not_json)?;
        let header: serde_json::Value = serde_json::from_str(text).map_err(not_json)?;
        let format = header.get("format").and_then(|v| v.as_str());
        if format != Some(FORMAT_NAME) {
            return Err(Error::Model(format!(
                "{source}: not an svmmap model (expected \"format\": \"{FORMAT_NAME}\", got {})",
                header
                    .get("format")
                    .map_or("nothing".to_string(), |v| v.to_string())
            )));
        }
        match header.get("version").and_then(|v| v.as_u64()) {
            Some(v) if (PLAIN_FORMAT_VERSION as u64..=FORMAT_VERSION as u64).contains(&v) => {}
            Some(v) if v > FORMAT_VERSION as u64 => {
                return Err(Error::Model(format!(
                    "{source}: model format version {v} was written by a newer svmmap; \
                     this svmmap reads versions {PLAIN_FORMAT_VERSION} to {FORMAT_VERSION}: upgrade svmmap"
                )))
            }
            other => {
                // Say what the file holds: 0, "1", 1.0 and a missing field are refused alike.
                let given = match (other, header.get("version")) {
                    (Some(v), _) => v.to_string(),
                    (None, Some(v)) => format!("{v} ({})", json_kind(v)),
                    (None, None) => "(missing)".to_string(),
                };
                return Err(Error::Model(format!(
                    "{source}: unsupported model format version {given}; this svmmap reads versions {PLAIN_FORMAT_VERSION} to {FORMAT_VERSION} (an integer)"
                )));
            }
        }
        // Read from the text, not from `header`, so that an error has its position: serde_json's
        // "invalid type: string \"1\", expected f64" named no field (coef, n_features or
        // feature_names), which the nearest key before the position is.
        drop(header);
        let model: ModelFile = serde_json::from_str(text).map_err(|e| {
            let said = e.to_string();
            // A missing field is found at the end of the document, after every key.
            let field = match key_before(text, &e) {
                Some(key) if !said.starts_with("missing field") => format!(" field \"{key}\":"),
                _ => String::new(),
            };
            let said = said
                .rsplit_once(" at line ")
                .map_or(said.as_str(), |(head, _)| head);
            Error::Model(format!(
                "{source}:{}: malformed model:{field} {said}",
                e.line()
            ))
        })?;
        model.check(source)?;
        Ok(model)
    }

    pub fn check(&self, source: &str) -> Result<()> {
        if self.n_features == 0 {
            // Nothing could be scored with it: predict refuses data without features.
            return Err(Error::Model(format!(
                "{source}: n_features is 0; a model has at least one weight"
            )));
        }
        if self.coef.len() != self.n_features {
            return Err(Error::Model(format!(
                "{source}: n_features is {} but coef has {} entries",
                self.n_features,
                self.coef.len()
            )));
        }
        if let Some(i) = self.coef.iter().position(|v| !v.is_finite()) {
            return Err(Error::Model(format!(
                "{source}: coef[{i}] is not a finite number"
            )));
        }
        // A score is a sum of weights times features; on binned (0/1) features it can reach
        // the sum of the weights' magnitudes, which must therefore stay finite.
        if !self.coef.iter().map(|v| v.abs()).sum::<f64>().is_finite() {
            return Err(Error::Model(format!(
                "{source}: coef: the weights' magnitudes sum beyond the float64 range (1.8e308), \
                 so scores would overflow to inf"
            )));
        }
        // The free-form parts are objects when present; a reader may look up keys in them.
        for (field, value) in [
            ("params", Some(&self.params)),
            ("binning", self.binning.as_ref()),
            ("training", self.training.as_ref()),
            ("scaler", self.scaler.as_ref()),
        ] {
            if let Some(v) = value {
                if !(v.is_object() || v.is_null()) {
                    return Err(Error::Model(format!(
                        "{source}: \"{field}\" must be a JSON object or null, got {}",
                        json_kind(v)
                    )));
                }
            }
        }
        if self.version < 2 && self.scaler.is_some() {
            // A version-1 reader ignores the field and would score unscaled features.
            return Err(Error::Model(format!(
                "{source}: \"scaler\" needs model format version 2 (a version-1 reader would ignore it), \
                 but the file says version {}",
                self.version
            )));
        }
        if let Some(names) = &self.feature_names {
            if names.len() != self.n_features {
                return Err(Error::Model(format!(
                    "{source}: {} feature names for {} features",
                    names.len(),
                    self.n_features
                )));
            }
        }
        Ok(())
    }

    pub fn to_json(&self) -> Result<String> {
        serde_json::to_string_pretty(self)
            .map_err(|e| Error::Model(format!("cannot encode model: {e}")))
    }

    /// The document as JSON text without indentation, as `load_model_json` hands it to Python:
    /// a weight per line of indentation would make the text several times the file's size.
    pub fn to_json_compact(&self) -> Result<String> {
        serde_json::to_string(self).map_err(|e| Error::Model(format!("cannot encode model: {e}")))
    }

    /// Reads the model file `file`, the OS's path (see `open_text`; errors name it as it
    /// displays).
    pub fn load(file: &std::path::Path) -> Result<Self> {
        let name = file.display().to_string();
        let path = name.as_str();
        // The one opener of text files (gzip by its magic bytes, a byte order mark skipped,
        // UTF-16 refused), with the text's size checked against the available memory before
        // it is read or inflated: the text and the JSON text `to_json_compact` gives back.
        let bytes = crate::data::reader::read_text(file, 2).map_err(|e| match e {
            // A damaged gzip file or text in another encoding is a format problem of the
            // model file; running out of memory or an OS error stays what it is.
            Error::Parse { location, message } => Error::Model(format!("{location}: {message}")),
            other => other,
        })?;
        check_parse_memory(path, &bytes)?;
        // A binary file handed over by mistake is a format problem, not an I/O failure.
        let text = String::from_utf8(bytes).map_err(|e| {
            let at = e.utf8_error().valid_up_to();
            let bytes = e.as_bytes();
            let line = bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1;
            Error::Model(format!(
                "{path}:{line}: not an svmmap model: the file is not UTF-8 text (byte 0x{:02x} \
                 at offset {at}; Latin-1?)",
                bytes[at]
            ))
        })?;
        Self::from_json(&text, path)
    }

    pub fn save(&self, path: &str) -> Result<()> {
        self.check(path)?;
        let mut text = self.to_json()?;
        text.push('\n');
        if path.ends_with(".gz") {
            // A ".gz" name promises gzip data, which `load` (and gunzip) then read.
            let mut encoder =
                flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            std::io::Write::write_all(&mut encoder, text.as_bytes())
                .and_then(|()| encoder.finish())
                .map_err(|e| Error::io(path, e))
                .and_then(|bytes| write_atomic(path, &bytes))
        } else {
            write_atomic(path, text.as_bytes())
        }
    }
}

/// Bytes a model file's load holds per JSON value (a weight, a threshold, a name) at its peak:
/// the parsed tree's node (32 bytes) twice while its array grows by doubling, then, in Python,
/// the compact text again, a float object and its list slot (about 33 bytes), and the weights'
/// array (8 bytes). A round upper figure; a model of a million weights needs about 100 MB.
const LOAD_BYTES_PER_VALUE: u64 = 96;

/// The memory a model file's text will take once parsed, here and in Python, must be
/// available: parsing allocates as it goes, and a failed allocation aborts the process (a file
/// of 40 MB of "0," holds twenty million weights and takes gigabytes). The count of values is
/// bounded by the count of commas, found without parsing.
fn check_parse_memory(path: &str, text: &[u8]) -> Result<()> {
    let values = text.iter().filter(|&&b| b == b',').count() as u64 + 1;
    let bytes = (text.len() as u64)
        .saturating_mul(2)
        .saturating_add(values.saturating_mul(LOAD_BYTES_PER_VALUE));
    crate::runtime::memory::check_call(bytes, || {
        (
            format!(
                "loading the model file {path} ({} of JSON text, up to {values} numbers)",
                crate::runtime::memory::human(text.len() as u64)
            ),
            "free memory, or load it on a machine with more".to_string(),
        )
    })
}

/// A JSON document walked only to check that no object repeats a key; its error (with
/// serde_json's line and column) names the key.
struct UniqueKeys;

impl<'de> Deserialize<'de> for UniqueKeys {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        d.deserialize_any(UniqueKeysVisitor)
    }
}

struct UniqueKeysVisitor;

impl<'de> serde::de::Visitor<'de> for UniqueKeysVisitor {
    type Value = UniqueKeys;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> std::result::Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }
    fn visit_i64<E>(self, _: i64) -> std::result::Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }
    fn visit_u64<E>(self, _: u64) -> std::result::Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }
    fn visit_f64<E>(self, _: f64) -> std::result::Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }
    fn visit_str<E>(self, _: &str) -> std::result::Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }
    fn visit_unit<E>(self) -> std::result::Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> std::result::Result<UniqueKeys, A::Error> {
        while seq.next_element::<UniqueKeys>()?.is_some() {}
        Ok(UniqueKeys)
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(
        self,
        mut map: A,
    ) -> std::result::Result<UniqueKeys, A::Error> {
        let mut seen = std::collections::HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !seen.insert(key.clone()) {
                return Err(serde::de::Error::custom(format!(
                    "the key {key:?} appears twice in one object (a JSON reader would keep \
                     either); keep one"
                )));
            }
            map.next_value::<UniqueKeys>()?;
        }
        Ok(UniqueKeys)
    }
}

fn json_kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> ModelFile {
        ModelFile {
            format: FORMAT_NAME.into(),
            version: PLAIN_FORMAT_VERSION,
            n_features: 2,
            coef: vec![0.1, -3.0e-17],
            params: serde_json::json!({"C": 1.0}),
            feature_names: None,
            binning: None,
            training: None,
            scaler: None,
        }
    }

    #[test]
    fn round_trip_is_exact() {
        let dir = std::env::temp_dir().join(format!("svmmap-model-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("m.json").to_string_lossy().into_owned();
        let m = sample();
        m.save(&path).unwrap();
        assert_eq!(ModelFile::load(std::path::Path::new(&path)).unwrap(), m);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn weights_read_back_bit_for_bit() {
        // Random weights of every magnitude: each must survive text and back exactly, which
        // serde_json guarantees only with its float_roundtrip feature.
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let coef: Vec<f64> = (0..5000)
            .map(|_| rng.random_range(-1.0..1.0) * 10f64.powi(rng.random_range(-30..30)))
            .collect();
        let m = ModelFile {
            n_features: coef.len(),
            coef,
            ..sample()
        };
        let back = ModelFile::from_json(&m.to_json().unwrap(), "m.json").unwrap();
        assert!(back
            .coef
            .iter()
            .zip(&m.coef)
            .all(|(a, b)| a.to_bits() == b.to_bits()));
    }

    #[test]
    fn a_byte_order_mark_is_skipped_and_a_model_without_weights_refused() {
        let dir = scratch_dir("model-bom");
        let path = dir.join("m.json");
        let text = sample().to_json().unwrap();
        std::fs::write(&path, format!("\u{feff}{text}")).unwrap();
        assert_eq!(ModelFile::load(&path).unwrap(), sample());
        std::fs::remove_dir_all(&dir).unwrap();
        let empty = ModelFile {
            n_features: 0,
            coef: vec![],
            ..sample()
        };
        let e = ModelFile::from_json(&empty.to_json().unwrap(), "m.json").unwrap_err();
        assert!(e.to_string().contains("n_features is 0"), "{e}");
    }

    #[test]
    fn bad_files_are_reported() {
        let text = sample().to_json().unwrap();
        let truncated = &text[..text.len() / 2];
        assert!(ModelFile::from_json(truncated, "m.json")
            .unwrap_err()
            .to_string()
            .contains("truncated"));
        let newer = text.replace("\"version\": 1", "\"version\": 3");
        assert!(ModelFile::from_json(&newer, "m.json")
            .unwrap_err()
            .to_string()
            .contains("newer svmmap"));
        let other = text.replace(FORMAT_NAME, "something-else");
        assert!(ModelFile::from_json(&other, "m.json")
            .unwrap_err()
            .to_string()
            .contains("not an svmmap model"));
        let huge = ModelFile {
            coef: vec![1e308, 1e308],
            ..sample()
        };
        assert!(ModelFile::from_json(&huge.to_json().unwrap(), "m.json")
            .unwrap_err()
            .to_string()
            .contains("overflow to inf"));
        let short = text.replace("\"n_features\": 2", "\"n_features\": 3");
        assert!(ModelFile::from_json(&short, "m.json")
            .unwrap_err()
            .to_string()
            .contains("coef has 2"));
    }

    fn scratch_dir(tag: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("svmmap-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_scaler_needs_version_2_and_its_absence_keeps_version_1_text() {
        let plain = sample().to_json().unwrap();
        assert!(!plain.contains("scaler"), "{plain}");
        let scaled = ModelFile {
            version: 2,
            scaler: Some(serde_json::json!({"type": "sklearn.preprocessing.MaxAbsScaler"})),
            ..sample()
        };
        let text = scaled.to_json().unwrap();
        assert_eq!(ModelFile::from_json(&text, "m.json").unwrap(), scaled);
        let e = ModelFile::from_json(&text.replace("\"version\": 2", "\"version\": 1"), "m.json")
            .unwrap_err()
            .to_string();
        assert!(e.contains("\"scaler\" needs model format version 2"), "{e}");
        let e = ModelFile::from_json(
            &text.replace("{\n    \"type\"", "[{\n    \"type\""),
            "m.json",
        );
        assert!(e.is_err());
    }

    #[test]
    fn binary_and_mistyped_model_files_are_format_errors() {
        let dir = scratch_dir("model-bad");
        let path = dir.join("m.json");
        std::fs::write(&path, [0x50, 0x4b, 0x03, 0x04, 0xff, 0xfe]).unwrap();
        let e = ModelFile::load(&path).unwrap_err();
        assert!(
            matches!(e, Error::Model(_)) && e.to_string().contains("not UTF-8"),
            "{e}"
        );
        // A file that starts as gzip but does not decompress is named as such, and one cut
        // short (here in its ten-byte header) as truncated.
        std::fs::write(
            &path,
            [0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0, 0x03, 0xff, 0xfe],
        )
        .unwrap();
        let e = ModelFile::load(&path).unwrap_err();
        assert!(
            matches!(e, Error::Model(_)) && e.to_string().contains("does not decompress"),
            "{e}"
        );
        std::fs::write(&path, [0x1f, 0x8b, 0x08, 0x00, 0xff, 0xfe]).unwrap();
        let e = ModelFile::load(&path).unwrap_err();
        assert!(
            matches!(e, Error::Model(_)) && e.to_string().contains("the gzip data ends early"),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
        let text = sample().to_json().unwrap();
        let e = ModelFile::from_json(
            &text
                .replace("\"params\": {", "\"params\": [{")
                .replace("1.0\n  }", "1.0\n  }]"),
            "m.json",
        );
        let e = e.unwrap_err().to_string();
        assert!(
            e.contains("\"params\" must be a JSON object or null, got an array"),
            "{e}"
        );
    }
}
