//! The model file: a versioned JSON document, written atomically.
//!
//! ```json
//! {"format": "svmmap-model", "version": 1, "n_features": 46, "coef": [...],
//!  "params": {...}, "feature_names": null, "binning": null, "training": {...}}
//! ```
//!
//! `params` (the estimator's parameters), `binning` and `training` (the summary of the fit) are
//! free-form objects owned by the Python layer; this module checks the parts every reader
//! relies on: the format name, the version, and that `coef` has `n_features` finite numbers.

use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::Path;

use crate::error::{Error, Result};

pub const FORMAT_NAME: &str = "svmmap-model";
pub const FORMAT_VERSION: u32 = 1;

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
}

impl ModelFile {
    /// Parses and checks a model document; `source` names it in errors.
    pub fn from_json(text: &str, source: &str) -> Result<Self> {
        // Look at the header first, so that a newer version is reported as such even when the
        // rest of its layout has changed.
        let header: serde_json::Value = serde_json::from_str(text).map_err(|e| {
            let what = if e.is_eof() {
                "the file ends early (truncated?)"
            } else {
                "not valid JSON"
            };
            Error::Model(format!("{source}:{}: {what}: {e}", e.line()))
        })?;
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
            Some(v) if v == FORMAT_VERSION as u64 => {}
            Some(v) if v > FORMAT_VERSION as u64 => {
                return Err(Error::Model(format!(
                    "{source}: model format version {v} was written by a newer svmmap; \
                     this svmmap reads version {FORMAT_VERSION}: upgrade svmmap"
                )))
            }
            other => {
                return Err(Error::Model(format!(
                    "{source}: unsupported model format version {}; this svmmap reads version {FORMAT_VERSION}",
                    other.map_or("(missing)".to_string(), |v| v.to_string())
                )))
            }
        }
        let model: ModelFile = serde_json::from_value(header)
            .map_err(|e| Error::Model(format!("{source}: malformed model: {e}")))?;
        model.check(source)?;
        Ok(model)
    }

    pub fn check(&self, source: &str) -> Result<()> {
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

    pub fn load(path: &str) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        Self::from_json(&text, path)
    }

    pub fn save(&self, path: &str) -> Result<()> {
        self.check(path)?;
        let mut text = self.to_json()?;
        text.push('\n');
        write_atomic(path, text.as_bytes())
    }
}

/// Writes `bytes` to a temporary file beside `path`, flushes it to disk and renames it over
/// `path`, so that readers see either the old file or the whole new one, never a part.
pub fn write_atomic(path: &str, bytes: &[u8]) -> Result<()> {
    let target = Path::new(path);
    let dir = target
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = target
        .file_name()
        .ok_or_else(|| Error::input(format!("{path}: not a file path")))?;
    let tmp = dir.join(format!(
        ".{}.tmp-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let tmp_str = tmp.to_string_lossy().into_owned();
    let result = (|| {
        let mut f = std::fs::File::create(&tmp).map_err(|e| Error::io(&tmp_str, e))?;
        f.write_all(bytes).map_err(|e| Error::io(&tmp_str, e))?;
        f.sync_all().map_err(|e| Error::io(&tmp_str, e))?;
        std::fs::rename(&tmp, target).map_err(|e| Error::io(path, e))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> ModelFile {
        ModelFile {
            format: FORMAT_NAME.into(),
            version: FORMAT_VERSION,
            n_features: 2,
            coef: vec![0.1, -3.0e-17],
            params: serde_json::json!({"C": 1.0}),
            feature_names: None,
            binning: None,
            training: None,
        }
    }

    #[test]
    fn round_trip_is_exact() {
        let dir = std::env::temp_dir().join(format!("svmmap-model-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("m.json").to_string_lossy().into_owned();
        let m = sample();
        m.save(&path).unwrap();
        assert_eq!(ModelFile::load(&path).unwrap(), m);
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
    fn bad_files_are_reported() {
        let text = sample().to_json().unwrap();
        let truncated = &text[..text.len() / 2];
        assert!(ModelFile::from_json(truncated, "m.json")
            .unwrap_err()
            .to_string()
            .contains("truncated"));
        let newer = text.replace("\"version\": 1", "\"version\": 2");
        assert!(ModelFile::from_json(&newer, "m.json")
            .unwrap_err()
            .to_string()
            .contains("newer svmmap"));
        let other = text.replace(FORMAT_NAME, "something-else");
        assert!(ModelFile::from_json(&other, "m.json")
            .unwrap_err()
            .to_string()
            .contains("not an svmmap model"));
        let short = text.replace("\"n_features\": 2", "\"n_features\": 3");
        assert!(ModelFile::from_json(&short, "m.json")
            .unwrap_err()
            .to_string()
            .contains("coef has 2"));
    }
}
